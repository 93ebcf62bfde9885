"""Error messages in the command line's words: flags instead of Python parameter names.

The library's messages name ``example_id_column``, ``discrete_columns`` and so on, as a
Python user passes them; `in_flag_words` rewrites them for the ``dgan`` command line,
which spells them ``--example-id``, ``--discrete``, ... `hint_long_data` adds the fix
for the most common slip: a LONG table (one row per time step) read as WIDE because
``--time`` was forgotten.

The ``dgan`` command's log messages (warnings) go through `FlagWordsFormatter`, so
they name flags too.

Example:
    >>> in_flag_words("Pass example_id_column, or lower max_sequence_len.")
    'Pass --example-id, or lower --max-sequence-len.'
    >>> in_flag_words("use precision='fp32' (or 'auto'), or train without resume_from.")
    "use --precision 'fp32' (or 'auto'), or train without --resume."
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

import pandas as pd

from dgan.errors import DataError, DGANError

_WORDS = [  # (pattern, replacement), applied in order
    (r"\(discrete_columns / OutputType\.DISCRETE\)", "(--discrete)"),
    (r"\bdf_style=DfStyle\.LONG\b", "--style long"),
    (r"\bdf_style=DfStyle\.WIDE\b", "--style wide"),
    (r"\bDfStyle\.LONG\b", "--style long"),
    (r"\bDfStyle\.WIDE\b", "--style wide"),
    (r"\bdf_style\b", "--style"),
    (r"\bexample_id_column\b", "--example-id"),
    (r"\btime_column\b", "--time"),
    (r"\battribute_columns\b", "--attributes"),
    (r"\bfeature_columns\b", "--features"),
    (r"\bdiscrete_columns\b", "--discrete"),
    (r"\bmax_sequence_len\b", "--max-sequence-len"),
    (r"\bsample_len\b", "--sample-len"),
    (r"\bbatch_size\b", "--batch-size"),
    (r"\btraining_steps\b", "--training-steps"),
    (r"\btraining_minutes\b", "--training-minutes"),
    (r"\bdp_epsilon\b", "--dp-epsilon"),
    (r"\bdp_delta\b", "--dp-delta"),
    (r"\bpublic_values=", "in --config's [public_values] table: "),
    (r"\bepochs=(\d)", r"--epochs \1"),
    (r"\bset epochs or\b", "set --epochs or"),
    (r"\btarget_attribute\b", "--target"),
    (r"\bresume_from\b", "--resume"),
    (r"\bcheckpoint_dir\b", "--checkpoint-dir"),
    (r"\bcheckpoint_every\b", "--checkpoint-every"),
    (r"\b(window|stride)=(-?\d)", r"--\1 \2"),
    (r", or give the ids another name with window_column\b", ""),  # no flag for it
    (
        r"split these series into shorter ones with their own example ids\.",
        "cut them into windows of N steps with --window N (README: --window).",
    ),
    (r"\bor pass None\b", "or leave out --target"),
    (r"\bonly epochs and the checkpoint settings\b", "only --epochs and the checkpoint flags"),
    (r"\b(seed|precision|epochs)(?=: \S+ in the checkpoint)", r"--\1"),  # config differs
    (r"\(precision=None\)", "(no --precision)"),
    (r"(?<![\w-])precision=", "--precision="),
    (r"\(cuda=True\)", "(cuda = true in --config)"),
    (r"(--[a-z-]+)=", r"\1 "),  # "--time='t'" reads "--time 't'"
    (r"\bDataFrame\b", "table"),
]


def in_flag_words(message: str) -> str:
    """``message`` with Python parameter names replaced by the CLI flags (see the module).

    Example:
        >>> in_flag_words("target_attribute='x' is not a discrete attribute; or pass None.")
        "--target 'x' is not a discrete attribute; or leave out --target."
    """
    for pattern, replacement in _WORDS:
        message = re.sub(pattern, replacement, message)
    return message


class FlagWordsFormatter(logging.Formatter):
    """A log formatter that puts messages `in_flag_words` (the ``dgan`` command's logs).

    Example:
        >>> record = logging.LogRecord("dgan", logging.WARNING, "", 0,
        ...                            "use precision=%r here", ("fp32",), None)
        >>> FlagWordsFormatter("dgan: %(message)s").format(record)
        "dgan: use --precision 'fp32' here"
    """

    def format(self, record: logging.LogRecord) -> str:
        return in_flag_words(super().format(record))


@contextlib.contextmanager
def flag_words() -> Iterator[None]:
    """Re-raise any `DGANError` in the block with its message `in_flag_words`."""
    try:
        yield
    except DGANError as error:
        raise type(error)(in_flag_words(str(error))) from error


def check_not_long(df: pd.DataFrame, style_given: bool, example_id: str | None) -> None:
    """Refuse a table read as WIDE by default that is LONG: its ``--example-id`` repeats,
    or, with none given, one column repeats in runs while another counts up within each
    run (`long_columns`), as a series id and its time steps do.

    Example:
        >>> check_not_long(pd.DataFrame({"id": [1, 2]}), False, "id")  # one row each: fine
    """
    if style_given:
        return
    if example_id is None:
        found = long_columns(df)
        if found is not None:
            raise DataError(
                f"column {found[0]!r} repeats in runs and {found[1]!r} counts up within each "
                "run, as a LONG table's series id and time steps do, but the table is read "
                f"as WIDE; pass --example-id {found[0]} --time {found[1]} (or --style wide if "
                "it is WIDE, one row per series)."
            )
        return
    if example_id in df.columns and df[example_id].duplicated().any():
        raise DataError(
            f"--example-id {example_id!r} repeats, so the table has several rows per series "
            "(LONG), but it is read as WIDE (one row per series) because neither --time nor "
            "--style was given. Pass --time COL (the column ordering each series) or "
            "--style long."
        )


def long_columns(df: pd.DataFrame) -> tuple[str, str] | None:
    """(id, time) columns that give a table away as LONG, or None: the first column whose
    values come in runs, each value in one run only, and the first column of whole
    numbers that rises within every one of those runs and starts lower at each new run
    than it ended the run before (each series' steps counted anew).

    Example:
        >>> long = pd.DataFrame({"id": [7, 7, 7, 9, 9, 9], "step": [0, 1, 2, 0, 1, 2],
        ...                      "value": [0.5, 0.1, 0.3, 0.2, 0.9, 0.4]})
        >>> long_columns(long)
        ('id', 'step')
        >>> print(long_columns(long.drop(columns="step")))  # nothing counts up: WIDE it may be
        None
    """
    counters = None  # (name, changes) of the whole-number columns, read once if needed
    for id_column in df.columns:
        ids = df[id_column]
        if pd.api.types.is_float_dtype(ids):  # measurements, not ids: and the scan stays short
            continue
        starts = ids.ne(ids.shift())  # the first row of each run
        runs = int(starts.sum())
        if runs == len(df) or runs != ids.nunique(dropna=False) or runs < 2:
            continue
        if counters is None:
            counters = _whole_number_changes(df)
        for time_column, step in counters:
            if time_column == id_column:
                continue
            if bool((step[~starts] > 0).all()) and bool((step[starts][1:] <= 0).all()):
                return str(id_column), str(time_column)
    return None


def _whole_number_changes(df: pd.DataFrame) -> list[tuple]:
    """(name, row-to-row changes) of each numeric, non-boolean column of whole numbers."""
    found = []
    for name in df.columns:
        values = df[name]
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        if bool((values.dropna() % 1 == 0).all()):
            found.append((name, values.diff()))
    return found


@contextlib.contextmanager
def hint_long_data(style_given: bool) -> Iterator[None]:
    """Add "pass --time / --style long" to errors about the data (`DataError`) when a
    table defaulted to WIDE; other errors (a setting, a process) keep their message."""
    try:
        yield
    except DataError as error:
        if style_given:
            raise
        raise type(error)(
            f"{error} (The table was read as WIDE, one row per series, because neither "
            "--time nor --style was given; if it has one row per time step, pass --time COL "
            "or --style long.)"
        ) from error
