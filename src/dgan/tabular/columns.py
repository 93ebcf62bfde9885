"""Which column of a table plays which role: `Columns`, and its checks against a frame.

`Columns` is the one description of a table's layout that every function reading a
DataFrame takes: the public methods build it once from gretel's keyword arguments
(``attribute_columns=...``) and pass it inward. `resolve_roles` checks it against a
frame and gives every used column its role (or raises one `ParameterError` listing every
wrong argument); `check_data` checks the used columns' dtypes and values (one
`DataError` listing every problem); `columns_of_layout` gives the `Columns` that read a
table as a model read its training table.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dgan.config import DfStyle, OutputType
from dgan.errors import DataError, ParameterError, raise_all
from dgan.tabular.arrays import raise_length_problems, too_long_problem
from dgan.tabular.layout import FrameLayout, is_auto_discrete, is_json_value, is_plain_numeric
from dgan.tabular.messages import ColumnName, plain, preview

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Columns:
    """The roles of a table's columns, as gretel's keyword arguments name them.

    Values are kept as given and checked against a frame by `resolve_roles` (so a wrong
    argument is reported with every other one, in the argument's own name).

    Attributes:
        attribute_columns: columns of fixed per-example values (None: no attributes).
        feature_columns: time-series columns; None takes every column with no other role.
            In WIDE style each one is one time step of a single feature.
        example_id_column: LONG style: the column that tells examples apart.
        time_column: LONG style: the column that orders each example's rows.
        discrete_columns: numeric columns to treat as discrete.
        df_style: `DfStyle.WIDE` (one row per example) or `DfStyle.LONG` (one per step).

    Example:
        >>> columns = Columns(attribute_columns=["site"], example_id_column="id",
        ...                   df_style="long")
        >>> columns.as_arguments()["example_id_column"], columns.is_long
        ('id', True)
    """

    attribute_columns: Sequence[ColumnName] | None = None
    feature_columns: Sequence[ColumnName] | None = None
    example_id_column: ColumnName | None = None
    time_column: ColumnName | None = None
    discrete_columns: Sequence[ColumnName] | None = None
    df_style: DfStyle | str = DfStyle.WIDE

    def as_arguments(self) -> dict[str, Any]:
        """The roles as keyword arguments of `DGAN.train_dataframe` (gretel's names)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def is_long(self) -> bool:
        """Whether the style asks for LONG (one row per time step), however it is written."""
        return str(getattr(self.df_style, "value", self.df_style)).lower() == DfStyle.LONG.value


class Roles(NamedTuple):
    """The resolved role of every used column."""

    style: DfStyle
    attributes: list[ColumnName]
    features: list[ColumnName]
    example_id: ColumnName | None
    time: ColumnName | None
    discrete: set[ColumnName]  # forced by the user or implied by the dtype


def resolve_roles(df, columns: Columns, max_sequence_len) -> Roles:
    """Check the column roles against each other and the frame's columns; raise all at once."""
    if not isinstance(columns, Columns):
        raise ParameterError(f"columns must be a Columns, got {type(columns).__name__}.")
    attribute_columns, feature_columns = columns.attribute_columns, columns.feature_columns
    example_id_column, time_column = columns.example_id_column, columns.time_column
    discrete_columns, df_style = columns.discrete_columns, columns.df_style
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
        if is_auto_discrete(df[c].dtype) and c not in discrete:
            logger.info("Column %r is discrete because of its dtype %s.", c, df[c].dtype)
            discrete.add(c)
    return Roles(
        style=style,
        attributes=[plain(c) for c in attributes],
        features=[plain(c) for c in features],
        example_id=plain(example_id_column),
        time=plain(time_column),
        discrete={plain(c) for c in discrete},
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
            f"{preview(list(df.columns), 20)}; check the spelling."
        )
    attributes, features = lists["attribute_columns"] or [], lists["feature_columns"] or []
    if overlap := [c for c in attributes if c in features]:
        problems.append(
            "The attribute_columns and feature_columns lists must not have overlapping "
            f"values: column(s) {overlap} are in both attribute_columns and feature_columns; "
            "a column is either an attribute (one value per series) or a feature."
        )
    for arg, name in singles.items():
        in_lists = [k for k, names in lists.items() if name is not None and name in (names or [])]
        if in_lists:
            problems.append(
                "The example_id_column and time_column must not be present in any other column "
                f"lists: {arg}={name!r} must not also be in {' or '.join(in_lists)}; dgan "
                f"regenerates the {arg.removesuffix('_column').replace('_', ' ')} itself."
            )
    id_column, time_column = singles["example_id_column"], singles["time_column"]
    if id_column is not None and id_column == time_column:
        problems.append(
            "The time_column and example_id_column values cannot be the same: both are "
            f"{time_column!r}. The example id tells series apart, the time orders the rows "
            "within each; pass different columns (or leave time_column out)."
        )
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


def check_data(df: pd.DataFrame, roles: Roles, max_sequence_len: int) -> None:
    """Check the values and dtypes of the used columns; raise one DataError with all."""
    problems = []
    if len(df) == 0:
        problems.append("The DataFrame has no rows; training needs at least two examples.")
    for c in [*roles.attributes, *roles.features]:
        dtype = df[c].dtype
        if not (is_auto_discrete(dtype) or is_plain_numeric(dtype)):
            problems.append(
                f"Column {c!r} has dtype {dtype}; attributes and features must hold numbers, "
                "bools, strings or categoricals. Convert it (for datetimes e.g. "
                "`(df[c] - df[c].min()).dt.total_seconds()`), or make it the time_column."
            )
        elif isinstance(dtype, pd.CategoricalDtype) and not all(
            is_json_value(v) for v in dtype.categories
        ):
            problems.append(
                f"Categorical column {c!r} has categories of dtype {dtype.categories.dtype}, "
                "which cannot be saved; convert them to strings with df[c].astype(str)."
            )
    for role, c in [("example_id_column", roles.example_id), ("time_column", roles.time)]:
        if c is not None and (n_missing := int(df[c].isna().sum())):
            rows = np.flatnonzero(df[c].isna().to_numpy())
            problems.append(
                f"{role} {c!r} is missing in {n_missing} rows (positions {preview(rows)}); "
                "fill or drop those rows."
            )
    if roles.time is not None:
        dtype = df[roles.time].dtype
        if not (ptypes.is_datetime64_any_dtype(dtype) or is_plain_numeric(dtype)) and not (
            ptypes.is_string_dtype(dtype) and all(isinstance(v, str) for v in df[roles.time])
        ):
            problems.append(
                f"time_column {roles.time!r} has dtype {dtype}; it must hold datetimes, "
                "numbers or strings. Convert it, e.g. with pd.to_datetime."
            )
    if roles.style is DfStyle.WIDE:
        n_steps = len(roles.features)
        if (problem := too_long_problem([n_steps], max_sequence_len, wide=True)) is not None:
            problems.append(problem)
        discrete = [c for c in roles.features if c in roles.discrete]
        if discrete and len(discrete) < n_steps:
            continuous = [c for c in roles.features if c not in roles.discrete]
            problems.append(
                "In a WIDE frame the feature columns are the time steps of one feature, so "
                f"they must all be discrete or all continuous; discrete: {preview(discrete)}, "
                f"continuous: {preview(continuous)}. Convert them to one dtype, or list "
                "them all in discrete_columns."
            )
    raise_length_problems(problems, DataError, "the training DataFrame")


def _is_json_name(name: Any) -> bool:
    return isinstance(name, (str, int, np.integer)) and not isinstance(name, (bool, np.bool_))


def _name_list(arg: str, value, problems: list[str]) -> list | None:
    if value is None:
        return None
    if isinstance(value, (str, int)):
        problems.append(f"{arg} must be a list of column names, got {value!r}; use [{value!r}].")
        return None
    names = [plain(v) for v in value]
    duplicated = sorted({repr(n) for n in names if names.count(n) > 1})
    if duplicated:
        problems.append(f"{arg} names {', '.join(duplicated)} more than once.")
    return names


def columns_of_layout(layout: FrameLayout) -> Columns:
    """The `Columns` that read a table the way a model read its training table.

    Pass them to `dgan.tabular.frames.dataframe_to_arrays` to read another table (e.g.
    synthetic data) exactly like the training one.

    Example:
        >>> import pandas as pd
        >>> from dgan.tabular.frames import dataframe_to_arrays
        >>> df = pd.DataFrame({"kind": ["a", "b"], "t0": [1.0, 2.0], "t1": [3.0, 4.0]})
        >>> layout = dataframe_to_arrays(df, Columns(attribute_columns=["kind"]), 2).layout
        >>> columns_of_layout(layout).discrete_columns
        ['kind']
    """
    discrete = [
        c
        for c, t in zip(layout.attribute_columns, layout.attribute_types, strict=True)
        if t is OutputType.DISCRETE
    ]
    if layout.df_style is DfStyle.WIDE:  # one feature, a column per time step
        if layout.feature_types[0] is OutputType.DISCRETE:
            discrete += layout.feature_columns
    else:
        discrete += [
            c
            for c, t in zip(layout.feature_columns, layout.feature_types, strict=True)
            if t is OutputType.DISCRETE
        ]
    return Columns(
        attribute_columns=list(layout.attribute_columns),
        feature_columns=list(layout.feature_columns),
        example_id_column=layout.example_id_column,
        time_column=layout.time_column,
        discrete_columns=discrete,
        df_style=layout.df_style,
    )
