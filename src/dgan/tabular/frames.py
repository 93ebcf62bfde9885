"""DataFrames -> the arrays the model trains on (`dataframe_to_arrays`), and back.

The model works on arrays:

* attributes: an ``(N, A)`` array, or ``None`` when there are no attribute columns;
* features: ``N`` series of shape ``(T_i, F)`` with ``T_i <= max_sequence_len``, as one
  `SeriesRows` (the rows of all series in one array; it is also a sequence of series).

Both are ``float64`` when every variable in them is continuous, and ``object`` as soon as
one is discrete (then continuous columns hold Python floats and discrete ones hold the
original values: strings, bools, ints, ...). A missing discrete value is always the
``np.nan`` object itself, so the model's encoder can treat it as one more category.

This module turns a training frame into those arrays plus a `FrameLayout`
(`dataframe_to_arrays`), a frame of attribute values into the array to condition on
(`attributes_frame_to_array`), and finds the series lengths of a frame without
converting it (`series_lengths`). The argument and dtype checks live in
`dgan.tabular.columns`, the layout in `dgan.tabular.layout`, the way back from generated arrays
to a frame (`arrays_to_dataframe`, re-exported here) in `dgan.tabular.to_frame`; value checks
(NaN, inf) and missing-value repair are `dgan.tabular.missing`'s.

**Time order** (LONG frames with a ``time_column``): rows are sorted by the column's
natural order: numbers and datetimes by value; strings that all parse as numbers or as
datetimes by that value (with a log message saying so); other strings keep their order
of first appearance in the frame (with a warning), because sorting them as text would
put "day10" before "day2".
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dgan.config import DfStyle, OutputType
from dgan.errors import DataError, ParameterError, raise_all
from dgan.series import SeriesRows
from dgan.tabular.arrays import (
    raise_length_problems,
    too_long_problem,
    validate_condition_attributes,
)
from dgan.tabular.columns import Columns, Roles, check_data, resolve_roles
from dgan.tabular.layout import (
    FrameLayout,
    column_spec,
    json_value,
)
from dgan.tabular.messages import SHOW, ColumnName, Labels, plain
from dgan.tabular.to_frame import arrays_to_dataframe

__all__ = [
    "Columns",
    "FrameArrays",
    "FrameLayout",
    "arrays_to_dataframe",
    "attributes_frame_to_array",
    "dataframe_to_arrays",
    "series_lengths",
]

logger = logging.getLogger(__name__)


class FrameArrays(NamedTuple):
    """What `dataframe_to_arrays` returns; unpacks like a tuple."""

    attributes: np.ndarray | None
    features: SeriesRows
    attribute_types: list[OutputType]
    feature_types: list[OutputType]
    layout: FrameLayout
    example_labels: Labels | None = None
    """How messages name each example: "row 3" (WIDE), "'sensor-3'" (LONG, its id) or
    "chunk 2 (rows 12-17)" (LONG without example ids)."""


def dataframe_to_arrays(df: pd.DataFrame, columns: Columns, max_sequence_len: int) -> FrameArrays:
    """Split a training DataFrame into attribute and feature arrays, plus its layout.

    WIDE: one row per example; the feature columns (default: every column that is not an
    attribute or the example id) are the time steps of a single feature. LONG: one row
    per time step; rows are grouped into examples by the example id column (examples in
    order of first appearance) and ordered by the time column (stable sort, in the
    column's natural order: see the module docstring); without an
    example id, consecutive chunks of ``max_sequence_len`` rows become examples (rows
    left after the last whole chunk are left out, with a warning). Bool, string, object
    and categorical columns are discrete; the discrete columns of ``columns`` make
    numeric ones discrete too. ``df`` is never modified.

    Raises:
        ParameterError: unknown, overlapping or misplaced column names (all listed).
        DataError: empty frame, unsupported dtypes, an example longer than
            ``max_sequence_len`` (or, without example ids, fewer rows than that),
            attributes that vary within an example.

    Example:
        >>> df = pd.DataFrame({"kind": ["a", "b"], "t0": [1.0, 2.0], "t1": [3.0, 4.0]})
        >>> arrays = dataframe_to_arrays(df, Columns(attribute_columns=["kind"]), 2)
        >>> arrays.features[1].tolist(), arrays.attribute_types
        ([[2.0], [4.0]], [<OutputType.DISCRETE: 0>])
    """
    roles = resolve_roles(df, columns, max_sequence_len)
    check_data(df, roles, max_sequence_len)
    used = set(roles.attributes) | set(roles.features) | {roles.example_id, roles.time}
    specs = [column_spec(df[c], c) for c in df.columns if c in used]
    attribute_types = [_output_type(c, roles) for c in roles.attributes]
    if roles.style is DfStyle.WIDE:
        # The time-step columns form one feature; check_data made them all one type.
        feature_types = [_output_type(roles.features[0], roles)]
        attributes, features, time_grid, labels = _wide_to_arrays(df, roles)
    else:
        feature_types = [_output_type(c, roles) for c in roles.features]
        attributes, features, time_grid, labels = _long_to_arrays(df, roles, max_sequence_len)
    layout = FrameLayout(
        df_style=roles.style,
        attribute_columns=list(roles.attributes),
        feature_columns=list(roles.features),
        example_id_column=roles.example_id,
        time_column=roles.time,
        columns=specs,
        attribute_types=attribute_types,
        feature_types=feature_types,
        time_grid=time_grid,
    )
    return FrameArrays(attributes, features, attribute_types, feature_types, layout, labels)


def _wide_to_arrays(df: pd.DataFrame, roles: Roles):
    attributes = _stack_columns(df, roles.attributes, roles.discrete) if roles.attributes else None
    steps = _stack_columns(df, roles.features, roles.discrete)  # (N, T)
    features = SeriesRows.from_padded(steps[:, :, None])  # N series of (T, 1)
    return attributes, features, None, Labels(df.index, lambda i: f"row {i!r}")


def _long_to_arrays(df: pd.DataFrame, roles: Roles, max_sequence_len: int):
    n_rows = len(df)
    # Row order: stable by time, then stable by example, so rows of one example keep
    # their time order (and their frame order where times tie).
    order = np.arange(n_rows)
    times = None if roles.time is None else _time_keys(df[roles.time])
    if roles.example_id is not None:
        codes, ids = pd.factorize(df[roles.example_id])  # examples in order of first appearance
        if not _in_order(codes, times):  # the sorts below would change nothing otherwise
            if times is not None:
                order = times.sort_values(kind="stable").index.to_numpy()
            order = order[np.argsort(codes[order], kind="stable")]
            codes = codes[order]
        labels = Labels(ids, repr)
    else:
        if times is not None:
            order = times.sort_values(kind="stable").index.to_numpy()
        # Only whole chunks: a shorter last one would make the model variable-length,
        # and generated frames, which have no id column then, could not be split again.
        n_examples = n_rows // max_sequence_len
        if n_examples == 0:
            raise DataError(
                f"Received {n_rows} rows in long data format, but DGAN requires "
                f"max_sequence_len={max_sequence_len} rows to make a training example: the "
                f"DataFrame has {n_rows} rows, fewer than max_sequence_len={max_sequence_len}; "
                "without example_id_column the rows are cut into examples of "
                "max_sequence_len rows. Pass example_id_column, or lower max_sequence_len."
            )
        order = order[: n_examples * max_sequence_len]
        codes = np.arange(len(order)) // max_sequence_len
        labels = Labels(
            np.arange(n_examples),
            lambda k: f"chunk {k} (rows {k * max_sequence_len}-{(k + 1) * max_sequence_len - 1})",
        )
        sorted_by = " (sorted by time)" if roles.time is not None else ""
        left_out = n_rows - len(order)
        note = ""
        if left_out:
            note = f"; the last {left_out} rows, too few for one more, are left out"
        logger.warning(
            f"No example_id_column given: splitting the {n_rows} rows{sorted_by} into "
            f"{n_examples} examples of max_sequence_len={max_sequence_len} consecutive "
            f"rows{note}. Pass example_id_column if the frame holds several series."
        )
    lengths = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])

    problems = []
    if (problem := too_long_problem(lengths, max_sequence_len, labels)) is not None:
        problems.append(problem)
    rows = df[roles.attributes].iloc[order]
    problems += _varying_attributes(rows, codes, labels)
    raise_length_problems(problems, DataError, "the training DataFrame")

    in_order = len(order) == n_rows and (order[1:] > order[:-1]).all()  # order is 0, 1, ...
    rows = None if in_order else order  # no gather of every row when they are in order
    matrix = _stack_columns(df, roles.features, roles.discrete, rows)  # (rows, F)
    features = SeriesRows(matrix, lengths)
    attributes = None
    if roles.attributes:
        attributes = _stack_columns(df, roles.attributes, roles.discrete, order[starts])
    time_grid = None
    if roles.time is not None:
        longest = int(np.argmax(lengths))  # the first of the longest examples
        rows_of_longest = order[starts[longest] : starts[longest] + lengths[longest]]
        time_grid = [json_value(v) for v in df[roles.time].iloc[rows_of_longest]]
    return attributes, features, time_grid, labels


def _varying_attributes(rows: pd.DataFrame, codes: np.ndarray, labels: list[str]) -> list[str]:
    """One problem per attribute column that is not constant within every example
    (``codes``: each row's example, sorted)."""
    if rows.shape[1] == 0 or not _any_varying(rows, codes):
        return []
    groups = rows.reset_index(drop=True).groupby(codes, sort=False)
    counts = groups.nunique(dropna=False)
    # Examples whose rows hold one value and some missing (blank) cells.
    values_only = groups.nunique(dropna=True).to_numpy() <= 1
    problems = []
    for j, column in enumerate(rows.columns):
        varying = counts.iloc[:, j].to_numpy() > 1
        blank = varying & values_only[:, j]
        if blank.any():
            problems.append(
                f"Attribute {column!r} is missing (a blank cell) in some rows of example(s) "
                f"{_named(np.flatnonzero(blank), counts.index, labels)}, while their other rows "
                "hold a value, so it is not constant within each example (gretel's words). An "
                "attribute has one value per series: fill in the missing cells with the series' "
                "value (or, if the column changes over time, move it to feature_columns)."
            )
        if (varying & ~blank).any():
            problems.append(
                f"Attribute {column!r} is not constant within each example: {column!r} is not "
                "constant within example(s) "
                f"{_named(np.flatnonzero(varying & ~blank), counts.index, labels)}. "
                "An attribute has one value per series: fix those rows, or if the column "
                "changes over time, move it to feature_columns."
            )
    return problems


def _any_varying(rows: pd.DataFrame, codes: np.ndarray) -> bool:
    """Whether a column of ``rows`` differs from its example's first row somewhere (a
    missing value equals a missing value), a whole column at a time."""
    starts = np.flatnonzero(np.diff(codes, prepend=-1))  # each example's first row
    counts = np.diff(starts, append=len(codes))
    for j in range(rows.shape[1]):
        column = rows.iloc[:, j]
        if ptypes.is_numeric_dtype(column.dtype) and not ptypes.is_extension_array_dtype(column):
            values = column.to_numpy()
        else:  # codes of equal values (missing: -1), as pandas groups them
            values = pd.factorize(column)[0]
        first = np.repeat(values[starts], counts)
        differ = values != first
        if values.dtype.kind == "f":
            differ &= ~(np.isnan(values) & np.isnan(first))
        if differ.any():
            return True
    return False


def _named(bad: np.ndarray, index: pd.Index, labels: list[str]) -> str:
    """The labels of the first few examples in ``bad`` (positions in ``index``)."""
    named = ", ".join(labels[index[k]] for k in bad[:SHOW])
    return named + (f" and {bad.size - SHOW} more" if bad.size > SHOW else "")


def attributes_frame_to_array(df: pd.DataFrame, layout: FrameLayout) -> np.ndarray:
    """Convert a frame of attribute values into the ``(N, A)`` array to condition on.

    ``df`` needs the layout's attribute columns (others are ignored). It has one row per
    example to generate; a LONG-style frame with several rows per example id (e.g. part
    of the training frame) is collapsed to one row per example, in order of first
    appearance, after checking that the attributes are constant within each example.

    Raises:
        ParameterError: the model has no attributes, or ``df`` is not a DataFrame.
        DataError: missing columns (all named), no rows, a continuous attribute that is
            non-numeric, NaN or infinite.
    """
    if not layout.attribute_columns:
        raise ParameterError(
            "This model was trained without attribute columns, so it cannot be conditioned "
            "on attributes; generate without an attributes frame."
        )
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(f"The attributes must be a pandas DataFrame, got {type(df).__name__}.")
    missing = [c for c in layout.attribute_columns if c not in df.columns]
    if missing:
        raise DataError(
            f"The attributes frame lacks column(s) {missing}; it needs every attribute "
            f"column the model was trained on: {layout.attribute_columns}."
        )
    if len(df) == 0:
        raise DataError("The attributes frame has no rows; give one row per example to generate.")
    rows = df
    id_column = layout.example_id_column
    if id_column is not None and id_column in df.columns and df[id_column].duplicated().any():
        codes, ids = pd.factorize(df[id_column])
        order = np.argsort(codes, kind="stable")
        labels = [repr(plain(i)) for i in ids]
        grouped = df[layout.attribute_columns].iloc[order]
        raise_all(_varying_attributes(grouped, codes[order], labels), DataError, "attributes")
        first_rows = np.unique(codes, return_index=True)[1]  # first row of each example
        rows = df.iloc[first_rows]
    values = np.empty((len(rows), len(layout.attribute_columns)), dtype=object)
    for j, c in enumerate(layout.attribute_columns):  # as given: validation checks them
        values[:, j] = _column_values(rows[c], True)
    return validate_condition_attributes(values, layout.attribute_types, layout.attribute_columns)


def _stack_columns(df: pd.DataFrame, names, discrete, rows=None) -> np.ndarray:
    """(len(df), len(names)) array: float64 if all continuous, else object (see module
    doc); only the rows at positions ``rows``, in that order, when given."""
    is_discrete = [c in discrete for c in names]
    n = len(df) if rows is None else len(rows)
    out = np.empty((n, len(names)), dtype=object if any(is_discrete) else np.float64)
    for j, (c, d) in enumerate(zip(names, is_discrete, strict=True)):
        out[:, j] = _column_values(df[c], d, rows)
    return out


def _column_values(series: pd.Series, discrete: bool, rows=None) -> np.ndarray:
    """A fresh numpy copy of a column (of the rows at ``rows``, when given): floats, or
    objects with missing values as np.nan."""
    if not discrete:
        if rows is None:
            return series.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
        return series.to_numpy(dtype=np.float64, na_value=np.nan)[rows]  # a copy
    if rows is not None:
        series = series.iloc[rows]
    values = series.astype(object).to_numpy(copy=True)
    missing = pd.isna(values)
    if missing.any():
        values[missing] = np.nan  # one missing marker: None/pd.NA/NaT/nan -> np.nan
    return values


def _output_type(column: ColumnName, roles: Roles) -> OutputType:
    return OutputType.DISCRETE if column in roles.discrete else OutputType.CONTINUOUS


def _in_order(codes: np.ndarray, times: pd.Series | None) -> bool:
    """Whether the rows are grouped by example (``codes``, numbered by first appearance)
    and, within each example, in time order already."""
    same = np.diff(codes) == 0
    if not (same | (np.diff(codes) > 0)).all():
        return False
    if times is None:
        return True
    keys = times.to_numpy()
    if keys.dtype.kind not in "ifmM":  # (unsigned differences would wrap around)
        return False
    with np.errstate(invalid="ignore"):
        steps = np.diff(keys)
        return bool((steps[same] >= steps.dtype.type(0)).all())  # NaN, NaT: not in order


def _time_keys(series: pd.Series) -> pd.Series:
    """The time column's values to sort by, indexed by row position (see the module doc)."""
    values = series.reset_index(drop=True)
    name = series.name
    if not (ptypes.is_numeric_dtype(values) or ptypes.is_datetime64_any_dtype(values)):
        numbers = pd.to_numeric(values, errors="coerce")
        if numbers.notna().all():
            logger.warning("Time column %r holds numbers written as text; sorted as numbers.", name)
            values = numbers
        elif (dates := _as_datetimes(values)) is not None:
            logger.warning("Time column %r holds dates written as text; sorted as dates.", name)
            values = dates
        else:
            first = ", ".join(repr(v) for v in pd.unique(values)[:3])
            logger.warning(
                "Time column %r holds text that is neither numbers nor dates, so its rows are "
                "ordered by each value's first appearance in the frame (%s, ...), not "
                "alphabetically; convert it to numbers or datetimes to sort by value.",
                name,
                first,
            )
            values = pd.Series(pd.factorize(values)[0])
    return values


def _as_datetimes(values: pd.Series) -> pd.Series | None:
    """Strings parsed as datetimes, or None when some do not parse."""
    try:
        dates = pd.to_datetime(values, errors="coerce", format="mixed")
    except (TypeError, ValueError, OverflowError):
        return None
    if dates.isna().any() or not ptypes.is_datetime64_any_dtype(dates):
        return None
    return dates


def series_lengths(df: pd.DataFrame, columns: Columns) -> np.ndarray:
    """The length of every series in ``df``, read the way `dataframe_to_arrays` reads it.

    Only the example id column is read (LONG: rows per example id; WIDE: the number of
    feature columns), so finding ``max_sequence_len`` costs nothing like a conversion.
    The columns are checked as `dataframe_to_arrays` checks them.

    Raises:
        ParameterError: bad column arguments, or a LONG frame without example ids (its
            series are cut to max_sequence_len, so they have no length of their own).

    Example:
        >>> df = pd.DataFrame({"id": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]})
        >>> series_lengths(df, Columns(example_id_column="id", df_style="long")).tolist()
        [2, 1]
    """
    roles = resolve_roles(df, columns, 1)
    if roles.style is DfStyle.WIDE:
        return np.full(len(df), len(roles.features), dtype=np.int64)
    if roles.example_id is None:
        raise ParameterError(
            "Without example_id_column, LONG rows are cut into series of max_sequence_len "
            "rows, so the series lengths cannot be inferred; pass max_sequence_len or "
            "example_id_column."
        )
    return df[roles.example_id].value_counts(sort=False, dropna=True).to_numpy()


def time_order(series: pd.Series) -> np.ndarray:
    """Row positions of a time column in its natural order, as training sorts it (stable;
    see the module docstring).

    Example:
        >>> time_order(pd.Series(["3", "10", "2"])).tolist()  # numbers as text: by value
        [2, 0, 1]
    """
    return _time_keys(series).sort_values(kind="stable").index.to_numpy()
