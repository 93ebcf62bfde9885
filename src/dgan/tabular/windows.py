"""Long recordings cut into windows, each window one training example (`to_windows`).

A user with a few very long series (years of hourly data, one recording per sensor)
cannot train on them as they are: a handful of examples teaches a GAN nothing, and an
LSTM over 8,760 steps is slow and forgets. Windows of a recording (a week of hours,
starting every day) make many examples of a length the model handles.

The result is a LONG table like the input, one window after the other:

* every column is carried, row by row, so attributes (constant per recording) are in
  every window of their recording;
* the example id column holds each window's id, ``"<recording>@<first step>"`` (the
  recording's id and the step, counted from 0 in time order, where the window starts);
  without an example id the whole table is one recording and a new column (``window``)
  numbers the windows by their first step;
* the time column holds the step within the window, 0 to ``window - 1``. Generated
  LONG output takes its time column from the longest training example, so with the
  recordings' own times every synthetic window would carry the first window's dates
  (README, "The time column of LONG output"); the step says where in a window a row is,
  which is what a generated window knows. Keep calendar information that matters (hour
  of day, season) in feature or attribute columns.

Rows are ordered by the time column as training orders them
(`dgan.tabular.frames.time_order`: numbers and datetimes by value, text that reads as
numbers or dates by that value), within each recording. Windows are counted in rows
(steps): gaps in time are not filled. Recordings shorter than one window are left out
with a warning, or are an error when no recording is long enough. Steps after a
recording's last whole window are in no window (`WindowSummary` counts them).

Neighbouring windows share ``window - stride`` steps when ``stride < window``, and all
windows of a recording share its source: they are not independent examples. A
guarantee given per example (differential privacy) protects one window, which is weaker
per recording.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from dgan.errors import DataError, ParameterError, raise_all
from dgan.tabular.frames import time_order
from dgan.tabular.layout import Windowing
from dgan.tabular.messages import ColumnName, plain, preview

__all__ = [
    "WINDOW_COLUMN",
    "WindowSummary",
    "Windows",
    "cut_windows",
    "to_windows",
    "window_problems",
]

logger = logging.getLogger(__name__)

WINDOW_COLUMN = "window"
"""The new example id column's name when the table has no example id column."""


@dataclass(frozen=True)
class WindowSummary:
    """What `cut_windows` made: its ``str`` is the training plan's line about windows.

    Example:
        >>> summary = WindowSummary(
        ...     Windowing(168, 24), lengths=np.array([8760] * 3), n_windows=1077,
        ...     left_out_steps=0, short=[])
        >>> str(summary)  # doctest: +NORMALIZE_WHITESPACE
        '3 recordings of 8,760 steps -> 1,077 windows of 168 steps every 24 steps;
        neighbouring windows share 144 steps, so they are not independent examples'
    """

    windowing: Windowing
    lengths: np.ndarray
    """Steps of each recording, in order of first appearance (short ones included)."""
    n_windows: int
    left_out_steps: int
    """Steps after the last whole window of a recording (short recordings not counted)."""
    short: list
    """The ids of the recordings shorter than one window: left out."""

    def __str__(self) -> str:
        window, stride = self.windowing.window, self.windowing.stride
        n, shortest, longest = len(self.lengths), self.lengths.min(), self.lengths.max()
        steps = f"{longest:,}" if shortest == longest else f"{shortest:,} to {longest:,}"
        line = (
            f"{_count(n, 'recording')} of {steps} steps -> {_count(self.n_windows, 'window')} "
            f"of {window:,} steps every {_count(stride, 'step')}"
        )
        if stride < window:
            line += (
                f"; neighbouring windows share {_count(window - stride, 'step')}, so they are "
                "not independent examples"
            )
        elif stride > window:
            line += f"; the {_count(stride - window, 'step')} between windows are in none"
        else:
            line += " (disjoint)"
        if self.left_out_steps:
            line += f"; {_count(self.left_out_steps, 'step')} after the last whole windows left out"
        if self.short:
            line += (
                f"; {_count(len(self.short), 'recording')} shorter than one window left out: "
                f"{preview(self.short)}"
            )
        return line


class Windows(NamedTuple):
    """What `cut_windows` returns: the table of windows and what was done."""

    frame: pd.DataFrame
    summary: WindowSummary


def to_windows(
    df: pd.DataFrame,
    window: int,
    stride: int | None = None,
    *,
    time_column: ColumnName,
    example_id_column: ColumnName | None = None,
    window_column: ColumnName = WINDOW_COLUMN,
) -> pd.DataFrame:
    """Cut each recording of a LONG table into windows, each window one example.

    Pass the result to `DGAN.train_dataframe` with ``example_id_column`` (or
    ``window_column`` when the table has no example id) and ``time_column``; every
    window has ``window`` rows, so ``max_sequence_len=window``. See the module docstring
    for what the table of windows holds and why.

    Args:
        df: LONG table, one row per time step (never modified).
        window: steps per window, at least 2.
        stride: steps between the starts of neighbouring windows, at least 1 (default:
            ``window``, windows side by side; smaller overlaps them, larger skips steps).
        time_column: the column that orders each recording's rows; in the result, the
            step within the window (0 to ``window - 1``).
        example_id_column: the column naming each recording (None: the whole table is
            one recording); in the result, each window's id ``"<recording>@<step>"``.
        window_column: the new id column's name when ``example_id_column`` is None.

    Raises:
        ParameterError: a bad window, stride or column name.
        DataError: no rows, missing times or ids, no recording as long as one window.

    Example:
        >>> df = pd.DataFrame({"sensor": ["a"] * 5 + ["b"] * 4, "site": ["x"] * 5 + ["y"] * 4,
        ...                    "hour": [4, 0, 1, 2, 3, 0, 1, 2, 3], "load": range(9)})
        >>> w = to_windows(df, 3, 1, time_column="hour", example_id_column="sensor")
        >>> w.groupby("sensor", sort=False)["load"].apply(list).to_dict()
        {'a@0': [1, 2, 3], 'a@1': [2, 3, 4], 'a@2': [3, 4, 0], 'b@0': [5, 6, 7], 'b@1': [6, 7, 8]}
        >>> w[w.sensor == "b@1"][["site", "hour"]].to_numpy().tolist()
        [['y', 0], ['y', 1], ['y', 2]]
    """
    return cut_windows(
        df,
        window,
        stride,
        time_column=time_column,
        example_id_column=example_id_column,
        window_column=window_column,
    ).frame


def cut_windows(
    df: pd.DataFrame,
    window: int,
    stride: int | None = None,
    *,
    time_column: ColumnName,
    example_id_column: ColumnName | None = None,
    window_column: ColumnName = WINDOW_COLUMN,
) -> Windows:
    """`to_windows`, with a `WindowSummary` of what was made (the training plan's line).

    Example:
        >>> df = pd.DataFrame({"t": range(10), "x": np.arange(10.0)})
        >>> windows = cut_windows(df, 4, time_column="t")
        >>> windows.frame["window"].unique().tolist()
        [0, 4]
        >>> print(windows.summary)  # doctest: +NORMALIZE_WHITESPACE
        1 recording of 10 steps -> 2 windows of 4 steps every 4 steps (disjoint);
        2 steps after the last whole windows left out
    """
    _check_arguments(df, window, stride, time_column, example_id_column, window_column)
    stride = window if stride is None else stride
    order, codes, names = _recordings(df, time_column, example_id_column)
    lengths = np.bincount(codes, minlength=len(names))
    firsts = np.cumsum(lengths) - lengths  # each recording's first row in `order`

    # Windows of each recording, all at once: (recording, start step) for every window.
    per_recording = np.where(lengths >= window, (lengths - window) // stride + 1, 0)
    recording = np.repeat(np.arange(len(names)), per_recording)  # (n_windows,)
    first_of_recording = np.cumsum(per_recording) - per_recording
    start = (np.arange(recording.size) - first_of_recording[recording]) * stride
    rows = order[(firsts[recording] + start)[:, None] + np.arange(window)]  # (n_windows, W)

    short = [plain(names[k]) for k in np.flatnonzero(per_recording == 0)]
    if recording.size == 0:
        raise DataError(
            f"window={window} is longer than every recording: the longest has "
            f"{lengths.max():,} steps ({_recording_lengths(names, lengths)}). Pass a window "
            f"of at most {lengths.max():,} steps."
        )
    if short:
        logger.warning(
            "%s shorter than window=%d steps, so left out: %s. Pass a smaller window to keep them.",
            _count(len(short), "recording"),
            window,
            preview(short),
        )
    ids = _window_ids(names, recording, start, example_id_column)
    frame = _window_frame(df, rows, ids, time_column, example_id_column, window_column)
    # Steps after each recording's last window (none for recordings too short for one).
    tail = np.where(per_recording > 0, lengths - window - (per_recording - 1) * stride, 0)
    summary = WindowSummary(
        windowing=Windowing(window=window, stride=stride),
        lengths=lengths,
        n_windows=int(recording.size),
        left_out_steps=int(tail.sum()),
        short=short,
    )
    return Windows(frame, summary)


def window_problems(window, stride) -> list[str]:
    """What is wrong with ``window`` and ``stride`` (None: the default), one message each.

    Example:
        >>> window_problems(168, None)
        []
        >>> print(window_problems(1, None)[0])  # doctest: +NORMALIZE_WHITESPACE
        window=1 is too small: a window of one step has no time order to learn;
        pass window=2 or more.
    """
    problems = []
    for name, value, least, why in [
        ("window", window, 2, "a window of one step has no time order to learn"),
        ("stride", stride, 1, "windows start at least one step apart"),
    ]:
        if value is None and name == "stride":  # the default: the window
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            problems.append(f"{name} must be a whole number of steps, got {value!r}.")
        elif value < least:
            problems.append(f"{name}={value} is too small: {why}; pass {name}={least} or more.")
    return problems


def _check_arguments(df, window, stride, time_column, example_id_column, window_column) -> None:
    """Every problem with the arguments in one `ParameterError`, then the data's."""
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(f"df must be a pandas DataFrame, got {type(df).__name__}.")
    problems = window_problems(window, stride)
    missing = [
        f"{arg} {name!r}"
        for arg, name in [("time_column", time_column), ("example_id_column", example_id_column)]
        if name is not None and name not in df.columns
    ]
    if missing:
        problems.append(
            f"Column(s) not in the table: {', '.join(missing)}. The table has columns "
            f"{preview(list(df.columns), 20)}; check the spelling."
        )
    if duplicated := [n for n in (time_column, example_id_column) if list(df.columns).count(n) > 1]:
        problems.append(f"The table has several columns named {preview(duplicated)}; rename them.")
    if example_id_column is not None and example_id_column == time_column:
        problems.append(
            f"time_column and example_id_column are both {time_column!r}; the example id "
            "names the recordings, the time orders each one's rows: pass different columns."
        )
    if example_id_column is None and window_column in df.columns:
        problems.append(
            f"The table already has a column {window_column!r}, the name the windows' ids "
            f"would take. If it names the recordings, pass example_id_column={window_column!r}; "
            "else rename that column, or give the ids another name with window_column."
        )
    raise_all(problems, ParameterError, "the windows")
    data_problems = [] if len(df) else ["The table has no rows; windows need a recording."]
    for arg, name in [("time_column", time_column), ("example_id_column", example_id_column)]:
        if name is not None and (blank := df[name].isna().to_numpy()).any():
            data_problems.append(
                f"{arg} {name!r} is missing in {int(blank.sum())} rows (positions "
                f"{preview(np.flatnonzero(blank))}); fill or drop those rows."
            )
    raise_all(data_problems, DataError, "the table to cut into windows")


def _recordings(df: pd.DataFrame, time_column, example_id_column):
    """Row positions grouped by recording (in order of first appearance), each recording
    in time order (stable), with each ordered row's recording and the recordings' ids."""
    order = time_order(df[time_column])
    if example_id_column is None:
        return order, np.zeros(len(df), dtype=np.int64), np.array([None], dtype=object)
    codes, names = pd.factorize(df[example_id_column])
    order = order[np.argsort(codes[order], kind="stable")]
    return order, codes[order], np.asarray(names, dtype=object)


def _window_frame(df, rows, ids, time_column, example_id_column, window_column) -> pd.DataFrame:
    """A new frame of ``df``'s rows at ``rows`` (each row a window), built column by
    column (a loop over columns, not windows): the time column holds each row's step in
    its window, the id column (a new last one without example ids) the window's id."""
    n_windows, window = rows.shape
    flat = rows.ravel()
    row_ids = ids.take(np.repeat(np.arange(n_windows), window))
    steps = np.tile(np.arange(window, dtype=np.int64), n_windows)
    names, arrays = list(df.columns), []
    for j, name in enumerate(names):  # by position: duplicated names stay apart
        if name == time_column:
            arrays.append(steps)
        elif name == example_id_column:
            arrays.append(row_ids)
        else:
            arrays.append(df.iloc[:, j].array.take(flat))
    if example_id_column is None:
        names.append(window_column)
        arrays.append(row_ids)
    frame = pd.DataFrame(dict(enumerate(arrays)), copy=False)
    frame.columns = pd.Index(names, dtype=object)
    return frame


def _window_ids(names, recording, start, example_id_column):
    """Each window's id: ``"<recording>@<start>"``, or its start step (one recording)."""
    if example_id_column is None:
        return start.astype(np.int64)
    return (pd.Series(names[recording]).astype(str) + "@" + pd.Series(start).astype(str)).array


def _label(name) -> str:
    return "the table" if name is None else repr(plain(name))


def _recording_lengths(names, lengths: np.ndarray) -> str:
    """ "'a': 300 steps, 'b': 200 steps" for the longest few recordings."""
    longest = np.argsort(-lengths, kind="stable")[:5]
    text = ", ".join(f"{_label(names[k])}: {lengths[k]:,} steps" for k in longest)
    return text + (f" and {len(lengths) - 5} more" if len(lengths) > 5 else "")


def _count(n: int, noun: str) -> str:
    """ "1 window", "1,077 windows"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
