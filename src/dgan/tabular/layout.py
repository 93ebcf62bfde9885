"""`FrameLayout`: what dgan remembers of a training DataFrame, and column dtypes.

A layout records the role of every used column (attribute, feature, example id, time),
each column's dtype (`ColumnSpec`), the variable types and the time grid, so that
generated arrays can be turned back into a frame shaped like the training one. It is
stored as JSON in the model file; cell values that are not JSON-native (datetimes) are
stored as ISO strings and parsed back with the column's dtype.

Example:
    >>> import pandas as pd
    >>> from dgan.tabular.columns import Columns
    >>> from dgan.tabular.frames import dataframe_to_arrays
    >>> df = pd.DataFrame({"kind": ["a", "b"], "t0": [1.0, 2.0], "t1": [3.0, 4.0]})
    >>> layout = dataframe_to_arrays(df, Columns(attribute_columns=["kind"]), 2).layout
    >>> layout.column_order, layout.attribute_types
    (['kind', 't0', 't1'], [<OutputType.DISCRETE: 0>])
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dgan.config import DfStyle, OutputType
from dgan.errors import DataError, SerializationError
from dgan.tabular.messages import ColumnName, plain

LAYOUT_FORMAT_VERSION = 1

MAX_DECIMALS = 10
"""Float columns whose values need more decimals than this are not rounded on output."""


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
    decimals: int | None = None
    """Float columns: the most decimals any training value needed (generated values are
    rounded to them); None: no rounding (other dtypes, values with more than
    `MAX_DECIMALS` decimals, or a model file written before dgan recorded them)."""


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
    def feature_names(self) -> list[str | int]:
        """Names of the model's features for messages: the LONG feature columns, or for
        WIDE the one feature whose time steps the columns are ("t0..t9")."""
        columns = self.feature_columns
        if self.df_style is DfStyle.LONG or len(columns) == 1:
            return list(columns)
        return [f"{columns[0]}..{columns[-1]}"]

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


# ------------------------------------------------------------------- dtypes and values


def column_spec(series: pd.Series, name: ColumnName) -> ColumnSpec:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return ColumnSpec(
            name=plain(name),
            dtype="category",
            categories=[json_value(v) for v in dtype.categories],
            categories_dtype=str(dtype.categories.dtype),
            ordered=bool(dtype.ordered),
        )
    return ColumnSpec(name=plain(name), dtype=str(dtype), decimals=decimals_of(series))


def decimals_of(series: pd.Series) -> int | None:
    """The fewest decimals (0..`MAX_DECIMALS`) that write every value of a float column
    exactly, or None for other columns and for values that need more.

    Example:
        >>> decimals_of(pd.Series([1.5, 2.25, float("nan")])), decimals_of(pd.Series([1, 2]))
        (2, None)
        >>> decimals_of(pd.Series([1 / 3]))  # needs more than MAX_DECIMALS: no rounding
    """
    if not ptypes.is_float_dtype(series.dtype):
        return None
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    # The first values rule out most candidates without a pass over all of them.
    head = values[:1000]
    candidates = [d for d in range(MAX_DECIMALS + 1) if _exact(head[np.isfinite(head)], d)]
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    return next((d for d in candidates if _exact(values, d)), None)


def _exact(values: np.ndarray, decimals: int) -> bool:
    """Whether ``decimals`` decimals write every value exactly (to 1e-12 relative)."""
    tolerance = 1e-12 * np.maximum(1.0, np.abs(values))
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: never "rounded"
        return bool(np.all(np.abs(np.round(values, decimals) - values) <= tolerance))


def is_auto_discrete(dtype) -> bool:
    """Bool, string, object and categorical columns are discrete without being asked."""
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or ptypes.is_bool_dtype(dtype)
        or ptypes.is_string_dtype(dtype)
        or ptypes.is_object_dtype(dtype)
    )


def is_plain_numeric(dtype) -> bool:
    """Integer or float, not bool or complex."""
    return ptypes.is_integer_dtype(dtype) or ptypes.is_float_dtype(dtype)


def parse_values(values: list, dtype_name: str) -> pd.Series | pd.Index:
    """Values stored by `json_value` back in their dtype."""
    dtype = ptypes.pandas_dtype(dtype_name)
    series = pd.Series(values, dtype=object)
    if ptypes.is_datetime64_any_dtype(dtype):
        # ISO strings, naive or with offsets: parse as UTC, then back to the dtype's zone.
        parsed = pd.to_datetime(series, utc=True, format="ISO8601")
        tz = getattr(dtype, "tz", None)
        parsed = parsed.dt.tz_convert(tz) if tz is not None else parsed.dt.tz_localize(None)
        return parsed.astype(dtype)
    return series.astype(dtype)


def json_value(value: Any) -> Any:
    """A JSON-native version of one cell value (datetimes become ISO strings)."""
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise DataError(f"Cannot store value {value!r} of type {type(value).__name__} as JSON.")


def is_json_value(value: Any) -> bool:
    try:
        json_value(value)
    except DataError:
        return False
    return True
