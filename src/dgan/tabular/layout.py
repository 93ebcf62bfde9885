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
"""Float columns whose values need more decimals than this are rounded to significant
digits instead (`precision_of`)."""
MAX_SIGNIFICANT = 15
"""Float columns whose values need more significant digits than this (float64 holds 15 to
17) are not rounded on output."""


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
    """Float columns written to fixed decimals: the most decimals any training value
    needed (generated values are rounded to them); None: not rounded to decimals (other
    dtypes, ``significant`` set instead, or a model file written before dgan recorded
    them)."""
    significant: int | None = None
    """Float columns whose values hold a number of significant digits rather than of
    decimals (as written in scientific notation, ``3.7536e+01``, ``1.2e-05``): the most
    significant digits any training value needed (generated values are rounded to them);
    see `precision_of`. None with ``decimals`` None: no rounding."""


@dataclass(frozen=True)
class Windowing:
    """How the training table's recordings were cut into windows, each one example
    (`dgan.tabular.windows`), so that a real table can be cut the same way again."""

    window: int
    """Steps per window."""
    stride: int
    """Steps between the starts of neighbouring windows."""

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> Windowing:
        """Read back ``asdict(windowing)``, checked."""
        window, stride = data["window"], data["stride"]
        if not (type(window) is int and window >= 2 and type(stride) is int and stride >= 1):
            raise ValueError(f"windowing {data!r}: window must be >= 2 and stride >= 1")
        return cls(window=window, stride=stride)


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
    windowing: Windowing | None = None
    """Set by ``dgan train --window``: the training examples were windows of recordings."""

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
            # Only when set: layouts without it read (and compare, on resume) as before.
            **({} if self.windowing is None else {"windowing": asdict(self.windowing)}),
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
                windowing=(
                    Windowing.from_json_dict(data["windowing"]) if "windowing" in data else None
                ),
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
    decimals, significant = precision_of(series)
    return ColumnSpec(
        name=plain(name), dtype=str(dtype), decimals=decimals, significant=significant
    )


def precision_of(series: pd.Series) -> tuple[int | None, int | None]:
    """``(decimals, significant)``: the precision a float column's values hold, one of the
    two set (both None for other columns and for values that need more than
    `MAX_DECIMALS` decimals and `MAX_SIGNIFICANT` significant digits).

    ``decimals`` is the fewest decimals that write every value exactly (prices: 2);
    ``significant`` the fewest significant digits that do (a column in scientific
    notation, ``3.7536e+01`` and ``1.2e-05``: 5). Significant digits are chosen when they
    write the column in fewer digits than its decimals would: when some value has more
    significant digits at the column's decimals than the column needs (37.536 at the 6
    decimals that 1.2e-05 needs has 8, against 5), or when no number of decimals up to
    `MAX_DECIMALS` fits. So a column in fixed notation keeps its decimals and one whose
    values span orders of magnitude keeps its significant digits, and generated values
    are written no longer than the training ones (docs/design.md, decision 17).

    Example:
        >>> precision_of(pd.Series([1.5, 2.25, float("nan")])), precision_of(pd.Series([1, 2]))
        ((2, None), (None, None))
        >>> precision_of(pd.Series([37.536, 1.2e-05, 0.0]))  # scientific notation
        (None, 5)
        >>> precision_of(pd.Series([1234.56, 0.5]))  # fixed notation: decimals
        (2, None)
        >>> precision_of(pd.Series([1 / 3]))  # more digits than a float64 holds reliably
        (None, None)
    """
    if not ptypes.is_float_dtype(series.dtype):
        return None, None
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[np.isfinite(values) & (values != 0)]  # zero writes as 0 either way
    if values.size == 0:
        return None, None
    # A unit or two in the last place: a value read from text is the float nearest its
    # decimal, so rounding it to its own digits gives it back (up to float error); an
    # absolute tolerance would call 1.23456789e-05 a number of 10 decimals.
    tolerance = 2 * np.finfo(np.float64).eps * np.abs(values)
    decimals = _fewest(values, tolerance, range(MAX_DECIMALS + 1), np.round)
    significant = _fewest(values, tolerance, range(1, MAX_SIGNIFICANT + 1), round_significant)
    if decimals is None or significant is None:
        return decimals, significant
    exponents = np.floor(np.log10(np.abs(values)))
    if significant < decimals + exponents.max() + 1:  # digits of the largest at `decimals`
        return None, significant
    return decimals, None


def _fewest(values: np.ndarray, tolerance: np.ndarray, candidates, rounded) -> int | None:
    """The first of ``candidates`` at which ``rounded(values, k)`` equals ``values``. Each
    is tried on the first values, then on all: a long column is read in full once or twice."""
    head = slice(0, 1000)
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: never "rounded"
        for k in candidates:
            fits_head = np.all(np.abs(rounded(values[head], k) - values[head]) <= tolerance[head])
            if fits_head and np.all(np.abs(rounded(values, k) - values) <= tolerance):
                return k
    return None


def round_significant(values: np.ndarray, digits: int) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits, each the float nearest its
    short decimal (so that it is written as ``37.536``, not ``37.536000000000001``).

    Example:
        >>> round_significant(np.array([37.53602928712674, -1.23456e-05, 0.0, np.nan]), 5)
        array([ 3.7536e+01, -1.2346e-05,  0.0000e+00,         nan])
    """
    values = np.asarray(values, dtype=np.float64)
    out = values.copy()
    finite = np.isfinite(values) & (values != 0)
    x = values[finite]
    # decimals of each value at `digits` significant digits: 37.536 -> 3, 1.2e-05 -> 6
    shift = digits - 1 - np.floor(np.log10(np.abs(x))).astype(np.int64)
    # Powers of ten up to 1e22 are exact floats: an integer divided (or multiplied) by one
    # is the float nearest the decimal. Rarer magnitudes go through Python's formatting.
    exact = np.abs(shift) <= 22
    scale = 10.0 ** np.abs(shift[exact])
    up = shift[exact] >= 0
    x_exact = x[exact]
    scaled = np.where(up, x_exact * scale, x_exact / scale)
    # Scaling rounds (by half a unit in the last place): 0.95 (0.9499999...) * 10 is 9.5 and
    # would round up to 1. Values within two units of a half go through Python's
    # formatting, which rounds the exact binary value.
    near_half = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) <= 2 * np.spacing(np.abs(scaled))
    exact[np.flatnonzero(exact)[near_half]] = False
    scaled, up, scale = scaled[~near_half], up[~near_half], scale[~near_half]
    x_exact = np.where(up, np.rint(scaled) / scale, np.rint(scaled) * scale)
    rest = [float(f"{v:.{digits - 1}e}") for v in x[~exact]]
    rounded = np.empty_like(x)
    rounded[exact], rounded[~exact] = x_exact, rest
    out[finite] = np.where(np.isfinite(rounded), rounded, x)  # 1.8e308 rounds up to inf
    return out


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
