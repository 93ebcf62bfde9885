"""Fidelity metrics: how closely synthetic time series match the real ones.

Everything takes two `SeriesData` (real and synthetic, same columns) and returns plain,
JSON-serializable dicts. `evaluate` runs them all; each metric is also public on its own.
Each metric's result carries a headline ``score`` and ``better`` ("lower"/"higher"), and
`METRIC_DESCRIPTIONS` reads each one in a sentence, for reports.

Conventions shared by all metrics:

* Continuous values are compared in units of the *real* data's standard deviation, so
  numbers are comparable across features (a constant real column uses raw units).
* Discrete values may be strings or numbers. Categories are encoded once over both sides
  together, so a category that only one side has is a category like any other; missing
  values (None/NaN) in a discrete column form their own category, ``"<missing>"``.
* A metric that cannot be computed for the data at hand (no continuous feature, series
  of length 1, too few examples) reports ``score: None`` and a ``reason``, never NaN.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from dgan.errors import DataError, ParameterError, raise_all

MISSING_CATEGORY = "<missing>"
"""Label of the category that missing discrete values (None/NaN) are counted in."""

METRIC_DESCRIPTIONS: dict[str, str] = {
    "discriminative": (
        "How well a small recurrent classifier tells real from synthetic series on held-out "
        "data, as |accuracy - 0.5|: 0 means indistinguishable, 0.5 means always told apart; "
        "lower is better."
    ),
    "tstr": (
        "Train on synthetic, test on real: how well a model trained on synthetic data "
        "predicts real data (an attribute, or the next time step) relative to a model trained "
        "on real data; 1 means the synthetic data is as useful as the real data, higher is "
        "better."
    ),
    "autocorrelation": (
        "Mean squared difference between the real and synthetic mean autocorrelation curves "
        "of each continuous feature: whether trends, cycles and memory over time are kept; "
        "lower is better, 0 is identical."
    ),
    "marginals": (
        "Average distance between the real and synthetic value distributions of every "
        "variable (Wasserstein-1 in real standard deviations for continuous ones, total "
        "variation from 0 to 1 for discrete ones, and sequence lengths); lower is better."
    ),
    "attribute_feature_relation": (
        "Whether features depend on attributes as in the real data: per category of each "
        "discrete attribute, the Wasserstein-1 distance of each continuous feature's values, "
        "weighted by how common the category is; lower is better."
    ),
    "feature_correlation": (
        "Mean absolute difference between the real and synthetic correlation matrices of the "
        "continuous features (0 to 2): whether features move together as in the real data; "
        "lower is better."
    ),
}


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
# Small numeric helpers (public where a user or the report needs them)
# --------------------------------------------------------------------------------------


def wasserstein_1d(u: np.ndarray, v: np.ndarray) -> float:
    """Wasserstein-1 (earth mover's) distance between two 1-D samples.

    It is the area between the two empirical CDFs, the integral of |F_u(x) - F_v(x)| dx,
    in the units of the values.

    Example:
        >>> wasserstein_1d(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
        2.0
    """
    u = np.sort(np.asarray(u, dtype=np.float64).ravel())
    v = np.sort(np.asarray(v, dtype=np.float64).ravel())
    if u.size == 0 or v.size == 0:
        raise ParameterError("wasserstein_1d needs two non-empty samples; pass values.")
    grid = np.sort(np.concatenate([u, v]))
    cdf_u = np.searchsorted(u, grid[:-1], side="right") / u.size
    cdf_v = np.searchsorted(v, grid[:-1], side="right") / v.size
    return float(np.sum(np.abs(cdf_u - cdf_v) * np.diff(grid)))


def total_variation_distance(p_values: np.ndarray, q_values: np.ndarray) -> float:
    """Total variation distance between the category frequencies of two samples, in [0, 1].

    Half the sum over categories of |p(c) - q(c)|: the largest difference in probability
    that the two assign to any set of categories. Values may be strings or numbers;
    None/NaN count as one category.

    Example:
        >>> total_variation_distance(np.array(["a", "a", "b"]), np.array(["a", "b", "b"]))
        0.3333333333333333
    """
    p_codes, q_codes, labels = factorize_pair(np.asarray(p_values), np.asarray(q_values))
    if p_codes.size == 0 or q_codes.size == 0:
        raise ParameterError("total_variation_distance needs two non-empty samples.")
    p = np.bincount(p_codes, minlength=len(labels)) / p_codes.size
    q = np.bincount(q_codes, minlength=len(labels)) / q_codes.size
    return float(0.5 * np.abs(p - q).sum())


def factorize_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Encode two samples of categories with one shared code book.

    Returns ``(codes_a, codes_b, labels)``; ``labels[code]`` is the category. Equal values
    get equal codes whatever their container (``1``, ``1.0`` and ``np.int64(1)`` are one
    category, the string ``"1"`` another); None/NaN become `MISSING_CATEGORY`.

    Example:
        >>> a, b, labels = factorize_pair(np.array(["x", "y"]), np.array(["z", "x"]))
        >>> a.tolist(), b.tolist(), labels
        ([0, 1], [2, 0], ['x', 'y', 'z'])
    """
    # Object dtype first: concatenating a str array with an int array would turn 1 into "1".
    a_obj = np.asarray(a, dtype=object).ravel()
    both = np.concatenate([a_obj, np.asarray(b, dtype=object).ravel()])
    codes, uniques = pd.factorize(both, use_na_sentinel=True)
    labels = [u.item() if isinstance(u, np.generic) else u for u in uniques]
    if (codes < 0).any():
        codes = np.where(codes < 0, len(labels), codes)
        labels.append(MISSING_CATEGORY)
    codes = codes.astype(np.int64)
    return codes[: a_obj.size], codes[a_obj.size :], labels


def mean_autocorrelation(series: Sequence[np.ndarray], max_lag: int | None = None) -> np.ndarray:
    """Mean over series of each series' autocorrelation at lags 1..max_lag.

    Series i's autocorrelation at lag k is sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2
    with m its own mean. Series of different lengths are handled by averaging, per lag,
    over the series long enough to have that lag; constant series (no variance) are left
    out. ``max_lag`` defaults to the longest length minus one. Entries with no series are
    NaN.

    Example:
        >>> x = np.array([1.0, -1.0, 1.0, -1.0])
        >>> mean_autocorrelation([x], max_lag=2).round(2).tolist()
        [-0.75, 0.5]
    """
    lengths = np.array([len(x) for x in series], dtype=np.int64)
    longest = int(lengths.max(initial=0))
    if max_lag is None:
        max_lag = max(longest - 1, 0)
    sums, counts = np.zeros(max_lag), np.zeros(max_lag)
    if max_lag == 0 or longest < 2:
        return np.full(max_lag, np.nan)
    n_fft = 1 << math.ceil(math.log2(2 * longest))
    chunk = max(1, 4_000_000 // n_fft)  # bounds memory to a few tens of MB per chunk
    for start in range(0, len(series), chunk):
        block = series[start : start + chunk]
        centred = np.zeros((len(block), longest))  # zero after each series' end
        varies = np.zeros((len(block), 1), dtype=bool)
        for row, x in enumerate(block):
            x = np.asarray(x, dtype=np.float64)
            varies[row] = np.ptp(x) > 0
            centred[row, : len(x)] = x - x.mean() if varies[row] else 0.0
        # Wiener-Khinchin: the zero-padded circular autocovariance equals the linear one.
        spectrum = np.fft.rfft(centred, n=n_fft, axis=1)
        cov = np.fft.irfft(spectrum * np.conj(spectrum), n=n_fft, axis=1)[:, :longest]
        lags = min(max_lag, longest - 1)
        variance = cov[:, :1]
        block_lengths = lengths[start : start + chunk, None]
        valid = (np.arange(1, lags + 1)[None, :] < block_lengths) & varies & (variance > 0)
        acf = np.divide(
            cov[:, 1 : lags + 1], variance, out=np.zeros(valid.shape), where=valid
        )  # (n, lags)
        sums[:lags] += acf.sum(axis=0)
        counts[:lags] += valid.sum(axis=0)
    return np.divide(sums, counts, out=np.full(max_lag, np.nan), where=counts > 0)


def _real_scale(values: np.ndarray) -> float:
    """Standard deviation used as the unit for a continuous variable (1 if constant)."""
    std = float(np.std(values))
    return std if std > 0 else 1.0


def _number(value: float | np.floating | None) -> float | None:
    """A plain float for JSON, or None for a missing or undefined value."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return _number(np.mean(present)) if present else None


def _skipped(reason: str, better: str = "lower") -> dict[str, Any]:
    return {"score": None, "better": better, "reason": reason}


def _continuous_features(data: SeriesData) -> list[str]:
    return [n for n, d in zip(data.feature_names, data.feature_discrete, strict=True) if not d]


def _pooled(data: SeriesData, name: str) -> np.ndarray:
    return np.concatenate(data.feature_column(name))


# --------------------------------------------------------------------------------------
# Distribution metrics (no training)
# --------------------------------------------------------------------------------------


def marginal_distances(real: SeriesData, synthetic: SeriesData) -> dict[str, Any]:
    """Distance between the real and synthetic distribution of every single variable.

    * continuous feature/attribute: Wasserstein-1 between all values (time steps pooled
      for features), divided by the real standard deviation;
    * discrete feature/attribute: total variation distance of the category frequencies;
    * ``sequence_length``: Wasserstein-1 between the series lengths, divided by the
      longest real length (0 for equal distributions, 1 at most).

    ``score`` is the mean of all of these (lower is better, 0 is identical).

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(20, 5, 1)))
        >>> marginal_distances(data, data)["score"]
        0.0
    """
    check_same_columns(real, synthetic)
    result: dict[str, Any] = {"features": {}, "attributes": {}}
    for name, discrete in zip(real.feature_names, real.feature_discrete, strict=True):
        real_values, synth_values = _pooled(real, name), _pooled(synthetic, name)
        result["features"][name] = _marginal(real_values, synth_values, discrete)
    for name, discrete in zip(real.attribute_names, real.attribute_discrete, strict=True):
        real_values = real.attribute_column(name)
        synth_values = synthetic.attribute_column(name)
        result["attributes"][name] = _marginal(real_values, synth_values, discrete)
    length_w1 = wasserstein_1d(real.lengths, synthetic.lengths) / real.lengths.max()
    result["sequence_length"] = _number(length_w1)
    values = [v["value"] for part in ("features", "attributes") for v in result[part].values()]
    result["score"] = _mean_or_none([*values, result["sequence_length"]])
    result["better"] = "lower"
    return result


def _marginal(real_values: np.ndarray, synth_values: np.ndarray, discrete: bool) -> dict:
    if discrete:
        return {
            "distance": "total_variation",
            "value": _number(total_variation_distance(real_values, synth_values)),
        }
    w1 = wasserstein_1d(real_values, synth_values) / _real_scale(real_values)
    return {"distance": "wasserstein_1_in_real_std", "value": _number(w1)}


def autocorrelation_distance(real: SeriesData, synthetic: SeriesData) -> dict[str, Any]:
    """Mean squared difference of the mean autocorrelation curves, per continuous feature.

    For each continuous feature, `mean_autocorrelation` is computed on each side for lags
    1..T-1 and the squared differences are averaged over the lags both sides have (lags
    beyond the shorter side's longest series are left out). ``score`` is the mean over
    features; lower is better, 0 means identical temporal structure.

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(10, 8, 1)))
        >>> autocorrelation_distance(data, data)["score"]
        0.0
    """
    check_same_columns(real, synthetic)
    names = _continuous_features(real)
    if not names:
        return _skipped("There is no continuous feature.")
    per_feature: dict[str, float | None] = {}
    for name in names:
        real_acf = mean_autocorrelation(real.feature_column(name))
        synth_acf = mean_autocorrelation(synthetic.feature_column(name))
        lags = min(real_acf.size, synth_acf.size)
        diff = real_acf[:lags] - synth_acf[:lags]
        diff = diff[np.isfinite(diff)]
        per_feature[name] = _number(np.mean(diff**2)) if diff.size else None
    score = _mean_or_none(list(per_feature.values()))
    if score is None:
        return _skipped("No feature has non-constant series of length 2 or more on both sides.")
    return {"per_feature": per_feature, "score": score, "better": "lower"}


def attribute_feature_relation(real: SeriesData, synthetic: SeriesData) -> dict[str, Any]:
    """How the distribution of each continuous feature depends on each discrete attribute.

    For attribute a and feature f: for each category c of a in the real data, the
    Wasserstein-1 distance (in real standard deviations of f) between the values of f in
    real series with a == c and in synthetic series with a == c, averaged with weights equal
    to c's real frequency. When the synthetic data has no series with a == c, its whole
    distribution of f stands in (as if the model ignored the attribute), and c is listed in
    ``missing_categories``. ``score`` is the mean over (attribute, feature) pairs; lower is
    better.

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(
        ...     np.random.default_rng(0).normal(size=(6, 4, 1)),
        ...     np.array([["a"], ["b"]] * 3, dtype=object),
        ... )
        >>> attribute_feature_relation(data, data)["score"]
        0.0
    """
    check_same_columns(real, synthetic)
    attributes = [n for n, d in _columns_of(real, "attribute") if d]
    features = _continuous_features(real)
    if not attributes or not features:
        return _skipped("It needs a discrete attribute and a continuous feature.")
    per_attribute = {}
    for attribute in attributes:
        real_codes, synth_codes, labels = factorize_pair(
            real.attribute_column(attribute), synthetic.attribute_column(attribute)
        )
        per_feature = {
            feature: _conditional_w1(real, synthetic, feature, real_codes, synth_codes)
            for feature in features
        }
        missing = sorted(set(real_codes.tolist()) - set(synth_codes.tolist()))
        per_attribute[attribute] = {
            "per_feature": per_feature,
            "missing_categories": [str(labels[c]) for c in missing],
            "mean": _mean_or_none(list(per_feature.values())),
        }
    score = _mean_or_none([a["mean"] for a in per_attribute.values()])
    return {"per_attribute": per_attribute, "score": score, "better": "lower"}


def _conditional_w1(
    real: SeriesData,
    synthetic: SeriesData,
    feature: str,
    real_codes: np.ndarray,
    synth_codes: np.ndarray,
) -> float | None:
    real_series, synth_series = real.feature_column(feature), synthetic.feature_column(feature)
    scale = _real_scale(np.concatenate(real_series))
    synth_all = np.concatenate(synth_series)
    total = 0.0
    categories, counts = np.unique(real_codes, return_counts=True)
    for category, count in zip(categories, counts, strict=True):
        real_values = np.concatenate(
            [real_series[i] for i in np.flatnonzero(real_codes == category)]
        )
        synth_rows = np.flatnonzero(synth_codes == category)
        synth_values = (
            np.concatenate([synth_series[i] for i in synth_rows]) if synth_rows.size else synth_all
        )
        total += count / real_codes.size * wasserstein_1d(real_values, synth_values) / scale
    return _number(total)


def feature_correlation_distance(real: SeriesData, synthetic: SeriesData) -> dict[str, Any]:
    """Mean absolute difference of the continuous features' correlation matrices.

    On each side, the Pearson correlation between every pair of continuous features over
    all time steps of all series (a feature that is constant correlates 0 with the
    others); ``score`` is the mean of |corr_real - corr_synthetic| over the pairs, from 0
    (identical) to 2. Needs two or more continuous features.

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(5, 6, 3)))
        >>> feature_correlation_distance(data, data)["score"]
        0.0
    """
    check_same_columns(real, synthetic)
    names = _continuous_features(real)
    if len(names) < 2:
        return _skipped("It needs two or more continuous features.")
    real_corr, synth_corr = _correlation(real, names), _correlation(synthetic, names)
    upper = np.triu_indices(len(names), k=1)
    score = np.mean(np.abs(real_corr - synth_corr)[upper])
    return {
        "real": real_corr.round(6).tolist(),
        "synthetic": synth_corr.round(6).tolist(),
        "feature_names": names,
        "score": _number(score),
        "better": "lower",
    }


def _correlation(data: SeriesData, names: list[str]) -> np.ndarray:
    values = np.stack([_pooled(data, n) for n in names], axis=1)  # (sum T_i, Fc)
    centred = values - values.mean(axis=0)
    norms = np.sqrt((centred**2).sum(axis=0))
    unit = np.divide(centred, norms, out=np.zeros_like(centred), where=norms > 0)
    corr = np.clip(unit.T @ unit, -1.0, 1.0)
    np.fill_diagonal(corr, 1.0)
    return corr


# --------------------------------------------------------------------------------------
# Learned metrics: a small GRU reads the series (discriminative score, TSTR)
# --------------------------------------------------------------------------------------

_CLIP = 10.0
"""Standardized inputs are clipped to +-_CLIP so wild synthetic outliers cannot blow up
the small classifiers (they still make the series easy to tell apart)."""


@dataclass
class _Encoded:
    """One side's series as classifier inputs, encoded with a code book shared by both sides."""

    steps: np.ndarray  # (N, T, D) float32: standardized continuous + one-hot discrete features
    continuous: np.ndarray  # (N, T, Fc) float32: the standardized continuous features alone
    lengths: np.ndarray  # (N,) int64
    static: dict[str, np.ndarray]  # attribute name -> (N, k) float32 block; "__length__" too
    attribute_codes: dict[str, np.ndarray]  # discrete attribute name -> (N,) int64 codes
    attribute_labels: dict[str, list[Any]]  # discrete attribute name -> category of each code

    def static_matrix(self, exclude: str | None = None) -> np.ndarray:
        blocks = [b for name, b in self.static.items() if name != exclude]
        return np.concatenate(blocks, axis=1)  # (N, S)


def _encode_pair(real: SeriesData, synthetic: SeriesData) -> tuple[_Encoded, _Encoded]:
    """Encode both sides for the classifiers: real statistics scale both (no leakage of
    synthetic statistics into the units), and discrete code books span both sides."""
    longest = int(max(real.lengths.max(), synthetic.lengths.max()))
    sides = (real, synthetic)
    step_blocks: tuple[list, list] = ([], [])
    continuous_blocks: tuple[list, list] = ([], [])
    for name, discrete in zip(real.feature_names, real.feature_discrete, strict=True):
        columns = [side.feature_column(name) for side in sides]
        if discrete:
            real_codes, synth_codes, labels = factorize_pair(
                np.concatenate(columns[0]), np.concatenate(columns[1])
            )
            pooled = _cap_categories(real_codes, synth_codes, len(labels))
            n_categories = int(max(pooled[0].max(), pooled[1].max())) + 1
            for k in range(2):
                codes = np.split(pooled[k], np.cumsum(sides[k].lengths)[:-1])
                padded = _pad(codes, longest, fill=n_categories)
                one_hot = np.eye(n_categories + 1, dtype=np.float32)[padded][..., :-1]
                step_blocks[k].append(one_hot)  # (N, T, K); padding is all zero
        else:
            real_pool = np.concatenate(columns[0])
            mean, scale = real_pool.mean(), _real_scale(real_pool)
            for k in range(2):
                scaled = [np.clip((x - mean) / scale, -_CLIP, _CLIP) for x in columns[k]]
                padded = _pad(scaled, longest, fill=0.0)[..., None]  # (N, T, 1)
                step_blocks[k].append(padded)
                continuous_blocks[k].append(padded)
    static, codes, labels = _encode_attributes(real, synthetic)
    encoded = []
    for k, side in enumerate(sides):
        n = side.n_examples
        lengths = side.lengths
        side_static = {name: blocks[k] for name, blocks in static.items()}
        side_static["__length__"] = (lengths / real.lengths.max()).astype(np.float32)[:, None]
        encoded.append(
            _Encoded(
                steps=np.concatenate(step_blocks[k], axis=2).astype(np.float32),
                continuous=(
                    np.concatenate(continuous_blocks[k], axis=2).astype(np.float32)
                    if continuous_blocks[k]
                    else np.zeros((n, longest, 0), np.float32)
                ),
                lengths=lengths,
                static=side_static,
                attribute_codes={name: c[k] for name, c in codes.items()},
                attribute_labels=labels,
            )
        )
    return encoded[0], encoded[1]


def _encode_attributes(real: SeriesData, synthetic: SeriesData) -> tuple[dict, dict, dict]:
    static: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    labels: dict[str, list[Any]] = {}
    for name, discrete in zip(real.attribute_names, real.attribute_discrete, strict=True):
        real_values, synth_values = real.attribute_column(name), synthetic.attribute_column(name)
        if discrete:
            real_codes, synth_codes, labels[name] = factorize_pair(real_values, synth_values)
            codes[name] = (real_codes, synth_codes)  # targets keep every category
            capped = _cap_categories(real_codes, synth_codes, len(labels[name]))
            eye = np.eye(int(max(capped[0].max(), capped[1].max())) + 1, dtype=np.float32)
            static[name] = (eye[capped[0]], eye[capped[1]])  # (N, K) one-hot
        else:
            mean, scale = real_values.mean(), _real_scale(real_values)
            static[name] = tuple(
                np.clip((v - mean) / scale, -_CLIP, _CLIP).astype(np.float32)[:, None]
                for v in (real_values, synth_values)
            )
    return static, codes, labels


_MAX_ONE_HOT = 50
"""Classifier inputs one-hot encode at most this many categories per variable."""


def _cap_categories(
    real_codes: np.ndarray, synth_codes: np.ndarray, n_categories: int
) -> tuple[np.ndarray, np.ndarray]:
    """Keep the most frequent categories (over both sides); pool the rest into one.

    Bounds the one-hot width, and so memory, for variables with thousands of categories.
    """
    if n_categories <= _MAX_ONE_HOT:
        return real_codes, synth_codes
    counts = np.bincount(np.concatenate([real_codes, synth_codes]), minlength=n_categories)
    keep = np.argsort(-counts, kind="stable")[: _MAX_ONE_HOT - 1]
    mapping = np.full(n_categories, _MAX_ONE_HOT - 1, dtype=np.int64)  # "other"
    mapping[keep] = np.arange(keep.size)
    return mapping[real_codes], mapping[synth_codes]


def _pad(series: Sequence[np.ndarray], length: int, fill: float) -> np.ndarray:
    dtype = np.int64 if series and series[0].dtype.kind in "iu" else np.float32
    padded = np.full((len(series), length), fill, dtype=dtype)
    for row, x in enumerate(series):
        padded[row, : len(x)] = x
    return padded


class _SeriesNet(nn.Module):
    """GRU over the steps; a linear head reads its state plus the static (per-series) inputs.

    ``per_step=False``: one output per series, from the state at the series' last step.
    ``per_step=True``: one output per time step (next-step prediction).
    """

    def __init__(self, step_dim: int, static_dim: int, out_dim: int, hidden: int = 16):
        super().__init__()
        self.gru = nn.GRU(step_dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden + static_dim, out_dim)

    def forward(
        self, steps: torch.Tensor, lengths: torch.Tensor, static: torch.Tensor, per_step: bool
    ) -> torch.Tensor:
        states, _ = self.gru(steps)  # (B, T, H)
        if per_step:
            expanded = static[:, None, :].expand(-1, states.shape[1], -1)  # (B, T, S)
            return self.head(torch.cat([states, expanded], dim=2))  # (B, T, out)
        # The GRU is causal, so the state at the last real step never saw the padding.
        last = states[torch.arange(states.shape[0]), lengths - 1]  # (B, H)
        return self.head(torch.cat([last, static], dim=1))  # (B, out)


@dataclass
class _Task:
    """Inputs and targets of one supervised problem, as tensors."""

    steps: torch.Tensor  # (N, T, D)
    lengths: torch.Tensor  # (N,)
    static: torch.Tensor  # (N, S)
    target: torch.Tensor  # (N,) class index, or (N, T, Fc) next-step values

    @staticmethod
    def of(
        steps: np.ndarray,
        lengths: np.ndarray,
        static: np.ndarray,
        target: np.ndarray,
        rows: np.ndarray,
    ) -> _Task:
        """The task restricted to ``rows``, without padding that none of them uses."""
        longest = int(lengths[rows].max())
        return _Task(
            steps=torch.from_numpy(steps[rows, :longest]),
            lengths=torch.from_numpy(lengths[rows]),
            static=torch.from_numpy(static[rows]),
            target=torch.from_numpy(target[rows, :longest] if target.ndim == 3 else target[rows]),
        )

    def __len__(self) -> int:
        return self.steps.shape[0]


def _loss(net: _SeriesNet, task: _Task, rows: torch.Tensor | slice, per_step: bool):
    """Mean cross-entropy (classification) or masked mean absolute error (next step).

    Returns ``(loss, correct_or_error_sum, count)`` so callers can also compute the
    metric itself without a second pass.
    """
    lengths = task.lengths[rows]
    output = net(task.steps[rows], lengths, task.static[rows], per_step)
    target = task.target[rows]
    if not per_step:
        loss = nn.functional.cross_entropy(output, target)
        return loss, (output.argmax(dim=1) == target).sum(), target.shape[0]
    # Predict step t+1 from steps 0..t: valid where t+1 is inside the series.
    error = (output[:, :-1] - target[:, 1:]).abs().mean(dim=2)  # (B, T-1)
    steps = torch.arange(error.shape[1])[None, :]
    mask = steps < (lengths[:, None] - 1)
    count = mask.sum().clamp(min=1)
    total = (error * mask).sum()
    return total / count, total, count


def _fit_and_score(
    train: _Task, test: _Task, out_dim: int, per_step: bool, seed: int, min_updates: int = 0
) -> float:
    """Train a fresh `_SeriesNet` on ``train``; return accuracy (or MAE) on ``test``.

    Trains for 12 epochs, or more if that is fewer than ``min_updates`` optimizer steps.
    Deterministic for a given seed: the global torch RNG is forked, so the caller's random
    state is untouched.
    """
    batch_size = 64
    batches_per_epoch = math.ceil(len(train) / batch_size)
    epochs = max(12, math.ceil(min_updates / batches_per_epoch))
    with _one_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = _SeriesNet(train.steps.shape[2], train.static.shape[1], out_dim)
        optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
        for _ in range(epochs):
            for batch in torch.randperm(len(train)).split(batch_size):
                loss, _, _ = _loss(net, train, batch, per_step)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
        with torch.no_grad():
            _, total, count = _loss(net, test, slice(None), per_step)
    return float(total) / float(count)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one CPU thread, then restore the caller's setting.

    The models here are tiny: extra threads only add synchronisation, and on a busy
    machine with few cores they made training 20x slower in our measurements.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _sample_rows(n: int, cap: int | None, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.permutation(n)[:cap]) if cap is not None and n > cap else np.arange(n)


def _split(n: int, rng: np.random.Generator, train_fraction: float = 0.7) -> tuple:
    order = rng.permutation(n)
    cut = round(train_fraction * n)
    return order[:cut], order[cut:]


_MIN_EXAMPLES = 10
"""Fewer series than this per side make the learned metrics meaningless; they are skipped."""


def discriminative_score(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    seed: int = 0,
    n_seeds: int = 3,
    max_examples: int | None = 1000,
) -> dict[str, Any]:
    """How easily a small classifier tells real series from synthetic ones.

    The same number n of series is drawn from each side (at most ``max_examples``), so
    guessing scores 0.5. A one-layer GRU (16 units) reads each series' features, and a
    linear head reads its last state together with the series' attributes and length; it
    is trained for a few epochs on 70% of the 2n series and its accuracy measured on the
    other 30%. The score is |accuracy - 0.5|: 0 means indistinguishable, 0.5 perfectly
    separated. Repeated with ``n_seeds`` seeds (split and initialisation), reporting the
    mean (``score``) and standard deviation, and the mean raw ``accuracy``: an accuracy
    clearly *below* 0.5 means the synthetic data holds copies of real series (the
    classifier met a series' twin in training, with the other label). Deterministic for a
    given ``seed``.

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(40, 5, 1)))
        >>> result = discriminative_score(data, data, n_seeds=1)
        >>> result["score"] < 0.3
        True
    """
    check_same_columns(real, synthetic)
    _check_count(n_seeds, "n_seeds", minimum=1)
    rng = np.random.default_rng(seed)
    n = min(real.n_examples, synthetic.n_examples, max_examples or math.inf)
    if n < _MIN_EXAMPLES:
        return _skipped(f"It needs at least {_MIN_EXAMPLES} series on each side, got {n}.")
    real_rows = _sample_rows(real.n_examples, n, rng)
    synth_rows = _sample_rows(synthetic.n_examples, n, rng)
    real_enc, synth_enc = _encode_pair(real.subset(real_rows), synthetic.subset(synth_rows))
    steps = np.concatenate([real_enc.steps, synth_enc.steps])  # (2n, T, D)
    lengths = np.concatenate([real_enc.lengths, synth_enc.lengths])
    static = np.concatenate([real_enc.static_matrix(), synth_enc.static_matrix()])
    labels = np.repeat(np.array([0, 1], dtype=np.int64), n)  # 0 real, 1 synthetic
    # A fixed, short training (12 epochs): longer training lets the classifier memorise
    # series, and when synthetic series copy real ones it then learns each twin with the
    # opposite label and scores below chance on held-out data.
    accuracies = []
    for k in range(n_seeds):
        train, test = _split(2 * n, np.random.default_rng([seed, k]))
        accuracy = _fit_and_score(
            _Task.of(steps, lengths, static, labels, train),
            _Task.of(steps, lengths, static, labels, test),
            out_dim=2,
            per_step=False,
            seed=seed * 1000 + k,
        )
        accuracies.append(accuracy)
    scores = np.abs(np.array(accuracies) - 0.5)
    return {
        "score": _number(np.mean(scores)),
        "std": _number(np.std(scores)),
        "per_seed": [_number(s) for s in scores],
        "accuracy": _number(np.mean(accuracies)),
        "n_per_side": int(n),
        "better": "lower",
    }


def _check_count(value: Any, name: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}.")


def train_synthetic_test_real(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    target_attribute: str | None = None,
    seed: int = 0,
    max_examples: int | None = 1000,
) -> dict[str, Any]:
    """Train on synthetic, test on real (TSTR), beside train on real, test on real.

    The real series are split 70/30. Two identical small GRU models are trained, one on
    the 70% real split and one on as many synthetic series (all of them if there are
    fewer), and both are tested on the same 30% of real series. At most ``max_examples``
    series are used from each side.

    * Classification, when ``target_attribute`` names a discrete attribute (by default the
      first discrete attribute with two or more real categories): predict it from the
      features and the other attributes; ``synthetic_accuracy`` vs ``real_accuracy``, and
      ``score = synthetic_accuracy / real_accuracy``.
    * Next-step prediction, when there is no discrete attribute: predict each continuous
      feature at step t+1 from steps 0..t; mean absolute errors in real standard
      deviations, ``synthetic_mae`` vs ``real_mae``, and ``score = real_mae / synthetic_mae``.

    In both cases 1 means the synthetic data teaches as much as the real data; higher is
    better (it can exceed 1 slightly by chance).

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(30, 6, 1)))
        >>> train_synthetic_test_real(data, data)["task"]
        'next_step'
    """
    check_same_columns(real, synthetic)
    target = _choose_target(real, target_attribute)
    rng = np.random.default_rng(seed)
    n_real, n_synth = real.n_examples, synthetic.n_examples
    if min(n_real, n_synth) < _MIN_EXAMPLES:
        return _skipped(
            f"It needs at least {_MIN_EXAMPLES} series on each side, got {min(n_real, n_synth)}.",
            better="higher",
        )
    real = real.subset(_sample_rows(n_real, max_examples, rng))
    synthetic = synthetic.subset(_sample_rows(n_synth, max_examples, rng))
    real_enc, synth_enc = _encode_pair(real, synthetic)
    train_rows, test_rows = _split(real.n_examples, rng)
    if target is None:
        return _next_step(real_enc, synth_enc, train_rows, test_rows, seed)
    return _classify(real_enc, synth_enc, target, train_rows, test_rows, seed)


def _choose_target(real: SeriesData, target_attribute: str | None) -> str | None:
    discrete = [n for n, d in _columns_of(real, "attribute") if d]
    if target_attribute is None:
        usable = [n for n in discrete if len(set(map(str, real.attribute_column(n)))) > 1]
        return usable[0] if usable else None
    if target_attribute not in discrete:
        raise ParameterError(
            f"target_attribute={target_attribute!r} is not a discrete attribute; choose one "
            f"of {discrete} or pass None."
        )
    return target_attribute


def _classify(real_enc, synth_enc, target, train_rows, test_rows, seed) -> dict[str, Any]:
    n_classes = len(real_enc.attribute_labels[target])
    synthetic_accuracy, real_accuracy = _train_both_test_real(
        real_enc,
        synth_enc,
        targets=lambda enc: enc.attribute_codes[target],
        exclude=target,  # predicting an attribute from itself would be trivial
        split=(train_rows, test_rows),
        out_dim=n_classes,
        per_step=False,
        seed=seed,
    )
    real_target = real_enc.attribute_codes[target]
    majority = np.bincount(real_target[train_rows], minlength=n_classes).argmax()
    result = {
        "task": "classification",
        "target": target,
        "synthetic_accuracy": _number(synthetic_accuracy),
        "real_accuracy": _number(real_accuracy),
        "majority_class_accuracy": _number(np.mean(real_target[test_rows] == majority)),
        "score": _number(synthetic_accuracy / real_accuracy) if real_accuracy > 0 else None,
        "better": "higher",
    }
    if result["score"] is None:
        result["reason"] = (
            f"Trained on real data, the model predicts no held-out {target!r} right, so there "
            "is no baseline to compare with; choose another target_attribute."
        )
    return result


def _next_step(real_enc, synth_enc, train_rows, test_rows, seed) -> dict[str, Any]:
    n_continuous = real_enc.continuous.shape[2]
    if n_continuous == 0:
        return _skipped(
            "There is neither a discrete attribute nor a continuous feature to predict.",
            better="higher",
        )
    if real_enc.lengths.max() < 2:
        return _skipped("Next-step prediction needs series of length 2 or more.", "higher")
    synthetic_mae, real_mae = _train_both_test_real(
        real_enc,
        synth_enc,
        targets=lambda enc: enc.continuous,
        exclude=None,
        split=(train_rows, test_rows),
        out_dim=n_continuous,
        per_step=True,
        seed=seed,
    )
    result = {
        "task": "next_step",
        "synthetic_mae": _number(synthetic_mae),
        "real_mae": _number(real_mae),
        "score": _number(real_mae / synthetic_mae) if synthetic_mae > 0 else None,
        "better": "higher",
    }
    if result["score"] is None:
        result["reason"] = "The model trained on synthetic data predicts real data exactly."
    return result


def _train_both_test_real(
    real_enc: _Encoded,
    synth_enc: _Encoded,
    *,
    targets: Callable[[_Encoded], np.ndarray],
    exclude: str | None,
    split: tuple[np.ndarray, np.ndarray],
    out_dim: int,
    per_step: bool,
    seed: int,
) -> tuple[float, float]:
    """Scores on the real test rows of a model trained on synthetic series and of an
    identical one (same seed) trained on as many real training rows."""

    def task(enc: _Encoded, rows: np.ndarray) -> _Task:
        return _Task.of(enc.steps, enc.lengths, enc.static_matrix(exclude), targets(enc), rows)

    train_rows, test_rows = split
    test = task(real_enc, test_rows)
    # Same number of training series on both sides, so only their quality differs.
    synth_rows = np.random.default_rng(seed).permutation(len(synth_enc.lengths))
    synth_train = task(synth_enc, np.sort(synth_rows[: len(train_rows)]))
    # Enough updates that small data sets are learned too, or the ratio measures noise.
    synthetic = _fit_and_score(synth_train, test, out_dim, per_step, seed, min_updates=100)
    real = _fit_and_score(task(real_enc, train_rows), test, out_dim, per_step, seed, 100)
    return synthetic, real


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


def evaluate(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    target_attribute: str | None = None,
    seed: int = 0,
    max_examples: int | None = 1000,
) -> dict[str, Any]:
    """Run every fidelity metric; return a JSON-serializable nested dict.

    Keys of the result: ``info`` (counts, seed) and one entry per metric, named as in
    `METRIC_DESCRIPTIONS`: ``discriminative``, ``tstr``, ``autocorrelation``,
    ``marginals``, ``attribute_feature_relation``, ``feature_correlation``. Each metric
    entry has a headline ``score`` (None with a ``reason`` when it does not apply),
    ``better`` ("lower" or "higher") and its details; see each metric's function for its
    definition. At most ``max_examples`` series per side, drawn at random with ``seed``,
    are used (None: all of them); results are reproducible for a given ``seed``.

    Example:
        >>> import json, numpy as np
        >>> rng = np.random.default_rng(0)
        >>> real = SeriesData.from_arrays(rng.normal(size=(30, 6, 2)))
        >>> synthetic = SeriesData.from_arrays(rng.normal(size=(30, 6, 2)))
        >>> result = evaluate(real, synthetic)
        >>> sorted(result) == sorted([*METRIC_DESCRIPTIONS, "info"])
        True
        >>> _ = json.dumps(result)  # plain Python types only
    """
    check_same_columns(real, synthetic)
    if max_examples is not None:
        _check_count(max_examples, "max_examples", minimum=1)
    _choose_target(real, target_attribute)  # fail fast on a bad target, before any work
    rng = np.random.default_rng(seed)
    real = real.subset(_sample_rows(real.n_examples, max_examples, rng))
    synthetic = synthetic.subset(_sample_rows(synthetic.n_examples, max_examples, rng))
    return {
        "info": {
            "n_real": real.n_examples,
            "n_synthetic": synthetic.n_examples,
            "seed": int(seed),
        },
        "discriminative": discriminative_score(real, synthetic, seed=seed, max_examples=None),
        "tstr": train_synthetic_test_real(
            real, synthetic, target_attribute=target_attribute, seed=seed, max_examples=None
        ),
        "autocorrelation": autocorrelation_distance(real, synthetic),
        "marginals": marginal_distances(real, synthetic),
        "attribute_feature_relation": attribute_feature_relation(real, synthetic),
        "feature_correlation": feature_correlation_distance(real, synthetic),
    }
