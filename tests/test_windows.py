"""Long recordings cut into windows (`dgan.tabular.windows`): each window is the slice of
its recording in time order, attributes come along, bad arguments say the fix."""

from __future__ import annotations

import logging
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgan import DGAN, DGANConfig
from dgan.errors import DataError, ParameterError
from dgan.tabular.columns import Columns
from dgan.tabular.frames import dataframe_to_arrays
from dgan.tabular.layout import FrameLayout, Windowing
from dgan.tabular.windows import cut_windows, to_windows


def recordings(lengths, seed=0) -> pd.DataFrame:
    """One recording per length ('r0', 'r1', ...), rows shuffled; 'site' is constant per
    recording, 'hour' orders the rows, 'load' is the recording's number * 1000 + step."""
    rng = np.random.default_rng(seed)
    parts = [
        pd.DataFrame(
            {
                "sensor": f"r{k}",
                "site": f"site-{k % 2}",
                "hour": pd.date_range("2020-01-01", periods=n, freq="h"),
                "load": 1000.0 * k + np.arange(n),
            }
        )
        for k, n in enumerate(lengths)
    ]
    df = pd.concat(parts, ignore_index=True)
    return df.iloc[rng.permutation(len(df))].reset_index(drop=True)


def test_window_counts_ids_and_strides():
    df = recordings([10, 7])
    windows = cut_windows(df, 4, 2, time_column="hour", example_id_column="sensor")
    ids = windows.frame["sensor"].unique().tolist()
    # (10 - 4) // 2 + 1 = 4 windows of r0, (7 - 4) // 2 + 1 = 2 of r1
    assert ids == ["r0@0", "r0@2", "r0@4", "r0@6", "r1@0", "r1@2"]
    assert windows.summary.n_windows == 6 and len(windows.frame) == 6 * 4
    assert windows.summary.left_out_steps == 1  # r1's last step
    assert windows.frame.groupby("sensor").size().eq(4).all()


def test_default_stride_is_the_window_and_windows_do_not_overlap():
    df = recordings([12])
    frame = to_windows(df, 4, time_column="hour", example_id_column="sensor")
    assert frame["sensor"].unique().tolist() == ["r0@0", "r0@4", "r0@8"]
    assert frame["load"].tolist() == list(np.arange(12.0))


def test_rows_follow_the_time_column_and_attributes_come_along():
    df = recordings([6, 5])
    frame = to_windows(df, 3, 1, time_column="hour", example_id_column="sensor")
    window = frame[frame["sensor"] == "r1@2"]
    assert window["load"].tolist() == [1002.0, 1003.0, 1004.0]
    assert window["site"].tolist() == ["site-1"] * 3
    assert frame.groupby("sensor")["site"].nunique().eq(1).all()


def test_the_time_column_holds_the_step_within_the_window():
    frame = to_windows(recordings([5]), 3, 1, time_column="hour", example_id_column="sensor")
    assert frame["hour"].tolist() == [0, 1, 2] * 3
    assert list(frame.columns) == ["sensor", "site", "hour", "load"]  # the input's order


def test_text_times_are_ordered_as_training_orders_them():
    df = pd.DataFrame({"t": ["10", "9", "8", "1"], "x": [4.0, 3.0, 2.0, 1.0]})
    frame = to_windows(df, 2, 1, time_column="t")  # "10" after "9": numbers, not text
    assert frame["x"].tolist() == [1.0, 2.0, 2.0, 3.0, 3.0, 4.0]


def test_without_example_ids_the_table_is_one_recording_and_windows_are_numbered_by_step():
    df = pd.DataFrame({"t": np.arange(7), "x": np.arange(7.0)})
    frame = to_windows(df, 3, 2, time_column="t")
    assert list(frame.columns) == ["t", "x", "window"]
    assert frame["window"].unique().tolist() == [0, 2, 4]
    named = to_windows(df, 3, 2, time_column="t", window_column="w")
    assert named["w"].unique().tolist() == [0, 2, 4]


def test_the_windows_train_like_any_long_table():
    frame = to_windows(recordings([9, 8]), 4, 2, time_column="hour", example_id_column="sensor")
    arrays = dataframe_to_arrays(
        frame,
        Columns(
            attribute_columns=["site"],
            example_id_column="sensor",
            time_column="hour",
            df_style="long",
        ),
        4,
    )
    assert len(arrays.features) == 3 + 3 and arrays.layout.time_grid == [0, 1, 2, 3]


def test_short_recordings_are_left_out_with_a_warning(caplog):
    df = recordings([10, 3, 2])
    with caplog.at_level(logging.WARNING):
        windows = cut_windows(df, 4, time_column="hour", example_id_column="sensor")
    assert windows.frame["sensor"].unique().tolist() == ["r0@0", "r0@4"]
    assert "2 recordings shorter than window=4 steps" in caplog.text
    assert "'r1', 'r2'" in caplog.text and "smaller window" in caplog.text
    assert "2 recordings shorter than one window left out: ['r1', 'r2']" in str(windows.summary)


def test_a_window_longer_than_every_recording_names_the_longest():
    with pytest.raises(DataError, match=r"longer than every recording.*at most 10 steps"):
        to_windows(recordings([10, 3]), 11, time_column="hour", example_id_column="sensor")


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"window": 1}, r"window=1 is too small.*window=2 or more"),
        ({"window": 4, "stride": 0}, r"stride=0 is too small.*stride=1 or more"),
        ({"window": 2.5}, r"window must be a whole number of steps, got 2.5"),
        ({"window": True}, r"window must be a whole number"),
        ({"window": 2, "time_column": "when"}, r"not in the table: time_column 'when'"),
        ({"window": 2, "example_id_column": "hour"}, r"both 'hour'"),
    ],
)
def test_bad_arguments_name_the_fix(kwargs, expected):
    arguments = {"time_column": "hour", "example_id_column": "sensor", **kwargs}
    with pytest.raises(ParameterError, match=expected):
        to_windows(recordings([5]), **arguments)


def test_an_existing_window_column_is_not_overwritten():
    df = pd.DataFrame({"t": range(4), "window": 1, "x": np.arange(4.0)})
    with pytest.raises(ParameterError, match=r"already has a column 'window'.*example_id_column"):
        to_windows(df, 2, time_column="t")


def test_missing_times_or_ids_are_errors():
    df = recordings([5])
    df.loc[2, "hour"] = pd.NaT
    with pytest.raises(DataError, match=r"time_column 'hour' is missing in 1 rows"):
        to_windows(df, 2, time_column="hour", example_id_column="sensor")


def test_the_input_is_not_modified():
    df = recordings([8, 6])
    df.index = df.index * 3 + 5  # an index of its own
    before = df.copy(deep=True)
    to_windows(df, 3, 1, time_column="hour", example_id_column="sensor")
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize(
    "stride, said",
    [
        (24, "neighbouring windows share 144 steps, so they are not independent examples"),
        (168, "(disjoint)"),
        (200, "the 32 steps between windows are in none"),
    ],
)
def test_the_summary_says_how_windows_relate(stride, said):
    windows = cut_windows(recordings([8760] * 3), 168, stride, time_column="hour",
                          example_id_column="sensor")  # fmt: skip
    assert str(windows.summary).startswith("3 recordings of 8,760 steps -> ")
    assert said in str(windows.summary)
    if stride == 24:
        assert "1,077 windows of 168 steps every 24 steps" in str(windows.summary)


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 30), min_size=1, max_size=4),
    window=st.integers(2, 12),
    stride=st.integers(1, 14),
    seed=st.integers(0, 2**16),
)
def test_every_window_is_the_slice_of_its_recording(lengths, window, stride, seed):
    df = recordings(lengths, seed)
    if max(lengths) < window:
        with pytest.raises(DataError, match="longer than every recording"):
            to_windows(df, window, stride, time_column="hour", example_id_column="sensor")
        return
    frame = to_windows(df, window, stride, time_column="hour", example_id_column="sensor")
    first_seen = [int(name[1:]) for name in df["sensor"].unique()]  # recordings' order
    expected_ids = [
        f"r{k}@{start}" for k in first_seen for start in range(0, lengths[k] - window + 1, stride)
    ]
    assert frame["sensor"].unique().tolist() == expected_ids
    assert len(frame) == len(expected_ids) * window
    loads = frame["load"].to_numpy().reshape(-1, window)
    for row, name in zip(loads, expected_ids, strict=True):
        k, start = (int(part) for part in name[1:].split("@"))
        assert row.tolist() == list(1000.0 * k + np.arange(start, start + window))


def test_the_layout_remembers_the_windowing_and_old_layouts_still_load():
    layout = dataframe_to_arrays(
        to_windows(recordings([6]), 3, time_column="hour", example_id_column="sensor"),
        Columns(example_id_column="sensor", time_column="hour", df_style="long"),
        3,
    ).layout
    old = layout.to_json_dict()
    assert "windowing" not in old  # unchanged for layouts without windows (resume compares)
    assert FrameLayout.from_json_dict(old).windowing is None
    from dataclasses import replace

    windowed = replace(layout, windowing=Windowing(window=3, stride=1)).to_json_dict()
    assert FrameLayout.from_json_dict(windowed).windowing == Windowing(3, 1)
    windowed["windowing"] = {"window": 1, "stride": 1}
    with pytest.raises(Exception, match="windowing"):
        FrameLayout.from_json_dict(windowed)


def test_the_readme_python_example_runs_as_written():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*Long recordings into windows\*\*.*?```python\n(.*?)```", readme, re.S)
    code = textwrap.dedent(block.group(1))
    hourly = recordings([200, 180]).rename(columns={"hour": "ts", "load": "x"})
    scope = {"hourly": hourly, "DGAN": DGAN, "DGANConfig": DGANConfig}
    exec(code.replace("DGANConfig(", "DGANConfig(cuda=False, training_steps=1, "), scope)
    assert scope["model"].data_frame_layout.time_grid == list(range(168))
    assert len(scope["windows"]) == (2 + 1) * 168  # (200 - 168) // 24 + 1 windows, and 1
