"""Memorisation: does the synthetic data copy its training series?

A generator that reproduces its training series scores well on every fidelity metric and
defeats the point of synthetic data. `memorisation` measures it like fidelity, against real
data: every series becomes one vector (continuous values in the training data's standard
deviations, on the log scale the marginals use where they span orders of magnitude,
discrete values one-hot, padded to the longest series, with its length), and each synthetic
series is paired with its nearest training series. The yardstick is how close the
*distinct* training series are to each other: the distance from each training series to its
nearest other one, and the ratio of that distance to the distance to the second nearest
(training series that repeat count once, or the yardstick would be 0 and nothing could be
nearer). A **near-copy** is a synthetic series equal to a training series, or both nearer
to one than the closest 5% of those real pairs (``quantile``) and singled out by it: its
nearest-to-second-nearest ratio below the lowest 5% of the real ones. A copy of one series
is near it and far from the others; a series close to the average of several (a smooth,
typical one) is near them all, and is not counted. Data drawn afresh from the real
distribution makes a few percent of near-copies (real series held out from training do); a
generator that copies makes far more. Every synthetic series is searched against every
training series (in chunks), however many: a sample of the training side would miss the
copies of the series left out.

`dgan.metrics.evaluate` reports it beside the same measure between two halves of the
real data, with its own verdict (`judge_memorisation`): "no sign of copying", "some
near-copies" or "copies its training data". Pass the table the model was trained on as
the real data: against other real data this measures closeness, not copying.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> train = SeriesData.from_arrays(rng.normal(size=(200, 8, 2)))
    >>> fresh = SeriesData.from_arrays(rng.normal(size=(200, 8, 2)))
    >>> copies = SeriesData.from_arrays(np.stack(train.features) + 0.01)
    >>> round(memorisation(train, fresh)["score"], 2), memorisation(train, copies)["score"]
    (0.03, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from dgan.metrics._common import _check_count, _number, _real_scale, _skipped
from dgan.metrics.data import SeriesData, check_same_columns
from dgan.metrics.distances import comparison_scale, factorize_pair

QUANTILE = 0.05
"""A near-copy is nearer to a training series than this fraction of the closest real pairs."""
MARGINS = (0.05, 0.20)
"""Near-copy fractions beyond the real-vs-real baseline (and its noise) that make "some
near-copies" and "copies its training data"."""
NO_COPYING, SOME, COPIES = "no sign of copying", "some near-copies", "copies its training data"
_EQUAL = 1e-6
"""Distances below this fraction of the median distance between training series are rounding
of 0 (the distances are computed through matrix products): the series are equal."""


def memorisation(
    train: SeriesData,
    synthetic: SeriesData,
    *,
    quantile: float = QUANTILE,
    max_examples: int | None = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The fraction of ``synthetic`` series that are near-copies of a ``train`` series.

    Returns ``score`` (that fraction: at most about ``quantile`` for data that copies
    nothing, lower is better), ``better``, ``threshold`` and ``ratio_threshold`` (a
    near-copy is nearer than the first and its nearest-to-second-nearest ratio below the
    second: the ``quantile`` of the training series' values among themselves),
    ``near_fraction`` (the fraction nearer than ``threshold`` alone, copies or not),
    ``median_distance_ratio`` (median distance of a synthetic series to its nearest
    training series over the same median among training series: well below 1 means
    synthetic series sit closer to the training ones than those to each other), and the
    counts (``n_train``, ``n_distinct_train``, ``n_synthetic``). Distances are
    root-mean-square differences per vector entry. At most ``max_examples`` synthetic
    series are checked (drawn with ``seed``), each against every training series; the
    yardstick among training series is measured on as many of them (each also searched
    against all the others).
    """
    check_same_columns(train, synthetic)
    if max_examples is not None:
        _check_count(max_examples, "max_examples", minimum=2)
    if train.n_examples < 3 or synthetic.n_examples < 1:
        return _skipped("memorisation needs at least 3 training series and 1 synthetic one")
    rng = np.random.default_rng(seed)
    synthetic = synthetic.subset(_some(synthetic.n_examples, max_examples, rng))
    train_vectors, synthetic_vectors = _vectors(train, synthetic)
    distinct = np.unique(train_vectors, axis=0)  # twins once: else the yardstick is 0
    if len(distinct) < 3:
        return _skipped("memorisation needs at least 3 distinct training series")
    queries = _some(len(distinct), max_examples, rng)
    among_real, real_ratio = _nearest(distinct[queries], distinct, own=queries)
    to_real, ratio = _nearest(synthetic_vectors, distinct)
    threshold = float(np.quantile(among_real, quantile))
    ratio_threshold = float(np.quantile(real_ratio, quantile))
    real_median = float(np.median(among_real))
    # Equal to a training series (up to the distance's rounding) is a copy whatever the ratio.
    equal = to_real <= _EQUAL * real_median
    copies = equal | ((to_real < threshold) & (ratio < ratio_threshold))
    return {
        "score": _number(np.mean(copies)),
        "better": "lower",
        "threshold": _number(threshold),
        "ratio_threshold": _number(ratio_threshold),
        "near_fraction": _number(np.mean(to_real < threshold)),
        "quantile": quantile,
        "median_distance_ratio": _number(np.median(to_real) / real_median)
        if real_median > 0
        else None,
        "n_train": train.n_examples,
        "n_distinct_train": len(distinct),
        "n_synthetic": synthetic.n_examples,
    }


def judge_memorisation(entry: dict[str, Any], baseline: dict[str, Any] | None) -> str:
    """ "no sign of copying", "some near-copies" or "copies its training data": the
    near-copy fraction against the same between two halves of the real data, beyond their
    noise (twice the spreads over seeds) by `MARGINS`; "not judged" without both.

    Example:
        >>> judge_memorisation({"score": 0.06, "std": 0.0}, {"score": 0.05, "std": 0.01})
        'no sign of copying'
        >>> judge_memorisation({"score": 0.9, "std": 0.0}, {"score": 0.05, "std": 0.01})
        'copies its training data'
    """
    score = entry.get("score")
    base = None if baseline is None else baseline.get("score")
    if score is None or base is None:
        return "not judged"
    noise = 2 * float(np.hypot(entry.get("std") or 0.0, baseline.get("std") or 0.0))
    gap = score - base
    some, copies = MARGINS
    if gap <= noise + some:
        return NO_COPYING
    return COPIES if gap > noise + copies else SOME


def _some(n: int, most: int | None, rng: np.random.Generator) -> np.ndarray:
    if most is None or n <= most:
        return np.arange(n)
    return np.sort(rng.choice(n, size=most, replace=False))


def _vectors(train: SeriesData, synthetic: SeriesData) -> tuple[np.ndarray, np.ndarray]:
    """One row per series on each side: scaled continuous steps (zero after the end),
    one-hot discrete steps and attributes, and the scaled length."""
    longest = int(max(train.lengths.max(), synthetic.lengths.max()))
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    for j, discrete in enumerate(train.feature_discrete):
        real = [np.asarray(x[:, j]) for x in train.features]
        fake = [np.asarray(x[:, j]) for x in synthetic.features]
        if discrete:
            codes, other, labels = factorize_pair(np.concatenate(real), np.concatenate(fake))
            real = np.split(codes, np.cumsum([len(x) for x in real])[:-1])
            fake = np.split(other, np.cumsum([len(x) for x in fake])[:-1])
            width = len(labels)
            parts.append((_one_hot(real, width, longest), _one_hot(fake, width, longest)))
        else:
            unit = _in_real_units(np.concatenate(real))
            parts.append(
                (
                    _padded([unit(x) for x in real], longest),
                    _padded([unit(x) for x in fake], longest),
                )
            )
    for j, discrete in enumerate(train.attribute_discrete):
        real, fake = train.attributes[:, j], synthetic.attributes[:, j]
        if discrete:
            codes, other, labels = factorize_pair(real, fake)
            parts.append((np.eye(len(labels))[codes], np.eye(len(labels))[other]))
        else:
            unit = _in_real_units(real)
            parts.append((unit(real)[:, None], unit(fake)[:, None]))
    lengths = train.lengths.astype(np.float64)
    centre, scale = lengths.mean(), _real_scale(lengths)
    parts.append(
        (((lengths - centre) / scale)[:, None], ((synthetic.lengths - centre) / scale)[:, None])
    )
    return np.hstack([p[0] for p in parts]), np.hstack([p[1] for p in parts])


def _in_real_units(real: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Values of a continuous variable in its ``real`` values' standard deviations, on the
    marginals' scale (`comparison_scale`): log where the real values span orders of
    magnitude, or a class 1,000 times quieter than the loudest sits at 0, near all its kind."""
    compared = comparison_scale(real)
    pooled = compared(real)
    centre, scale = pooled.mean(), _real_scale(pooled)
    return lambda values: (compared(values) - centre) / scale


def _padded(series: list[np.ndarray], longest: int) -> np.ndarray:
    out = np.zeros((len(series), longest))
    for i, x in enumerate(series):
        out[i, : len(x)] = x
    return out


def _one_hot(codes: list[np.ndarray], width: int, longest: int) -> np.ndarray:
    out = np.zeros((len(codes), longest, width))
    for i, c in enumerate(codes):
        out[i, np.arange(len(c)), c] = 1.0
    return out.reshape(len(codes), -1)


def _nearest(
    a: np.ndarray, b: np.ndarray, *, own: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``a``: the RMS distance per entry to its nearest row of ``b`` (other
    than row ``own[i]`` of ``b``, the row itself, when given), and that distance over the
    distance to the second nearest (1 where both are 0)."""
    left, right = torch.from_numpy(a), torch.from_numpy(b)
    first, second = [], []
    for start in range(0, len(left), 512):  # bounded memory: 512 x len(b) at a time
        distances = torch.cdist(left[start : start + 512], right)
        if own is not None:
            rows = torch.arange(len(distances))
            distances[rows, torch.from_numpy(own[start : start + 512])] = float("inf")
        two = distances.topk(min(2, distances.shape[1]), dim=1, largest=False).values
        first.append(two[:, 0])
        second.append(two[:, -1])
    nearest, next_nearest = torch.cat(first).numpy(), torch.cat(second).numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(next_nearest > 0, nearest / next_nearest, 1.0)
    return nearest / np.sqrt(max(a.shape[1], 1)), ratio
