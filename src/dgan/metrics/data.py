"""The data container of the metrics, `SeriesData`, and adapters that build it.

`SeriesData` holds real or synthetic series with their attributes as the metrics and the
report read them; `SeriesData.from_arrays` builds it from numpy arrays and
`frames_to_series` from a real and a synthetic DataFrame read the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dgan.config import DfStyle, OutputType
from dgan.errors import DataError, DGANError, ParameterError, raise_all
from dgan.tabular.columns import Columns, columns_of_layout
from dgan.tabular.frames import FrameLayout, dataframe_to_arrays

__all__ = ["Columns", "SeriesData", "check_same_columns", "columns_of_layout", "frames_to_series"]

# --------------------------------------------------------------------------------------
# The data container
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class SeriesData:
    """Time series examples with their attributes, as the metrics and the report read them.

    ``features[i]`` is example i's ``(T_i, F)`` array (object dtype where a feature is
    discrete); lengths may differ. ``attributes`` is ``(N, A)`` or None when the data has
    no attributes. Construction validates shapes, names and that continuous columns hold
    finite numbers, raising one `DataError` that lists every problem. The arrays are read,
    never modified.

    Example:
        >>> import numpy as np
        >>> data = SeriesData(
        ...     features=[np.zeros((5, 1)), np.ones((3, 1))],
        ...     feature_names=["speed"], feature_discrete=[False],
        ...     attributes=np.array([["car"], ["bike"]], dtype=object),
        ...     attribute_names=["vehicle"], attribute_discrete=[True],
        ... )
        >>> data
        SeriesData(2 series of length 3..5, features=['speed'], attributes=['vehicle' (discrete)])
    """

    features: list[np.ndarray]
    feature_names: list[str]
    feature_discrete: list[bool]
    attributes: np.ndarray | None = None
    attribute_names: list[str] = field(default_factory=list)
    attribute_discrete: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        raise_all(_data_problems(self), DataError, "the SeriesData")

    @classmethod
    def from_arrays(
        cls,
        features: np.ndarray | Sequence[np.ndarray],
        attributes: np.ndarray | None = None,
        *,
        feature_names: Sequence[str] | None = None,
        feature_discrete: Sequence[bool] | None = None,
        attribute_names: Sequence[str] | None = None,
        attribute_discrete: Sequence[bool] | None = None,
        lengths: Sequence[int] | None = None,
    ) -> SeriesData:
        """Build from a ``(N, T, F)`` array (or a list of ``(T_i, F)`` arrays).

        Names default to ``feature_0, ...`` / ``attribute_0, ...``; a column is discrete by
        default when it holds anything that is not a number (strings, booleans). With
        ``lengths``, example i keeps only its first ``lengths[i]`` steps.

        Example:
            >>> import numpy as np
            >>> data = SeriesData.from_arrays(np.zeros((4, 6, 2)), lengths=[6, 5, 4, 6])
            >>> data.feature_names, data.lengths.tolist()
            (['feature_0', 'feature_1'], [6, 5, 4, 6])
        """
        series = [np.asarray(x) for x in features]
        if lengths is not None:
            if len(lengths) != len(series):
                raise DataError(
                    f"lengths has {len(lengths)} entries for {len(series)} examples; "
                    "pass one length per example."
                )
            series = [x[: int(n)] for x, n in zip(series, lengths, strict=True)]
        n_features = series[0].shape[-1] if series and np.ndim(series[0]) == 2 else 0
        if feature_names is None:
            feature_names = [f"feature_{j}" for j in range(n_features)]
        if feature_discrete is None:
            feature_discrete = [
                _looks_discrete(np.concatenate([x[:, j] for x in series]))
                for j in range(n_features)
            ]
        if attributes is not None:
            attributes = np.asarray(attributes)
            n_attributes = attributes.shape[1] if attributes.ndim == 2 else 0
            if attribute_names is None:
                attribute_names = [f"attribute_{j}" for j in range(n_attributes)]
            if attribute_discrete is None:
                attribute_discrete = [
                    _looks_discrete(attributes[:, j]) for j in range(n_attributes)
                ]
        return cls(
            features=series,
            feature_names=list(feature_names),
            feature_discrete=[bool(d) for d in feature_discrete],
            attributes=attributes,
            attribute_names=list(attribute_names or []),
            attribute_discrete=[bool(d) for d in (attribute_discrete or [])],
        )

    def __repr__(self) -> str:
        lengths = self.lengths
        return (
            f"SeriesData({self.n_examples} series of length {lengths.min()}..{lengths.max()}, "
            f"features={_described(self.feature_names, self.feature_discrete)}, "
            f"attributes={_described(self.attribute_names, self.attribute_discrete)})"
        )

    @property
    def n_examples(self) -> int:
        """Number of examples (series).

        Example:
            >>> import numpy as np
            >>> SeriesData.from_arrays(np.zeros((3, 4, 1))).n_examples
            3
        """
        return len(self.features)

    @property
    def lengths(self) -> np.ndarray:
        """Length of each series, ``(N,)`` int64.

        Example:
            >>> import numpy as np
            >>> SeriesData.from_arrays(np.zeros((2, 4, 1)), lengths=[4, 2]).lengths.tolist()
            [4, 2]
        """
        return np.array([len(x) for x in self.features], dtype=np.int64)

    def feature_column(self, name: str) -> list[np.ndarray]:
        """One feature's values, one 1-D array per series (float for continuous features).

        Example:
            >>> import numpy as np
            >>> data = SeriesData.from_arrays(np.arange(6).reshape(1, 3, 2))
            >>> data.feature_column("feature_1")[0].tolist()
            [1.0, 3.0, 5.0]
        """
        j = _index_of(name, self.feature_names, "feature")
        if self.feature_discrete[j]:
            return [np.asarray(x[:, j], dtype=object) for x in self.features]
        return [np.asarray(x[:, j], dtype=np.float64) for x in self.features]

    def attribute_column(self, name: str) -> np.ndarray:
        """One attribute's values, ``(N,)`` (float for continuous attributes).

        Example:
            >>> import numpy as np
            >>> data = SeriesData.from_arrays(np.zeros((2, 3, 1)), np.array([[1.5], [2.5]]))
            >>> data.attribute_column("attribute_0").tolist()
            [1.5, 2.5]
        """
        j = _index_of(name, self.attribute_names, "attribute")
        assert self.attributes is not None  # names are empty without attributes
        if self.attribute_discrete[j]:
            return np.asarray(self.attributes[:, j], dtype=object)
        return np.asarray(self.attributes[:, j], dtype=np.float64)

    def subset(self, indices: Sequence[int] | np.ndarray) -> SeriesData:
        """The examples at ``indices``, as a new SeriesData sharing no state with this one.

        Example:
            >>> import numpy as np
            >>> SeriesData.from_arrays(np.zeros((5, 2, 1))).subset([0, 3]).n_examples
            2
        """
        indices = np.asarray(indices, dtype=np.int64)
        return SeriesData(
            features=[self.features[i] for i in indices],
            feature_names=list(self.feature_names),
            feature_discrete=list(self.feature_discrete),
            attributes=None if self.attributes is None else self.attributes[indices],
            attribute_names=list(self.attribute_names),
            attribute_discrete=list(self.attribute_discrete),
        )


def _described(names: list[str], discrete: list[bool]) -> str:
    parts = [f"{n!r} (discrete)" if d else repr(n) for n, d in zip(names, discrete, strict=True)]
    return "[" + ", ".join(parts) + "]"


def _looks_discrete(values: np.ndarray) -> bool:
    if values.dtype.kind in "iuf":
        return False
    if values.dtype.kind == "b":
        return True
    return any(isinstance(v, (str, bytes, bool, np.bool_)) for v in values.ravel())


def _index_of(name: str, names: list[str], what: str) -> int:
    if name not in names:
        raise ParameterError(f"No {what} named {name!r}; choose one of {names}.")
    return names.index(name)


def _data_problems(data: SeriesData) -> list[str]:
    problems = _name_problems(data.feature_names, data.feature_discrete, "feature")
    n_features = len(data.feature_names)
    if n_features == 0:
        problems.append("There are no features; pass at least one feature column.")
    if len(data.features) == 0:
        problems.append("There are no examples; pass at least one (T_i, F) feature array.")
    shape_problems = []
    for i, x in enumerate(data.features):
        shape = np.shape(x)
        if len(shape) != 2:
            shape_problems.append(
                f"Example {i} has shape {shape}; pass one (T_i, F) array per example "
                "(x[:, None] turns a single feature's (T_i,) array into one)."
            )
        elif shape[1] != n_features:
            shape_problems.append(
                f"Example {i} has {shape[1]} feature columns but feature_names has "
                f"{n_features}; pass one name per column."
            )
        elif shape[0] == 0:
            shape_problems.append(f"Example {i} has no time steps; drop it.")
    problems += _first_few(shape_problems)
    problems += _attribute_problems(data)
    if not problems:  # column contents can only be read once the shapes are right
        for j, name in enumerate(data.feature_names):
            if not data.feature_discrete[j]:
                values = np.concatenate([np.asarray(x[:, j]) for x in data.features])
                problems += _continuous_problems(values, f"Feature {name!r}", "feature")
        for j, name in enumerate(data.attribute_names):
            if not data.attribute_discrete[j]:
                assert data.attributes is not None
                values = data.attributes[:, j]
                problems += _continuous_problems(values, f"Attribute {name!r}", "attribute")
    return problems


def _name_problems(names: Sequence[str], discrete: Sequence[bool], what: str) -> list[str]:
    problems = []
    if len(names) != len(discrete):
        problems.append(
            f"{what}_names has {len(names)} entries but {what}_discrete has {len(discrete)}; "
            f"pass one True/False per {what}."
        )
    if not all(isinstance(n, str) for n in names):
        problems.append(f"{what}_names must be strings, got {list(names)!r}; pass str names.")
    duplicates = sorted({n for n in names if list(names).count(n) > 1}, key=str)
    if duplicates:
        problems.append(f"Duplicate {what} names {duplicates}; give every {what} its own name.")
    return problems


def _attribute_problems(data: SeriesData) -> list[str]:
    problems = _name_problems(data.attribute_names, data.attribute_discrete, "attribute")
    if data.attributes is None:
        if data.attribute_names:
            problems.append(
                f"attribute_names is {data.attribute_names} but attributes is None; pass the "
                "(N, A) attribute array or empty attribute_names."
            )
        return problems
    shape = np.shape(data.attributes)
    if len(shape) != 2:
        problems.append(
            f"attributes has shape {shape}; pass an (N, A) array (None for no attributes)."
        )
    elif shape[0] != len(data.features):
        problems.append(
            f"attributes has {shape[0]} rows for {len(data.features)} examples; pass one row "
            "of attributes per example."
        )
    elif shape[1] != len(data.attribute_names):
        problems.append(
            f"attributes has {shape[1]} columns but attribute_names has "
            f"{len(data.attribute_names)}; pass one name per column."
        )
    return problems


def _continuous_problems(values: np.ndarray, label: str, what: str) -> list[str]:
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        example = next(v for v in values.ravel() if not _is_number(v))
        return [
            f"{label} is marked continuous but holds {example!r}; mark it discrete "
            f"({what}_discrete) or convert its values to numbers."
        ]
    bad = int(np.count_nonzero(~np.isfinite(numbers)))
    if bad:
        return [
            f"{label} has {bad} NaN or infinite values; the metrics need complete data, so "
            "impute or drop those examples first."
        ]
    return []


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _first_few(problems: list[str], limit: int = 5) -> list[str]:
    if len(problems) <= limit:
        return problems
    return [*problems[:limit], f"... and {len(problems) - limit} more examples like these."]


def check_same_columns(real: SeriesData, synthetic: SeriesData) -> None:
    """Raise `DataError` unless both sides have the same columns, in order, of the same kind.

    Example:
        >>> import numpy as np
        >>> real = SeriesData.from_arrays(np.zeros((2, 3, 1)))
        >>> check_same_columns(real, real)  # passes silently
    """
    problems = []
    for what in ("feature", "attribute"):
        real_cols = _columns_of(real, what)
        synth_cols = _columns_of(synthetic, what)
        if real_cols != synth_cols:
            problems.append(
                f"Real and synthetic {what}s differ: real has {real_cols}, synthetic has "
                f"{synth_cols} (name, discrete); compare data with the same columns, e.g. "
                "synthetic data generated by the model trained on this real data."
            )
    raise_all(problems, DataError, "comparing real and synthetic data")


def _columns_of(data: SeriesData, what: str) -> list[tuple[str, bool]]:
    names, discrete = getattr(data, f"{what}_names"), getattr(data, f"{what}_discrete")
    return list(zip(names, discrete, strict=True))


# --------------------------------------------------------------------------------------
# Adapters: DataFrames -> SeriesData
# --------------------------------------------------------------------------------------


def frames_to_series(
    real_df: pd.DataFrame,
    synthetic_df: pd.DataFrame,
    columns: Columns,
    max_sequence_len: int | None = None,
) -> tuple[SeriesData, SeriesData]:
    """Read a real and a synthetic table the same way, as `SeriesData` for the metrics.

    Discrete columns are decided on the real table (by dtype, or ``columns``' discrete ones)
    and imposed on the synthetic one, so both sides agree. ``max_sequence_len`` only
    matters for LONG tables without an example id (rows are cut into series of that
    length); otherwise None allows any length.
    """
    if max_sequence_len is None and columns.is_long and columns.example_id_column is None:
        raise ParameterError(
            "Without an example id, LONG rows are cut into series of max_sequence_len rows; "
            "pass --max-sequence-len or --example-id (or --model)."
        )
    real, layout = _series_data(real_df, columns, max_sequence_len, "real")
    same = columns_of_layout(layout)
    synthetic, _ = _series_data(synthetic_df, same, max_sequence_len, "synthetic")
    return real, synthetic


def _series_data(df, columns, max_sequence_len, what) -> tuple[SeriesData, FrameLayout]:
    bound = max_sequence_len or max(len(df), len(df.columns), 1)
    try:
        arrays = dataframe_to_arrays(df, columns, bound)
    except DGANError as error:
        raise type(error)(f"In the {what} table: {error}") from error
    layout = arrays.layout
    if layout.df_style is DfStyle.WIDE:  # the feature columns are the steps of one feature
        feature_names = ["value"]
    else:
        feature_names = [str(c) for c in layout.feature_columns]
    data = SeriesData.from_arrays(
        arrays.features,
        arrays.attributes,
        feature_names=feature_names,
        feature_discrete=[t is OutputType.DISCRETE for t in layout.feature_types],
        attribute_names=[str(c) for c in layout.attribute_columns],
        attribute_discrete=[t is OutputType.DISCRETE for t in layout.attribute_types],
    )
    return data, layout
