"""Tests of dgan.tabular.frames: DataFrame <-> arrays conversion."""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dgan.config import DfStyle, OutputType
from dgan.errors import DataError, ParameterError, SerializationError
from dgan.tabular.columns import Columns
from dgan.tabular.frames import (
    FrameLayout,
    arrays_to_dataframe,
    attributes_frame_to_array,
    dataframe_to_arrays,
    series_lengths,
)
from dgan.tabular.to_frame import renumber_examples

C, D = OutputType.CONTINUOUS, OutputType.DISCRETE


def convert(df: pd.DataFrame, max_sequence_len: int = 10, **columns):
    """`dataframe_to_arrays` with the column roles given as gretel's keyword arguments."""
    return dataframe_to_arrays(df, Columns(**columns), max_sequence_len)


def round_trip(df: pd.DataFrame, **kwargs) -> tuple:
    """Convert df to arrays and straight back, as if the model generated the inputs."""
    arrays = convert(df, **kwargs)
    return arrays, arrays_to_dataframe(arrays.attributes, arrays.features, arrays.layout)


def wide_frame() -> pd.DataFrame:
    """Four examples, attributes of every supported dtype, three float time steps."""
    return pd.DataFrame(
        {
            "id": [101, 102, 103, 104],
            "age": np.array([30, 41, 52, 63], dtype=np.int32),
            "weight": [70.5, 80.25, np.nan, 60.0],
            "smoker": [True, False, False, True],
            "country": pd.Series(["fr", "de", None, "fr"], dtype="str"),
            "tag": pd.Series(["a", 1, np.nan, "b"], dtype=object),  # None would return as NaN
            "grade": pd.Categorical(["lo", "hi", "hi", None], categories=["lo", "hi", "mid"]),
            "t0": [1.0, 2.0, 3.0, 4.0],
            "t1": [1.5, 2.5, 3.5, 4.5],
            "t2": [0.0, -1.0, 1e6, 3.25],
        }
    )


def long_frame() -> pd.DataFrame:
    """Three sensors (3, 5 and 2 hourly readings, on one grid), rows shuffled."""
    grid = pd.date_range("2024-03-30 22:00", periods=5, freq="h", tz="Europe/Paris")
    rows = []
    sensors = [("s-b", 3, "indoor", 2), ("s-a", 5, "outdoor", 1), ("s-c", 2, "indoor", 3)]
    for sensor, n, kind, floor in sensors:
        for k in range(n):
            rows.append(
                {
                    "sensor": sensor,
                    "time": grid[k],
                    "kind": kind,
                    "floor": floor,
                    "temp": 20.0 + k + floor / 10,
                    "count": 10 * k + floor,
                    "state": ["on", "off", None][k % 3],
                    "ok": k % 2 == 0,
                }
            )
    df = pd.DataFrame(rows)
    df["kind"] = df["kind"].astype("category")
    return df.sample(frac=1.0, random_state=0).reset_index(drop=True)


def sorted_like_generation(df: pd.DataFrame, id_column: str, time_column: str) -> pd.DataFrame:
    """df's rows grouped by example (order of first appearance), each in time order."""
    rank = {v: k for k, v in enumerate(pd.unique(df[id_column]))}
    ordered = df.assign(_rank=df[id_column].map(rank))
    ordered = ordered.sort_values(["_rank", time_column], kind="stable")
    return ordered.drop(columns="_rank").reset_index(drop=True)


# --------------------------------------------------------------------------- WIDE


def test_wide_round_trip_keeps_values_column_order_and_dtypes():
    df = wide_frame()
    attributes = ["age", "weight", "smoker", "country", "tag", "grade"]
    arrays, out = round_trip(df, attribute_columns=attributes, example_id_column="id")

    assert arrays.attribute_types == [C, C, D, D, D, D]
    assert arrays.feature_types == [C]
    assert len(arrays.features) == 4 and arrays.features[2].shape == (3, 1)
    assert arrays.layout.feature_columns == ["t0", "t1", "t2"]  # default: all the rest
    assert list(out.columns) == list(df.columns)
    assert out["id"].tolist() == [0, 1, 2, 3]  # fresh ids, same dtype family
    pd.testing.assert_frame_equal(out.drop(columns="id"), df.drop(columns="id"))
    assert out["id"].dtype == df["id"].dtype


def test_wide_integer_columns_get_rounded_values_and_keep_their_dtype():
    df = pd.DataFrame({"size": [1, 2], "t0": [10, 20], "t1": np.array([5, 6], dtype=np.uint8)})
    arrays = dataframe_to_arrays(df, Columns(attribute_columns=["size"]), 2)
    generated = [np.array([[10.4], [4.6]]), np.array([[-0.4], [300.0]])]
    out = arrays_to_dataframe(np.array([[1.6], [2.2]]), generated, arrays.layout)

    assert out.dtypes.map(str).tolist() == ["int64", "int64", "uint8"]
    assert out.to_numpy().tolist() == [[2, 10, 5], [2, 0, 255]]  # uint8 clipped, not wrapped


def test_wide_discrete_feature_and_forced_discrete_attribute():
    df = pd.DataFrame({"code": [3, 7, 3], "t0": ["x", "y", None], "t1": ["y", "y", "x"]})
    arrays, out = round_trip(df, attribute_columns=["code"], discrete_columns=["code"])

    assert arrays.attribute_types == [D] and arrays.feature_types == [D]
    assert arrays.attributes.dtype == object and arrays.attributes[:, 0].tolist() == [3, 7, 3]
    assert arrays.features[2][0, 0] is np.nan  # missing discrete value: the np.nan object
    pd.testing.assert_frame_equal(out, df)


def test_wide_frame_from_numpy_with_integer_column_names():
    df = pd.DataFrame(np.arange(12.0).reshape(3, 4))  # columns 0..3
    arrays, out = round_trip(df, attribute_columns=[0])

    assert arrays.layout.feature_columns == [1, 2, 3]
    pd.testing.assert_frame_equal(out, df)
    layout_json = json.dumps(arrays.layout.to_json_dict(), allow_nan=False)
    assert FrameLayout.from_json_dict(json.loads(layout_json)) == arrays.layout


def test_wide_mixed_discrete_and_continuous_steps_is_an_error():
    df = pd.DataFrame({"t0": [1.0, 2.0], "t1": ["a", "b"]})
    pattern = r"all be discrete or all continuous; discrete: \['t1'\], continuous: \['t0'\]"
    with pytest.raises(DataError, match=pattern):
        dataframe_to_arrays(df, Columns(), 2)


def test_wide_more_steps_than_max_sequence_len_is_an_error():
    df = pd.DataFrame(np.zeros((2, 6)))
    with pytest.raises(DataError, match=r"6 time-step columns.*max_sequence_len=4"):
        dataframe_to_arrays(df, Columns(), 4)


def test_wide_output_cuts_or_pads_generated_series_to_the_training_steps():
    df = pd.DataFrame({"t0": [1.0], "t1": [2.0], "t2": [3.0]})
    layout = dataframe_to_arrays(df, Columns(), 4).layout
    out = arrays_to_dataframe(None, [np.ones((4, 1)), np.ones((2, 1))], layout)
    assert out.to_numpy().tolist()[0] == [1.0, 1.0, 1.0]
    assert np.isnan(out.loc[1, "t2"])


# --------------------------------------------------------------------------- LONG


def test_long_round_trip_sorts_by_time_and_keeps_dtypes():
    df = long_frame()
    kwargs = dict(
        attribute_columns=["kind", "floor"],
        example_id_column="sensor",
        time_column="time",
        df_style=DfStyle.LONG,
    )
    arrays, out = round_trip(df, **kwargs)

    assert arrays.layout.feature_columns == ["temp", "count", "state", "ok"]
    assert arrays.feature_types == [C, C, D, D]
    expected = sorted_like_generation(df, "sensor", "time")
    lengths = expected.groupby("sensor", sort=False).size().tolist()
    assert [len(f) for f in arrays.features] == lengths  # variable lengths kept
    assert list(out.columns) == list(df.columns)
    pd.testing.assert_frame_equal(out.drop(columns="sensor"), expected.drop(columns="sensor"))
    fresh = [f"synthetic-{k}" for k, n in enumerate(lengths) for _ in range(n)]
    assert out["sensor"].tolist() == fresh and out["sensor"].dtype == df["sensor"].dtype


def test_long_time_grid_is_the_longest_example_and_extends_by_its_last_step():
    df = long_frame()
    arrays = dataframe_to_arrays(
        df, Columns(example_id_column="sensor", time_column="time", df_style="long"), 7
    )
    grid = pd.date_range("2024-03-30 22:00", periods=7, freq="h", tz="Europe/Paris")
    assert arrays.layout.time_grid == [t.isoformat() for t in grid[:5]]

    n_features = len(arrays.layout.feature_columns)
    generated = [np.zeros((7, n_features), dtype=object), np.zeros((1, n_features), dtype=object)]
    out = arrays_to_dataframe(None, generated, arrays.layout)
    assert out["time"].tolist() == [*grid, grid[0]]
    assert out["time"].dtype == df["time"].dtype
    assert out["sensor"].tolist() == ["synthetic-0"] * 7 + ["synthetic-1"]


def test_long_numeric_time_sort_is_stable_and_ids_stay_integers():
    df = pd.DataFrame({"id": [7, 7, 7, 5, 5], "t": [2, 1, 1, 1, 0], "x": [0.3, 0.1, 0.2, 1.1, 1.0]})
    arrays, out = round_trip(df, example_id_column="id", time_column="t", df_style="long")

    assert [f[:, 0].tolist() for f in arrays.features] == [[0.1, 0.2, 0.3], [1.0, 1.1]]
    assert arrays.layout.time_grid == [1, 1, 2]
    assert out["id"].tolist() == [0, 0, 0, 1, 1] and out["id"].dtype == np.int64
    assert out["t"].tolist() == [1, 1, 2, 1, 1]


def test_long_without_example_id_is_cut_into_whole_chunks(caplog):
    df = pd.DataFrame({"t": np.arange(25)[::-1], "x": np.arange(25.0)[::-1]})
    with caplog.at_level(logging.WARNING, logger="dgan.tabular"):
        arrays, out = round_trip(df, time_column="t", df_style="LONG", max_sequence_len=10)

    assert "No example_id_column" in caplog.text and "2 examples" in caplog.text
    assert "the last 5 rows, too few for one more, are left out" in caplog.text
    # A shorter last chunk would make the data variable-length, and the generated frame
    # (which has no id column) could then not be split into its series again.
    assert [len(f) for f in arrays.features] == [10, 10]
    assert arrays.features[1][:, 0].tolist() == list(np.arange(10.0, 20.0))  # sorted by time
    assert out["t"].tolist() == list(range(10)) * 2  # grid of the first chunk
    assert list(out.columns) == ["t", "x"]

    with pytest.raises(DataError, match="has 9 rows, fewer than max_sequence_len=10"):
        dataframe_to_arrays(df.head(9), Columns(df_style="long"), 10)


def test_chunked_attributes_must_be_constant_within_each_chunk():
    df = pd.DataFrame({"site": ["x"] * 4 + ["y"] * 4, "v": np.arange(8.0)})
    with pytest.raises(DataError, match=r"'site' is not constant within example\(s\) chunk 1 "):
        dataframe_to_arrays(df, Columns(attribute_columns=["site"], df_style="long"), 3)
    arrays = dataframe_to_arrays(df, Columns(attribute_columns=["site"], df_style="long"), 4)
    assert arrays.attributes[:, 0].tolist() == ["x", "y"]


def test_long_attribute_that_varies_within_an_example_names_example_and_column():
    df = long_frame()
    df.loc[df["sensor"] == "s-a", "floor"] = [1, 1, 2, 1, 1]
    df.loc[df["sensor"] == "s-c", "kind"] = ["indoor", "outdoor"]
    with pytest.raises(DataError) as error:
        dataframe_to_arrays(
            df,
            Columns(
                attribute_columns=["kind", "floor"],
                example_id_column="sensor",
                time_column="time",
                df_style=DfStyle.LONG,
            ),
            5,
        )
    message = str(error.value)
    assert "2 problems" in message
    assert "'kind' is not constant within example(s) 's-c'" in message
    assert "'floor' is not constant within example(s) 's-a'" in message
    assert "feature_columns" in message  # the fix


def test_long_example_longer_than_max_sequence_len_names_it_and_the_fix():
    df = long_frame()
    with pytest.raises(DataError, match=r"'s-a' \(5 rows\).*at least 5.*split these series"):
        dataframe_to_arrays(
            df, Columns(example_id_column="sensor", time_column="time", df_style="long"), 4
        )


def test_long_missing_example_ids_are_an_error():
    df = pd.DataFrame({"id": ["a", None, "b"], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(DataError, match=r"example_id_column 'id' is missing in 1 rows.*\[1\]"):
        dataframe_to_arrays(df, Columns(example_id_column="id", df_style="long"), 2)


# ---------------------------------------------------------------- argument checks


def test_unknown_columns_are_all_listed_in_one_error():
    df = pd.DataFrame({"a": [1], "b": [2.0]})
    with pytest.raises(ParameterError) as error:
        dataframe_to_arrays(
            df,
            Columns(
                attribute_columns=["a", "nope"],
                feature_columns=["b", "bb"],
                example_id_column="ident",
                time_column="when",
                df_style="long",
            ),
            3,
        )
    message = str(error.value)
    for part in ["['nope']", "['bb']", "example_id_column ['ident']", "time_column ['when']"]:
        assert part in message
    assert "['a', 'b']" in message  # the columns that do exist


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(attribute_columns=["a"], feature_columns=["a", "b"]), "both attribute_columns"),
        (dict(feature_columns=["a", "b"], example_id_column="a", df_style="long"), "must not"),
        (dict(time_column="a"), "only applies to df_style=DfStyle.LONG"),
        (dict(attribute_columns="a"), r"must be a list of column names.*\['a'\]"),
        (dict(attribute_columns=["a", "b"]), "no feature columns"),
        (dict(discrete_columns=["a"], feature_columns=["b"]), "neither attribute nor feature"),
        (dict(df_style="tall"), "df_style must be"),
        (dict(max_sequence_len=0), "max_sequence_len must be a positive integer"),
    ],
)
def test_invalid_arguments_raise_parameter_error(kwargs, pattern):
    df = pd.DataFrame({"a": [1, 2], "b": [2.0, 3.0]})
    kwargs = {"max_sequence_len": 3, **kwargs}
    with pytest.raises(ParameterError, match=pattern):
        convert(df, **kwargs)


def test_empty_frame_and_datetime_feature_are_data_errors():
    with pytest.raises(DataError, match="no rows"):
        dataframe_to_arrays(pd.DataFrame({"x": pd.Series([], dtype=float)}), Columns(), 2)
    df = pd.DataFrame({"when": pd.date_range("2020", periods=2), "x": [1.0, 2.0]})
    with pytest.raises(DataError, match=r"'when' has dtype datetime64.*time_column"):
        dataframe_to_arrays(df, Columns(df_style="long"), 2)


def test_the_callers_frame_is_never_modified():
    df = long_frame()
    before = df.copy(deep=True)
    arrays = dataframe_to_arrays(
        df,
        Columns(
            attribute_columns=["kind", "floor"],
            example_id_column="sensor",
            time_column="time",
            df_style="long",
        ),
        5,
    )
    for f in arrays.features:
        f[:] = -1  # the arrays are the caller's to modify, independently of df
    arrays.attributes[:] = -1
    pd.testing.assert_frame_equal(df, before)

    wide = wide_frame()
    before = wide.copy(deep=True)
    arrays = dataframe_to_arrays(
        wide, Columns(attribute_columns=["weight"], feature_columns=["t0", "t1"]), 3
    )
    arrays.features[0][:] = -1
    arrays.attributes[:] = -1
    pd.testing.assert_frame_equal(wide, before)


# ---------------------------------------------------------------- layout, output


def test_layout_json_round_trip_is_strict_json():
    df = long_frame()
    df["day"] = pd.Categorical(df["time"].dt.tz_localize(None).dt.normalize())
    layout = dataframe_to_arrays(
        df,
        Columns(
            attribute_columns=["kind"],
            feature_columns=["temp", "day"],
            example_id_column="sensor",
            time_column="time",
            df_style="long",
        ),
        5,
    ).layout
    text = json.dumps(layout.to_json_dict(), allow_nan=False)
    restored = FrameLayout.from_json_dict(json.loads(text))
    assert restored == layout
    assert restored.spec("day").categories == ["2024-03-30T00:00:00", "2024-03-31T00:00:00"]


def test_categorical_datetime_categories_come_back_as_datetimes():
    df = pd.DataFrame(
        {"day": pd.Categorical(pd.to_datetime(["2020-01-02", "2020-01-01"])), "x": [1.0, 2.0]}
    )
    _, out = round_trip(df, attribute_columns=["day"])
    pd.testing.assert_frame_equal(out, df)


def test_invalid_stored_layout_is_a_serialization_error():
    layout = dataframe_to_arrays(pd.DataFrame({"x": [1.0]}), Columns(), 1).layout
    data = layout.to_json_dict()
    del data["columns"]
    with pytest.raises(SerializationError, match="corrupt"):
        FrameLayout.from_json_dict(data)
    with pytest.raises(SerializationError, match="format_version"):
        FrameLayout.from_json_dict({**layout.to_json_dict(), "format_version": 99})


def test_generated_missing_values_use_nullable_dtypes():
    df = pd.DataFrame({"flag": [True, False], "n": [1, 2], "x": [0.0, 1.0]})
    layout = dataframe_to_arrays(
        df, Columns(attribute_columns=["flag", "n"], discrete_columns=["n"]), 1
    ).layout
    attributes = np.array([[True, np.nan], [np.nan, 2]], dtype=object)
    out = arrays_to_dataframe(attributes, [np.zeros((1, 1))] * 2, layout)
    assert str(out["flag"].dtype) == "boolean" and str(out["n"].dtype) == "Int64"
    assert out["n"].tolist()[1] == 2


def test_arrays_that_do_not_fit_the_layout_are_parameter_errors():
    layout = dataframe_to_arrays(
        wide_frame(), Columns(attribute_columns=["age"], feature_columns=["t0"]), 3
    ).layout
    with pytest.raises(ParameterError, match="attributes is None"):
        arrays_to_dataframe(None, [np.zeros((3, 1))], layout)
    with pytest.raises(ParameterError, match=r"shape \(T_i, 1\)"):
        arrays_to_dataframe(np.zeros((1, 1)), [np.zeros((3, 2))], layout)


def test_zero_generated_examples_give_an_empty_frame_with_the_right_dtypes():
    df = long_frame()
    arrays = dataframe_to_arrays(
        df, Columns(example_id_column="sensor", time_column="time", df_style="long"), 5
    )
    out = arrays_to_dataframe(None, [], arrays.layout)
    assert len(out) == 0 and list(out.columns) == list(df.columns)
    assert out["time"].dtype == df["time"].dtype and out["count"].dtype == df["count"].dtype


# -------------------------------------------------------- conditional generation


def test_attributes_frame_to_array_matches_training_encoding():
    df = wide_frame()
    arrays = dataframe_to_arrays(
        df,
        Columns(
            attribute_columns=["age", "country"],
            feature_columns=["t0", "t1", "t2"],
            example_id_column="id",
        ),
        3,
    )
    conditions = df[["country", "age"]].iloc[[3, 0]]
    result = attributes_frame_to_array(conditions, arrays.layout)
    assert result.tolist() == arrays.attributes[[3, 0]].tolist()

    with pytest.raises(DataError, match=r"lacks column\(s\) \['age', 'country'\]"):
        attributes_frame_to_array(pd.DataFrame({"other": [1]}), arrays.layout)
    with pytest.raises(DataError, match=r"'age' is NaN in 1 example\(s\) \(indices \[1\]\)"):
        attributes_frame_to_array(
            pd.DataFrame({"age": [1.0, np.nan], "country": "fr"}), arrays.layout
        )


def test_attributes_frame_to_array_collapses_a_long_frame_to_one_row_per_example():
    df = long_frame()
    kwargs = dict(example_id_column="sensor", time_column="time", df_style="long")
    kwargs["max_sequence_len"] = 5
    layout = convert(df, attribute_columns=["kind", "floor"], **kwargs).layout
    result = attributes_frame_to_array(df, layout)
    firsts = df.drop_duplicates("sensor")
    assert result.tolist() == firsts[["kind", "floor"]].astype(object).to_numpy().tolist()


def test_attributes_frame_for_a_model_without_attributes_is_an_error():
    layout = dataframe_to_arrays(pd.DataFrame({"x": [1.0]}), Columns(), 1).layout
    with pytest.raises(ParameterError, match="without attribute columns"):
        attributes_frame_to_array(pd.DataFrame({"x": [1.0]}), layout)


# ------------------------------------------------------------- property tests

_FLOATS = st.floats(allow_nan=True, allow_infinity=False, width=64)
_INTS = st.integers(-(2**40), 2**40)
_WORDS = st.sampled_from(["a", "b", "c d", "é"])
_KINDS = {
    "float": lambda n: st.lists(_FLOATS, min_size=n, max_size=n).map(pd.Series),
    "int": lambda n: st.lists(_INTS, min_size=n, max_size=n).map(
        lambda v: pd.Series(v, dtype="int64")
    ),
    "bool": lambda n: st.lists(st.booleans(), min_size=n, max_size=n).map(pd.Series),
    "str": lambda n: st.lists(st.none() | _WORDS, min_size=n, max_size=n).map(
        lambda v: pd.Series(v, dtype="str")
    ),
    "category": lambda n: st.lists(st.none() | _WORDS, min_size=n, max_size=n).map(
        lambda v: pd.Series(pd.Categorical(v, categories=["c d", "a", "b", "é"], ordered=True))
    ),
}


@st.composite
def wide_frames(draw):
    n = draw(st.integers(1, 6))
    steps = draw(st.integers(1, 4))
    attribute_kinds = draw(st.lists(st.sampled_from(sorted(_KINDS)), max_size=4))
    step_kind = draw(st.sampled_from(["float", "int", "str"]))
    columns = {f"a{j}": draw(_KINDS[k](n)) for j, k in enumerate(attribute_kinds)}
    columns |= {f"t{j}": draw(_KINDS[step_kind](n)) for j in range(steps)}
    return pd.DataFrame(columns), [f"a{j}" for j in range(len(attribute_kinds))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_frames())
def test_property_wide_round_trip_is_identity(frame_and_attributes):
    df, attributes = frame_and_attributes
    _, out = round_trip(df, attribute_columns=attributes)
    pd.testing.assert_frame_equal(out, df)


@st.composite
def long_frames(draw):
    lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    grid = pd.date_range("2021-06-01", periods=max(lengths), freq="15min")
    rows = []
    for k, length in enumerate(lengths):
        label = draw(_WORDS | st.just("x"))
        rows += [
            {
                "id": f"e{k}",
                "time": grid[i],
                "label": label,
                "x": draw(_FLOATS),
                "n": draw(_INTS),
                "s": draw(st.none() | _WORDS),
            }
            for i in range(length)
        ]
    df = pd.DataFrame(rows).astype({"n": "int64", "s": "str"})
    permutation = draw(st.permutations(range(len(df))))
    return df.iloc[list(permutation)].reset_index(drop=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_frames())
def test_property_long_round_trip_is_identity_up_to_ids_and_row_order(df):
    _, out = round_trip(
        df,
        attribute_columns=["label"],
        example_id_column="id",
        time_column="time",
        df_style="long",
        max_sequence_len=5,
    )
    expected = sorted_like_generation(df, "id", "time")
    pd.testing.assert_frame_equal(out.drop(columns="id"), expected.drop(columns="id"))
    new_ids = out["id"].map(lambda s: int(s.removeprefix("synthetic-")))
    old_ids = expected["id"].map({v: k for k, v in enumerate(pd.unique(expected["id"]))})
    assert new_ids.tolist() == old_ids.tolist()


# ------------------------------------------------------------ time order, lengths


def test_string_times_sort_in_natural_order_and_say_so(caplog):
    steps = [f"day{k}" for k in range(1, 13)]
    df = pd.DataFrame({"id": np.repeat([0, 1], 12), "t": steps * 2, "x": np.arange(24.0)})
    shuffled = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    shuffled = pd.concat([df.head(12), shuffled[shuffled["id"] == 1]], ignore_index=True)
    kwargs = dict(example_id_column="id", time_column="t", df_style="long", max_sequence_len=12)
    with caplog.at_level(logging.WARNING, logger="dgan.tabular"):
        arrays = convert(shuffled, **kwargs)
    # Order of first appearance (day1, day2, ..., day12), not text order (day1, day10, ...).
    assert arrays.features[1][:, 0].tolist() == list(np.arange(12.0, 24.0))
    assert arrays.layout.time_grid == steps
    assert "first appearance" in caplog.text and "'t'" in caplog.text

    caplog.clear()
    numbers = pd.DataFrame({"id": [0, 0, 0], "t": ["10", "9", "100"], "x": [1.0, 2.0, 3.0]})
    with caplog.at_level(logging.WARNING, logger="dgan.tabular"):
        arrays = convert(numbers, **{**kwargs, "max_sequence_len": 3})
    assert arrays.features[0][:, 0].tolist() == [2.0, 1.0, 3.0]  # 9, 10, 100
    assert "numbers written as text" in caplog.text

    dates = pd.DataFrame({"id": [0, 0], "t": ["2024-02-01", "2024-1-15"], "x": [1.0, 2.0]})
    arrays = convert(dates, **{**kwargs, "max_sequence_len": 2})
    assert arrays.features[0][:, 0].tolist() == [2.0, 1.0]  # January before February


def test_series_lengths_reads_only_the_example_ids():
    df = long_frame()
    df["when"] = pd.Timestamp("2024-01-01")  # a feature dataframe_to_arrays would reject
    kwargs = dict(example_id_column="sensor", df_style="long")
    assert sorted(series_lengths(df, Columns(**kwargs)).tolist()) == [2, 3, 5]
    assert (
        series_lengths(
            wide_frame(), Columns(attribute_columns=["age"], example_id_column="id")
        ).tolist()
        == [8] * 4
    )
    with pytest.raises(ParameterError, match=r"not in the DataFrame.*'nope'"):
        series_lengths(df, Columns(example_id_column="nope", df_style="long"))
    with pytest.raises(ParameterError, match="cannot be inferred"):
        series_lengths(df, Columns(df_style="long"))


def test_renumbered_examples_continue_from_a_given_id():
    df = pd.DataFrame({"sensor": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]})
    layout = dataframe_to_arrays(df, Columns(example_id_column="sensor", df_style="long"), 2).layout
    chunk = arrays_to_dataframe(None, [np.zeros((2, 1))] * 2, layout)
    renumbered = renumber_examples(chunk, layout, 10)
    assert renumbered["sensor"].tolist() == ["synthetic-10"] * 2 + ["synthetic-11"] * 2
    assert chunk["sensor"].tolist()[0] == "synthetic-0"  # the input is left alone


def test_length_checks_are_one_check_catchable_as_gretel_and_dgan_errors():
    wide = pd.DataFrame(np.zeros((2, 6)))
    with pytest.raises(ParameterError, match="6 time-step columns"):  # gretel's class
        dataframe_to_arrays(wide, Columns(), 4)
    with pytest.raises(DataError, match="6 time-step columns"):  # dgan's
        dataframe_to_arrays(wide, Columns(), 4)


# ------------------------------------------------------------ precision of written numbers


@settings(max_examples=200, deadline=None)
@given(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.integers(min_value=1, max_value=15),
)
@example(0.95, 1)  # 0.9499999... times 10 is the float 9.5: scaling alone rounds it up
def test_property_significant_rounding_is_the_float_of_the_short_decimal(value, digits):
    from dgan.tabular.layout import precision_of, round_significant

    rounded = float(round_significant(np.array([value]), digits)[0])
    text = f"{value:.{digits - 1}e}"
    assert rounded == (float(text) if np.isfinite(float(text)) else value)
    if np.isfinite(float(text)) and rounded != 0:  # read back, the column holds those digits
        decimals, significant = precision_of(pd.Series([rounded]))
        assert significant is None or significant <= digits
        assert decimals is not None or significant is not None


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.booleans(), st.sampled_from(["int", "float", "text"]))
def test_long_rows_are_ordered_as_a_stable_sort_by_time_then_example(seed, shuffle, kind):
    """Frames already in order skip the sorts; the result is the sorts' either way."""
    rng = np.random.default_rng(seed)
    ids = np.repeat(rng.permutation(6), rng.integers(1, 5, 6))
    times = np.concatenate([np.sort(rng.integers(0, 4, (ids == i).sum())) for i in pd.unique(ids)])
    df = pd.DataFrame({"id": ids, "t": times, "x": np.arange(len(ids), dtype=float)})
    if kind == "float":
        df["t"] = df["t"] * 0.5
    elif kind == "text":
        df["t"] = [f"step{t}" for t in df["t"]]
    if shuffle:
        df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    columns = Columns(example_id_column="id", time_column="t", df_style="long")
    features = dataframe_to_arrays(df, columns, 8).features
    keys = pd.Series(pd.factorize(df["t"])[0]) if kind == "text" else df["t"]
    order = keys.sort_values(kind="stable").index.to_numpy()
    codes = pd.factorize(df["id"])[0]
    order = order[np.argsort(codes[order], kind="stable")]
    expected = [df["x"].to_numpy()[order][codes[order] == k] for k in range(codes.max() + 1)]
    assert [f[:, 0].tolist() for f in features] == [e.tolist() for e in expected]
