"""``--window`` and ``--stride``: long recordings cut into windows before the plan.

``dgan train`` cuts the table (`dgan.tabular.windows`), says so in the plan's second line
and records the windowing in the model file; ``dgan evaluate`` cuts the real table the
same way (the model's window, or ``--window``), into disjoint windows unless ``--stride``
says otherwise: overlapping real windows would share steps across the two halves of the
real-vs-real baseline and make it look closer than independent data. The synthetic
table is windows already and is read as it is.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"t": range(6), "x": range(6)})
    >>> columns = Columns(time_column="t", df_style="long")
    >>> windows, summary = cut_table(df, columns, 3, None)
    >>> windowed_columns(columns, 3).example_id_column, windows["window"].unique().tolist()
    ('window', [0, 3])
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import pandas as pd

from dgan.cli.messages import in_flag_words
from dgan.errors import ParameterError, raise_all
from dgan.model import DGAN
from dgan.tabular.columns import Columns
from dgan.tabular.layout import Windowing
from dgan.tabular.windows import WINDOW_COLUMN, WindowSummary, cut_windows, window_problems


def add_window_flags(group: argparse._ArgumentGroup) -> None:
    """Declare ``--window`` and ``--stride`` in ``group`` (train's and evaluate's)."""
    group.add_argument(
        "--window",
        type=int,
        metavar="N",
        help="LONG: cut each series (each --example-id; without one, the whole table) into "
        "windows of N steps in --time order, each window one series; the time column "
        "becomes the step within the window (evaluate: the real table, as --model was "
        "trained)",
    )
    group.add_argument(
        "--stride",
        type=int,
        metavar="N",
        help="steps between window starts (default: --window, windows side by side; "
        "smaller overlaps them)",
    )


def check_window_flags(window: int | None, stride: int | None, columns: Columns) -> None:
    """Refuse ``--window`` / ``--stride`` where they cannot work, before any data is read
    (``columns``: how the tables are read, from the flags or a model).

    Example:
        >>> check_window_flags(168, 24, Columns(time_column="ts", df_style="long"))  # fine
    """
    if window is None:
        if stride is not None:
            raise ParameterError("--stride needs --window N (the steps of each window).")
        return
    problems = [in_flag_words(problem) for problem in window_problems(window, stride)]
    if columns.time_column is None:
        problems.append(
            "--window needs --time COL: the table (LONG, one row per time step) is cut into "
            "windows of each series in time order."
        )
    elif not columns.is_long:
        problems.append(
            "--window cuts LONG tables (one row per time step) into windows; --style wide "
            "reads one row per series. Drop --style wide, or drop --window."
        )
    raise_all(problems, ParameterError, "--window")


def windowed_columns(columns: Columns, window: int | None) -> Columns:
    """The columns that read a table of windows: without an example id, the windows' ids
    are in the new ``window`` column."""
    if window is None or columns.example_id_column is not None:
        return columns
    return replace(columns, example_id_column=WINDOW_COLUMN)


def cut_table(
    df: pd.DataFrame, columns: Columns, window: int | None, stride: int | None
) -> tuple[pd.DataFrame, WindowSummary | None]:
    """``df`` cut into windows as `windowed_columns` reads them (unchanged without a
    window): each value of the example id column is one recording; without one the whole
    table is one recording."""
    if window is None:
        return df, None
    windows = cut_windows(
        df,
        window,
        stride,
        time_column=columns.time_column,
        example_id_column=columns.example_id_column,
    )
    return windows.frame, windows.summary


def real_recordings(columns: Columns, df: pd.DataFrame) -> Columns:
    """How ``dgan evaluate`` finds the recordings of a real table for a model trained on
    windows of one recording: the table is that recording, unless it has the windows' id
    column already (then each id is cut again: a window of a table of windows is itself).

    Example:
        >>> columns = Columns(example_id_column="window", time_column="t", df_style="long")
        >>> real_recordings(columns, pd.DataFrame({"t": [0, 1]})).example_id_column is None
        True
    """
    if columns.example_id_column == WINDOW_COLUMN and WINDOW_COLUMN not in df.columns:
        return replace(columns, example_id_column=None)
    return columns


def with_windows_line(plan: str, summary: WindowSummary | None) -> str:
    """The plan's text with a line about the windows after its first line.

    Example:
        >>> with_windows_line("training plan:\\n  12 examples", None)
        'training plan:\\n  12 examples'
    """
    if summary is None:
        return plan
    head, _, rest = plan.partition("\n")
    return f"{head}\n  windows: {summary}\n{rest}"


def remember_windowing(model: DGAN, summary: WindowSummary | None) -> None:
    """Record in ``model``'s layout how its training table was cut, so `dgan evaluate
    --model` cuts a real table the same way."""
    if summary is not None and model.data_frame_layout is not None:
        model.data_frame_layout = replace(model.data_frame_layout, windowing=summary.windowing)


def evaluation_window(window: int | None, windowing: Windowing | None) -> int | None:
    """The window to cut ``dgan evaluate``'s real table with: the model's (``windowing``,
    None when it was not trained on windows), else ``--window``.

    Example:
        >>> evaluation_window(None, Windowing(window=168, stride=24))
        168
    """
    if windowing is None:
        return window
    if window is not None:
        raise ParameterError(
            f"--model was trained on windows of {windowing.window} steps and cuts the real "
            "table into windows of that length itself; drop --window (--stride may stay)."
        )
    return windowing.window
