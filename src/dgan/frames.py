"""DataFrames <-> the arrays the model trains on, and repair of missing values.

The model works on arrays:

* attributes: an ``(N, A)`` array, or ``None`` when there are no attribute columns;
* features: a list of ``N`` arrays of shape ``(T_i, F)`` with ``T_i <= max_sequence_len``.

Both are ``float64`` when every variable in them is continuous, and ``object`` as soon as
one is discrete (then continuous columns hold Python floats and discrete ones hold the
original values: strings, bools, ints, ...). A missing discrete value is always the
``np.nan`` object itself, so the model's encoder can treat it as one more category.

`dataframe_to_arrays` turns a training frame into those arrays plus a `FrameLayout`,
and `arrays_to_dataframe` turns generated arrays back into a frame shaped like the
training one: same columns, same order, same dtypes. The layout is stored as JSON in
the model file.

The **time grid**: in LONG frames with a ``time_column``, generated series get the time
values of the longest training example (the first one, if several tie), in time order;
a generated series of length L gets the first L of them. Should a generated series be
longer than that example, the grid is extended by repeating its last step (numbers and
datetimes) or its last value (anything else, or a one-value grid).

`repair_missing_values` and `check_finite` validate and repair arrays before encoding;
the model calls them for `train_numpy` and `train_dataframe` alike.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dgan.config import DfStyle, OutputType
from dgan.errors import DataError, ParameterError, SerializationError, raise_all

logger = logging.getLogger(__name__)

LAYOUT_FORMAT_VERSION = 1
_SHOW = 5  # how many offending examples, rows or columns a message names

ColumnName = str | int  # names must survive JSON, so only str and int are accepted


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class ColumnSpec:
    """What is needed to rebuild one column of the training frame."""

    name: ColumnName
    dtype: str
    """``str(series.dtype)``, e.g. "int64", "bool", "str", "category", "datetime64[us, UTC]"."""
    categories: list | None = None
    """For pandas categoricals: the categories, as JSON values (datetimes as ISO strings)."""
    categories_dtype: str | None = None
    """dtype of the categories (to parse them back), for pandas categoricals."""
    ordered: bool = False
    """Whether the categorical is ordered."""


@dataclass(frozen=True)
class FrameLayout:
    """Everything needed to rebuild a DataFrame like the training one from arrays.

    Everything in it is JSON-native after `to_json_dict`; build one with
    `dataframe_to_arrays`, never by hand.
    """

    df_style: DfStyle
    attribute_columns: list[ColumnName]
    feature_columns: list[ColumnName]
    """LONG: one per feature. WIDE: one per time step of the single feature."""
    example_id_column: ColumnName | None
    time_column: ColumnName | None
    columns: list[ColumnSpec]
    """Every column of the training frame that dgan uses, in the frame's order."""
    attribute_types: list[OutputType]
    feature_types: list[OutputType]
    time_grid: list | None
    """Time values given to generated series (see the module docstring), JSON values."""

    @property
    def column_order(self) -> list[ColumnName]:
        """The columns of a generated frame, in order."""
        return [c.name for c in self.columns]

    def spec(self, name: ColumnName) -> ColumnSpec:
        """The `ColumnSpec` of column ``name``."""
        return next(c for c in self.columns if c.name == name)

    def to_json_dict(self) -> dict[str, Any]:
        """Return a dict that `json.dumps` accepts (strictly: no NaN, no numpy scalars)."""
        return {
            "format_version": LAYOUT_FORMAT_VERSION,
            "df_style": self.df_style.value,
            "attribute_columns": list(self.attribute_columns),
            "feature_columns": list(self.feature_columns),
            "example_id_column": self.example_id_column,
            "time_column": self.time_column,
            "columns": [asdict(c) for c in self.columns],
            "attribute_types": [t.name for t in self.attribute_types],
            "feature_types": [t.name for t in self.feature_types],
            "time_grid": None if self.time_grid is None else list(self.time_grid),
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> FrameLayout:
        """Rebuild a layout from `to_json_dict` output (as read back from a model file)."""
        try:
            version = data["format_version"]
            if version != LAYOUT_FORMAT_VERSION:
                raise ValueError(f"format_version {version!r}, expected {LAYOUT_FORMAT_VERSION}")
            return cls(
                df_style=DfStyle(data["df_style"]),
                attribute_columns=list(data["attribute_columns"]),
                feature_columns=list(data["feature_columns"]),
                example_id_column=data["example_id_column"],
                time_column=data["time_column"],
                columns=[ColumnSpec(**c) for c in data["columns"]],
                attribute_types=[OutputType[t] for t in data["attribute_types"]],
                feature_types=[OutputType[t] for t in data["feature_types"]],
                time_grid=data["time_grid"],
            )
        except (KeyError, TypeError, ValueError) as e:
            raise SerializationError(
                f"The DataFrame layout stored in the model file is invalid ({e!r}); the file "
                "is corrupt or was written by an incompatible dgan version. Retrain the model "
                "or load it with the dgan version that saved it."
            ) from e


class FrameArrays(NamedTuple):
    """What `dataframe_to_arrays` returns; unpacks like a tuple."""

    attributes: np.ndarray | None
    features: list[np.ndarray]
    attribute_types: list[OutputType]
    feature_types: list[OutputType]
    layout: FrameLayout


# ------------------------------------------------------------------ frame -> arrays


class _Roles(NamedTuple):
    """The resolved role of every used column."""

    style: DfStyle
    attributes: list[ColumnName]
    features: list[ColumnName]
    example_id: ColumnName | None
    time: ColumnName | None
    discrete: set[ColumnName]  # forced by the user or implied by the dtype


def dataframe_to_arrays(
    df: pd.DataFrame,
    *,
    attribute_columns: Sequence[ColumnName] | None = None,
    feature_columns: Sequence[ColumnName] | None = None,
    example_id_column: ColumnName | None = None,
    time_column: ColumnName | None = None,
    discrete_columns: Sequence[ColumnName] | None = None,
    df_style: DfStyle | str = DfStyle.WIDE,
    max_sequence_len: int,
) -> FrameArrays:
    """Split a training DataFrame into attribute and feature arrays, plus its layout.

    WIDE: one row per example; ``feature_columns`` (default: every column that is not an
    attribute or the example id) are the time steps of a single feature. LONG: one row
    per time step; rows are grouped into examples by ``example_id_column`` (examples in
    order of first appearance) and ordered by ``time_column`` (stable sort); without an
    example id, consecutive chunks of ``max_sequence_len`` rows become examples.
    Bool, string, object and categorical columns are discrete; ``discrete_columns``
    makes numeric ones discrete too. ``df`` is never modified.

    Raises:
        ParameterError: unknown, overlapping or misplaced column names (all listed).
        DataError: empty frame, unsupported dtypes, an example longer than
            ``max_sequence_len``, attributes that vary within an example.

    Example:
        >>> df = pd.DataFrame({"kind": ["a", "b"], "t0": [1.0, 2.0], "t1": [3.0, 4.0]})
        >>> arrays = dataframe_to_arrays(df, attribute_columns=["kind"], max_sequence_len=2)
        >>> arrays.features[1].tolist(), arrays.attribute_types
        ([[2.0], [4.0]], [<OutputType.DISCRETE: 0>])
    """
    roles = _resolve_roles(
        df,
        attribute_columns,
        feature_columns,
        example_id_column,
        time_column,
        discrete_columns,
        df_style,
        max_sequence_len,
    )
    _check_data(df, roles, max_sequence_len)
    used = set(roles.attributes) | set(roles.features) | {roles.example_id, roles.time}
    specs = [_column_spec(df[c], c) for c in df.columns if c in used]
    attribute_types = [_output_type(c, roles) for c in roles.attributes]
    if roles.style is DfStyle.WIDE:
        # The time-step columns form one feature; _check_data made them all one type.
        feature_types = [_output_type(roles.features[0], roles)]
        attributes, features, time_grid = _wide_to_arrays(df, roles)
    else:
        feature_types = [_output_type(c, roles) for c in roles.features]
        attributes, features, time_grid = _long_to_arrays(df, roles, max_sequence_len)
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
    return FrameArrays(attributes, features, attribute_types, feature_types, layout)


def _resolve_roles(
    df,
    attribute_columns,
    feature_columns,
    example_id_column,
    time_column,
    discrete_columns,
    df_style,
    max_sequence_len,
) -> _Roles:
    """Check the arguments against each other and the frame's columns; raise all at once."""
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(f"df must be a pandas DataFrame, got {type(df).__name__}.")
    problems: list[str] = []
    try:  # "LONG" and "long" alike, as users type it
        style = DfStyle(df_style.lower() if type(df_style) is str else df_style)
    except (ValueError, AttributeError):
        problems.append(f"df_style must be DfStyle.WIDE or DfStyle.LONG, got {df_style!r}.")
        style = DfStyle.WIDE
    if isinstance(max_sequence_len, bool) or not isinstance(max_sequence_len, int):
        problems.append(f"max_sequence_len must be a positive integer, got {max_sequence_len!r}.")
    elif max_sequence_len < 1:
        problems.append(f"max_sequence_len must be a positive integer, got {max_sequence_len}.")
    lists = {
        "attribute_columns": _name_list("attribute_columns", attribute_columns, problems),
        "feature_columns": _name_list("feature_columns", feature_columns, problems),
        "discrete_columns": _name_list("discrete_columns", discrete_columns, problems),
    }
    singles = {"example_id_column": example_id_column, "time_column": time_column}
    problems += _argument_problems(df, lists, singles, style)
    raise_all(problems, ParameterError, "the DataFrame arguments")

    # Defaults (gretel's): no attributes; features are all columns with no other role.
    attributes = lists["attribute_columns"] or []
    features = lists["feature_columns"]
    if features is None:
        excluded = {*attributes, example_id_column, time_column}
        features = [c for c in df.columns if c not in excluded]
    discrete = set(lists["discrete_columns"] or [])
    used = [*attributes, *features, *(c for c in singles.values() if c is not None)]
    raise_all(_role_problems(df, features, discrete, used), ParameterError, "the columns")

    for c in [*attributes, *features]:
        if _is_auto_discrete(df[c].dtype) and c not in discrete:
            logger.info("Column %r is discrete because of its dtype %s.", c, df[c].dtype)
            discrete.add(c)
    return _Roles(
        style=style,
        attributes=[_plain(c) for c in attributes],
        features=[_plain(c) for c in features],
        example_id=_plain(example_id_column),
        time=_plain(time_column),
        discrete={_plain(c) for c in discrete},
    )


def _argument_problems(df: pd.DataFrame, lists: dict, singles: dict, style: DfStyle) -> list:
    """Unknown column names (all in one message) and arguments that contradict each other."""
    problems = []
    unknown = [
        f"{arg} {missing}"
        for arg, names in [*lists.items(), *((k, [v]) for k, v in singles.items() if v is not None)]
        if (missing := [n for n in names or [] if n not in df.columns])
    ]
    if unknown:
        problems.append(
            f"Column(s) not in the DataFrame: {'; '.join(unknown)}. The DataFrame has columns "
            f"{_preview(list(df.columns), 20)}; check the spelling."
        )
    attributes, features = lists["attribute_columns"] or [], lists["feature_columns"] or []
    if overlap := [c for c in attributes if c in features]:
        problems.append(
            f"Column(s) {overlap} are in both attribute_columns and feature_columns; "
            "a column is either an attribute (one value per series) or a feature."
        )
    for arg, name in singles.items():
        in_lists = [k for k, names in lists.items() if name is not None and name in (names or [])]
        if in_lists:
            problems.append(
                f"{arg}={name!r} must not also be in {' or '.join(in_lists)}; dgan regenerates "
                f"the {arg.removesuffix('_column').replace('_', ' ')} itself."
            )
    id_column, time_column = singles["example_id_column"], singles["time_column"]
    if id_column is not None and id_column == time_column:
        problems.append(f"example_id_column and time_column are both {time_column!r}.")
    if style is DfStyle.WIDE and time_column is not None:
        problems.append(
            f"time_column={time_column!r} only applies to df_style=DfStyle.LONG; in WIDE "
            "frames the feature columns are the time steps. Drop time_column or use LONG."
        )
    return problems


def _role_problems(df: pd.DataFrame, features: list, discrete: set, used: list) -> list:
    """Problems that show once the defaults are filled in."""
    problems = []
    if not features:
        problems.append(
            "There are no feature columns: every column is an attribute, the example id or "
            "the time column. Pass feature_columns, or fewer attribute_columns."
        )
    stray = [c for c in discrete if c not in used]
    if stray:
        problems.append(
            f"discrete_columns {stray} are neither attribute nor feature columns; "
            "remove them from discrete_columns or add them to attribute_columns/feature_columns."
        )
    bad_names = [c for c in used if not _is_json_name(c)]
    if bad_names:
        problems.append(
            f"Column names {bad_names} are not strings or integers; rename them (e.g. "
            "df.columns = df.columns.map(str)) so the model file can store them."
        )
    duplicated = sorted({repr(c) for c in df.columns[df.columns.duplicated()] if c in used})
    if duplicated:
        problems.append(f"The DataFrame has several columns named {', '.join(duplicated)}.")
    return problems


def _check_data(df: pd.DataFrame, roles: _Roles, max_sequence_len: int) -> None:
    """Check the values and dtypes of the used columns; raise one DataError with all."""
    problems = []
    if len(df) == 0:
        problems.append("The DataFrame has no rows; training needs at least two examples.")
    for c in [*roles.attributes, *roles.features]:
        dtype = df[c].dtype
        if not (_is_auto_discrete(dtype) or _is_plain_numeric(dtype)):
            problems.append(
                f"Column {c!r} has dtype {dtype}; attributes and features must hold numbers, "
                "bools, strings or categoricals. Convert it (for datetimes e.g. "
                "`(df[c] - df[c].min()).dt.total_seconds()`), or make it the time_column."
            )
        elif isinstance(dtype, pd.CategoricalDtype) and not all(
            _is_json_value(v) for v in dtype.categories
        ):
            problems.append(
                f"Categorical column {c!r} has categories of dtype {dtype.categories.dtype}, "
                "which cannot be saved; convert them to strings with df[c].astype(str)."
            )
    for role, c in [("example_id_column", roles.example_id), ("time_column", roles.time)]:
        if c is not None and (n_missing := int(df[c].isna().sum())):
            rows = np.flatnonzero(df[c].isna().to_numpy())
            problems.append(
                f"{role} {c!r} is missing in {n_missing} rows (positions {_preview(rows)}); "
                "fill or drop those rows."
            )
    if roles.time is not None:
        dtype = df[roles.time].dtype
        if not (ptypes.is_datetime64_any_dtype(dtype) or _is_plain_numeric(dtype)) and not (
            ptypes.is_string_dtype(dtype) and all(isinstance(v, str) for v in df[roles.time])
        ):
            problems.append(
                f"time_column {roles.time!r} has dtype {dtype}; it must hold datetimes, "
                "numbers or strings. Convert it, e.g. with pd.to_datetime."
            )
    if roles.style is DfStyle.WIDE:
        n_steps = len(roles.features)
        if n_steps > max_sequence_len:
            problems.append(
                f"The WIDE frame has {n_steps} time-step columns (feature_columns) but "
                f"max_sequence_len={max_sequence_len}; raise max_sequence_len to at least "
                f"{n_steps} (a multiple of sample_len), or pass fewer feature_columns."
            )
        discrete = [c for c in roles.features if c in roles.discrete]
        if discrete and len(discrete) < n_steps:
            continuous = [c for c in roles.features if c not in roles.discrete]
            problems.append(
                "In a WIDE frame the feature columns are the time steps of one feature, so "
                f"they must all be discrete or all continuous; discrete: {_preview(discrete)}, "
                f"continuous: {_preview(continuous)}. Convert them to one dtype, or list "
                "them all in discrete_columns."
            )
    raise_all(problems, DataError, "the training DataFrame")


def _wide_to_arrays(df: pd.DataFrame, roles: _Roles):
    attributes = _stack_columns(df, roles.attributes, roles.discrete) if roles.attributes else None
    steps = _stack_columns(df, roles.features, roles.discrete)  # (N, T)
    features = list(steps[:, :, None])  # N arrays of (T, 1)
    return attributes, features, None


def _long_to_arrays(df: pd.DataFrame, roles: _Roles, max_sequence_len: int):
    n_rows = len(df)
    # Row order: stable by time, then stable by example, so rows of one example keep
    # their time order (and their frame order where times tie).
    order = np.arange(n_rows)
    if roles.time is not None:
        order = _stable_argsort(df[roles.time])
    if roles.example_id is not None:
        codes, ids = pd.factorize(df[roles.example_id])  # examples in order of first appearance
        order = order[np.argsort(codes[order], kind="stable")]
        codes = codes[order]
        labels = [repr(_plain(i)) for i in ids]
    else:
        codes = np.arange(n_rows) // max_sequence_len
        labels = [
            f"chunk {k} (rows {k * max_sequence_len}-{min((k + 1) * max_sequence_len, n_rows) - 1})"
            for k in range(codes[-1] + 1)
        ]
        sorted_by = " (sorted by time)" if roles.time is not None else ""
        logger.warning(
            f"No example_id_column given: splitting the {n_rows} rows{sorted_by} into "
            f"{len(labels)} examples of max_sequence_len={max_sequence_len} consecutive rows "
            "(the last one may be shorter). Pass example_id_column if the frame holds "
            "several series."
        )
    lengths = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])

    problems = []
    too_long = np.flatnonzero(lengths > max_sequence_len)
    if too_long.size:
        named = ", ".join(f"{labels[k]} ({lengths[k]} rows)" for k in too_long[:_SHOW])
        more = f" and {too_long.size - _SHOW} more" if too_long.size > _SHOW else ""
        problems.append(
            f"{too_long.size} example(s) are longer than max_sequence_len={max_sequence_len}: "
            f"{named}{more}. Raise max_sequence_len to at least {lengths.max()} (a multiple of "
            "sample_len), or split these series into shorter ones with their own example ids."
        )
    rows = df[roles.attributes].iloc[order]
    problems += _varying_attributes(rows, codes, labels)
    raise_all(problems, DataError, "the training DataFrame")

    matrix = _stack_columns(df, roles.features, roles.discrete)[order]  # (rows, F)
    features = np.split(matrix, starts[1:])
    attributes = None
    if roles.attributes:
        attributes = _stack_columns(df, roles.attributes, roles.discrete)[order][starts]
    time_grid = None
    if roles.time is not None:
        longest = int(np.argmax(lengths))  # the first of the longest examples
        rows_of_longest = order[starts[longest] : starts[longest] + lengths[longest]]
        time_grid = [_json_value(v) for v in df[roles.time].iloc[rows_of_longest]]
    return attributes, features, time_grid


def _varying_attributes(rows: pd.DataFrame, codes: np.ndarray, labels: list[str]) -> list[str]:
    """One problem per attribute column that is not constant within every example."""
    if rows.shape[1] == 0:
        return []
    counts = rows.reset_index(drop=True).groupby(codes, sort=False).nunique(dropna=False)
    problems = []
    for j, column in enumerate(rows.columns):
        bad = np.flatnonzero(counts.iloc[:, j].to_numpy() > 1)
        if bad.size:
            named = ", ".join(labels[counts.index[k]] for k in bad[:_SHOW])
            more = f" and {bad.size - _SHOW} more" if bad.size > _SHOW else ""
            problems.append(
                f"Attribute column {column!r} is not constant within example(s) {named}{more}. "
                "An attribute has one value per series: fix those rows, or if the column "
                "changes over time, move it to feature_columns."
            )
    return problems


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
    discrete = {
        c
        for c, t in zip(layout.attribute_columns, layout.attribute_types, strict=True)
        if t is OutputType.DISCRETE
    }
    problems = [
        f"Attribute column {c!r} was continuous in training but has dtype {df[c].dtype}; "
        "convert it to numbers."
        for c in layout.attribute_columns
        if c not in discrete and not _is_plain_numeric(df[c].dtype)
    ]
    raise_all(problems, DataError, "the attributes frame")

    rows = df
    id_column = layout.example_id_column
    if id_column is not None and id_column in df.columns and df[id_column].duplicated().any():
        codes, ids = pd.factorize(df[id_column])
        order = np.argsort(codes, kind="stable")
        labels = [repr(_plain(i)) for i in ids]
        grouped = df[layout.attribute_columns].iloc[order]
        raise_all(_varying_attributes(grouped, codes[order], labels), DataError, "attributes")
        first_rows = np.unique(codes, return_index=True)[1]  # first row of each example
        rows = df.iloc[first_rows]
    attributes = _stack_columns(rows, layout.attribute_columns, discrete)
    check_finite(
        attributes=attributes,
        attribute_types=layout.attribute_types,
        attribute_names=layout.attribute_columns,
    )
    return attributes


# ------------------------------------------------------------------ arrays -> frame


def arrays_to_dataframe(
    attributes: np.ndarray | None,
    features: Sequence[np.ndarray],
    layout: FrameLayout,
) -> pd.DataFrame:
    """Build a frame shaped like the training one from generated arrays.

    The columns, their order and their dtypes are the training frame's: integer columns
    get rounded values, bools, strings and categoricals come back as such (a missing
    value in an object column comes back as NaN, whatever it was). The example
    id column gets fresh ids 0..N-1 (integer/float ids) or "synthetic-0".. (other ids);
    the time column gets the time grid (see the module docstring). LONG output has one
    row per generated time step, WIDE output one row per example (a WIDE series longer
    than the training frame's time steps is cut, a shorter one is padded with missing
    values).

    Raises:
        ParameterError: the arrays do not fit the layout (wrong shapes, attributes
            missing or unexpected).
    """
    features = list(features)
    attributes = None if attributes is None else np.asarray(attributes)
    _check_generated(attributes, features, layout)
    lengths = np.array([len(f) for f in features], dtype=np.int64)
    wide = layout.df_style is DfStyle.WIDE
    repeats = np.ones_like(lengths) if wide else lengths  # rows per example
    columns: dict[Any, pd.Series] = {}

    for j, name in enumerate(layout.attribute_columns):
        columns[name] = _restore_column(np.repeat(attributes[:, j], repeats), layout.spec(name))
    if wide:
        steps = _wide_steps(features, len(layout.feature_columns), layout.feature_types[0])
        for j, name in enumerate(layout.feature_columns):
            columns[name] = _restore_column(steps[:, j], layout.spec(name))
    else:
        rows = _concatenate(features, len(layout.feature_columns), layout.feature_types)
        for j, name in enumerate(layout.feature_columns):
            columns[name] = _restore_column(rows[:, j], layout.spec(name))
    if layout.example_id_column is not None:
        spec = layout.spec(layout.example_id_column)
        columns[spec.name] = _fresh_ids(len(features), spec).repeat(repeats).reset_index(drop=True)
    if layout.time_column is not None:
        columns[layout.time_column] = _time_values(layout, lengths)
    return pd.DataFrame({name: columns[name] for name in layout.column_order})


def _check_generated(attributes, features: list[np.ndarray], layout: FrameLayout) -> None:
    problems = []
    n_attributes = len(layout.attribute_columns)
    if n_attributes and attributes is None:
        problems.append(
            f"The layout has attribute columns {layout.attribute_columns}, but attributes is None."
        )
    elif not n_attributes and attributes is not None:
        problems.append("The layout has no attribute columns, but attributes were given.")
    elif attributes is not None and np.shape(attributes) != (len(features), n_attributes):
        problems.append(
            f"attributes has shape {np.shape(attributes)}, expected "
            f"({len(features)}, {n_attributes}): one row per series, one column per attribute."
        )
    n_features = 1 if layout.df_style is DfStyle.WIDE else len(layout.feature_columns)
    bad = [i for i, f in enumerate(features) if np.ndim(f) != 2 or np.shape(f)[1] != n_features]
    if bad:
        problems.append(
            f"Feature arrays must have shape (T_i, {n_features}); examples {_preview(bad)} "
            f"do not (the first has shape {np.shape(features[bad[0]])})."
        )
    raise_all(problems, ParameterError, "the generated arrays")


def _wide_steps(features: list[np.ndarray], n_steps: int, kind: OutputType) -> np.ndarray:
    """(N, n_steps) matrix of the single WIDE feature, cut or NaN-padded to n_steps."""
    dtype = object if kind is OutputType.DISCRETE else np.float64
    steps = np.full((len(features), n_steps), np.nan, dtype=dtype)
    for i, f in enumerate(features):
        length = min(len(f), n_steps)
        steps[i, :length] = f[:length, 0]
    return steps


def _concatenate(features: list[np.ndarray], n_features: int, types) -> np.ndarray:
    if not features:
        return np.empty((0, n_features))
    dtype = object if OutputType.DISCRETE in types else np.float64
    return np.concatenate([np.asarray(f, dtype=dtype) for f in features])


def _restore_column(values: np.ndarray, spec: ColumnSpec) -> pd.Series:
    """Turn generated values (floats, or original discrete values) into spec's dtype."""
    if spec.categories is not None:
        dtype = pd.CategoricalDtype(
            _parse_values(spec.categories, spec.categories_dtype), ordered=spec.ordered
        )
        codes = dtype.categories.get_indexer(pd.Index(values, dtype=object))
        unknown = (codes == -1) & ~pd.isna(values)
        if unknown.any():
            message = "Column %r: %d generated values are not categories; they become missing."
            logger.warning(message, spec.name, int(unknown.sum()))
        return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype))
    dtype = ptypes.pandas_dtype(spec.dtype)
    values = pd.Series(values, dtype=object if values.dtype == object else None)
    if ptypes.is_bool_dtype(dtype):
        if values.isna().any() and dtype == np.dtype(bool):
            dtype = pd.BooleanDtype()  # a generated missing value needs the nullable type
        return values.astype(dtype)
    if ptypes.is_integer_dtype(dtype):
        numbers = pd.to_numeric(values)  # exact for discrete ints, floats for continuous
        if ptypes.is_float_dtype(numbers.dtype):
            info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
            numbers = numbers.round().clip(info.min, info.max)
            if numbers.isna().any() and isinstance(dtype, np.dtype):
                dtype = ptypes.pandas_dtype(dtype.name.capitalize().replace("Ui", "UI"))
        return numbers.astype(dtype)
    if ptypes.is_float_dtype(dtype):
        return pd.to_numeric(values).astype(dtype)
    try:
        return values.astype(dtype)
    except (TypeError, ValueError):
        logger.warning(
            "Column %r: could not restore dtype %s; left as object.", spec.name, spec.dtype
        )
        return values


def _fresh_ids(n: int, spec: ColumnSpec) -> pd.Series:
    """New example ids of the id column's dtype family: 0, 1, .. or "synthetic-0", ..."""
    base_dtype = spec.categories_dtype if spec.categories is not None else spec.dtype
    dtype = ptypes.pandas_dtype(base_dtype)
    if _is_plain_numeric(dtype):
        ids = pd.Series(np.arange(n)).astype(dtype)
    else:
        ids = pd.Series([f"synthetic-{i}" for i in range(n)], dtype=object)
        if ptypes.is_string_dtype(dtype):
            ids = ids.astype(dtype)
    if spec.categories is not None:
        return ids.astype("category")
    return ids


def _time_values(layout: FrameLayout, lengths: np.ndarray) -> pd.Series:
    """The time column of a LONG output: grid[:L] for each generated series of length L."""
    grid = _parse_values(layout.time_grid, layout.spec(layout.time_column).dtype)
    longest = int(lengths.max()) if lengths.size else 0
    if longest > len(grid):
        extra = longest - len(grid)
        last = grid.iloc[-1]
        if len(grid) >= 2 and (
            ptypes.is_numeric_dtype(grid) or ptypes.is_datetime64_any_dtype(grid)
        ):
            tail = last + (last - grid.iloc[-2]) * np.arange(1, extra + 1)
        else:
            tail = [last] * extra
        grid = pd.concat([grid, pd.Series(tail).astype(grid.dtype)], ignore_index=True)
    positions = np.concatenate([np.arange(n) for n in lengths]) if lengths.size else []
    return grid.iloc[positions].reset_index(drop=True)


# ---------------------------------------------------------------- missing values


def repair_missing_values(
    features: Sequence[np.ndarray],
    continuous_feature_indices: Sequence[int],
    *,
    max_nan_fraction: float,
    max_consecutive_nans: int,
    max_dropped_fraction: float,
    feature_names: Sequence[ColumnName] | None = None,
) -> tuple[list[np.ndarray], np.ndarray, str]:
    """Interpolate short NaN gaps in continuous features; drop examples with too many.

    An example is dropped when, in any continuous feature, it is entirely NaN, more than
    ``max_nan_fraction`` of its steps are NaN, or it has a run of more than
    ``max_consecutive_nans`` NaNs. Other NaNs are filled by linear interpolation between
    the neighbouring valid values (the nearest valid value at the edges). NaN in
    discrete features is left alone: it is a category.

    Returns:
        ``(repaired, kept, summary)``: ``repaired`` holds the kept examples only, in
        order (examples without NaN are the input arrays themselves, repaired ones are
        copies); ``kept`` is a bool array over the input examples (use it to filter the
        attributes); ``summary`` says what was done, in one line. The input arrays are
        never modified. Drops are logged as a warning.

    Raises:
        DataError: more than ``max_dropped_fraction`` of the examples would be dropped,
            or none would be left; the message says how many, why, and what to raise.

    Example:
        >>> x = np.array([[1.0], [np.nan], [3.0]])
        >>> repaired, kept, _ = repair_missing_values(
        ...     [x], [0], max_nan_fraction=0.5, max_consecutive_nans=1, max_dropped_fraction=0.5
        ... )
        >>> repaired[0].ravel().tolist(), kept.tolist()
        ([1.0, 2.0, 3.0], [True])
    """
    continuous = list(continuous_feature_indices)
    names = _names(feature_names, "feature")
    kept = np.ones(len(features), dtype=bool)
    dropped: dict[str, list[int]] = {"all_nan": [], "fraction": [], "run": []}
    repaired: list[np.ndarray] = []
    n_repaired = 0
    for i, example in enumerate(features):
        values = _as_float(np.asarray(example)[:, continuous], [names(j) for j in continuous])
        missing = np.isnan(values)  # (T_i, C)
        if not missing.any():
            repaired.append(example)
            continue
        reason = _drop_reason(missing, max_nan_fraction, max_consecutive_nans)
        if reason is not None:
            kept[i] = False
            dropped[reason].append(i)
            continue
        fixed = np.array(example, copy=True)
        fixed[:, continuous] = _interpolate(values, missing)
        repaired.append(fixed)
        n_repaired += 1

    n, n_dropped = len(features), int((~kept).sum())
    why = _drop_reasons_text(dropped, max_nan_fraction, max_consecutive_nans)
    if n and (n_dropped / n > max_dropped_fraction or n_dropped == n):
        too_many = (
            f"more than max_dropped_fraction={max_dropped_fraction}"
            if n_dropped / n > max_dropped_fraction
            else "leaving none to train on"
        )
        raise DataError(
            f"Missing-value repair would drop {n_dropped} of {n} examples ({n_dropped / n:.0%}), "
            f"{too_many}: {why}. To interpolate "
            f"instead of dropping, raise max_nan_fraction (now {max_nan_fraction}) or "
            f"max_consecutive_nans (now {max_consecutive_nans}); to accept the loss, raise "
            "max_dropped_fraction; or fill the NaNs in your data before training."
        )
    summary = f"Interpolated NaNs in {n_repaired} of {n} examples; dropped {n_dropped}"
    summary += f": {why}." if n_dropped else "."
    if n_dropped:
        logger.warning(summary)
    elif n_repaired:
        logger.info(summary)
    return repaired, kept, summary


def _drop_reason(missing: np.ndarray, max_nan_fraction: float, max_run: int) -> str | None:
    """Why an example with NaN mask ``missing`` (T, C) must be dropped, or None."""
    if missing.all(axis=0).any():
        return "all_nan"
    if (missing.mean(axis=0) > max_nan_fraction).any():
        return "fraction"
    if any(_longest_run(missing[:, j]) > max_run for j in range(missing.shape[1])):
        return "run"
    return None


def _longest_run(mask: np.ndarray) -> int:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - starts).max(initial=0))


def _interpolate(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Linear interpolation over time of each column; edges take the nearest valid value."""
    out = values.copy()
    steps = np.arange(len(values))
    for j in np.flatnonzero(missing.any(axis=0)):
        gap, valid = missing[:, j], ~missing[:, j]
        out[gap, j] = np.interp(steps[gap], steps[valid], values[valid, j])
    return out


def _drop_reasons_text(dropped: dict[str, list[int]], max_nan_fraction, max_run) -> str:
    texts = {
        "all_nan": "a continuous feature entirely NaN",
        "fraction": f"more than max_nan_fraction={max_nan_fraction} of a continuous feature NaN",
        "run": f"a run of more than max_consecutive_nans={max_run} NaNs",
    }
    return ", ".join(
        f"{len(indices)} with {texts[reason]} (examples {_preview(indices)})"
        for reason, indices in dropped.items()
        if indices
    )


def check_finite(
    *,
    attributes: np.ndarray | None = None,
    attribute_types: Sequence[OutputType] | None = None,
    features: Sequence[np.ndarray] | None = None,
    feature_types: Sequence[OutputType] | None = None,
    attribute_names: Sequence[ColumnName] | None = None,
    feature_names: Sequence[ColumnName] | None = None,
) -> None:
    """Raise one DataError for every unusable value in attributes and features.

    Problems: NaN in a continuous attribute (it cannot be repaired like a time series),
    +/-inf anywhere, non-numeric values in a continuous variable. NaN in features is left
    to `repair_missing_values`; NaN in discrete variables is a category.
    """
    problems = []
    if attributes is not None:
        attributes = np.asarray(attributes)
        _check_types_given("attribute", attribute_types, attributes.shape[1])
        names = _names(attribute_names, "attribute")
        for j, kind in enumerate(attribute_types):
            problems += _column_problems(attributes[:, j], kind, names(j), None)
    if features is not None and len(features):
        rows = np.concatenate([np.asarray(f) for f in features])  # (sum T_i, F)
        _check_types_given("feature", feature_types, rows.shape[1])
        names = _names(feature_names, "feature")
        example_of_row = np.repeat(np.arange(len(features)), [len(f) for f in features])
        for j, kind in enumerate(feature_types):
            problems += _column_problems(rows[:, j], kind, names(j), example_of_row)
    raise_all(problems, DataError, "the training data")


def _check_types_given(kind: str, types, n_columns: int) -> None:
    if types is None or len(types) != n_columns:
        raise ParameterError(
            f"check_finite needs one {kind}_types entry per {kind} column: {n_columns} "
            f"column(s), got {types!r}."
        )


def _column_problems(values, kind: OutputType, name: str, example_of_row) -> list[str]:
    """Problems of one attribute column (``example_of_row`` None) or feature column."""
    is_attribute = example_of_row is None
    if kind is OutputType.CONTINUOUS:
        try:
            numbers = _as_float(values, [name])
        except DataError as e:
            return [str(e)]
        infinite = np.isinf(numbers)
        # NaN in features is repair_missing_values' business; in attributes it is fatal.
        nan = np.isnan(numbers) if is_attribute else np.zeros_like(infinite)
    else:  # discrete: NaN is a category, but a float infinity is surely a mistake
        infinite = np.fromiter(
            (isinstance(v, (float, np.floating)) and math.isinf(v) for v in values),
            dtype=bool,
            count=len(values),
        )
        nan = np.zeros_like(infinite)
    fix_inf = (
        "replace it with finite values (or NaN, which is repaired in continuous features) "
        "or drop those examples"
    )
    fix_nan = (
        f"continuous attributes cannot be missing: fill them (e.g. df[{name}].fillna(...)), "
        "drop those examples, or list the column in discrete_columns so that missing is a "
        "category"
    )
    checks = [(infinite, "+/-inf", fix_inf), (nan, "NaN", fix_nan)]
    problems = []
    for mask, label, fix in checks:
        if not mask.any():
            continue
        if is_attribute:
            examples = np.flatnonzero(mask)
            where = f"in {examples.size} example(s) (indices {_preview(examples)})"
        else:
            examples = np.unique(example_of_row[mask])
            where = (
                f"at {int(mask.sum())} time step(s) in {examples.size} example(s) "
                f"(indices {_preview(examples)})"
            )
        kind_name = "Attribute" if is_attribute else "Feature"
        problems.append(f"{kind_name} {name} is {label} {where}; {fix}.")
    return problems


# ------------------------------------------------------------------------ helpers


def _stack_columns(df: pd.DataFrame, names, discrete) -> np.ndarray:
    """(len(df), len(names)) array: float64 if all continuous, else object (see module doc)."""
    is_discrete = [c in discrete for c in names]
    out = np.empty((len(df), len(names)), dtype=object if any(is_discrete) else np.float64)
    for j, (c, d) in enumerate(zip(names, is_discrete, strict=True)):
        out[:, j] = _column_values(df[c], d)
    return out


def _column_values(series: pd.Series, discrete: bool) -> np.ndarray:
    """A fresh numpy copy of a column: floats, or objects with missing values as np.nan."""
    if not discrete:
        return series.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    values = series.astype(object).to_numpy(copy=True)
    missing = pd.isna(values)
    if missing.any():
        values[missing] = np.nan  # one missing marker: None/pd.NA/NaT/nan -> np.nan
    return values


def _column_spec(series: pd.Series, name: ColumnName) -> ColumnSpec:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return ColumnSpec(
            name=_plain(name),
            dtype="category",
            categories=[_json_value(v) for v in dtype.categories],
            categories_dtype=str(dtype.categories.dtype),
            ordered=bool(dtype.ordered),
        )
    return ColumnSpec(name=_plain(name), dtype=str(dtype))


def _output_type(column: ColumnName, roles: _Roles) -> OutputType:
    return OutputType.DISCRETE if column in roles.discrete else OutputType.CONTINUOUS


def _is_auto_discrete(dtype) -> bool:
    """Bool, string, object and categorical columns are discrete without being asked."""
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or ptypes.is_bool_dtype(dtype)
        or ptypes.is_string_dtype(dtype)
        or ptypes.is_object_dtype(dtype)
    )


def _is_plain_numeric(dtype) -> bool:
    """Integer or float, not bool or complex."""
    return ptypes.is_integer_dtype(dtype) or ptypes.is_float_dtype(dtype)


def _stable_argsort(series: pd.Series) -> np.ndarray:
    try:
        return series.reset_index(drop=True).sort_values(kind="stable").index.to_numpy()
    except TypeError as e:
        raise DataError(
            f"time_column {series.name!r} holds values that cannot be ordered ({e}); "
            "convert it to datetimes or numbers."
        ) from e


def _parse_values(values: list, dtype_name: str) -> pd.Series | pd.Index:
    """Values stored by `_json_value` back in their dtype."""
    dtype = ptypes.pandas_dtype(dtype_name)
    series = pd.Series(values, dtype=object)
    if ptypes.is_datetime64_any_dtype(dtype):
        # ISO strings, naive or with offsets: parse as UTC, then back to the dtype's zone.
        parsed = pd.to_datetime(series, utc=True, format="ISO8601")
        tz = getattr(dtype, "tz", None)
        parsed = parsed.dt.tz_convert(tz) if tz is not None else parsed.dt.tz_localize(None)
        return parsed.astype(dtype)
    return series.astype(dtype)


def _json_value(value: Any) -> Any:
    """A JSON-native version of one cell value (datetimes become ISO strings)."""
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise DataError(f"Cannot store value {value!r} of type {type(value).__name__} as JSON.")


def _is_json_value(value: Any) -> bool:
    try:
        _json_value(value)
    except DataError:
        return False
    return True


def _is_json_name(name: Any) -> bool:
    return isinstance(name, (str, int, np.integer)) and not isinstance(name, (bool, np.bool_))


def _plain(name: Any) -> Any:
    """Column names and labels as plain Python values (numpy ints -> int)."""
    return name.item() if isinstance(name, np.generic) else name


def _as_float(values: np.ndarray, names: list[str]) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise DataError(
            f"Continuous variable(s) {', '.join(names)} hold non-numeric values ({e}); "
            "convert them to numbers or declare them discrete (discrete_columns / "
            "OutputType.DISCRETE)."
        ) from e


def _names(names: Sequence[ColumnName] | None, kind: str):
    """A function giving the display name of variable j."""
    return lambda j: repr(names[j]) if names is not None else f"{kind} {j}"


def _name_list(arg: str, value, problems: list[str]) -> list | None:
    if value is None:
        return None
    if isinstance(value, (str, int)):
        problems.append(f"{arg} must be a list of column names, got {value!r}; use [{value!r}].")
        return None
    names = [_plain(v) for v in value]
    duplicated = sorted({repr(n) for n in names if names.count(n) > 1})
    if duplicated:
        problems.append(f"{arg} names {', '.join(duplicated)} more than once.")
    return names


def _preview(items, limit: int = _SHOW) -> str:
    """'[1, 2, 3, ...] (12 in all)'-style list for messages."""
    items = [_plain(i) for i in items]
    if len(items) <= limit:
        return str(items)
    return f"{str(items[:limit])[:-1]}, ...] ({len(items)} in all)"
