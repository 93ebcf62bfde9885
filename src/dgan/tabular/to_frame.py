"""Generated arrays -> a DataFrame shaped like the training one (`arrays_to_dataframe`).

The columns, their order and their dtypes are the training frame's (see `FrameLayout`).

The **time grid**: in LONG frames with a ``time_column``, generated series get the time
values of the longest training example (the first one, if several tie), in time order;
a generated series of length L gets the first L of them. Should a generated series be
longer than that example, the grid is extended by repeating its last step (numbers and
datetimes) or its last value (anything else, or a one-value grid).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dgan.config import DfStyle, OutputType
from dgan.errors import ParameterError, raise_all
from dgan.tabular.layout import (
    ColumnSpec,
    FrameLayout,
    is_plain_numeric,
    parse_values,
    round_significant,
)
from dgan.tabular.messages import preview

logger = logging.getLogger(__name__)


def arrays_to_dataframe(
    attributes: np.ndarray | None,
    features: Sequence[np.ndarray],
    layout: FrameLayout,
) -> pd.DataFrame:
    """Build a frame shaped like the training one from generated arrays.

    The columns, their order and their dtypes are the training frame's: integer columns
    get rounded values, float columns values rounded to the decimals or significant
    digits seen in training (`ColumnSpec.decimals`, `ColumnSpec.significant`), bools,
    strings and categoricals come back as such (a missing value in an object column
    comes back as NaN, whatever it was). The example
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


def generated_frame(
    attributes: np.ndarray | None, features: list[np.ndarray], layout: FrameLayout
) -> pd.DataFrame:
    """A generated table shaped like the training one (`arrays_to_dataframe`), with
    gretel's example ids where the training frame had none (`with_example_ids`)."""
    frame = arrays_to_dataframe(attributes, features, layout)
    return with_example_ids(frame, layout, [len(f) for f in features])


def with_example_ids(
    frame: pd.DataFrame, layout: FrameLayout, lengths: Sequence[int]
) -> pd.DataFrame:
    """Add gretel's "example_id" column last to a LONG frame whose layout has no id column.

    LONG training without an example id column cuts the rows into chunks of
    max_sequence_len; gretel numbers the generated series (``lengths`` rows each) in such
    a frame, and so does dgan. Returns a new frame; other layouts come back unchanged.

    Example:
        >>> from dgan.tabular.frames import Columns, dataframe_to_arrays
        >>> df = pd.DataFrame({"x": np.arange(4.0)})
        >>> layout = dataframe_to_arrays(df, Columns(df_style="long"), 2).layout
        >>> with_example_ids(df, layout, [2, 2])["example_id"].tolist()
        [0, 0, 1, 1]
    """
    if layout.df_style is DfStyle.WIDE or layout.example_id_column is not None:
        return frame
    name = "example_id"
    while name in frame.columns:
        name += "_"
    out = frame.copy()
    out[name] = np.repeat(np.arange(len(lengths)), lengths)
    return out


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
            f"Feature arrays must have shape (T_i, {n_features}); examples {preview(bad)} "
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
            parse_values(spec.categories, spec.categories_dtype), ordered=spec.ordered
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
        numbers = pd.to_numeric(values).astype(dtype)
        if spec.significant is not None:  # rounded in float64, then to the column's dtype
            rounded = round_significant(
                numbers.to_numpy(np.float64, na_value=np.nan), spec.significant
            )
            return pd.Series(rounded, index=numbers.index).astype(dtype)
        return numbers if spec.decimals is None else numbers.round(spec.decimals)
    try:
        return values.astype(dtype)
    except (TypeError, ValueError):
        logger.warning(
            "Column %r: could not restore dtype %s; left as object.", spec.name, spec.dtype
        )
        return values


def renumber_examples(df: pd.DataFrame, layout: FrameLayout, first: int) -> pd.DataFrame:
    """A copy of a generated frame whose example ids start at ``first`` instead of 0.

    For output written in chunks: each chunk's ids continue where the last one's ended.
    Frames without an example id column come back unchanged (as a copy).

    Example:
        >>> import pandas as pd
        >>> from dgan.tabular.frames import Columns, dataframe_to_arrays
        >>> df = pd.DataFrame({"id": [7, 7, 9], "x": [1.0, 2.0, 3.0]})
        >>> columns = Columns(example_id_column="id", df_style="long")
        >>> layout = dataframe_to_arrays(df, columns, 2).layout
        >>> renumber_examples(pd.DataFrame({"id": [0, 0, 1], "x": [1.0, 2.0, 3.0]}),
        ...                   layout, 10)["id"].tolist()
        [10, 10, 11]
    """
    df = df.copy()
    name = layout.example_id_column
    if name is None or len(df) == 0:
        return df
    codes, uniques = pd.factorize(df[name])
    fresh = _fresh_ids(len(uniques), layout.spec(name), first)
    df[name] = fresh.iloc[codes].reset_index(drop=True).set_axis(df.index)
    return df


def _fresh_ids(n: int, spec: ColumnSpec, first: int = 0) -> pd.Series:
    """New example ids of the id column's dtype family: 0, 1, .. or "synthetic-0", ..."""
    base_dtype = spec.categories_dtype if spec.categories is not None else spec.dtype
    dtype = ptypes.pandas_dtype(base_dtype)
    if is_plain_numeric(dtype):
        ids = pd.Series(np.arange(first, first + n)).astype(dtype)
    else:
        ids = pd.Series([f"synthetic-{i}" for i in range(first, first + n)], dtype=object)
        if ptypes.is_string_dtype(dtype):
            ids = ids.astype(dtype)
    if spec.categories is not None:
        return ids.astype("category")
    return ids


def _time_values(layout: FrameLayout, lengths: np.ndarray) -> pd.Series:
    """The time column of a LONG output: grid[:L] for each generated series of length L."""
    grid = parse_values(layout.time_grid, layout.spec(layout.time_column).dtype)
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
