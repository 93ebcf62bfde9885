"""Distribution metrics (no training): marginals, autocorrelation, correlations, relations.

Each takes a real and a synthetic `SeriesData` with the same columns and returns a
JSON-serializable dict with a headline ``score`` (lower is better). The numeric helpers
they are built from (`wasserstein_1d`, `total_variation_distance`, `factorize_pair`,
`mean_autocorrelation`) are public too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dgan.encoding.log_scale import log_floor, to_log
from dgan.errors import ParameterError
from dgan.metrics._common import _mean_or_none, _number, _real_scale, _skipped
from dgan.metrics.data import SeriesData, _columns_of, check_same_columns

MISSING_CATEGORY = "<missing>"
"""Label of the category that missing discrete values (None/NaN) are counted in."""

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
            largest = np.abs(x).max(initial=0.0)  # scale-free: at most 1, so nothing overflows
            x = x / largest if largest > 0 else x
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
      for features), divided by the real standard deviation; on a log scale where the
      real values span orders of magnitude (`comparison_scale`; ``"scale"`` says which);
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
    scale = comparison_scale(real_values)
    real_values, synth_values = scale(real_values), scale(synth_values)
    w1 = wasserstein_1d(real_values, synth_values) / _real_scale(real_values)
    return {"distance": "wasserstein_1_in_real_std", "value": _number(w1), "scale": scale.name}


class _Scale:
    """How a continuous variable's values are compared: as they are, or on the signed log
    scale the encoder uses for values that span orders of magnitude
    (`dgan.encoding.variables.to_log`)."""

    def __init__(self, floor: float | None):
        self.floor = floor
        self.name = "linear" if floor is None else "log"

    def __call__(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        return values if self.floor is None else to_log(values, self.floor)


def comparison_scale(real_values: np.ndarray) -> _Scale:
    """The scale a continuous variable is compared on, decided from its real values by the
    encoder's rule (`dgan.encoding.variables.log_floor`): on a linear scale, the loudest
    class's values set the unit and every quiet class is a rounding error.

    Example:
        >>> comparison_scale(np.array([0.01, 0.5, 3.0, 400.0, 20000.0])).name
        'log'
        >>> comparison_scale(np.linspace(-1, 1, 50)).name
        'linear'
    """
    return _Scale(log_floor(real_values))


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
    Wasserstein-1 distance (in real standard deviations of f, on the scale of
    `comparison_scale`: logarithmic where f spans orders of magnitude) between the values of f in
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
    compared = comparison_scale(np.concatenate(real_series))  # log where values span decades
    real_series = [compared(x) for x in real_series]
    synth_series = [compared(x) for x in synth_series]
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
    # Scaled to at most 1 first: a correlation does not depend on a feature's scale, and
    # values beyond ~1e154 would overflow when squared (finite data in, finite out).
    largest = np.abs(values).max(axis=0)
    values = values / np.where(largest > 0, largest, 1.0)
    centred = values - values.mean(axis=0)
    norms = np.sqrt((centred**2).sum(axis=0))
    unit = np.divide(centred, norms, out=np.zeros_like(centred), where=norms > 0)
    corr = np.clip(unit.T @ unit, -1.0, 1.0)
    np.fill_diagonal(corr, 1.0)
    return corr


# --------------------------------------------------------------------------------------
# Classes: is every category of every discrete attribute generated?
# --------------------------------------------------------------------------------------

SHORTFALL_Z = 2.58
"""A category is generated measurably less often than in the real data when a two-proportion
test says so at the 0.5% level (one-sided): random halves of real data rarely are."""


def class_shares(real: SeriesData, synthetic: SeriesData) -> dict[str, Any]:
    """Whether every category of every discrete attribute is generated at its real share.

    For each category c of each discrete attribute: its share of the real series, of the
    synthetic series, their ratio (synthetic / real) and whether the synthetic share is
    measurably lower (a two-proportion test at the 0.5% level, `SHORTFALL_Z`: sampling
    noise in small data is not a shortfall). ``score`` is the smallest ratio among the
    measurably lower categories, 1 when there is none: 0.5 means a class at half its real
    share, 0 a class never generated; higher is better. ``short`` lists the categories
    measurably below half their real share, worst first; ``unsure`` those below half their
    share whose counts are too small to tell from sampling noise (reported, not scored).

    Example:
        >>> real = SeriesData.from_arrays(np.zeros((40, 2, 1)),
        ...     np.array([["a"]] * 20 + [["b"]] * 20, dtype=object))
        >>> fake = SeriesData.from_arrays(np.zeros((40, 2, 1)),
        ...     np.array([["a"]] * 40, dtype=object))
        >>> result = class_shares(real, fake)
        >>> result["score"], result["short"][0]["category"]
        (0.0, 'b')
    """
    check_same_columns(real, synthetic)
    attributes = [n for n, d in _columns_of(real, "attribute") if d]
    if not attributes:
        return _skipped("There is no discrete attribute.", better="higher")
    per_attribute, lowest, short, unsure = {}, 1.0, [], []
    for name in attributes:
        real_codes, synth_codes, labels = factorize_pair(
            real.attribute_column(name), synthetic.attribute_column(name)
        )
        n_real, n_synth = real_codes.size, synth_codes.size
        real_share = np.bincount(real_codes, minlength=len(labels)) / n_real
        synth_share = np.bincount(synth_codes, minlength=len(labels)) / n_synth
        rows = []
        for code in np.flatnonzero(real_share > 0):
            ratio = synth_share[code] / real_share[code]
            pooled = (real_share[code] * n_real + synth_share[code] * n_synth) / (n_real + n_synth)
            error = math.sqrt(pooled * (1 - pooled) * (1 / n_real + 1 / n_synth))
            z = (real_share[code] - synth_share[code]) / error if error > 0 else 0.0
            row = {
                "category": str(labels[code]),
                "real_share": _number(real_share[code]),
                "synthetic_share": _number(synth_share[code]),
                "ratio": _number(ratio),
                "measurably_lower": bool(z >= SHORTFALL_Z),
            }
            rows.append(row)
            if row["measurably_lower"]:
                lowest = min(lowest, ratio)
            if ratio < 0.5:
                (short if row["measurably_lower"] else unsure).append({"attribute": name, **row})
        per_attribute[name] = sorted(rows, key=lambda r: r["ratio"])
    short.sort(key=lambda r: r["ratio"])
    unsure.sort(key=lambda r: r["ratio"])
    return {
        "score": _number(lowest),
        "better": "higher",
        "short": short,
        "unsure": unsure,
        "per_attribute": per_attribute,
    }
