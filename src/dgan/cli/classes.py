"""Attributes of a few whole numbers are classes: the command line reads them as discrete.

A class label stored as a number (``label`` 0..10) reads as continuous under gretel's
rule, which the Python API keeps (numbers are continuous unless in ``discrete_columns``).
``dgan train`` and ``dgan evaluate`` (without ``--model``) read an attribute as discrete
without ``--discrete`` when it holds whole numbers only, 2 to `MAX_CLASSES` distinct
values, with at least `MIN_SERIES_PER_CLASS` series per value on average (as many as the
plan asks of a discrete attribute's categories). ``--continuous COLS`` keeps such columns
numbers. The plan says which columns the rule read as classes (docs/design.md, decision 19).

Example:
    >>> import pandas as pd
    >>> from dgan.tabular.columns import Columns
    >>> df = pd.DataFrame({"label": [0, 1, 2] * 10, "age": range(30), "x": 0.5})
    >>> columns = Columns(attribute_columns=["label", "age"])
    >>> columns, classes = read_classes(df, columns, continuous=None)
    >>> classes, columns.discrete_columns
    (['label'], ['label'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dgan.errors import ParameterError
from dgan.tabular.columns import Columns
from dgan.tabular.frames import series_lengths

MAX_CLASSES = 20
"""An attribute of more distinct whole numbers than this stays continuous."""
MIN_SERIES_PER_CLASS = 5
"""Whole numbers read as classes need at least this many series per value, on average."""


def read_classes(
    df: pd.DataFrame,
    columns: Columns,
    continuous: Sequence[str] | None,
    max_sequence_len: int | None = None,
) -> tuple[Columns, list[str]]:
    """``columns`` with the attributes of ``df`` that hold a few whole numbers added to
    its discrete columns (unless named in ``continuous``), and those attributes' names.
    ``max_sequence_len`` counts the series of a LONG table without example ids (its rows
    are cut into series that long); without it such a table keeps its columns as given.

    Raises:
        ParameterError: ``continuous`` names a column that is not an attribute, or one
            also in ``--discrete``.
    """
    attributes = list(columns.attribute_columns or [])
    discrete = list(columns.discrete_columns or [])
    _check_continuous(list(continuous or []), attributes, discrete)
    candidates = [
        name
        for name in attributes
        if name not in discrete
        and name not in (continuous or [])
        and name in df.columns
        and ptypes.is_numeric_dtype(df[name].dtype)
        and not ptypes.is_bool_dtype(df[name].dtype)
    ]
    if not candidates:
        return columns, []
    if not columns.is_long:
        n_series = len(df)
    elif columns.example_id_column is not None:
        n_series = len(series_lengths(df, columns))
    elif max_sequence_len:
        n_series = len(df) // max_sequence_len
    else:
        return columns, []
    classes = [name for name in candidates if _few_whole_numbers(df[name], n_series)]
    if not classes:
        return columns, []
    return dataclasses.replace(columns, discrete_columns=[*discrete, *classes]), classes


def class_note(name: str) -> str:
    """What the plan adds to a column that the rule read as classes, with the way out.

    Example:
        >>> class_note("label")
        'whole numbers read as classes (--continuous label reads them as numbers)'
    """
    return f"whole numbers read as classes (--continuous {name} reads them as numbers)"


def _few_whole_numbers(column: pd.Series, n_series: int) -> bool:
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[np.isfinite(values)]
    if values.size == 0 or not np.all(values == np.round(values)):
        return False
    count = len(np.unique(values))
    return 2 <= count <= MAX_CLASSES and count * MIN_SERIES_PER_CLASS <= n_series


def _check_continuous(continuous: list[str], attributes: list, discrete: list) -> None:
    not_attributes = [c for c in continuous if c not in attributes]
    if not_attributes:
        raise ParameterError(
            f"--continuous lists {', '.join(map(repr, not_attributes))}, not in --attributes: "
            "only attributes are read as classes without --discrete; drop it from "
            "--continuous (features are read as numbers unless in --discrete)."
        )
    both = [c for c in continuous if c in discrete]
    if both:
        raise ParameterError(
            f"{', '.join(map(repr, both))} is in both --discrete and --continuous; keep it "
            "in the one that says how to read it."
        )
