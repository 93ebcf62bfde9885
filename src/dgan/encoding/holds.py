"""Held values: how often and in what runs training series repeat a value, and the dead
band within which a generated series keeps its last value (`SeriesTexture`'s holds).

Readings on a grid (whole hPa, an accelerometer's counts) repeat for a while, generated
ones flicker between neighbouring values. `hold_shares` keeps, per class, the share of
steps at which a training series holds its value, `hold_runs` how many steps such a run
lasts. `held` keeps each generated series at its last value until it leaves a dead band
(`DeadBands`) around it, in one of two rules:

* one width a series (its class's band times the series' standard deviation): holds fall
  where the series moves slowly, and runs of them grow long in its calm stretches;
* the width scaled at each step by the series' local activity (`local_activity`: the
  mean absolute change within `HOLD_WINDOW` steps over the series' mean), so holds spread
  more evenly over calm and busy stretches, in shorter runs.

Which rule gives a class runs nearer its training ones is measured per class on the
calibration sample (`SeriesTexture.hold_thresholds`): a sensor on a grid keeps long holds
(one width), a gesture's holds break its slow falls (local; docs/quality.md, "Holds by
the rule that keeps their runs").

A smooth generated series sits on one grid value for as long as it moves slowly, where a
real reading flickers between neighbouring values: its noise crosses the grid's steps.
`reversal_shares` keeps how often a class's moves turn back; where generated series turn
back less often, the band carries a dither, noise added to each step before it is held
(in units of the series' standard deviation), as a quantizer's input noise would be,
never larger than the class's typical move (`move_sizes`): a series whose spread is one
jump (a charger plugged in) moves by far less than that spread from step to step.
The dither's noise is seeded from the series themselves, so the same series always come
out the same (docs/quality.md, "Readings that flicker").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dgan.encoding.per_class import series_classes
from dgan.series import SeriesRows

MIN_SERIES = 5
"""A class with fewer usable series than this takes the numbers of all series pooled."""
MAX_HOLD = 1.0
"""The widest dead band, in units of a series' standard deviation."""
HOLD_ROUNDS = 12
"""Rounds of bisection for each class's dead band (to 1/4096 of `MAX_HOLD`)."""
HOLD_WINDOW = 3
"""Steps either side over which `local_activity` averages a series' changes."""
MAX_DITHER = 0.25
"""The most dither, in units of a series' standard deviation."""
_PAD_ELEMENTS = 1 << 22  # padded values per chunk when holding


class DeadBands(NamedTuple):
    """Per mapped feature and class: ``widths``, the dead band in units of a series'
    standard deviation (0: not held), ``local``, whether it is scaled by each step's
    `local_activity`, and ``dither``, the standard deviation of the noise added to each
    step before holding, in the same units (None: none)."""

    widths: np.ndarray
    local: np.ndarray
    dither: np.ndarray | None = None

    @classmethod
    def uniform(cls, widths: np.ndarray) -> DeadBands:
        """``widths`` with one width a series (no local scaling).

        Example:
            >>> DeadBands.uniform(np.array([[0.2]])).local.tolist()
            [[False]]
        """
        widths = np.asarray(widths, dtype=np.float64)
        return cls(widths, np.zeros(widths.shape, dtype=bool))


def hold_shares(
    rows: SeriesRows, feature: int, classes: np.ndarray | None, n_classes: int
) -> np.ndarray:
    """(n_classes,) the share of each class's steps at which feature ``feature`` holds
    its value (equals the value one step before), over all of the class's series; NaN for
    a class without steps. A class of fewer than `MIN_SERIES` series with steps gets the
    share over all series.

    Example:
        >>> rows = SeriesRows.from_list([np.array([[1.0], [1.0], [2.0], [2.0], [2.0]])])
        >>> hold_shares(rows, 0, None, 1).tolist()  # 3 of 4 steps hold
        [0.75]
    """
    steps, holds, _, counted = _hold_counts(rows, feature, classes, n_classes)
    return _per_class(holds, steps, counted, steps > 0)


def hold_runs(
    rows: SeriesRows, feature: int, classes: np.ndarray | None, n_classes: int
) -> np.ndarray:
    """(n_classes,) the mean number of steps a run of holds (`hold_shares`) of feature
    ``feature`` lasts, over all of each class's series; NaN for a class that never
    holds. A class of fewer than `MIN_SERIES` series with steps gets the mean over all
    classes.

    Example:
        >>> rows = SeriesRows.from_list([np.array([[1.0], [1.0], [2.0], [2.0], [2.0]])])
        >>> hold_runs(rows, 0, None, 1).tolist()  # runs of 1 and 2 held steps
        [1.5]
    """
    steps, holds, runs, counted = _hold_counts(rows, feature, classes, n_classes)
    return _per_class(holds, runs, counted, steps > 0)


def reversal_shares(
    rows: SeriesRows, feature: int, classes: np.ndarray | None, n_classes: int
) -> np.ndarray:
    """(n_classes,) the share of each class's moves (steps at which feature ``feature``
    changes) that turn back from the move before them in the same series (holds between
    them skipped), over all of the class's series; NaN for a class without two moves in
    a series. A class of fewer than `MIN_SERIES` series with steps gets the share over all
    series.

    Example:
        >>> rows = SeriesRows.from_list([np.array([[1.0], [2.0], [2.0], [1.0], [0.0]])])
        >>> reversal_shares(rows, 0, None, 1).tolist()  # up, down (turns back), down
        [0.5]
    """
    classes, values, series, step, counted = _steps(rows, feature, classes, n_classes)
    change = np.diff(values)
    moves = np.flatnonzero(step & (change != 0))
    paired = series[moves[1:]] == series[moves[:-1]]  # a move and the next one, one series
    sign = np.sign(change[moves])
    turns = paired & (sign[1:] != sign[:-1])
    of_class = classes[series[moves[1:]]]
    pairs = np.bincount(of_class[paired], minlength=n_classes).astype(np.float64)
    turned = np.bincount(of_class[turns], minlength=n_classes).astype(np.float64)
    return _per_class(turned, pairs, counted, counted > 0)


def move_sizes(
    rows: SeriesRows, feature: int, classes: np.ndarray | None, n_classes: int
) -> np.ndarray:
    """(n_classes,) each class's median, over its series, of a series' median move (the
    size of a step at which feature ``feature`` changes) in units of the series' standard
    deviation: how far a reading typically goes when it moves. NaN for a class without a
    series that moves; a class of fewer than `MIN_SERIES` such series gets the median
    over all of them.

    Example:
        >>> x = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 3.0, 1.0])  # moves of 1, 1, 1, 2, 2
        >>> rows = SeriesRows.from_list([x[:, None]])
        >>> move_sizes(rows, 0, None, 1).round(3).tolist()  # 1 over a deviation of 0.927
        [1.079]
    """
    classes, values, series, step, _ = _steps(rows, feature, classes, n_classes)
    finite = np.isfinite(values)
    count = np.bincount(series[finite], minlength=len(rows))
    total = np.bincount(series[finite], values[finite], minlength=len(rows))
    mean = total / np.maximum(count, 1)
    squares = np.bincount(series[finite], (values[finite] - mean[series[finite]]) ** 2, len(rows))
    deviation = np.sqrt(squares / np.maximum(count, 1))
    change = np.abs(np.diff(values))
    moves = np.flatnonzero(step & (change != 0))
    of_series = series[moves]
    moving = deviation[of_series] > 0
    sizes = change[moves][moving] / deviation[of_series][moving]
    typical, per_series = _group_medians(sizes, of_series[moving], len(rows))
    has = per_series > 0
    own, counted = _group_medians(typical[has], classes[has], n_classes)
    out = np.where(counted >= MIN_SERIES, own, np.nan)
    small = (counted > 0) & (counted < MIN_SERIES)
    if small.any():
        out[small] = float(np.median(typical[has]))
    return out


def _group_medians(values: np.ndarray, groups: np.ndarray, n_groups: int):
    """(medians, counts): the median of ``values`` in each of ``n_groups`` groups (NaN for
    an empty one) and each group's count, by one sort rather than a loop over groups."""
    order = np.lexsort((values, groups))
    ordered = values[order]
    counts = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    medians = np.full(n_groups, np.nan)
    some = counts > 0
    low, high = starts + (counts - 1) // 2, starts + counts // 2
    medians[some] = (ordered[low[some]] + ordered[high[some]]) / 2
    return medians, counts


def bisected(need: np.ndarray, top: float, below: Callable[[np.ndarray], np.ndarray]):
    """(low, high): per entry of ``need``, the bracket within [0, ``top``] left after
    `HOLD_ROUNDS` rounds of bisection, where ``below(middle)`` says at which entries a
    measure that grows with the setting is still below its target; 0 elsewhere.

    Example:
        >>> low, high = bisected(np.array([True]), 1.0, lambda x: x < 0.3)
        >>> bool(low[0] < 0.3 <= high[0] < low[0] + 1e-3)
        True
    """
    low, high = np.zeros(need.shape), np.where(need, top, 0.0)
    for _ in range(HOLD_ROUNDS if need.any() else 0):
        middle = np.where(need, (low + high) / 2, 0.0)
        more = below(middle)
        low = np.where(need & more, middle, low)
        high = np.where(need & ~more, middle, high)
    return low, high


def local_activity(values: np.ndarray) -> np.ndarray:
    """(N, T) for padded series ``values`` (NaN past each end), each step's mean absolute
    change within `HOLD_WINDOW` steps either side, over the series' mean absolute change
    (1 for a series that never changes). Step t's change is the one into it (step 0: the
    one out of it).

    Example:
        >>> calm_then_busy = np.array([[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 3.0, 0.0]])
        >>> activity = local_activity(calm_then_busy)
        >>> bool(activity[0, 1] < 0.5 < 1.5 < activity[0, 8])
        True
    """
    if values.shape[1] < 2:  # no change to read
        return np.ones(values.shape)
    change = np.abs(np.diff(values, axis=1))
    change = np.concatenate([change[:, :1], change], axis=1)
    finite = np.isfinite(change)
    change = np.where(finite, change, 0.0)
    sums = np.concatenate([np.zeros((len(change), 1)), np.cumsum(change, axis=1)], axis=1)
    counts = np.concatenate([np.zeros((len(change), 1)), np.cumsum(finite, axis=1)], axis=1)
    steps = np.arange(values.shape[1])
    low = np.clip(steps - HOLD_WINDOW, 0, len(steps))
    high = np.clip(steps + HOLD_WINDOW + 1, 0, len(steps))
    local = (sums[:, high] - sums[:, low]) / np.maximum(counts[:, high] - counts[:, low], 1)
    mean = change.sum(axis=1) / np.maximum(finite.sum(axis=1), 1)
    return np.where(mean[:, None] > 0, local / np.where(mean > 0, mean, 1.0)[:, None], 1.0)


def held(
    rows: SeriesRows, features: list[int], classes: np.ndarray | None, bands: DeadBands
) -> SeriesRows:
    """``rows`` with each of ``features``' series held at a value until it moves more
    than its class's dead band (``bands``, per feature in ``features`` and class) away
    from it, after its class's dither (if any) is added; a new `SeriesRows`. A width and
    dither of 0 leave a series as it is. The dither's noise is seeded from ``rows``' values
    of ``features``.

    Example:
        >>> rows = SeriesRows.from_list([np.array([[0.0], [0.1], [0.05], [2.0], [2.1]])])
        >>> held(rows, [0], None, DeadBands.uniform(np.array([[0.2]]))).rows.ravel().tolist()
        [0.0, 0.0, 0.0, 2.0, 2.0]
    """
    out = rows.rows.copy()
    row_classes = series_classes(len(rows), classes)
    longest = int(rows.lengths.max()) if len(rows) else 0
    step = max(1, _PAD_ELEMENTS // max(longest, 1))
    dither = np.zeros(bands.widths.shape) if bands.dither is None else bands.dither
    rng = np.random.default_rng(_seed_of(rows, features)) if (dither > 0).any() else None
    for k, i in enumerate(features):
        width, local = bands.widths[k][row_classes], bands.local[k][row_classes]
        noise = dither[k][row_classes]
        for first in range(0, len(rows), step):
            part = slice(first, min(first + step, len(rows)))
            if (width[part] > 0).any() or (noise[part] > 0).any():
                out[:, i] = _hold_part(
                    out[:, i], rows, part, width[part], local[part], noise[part], rng
                )
    return rows.with_rows(out)


def padded_moments(padded: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each padded series' mean and standard deviation over its ``mask``ed steps."""
    count = np.maximum(mask.sum(axis=1), 1)
    mean = np.where(mask, padded, 0.0).sum(axis=1) / count
    return mean, np.sqrt(np.where(mask, (padded - mean[:, None]) ** 2, 0.0).sum(axis=1) / count)


def written(column: np.ndarray, starts: np.ndarray, padded: np.ndarray, mask: np.ndarray):
    """A copy of ``column`` with the ``mask``ed steps of the padded series (series i's
    first step at row ``starts[i]``) written back in its dtype."""
    rows = (starts[:, None] + np.arange(padded.shape[1])[None, :])[mask]
    column = column.copy()
    column[rows] = padded[mask].astype(column.dtype, copy=False)
    return column


def _hold_part(
    column: np.ndarray,
    rows: SeriesRows,
    part: slice,
    width: np.ndarray,
    local: np.ndarray,
    dither: np.ndarray,
    rng: np.random.Generator | None,
) -> np.ndarray:
    """``column`` with the series of ``part`` dithered by ``dither`` and held within
    ``width`` (one each a series, in units of the series' standard deviation; the width
    scaled by `local_activity` where ``local``): a step that stays within it of the value
    held so far repeats that value exactly."""
    lengths, starts = rows.lengths[part], rows.starts[part]
    longest = int(lengths.max())
    if longest < 2:
        return column
    inside = np.arange(longest)[None, :] < lengths[:, None]
    at = np.minimum(starts[:, None] + np.arange(longest)[None, :], len(column) - 1)
    values = np.where(inside, np.asarray(column, dtype=np.float64)[at], np.nan)
    spread = padded_moments(values, np.isfinite(values))[1]
    if (dither > 0).any():
        values = values + (dither * spread)[:, None] * rng.standard_normal(values.shape)
    band = width * spread
    bands = np.repeat(band[:, None], longest, axis=1)
    if local.any():  # read only where a series' band follows it
        bands = bands * np.where(local[:, None], local_activity(values), 1.0)
    out = values.copy()
    last = values[:, 0]
    for t in range(1, longest):
        now = values[:, t]
        with np.errstate(invalid="ignore"):
            keep = np.abs(now - last) <= bands[:, t]
        last = np.where(keep, last, now)
        out[:, t] = last
    changed = (band > 0) | (dither > 0)
    return written(column, starts, out, inside & changed[:, None] & np.isfinite(values))


def _seed_of(rows: SeriesRows, features: list[int]) -> int:
    """A seed read from ``rows``' values of ``features`` and its lengths: the same series,
    the same noise. Read as float64, not as stored: decoded rows with a discrete feature
    are objects, whose buffer holds addresses."""
    digest = hashlib.blake2b(digest_size=8)
    for i in features:
        digest.update(np.ascontiguousarray(rows.rows[:, i], dtype=np.float64).data)
    digest.update(np.ascontiguousarray(rows.lengths, dtype=np.int64).data)
    return int.from_bytes(digest.digest(), "little")


def _hold_counts(rows: SeriesRows, feature: int, classes: np.ndarray | None, n_classes: int):
    """Per class: steps, held steps, runs of held steps, and series with steps."""
    classes, values, series, step, counted = _steps(rows, feature, classes, n_classes)
    hold = step & (values[1:] == values[:-1])
    # A hold right after a hold continues its run (a hold never spans two series, so
    # two in a row are in one).
    starts_run = hold & ~np.concatenate([[False], hold[:-1]])
    of_class = classes[series[1:]]

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(of_class[mask], minlength=n_classes).astype(np.float64)

    return count(step), count(hold), count(starts_run), counted


def _steps(rows: SeriesRows, feature: int, classes: np.ndarray | None, n_classes: int):
    """Each series' class (0 for None), feature ``feature``'s values as float64, each
    row's series, which row-to-row steps stay in one series between finite values, and
    per class the series with steps."""
    classes = series_classes(len(rows), classes)
    values = np.asarray(rows.rows[:, feature], dtype=np.float64)
    series = rows.example_of_row()
    step = (series[1:] == series[:-1]) & np.isfinite(values[1:]) & np.isfinite(values[:-1])
    counted = np.bincount(classes[rows.lengths > 1], minlength=n_classes)
    return classes, values, series, step, counted


def _per_class(
    numerator: np.ndarray, denominator: np.ndarray, counted: np.ndarray, present: np.ndarray
) -> np.ndarray:
    """numerator / denominator per class; for a class of fewer than `MIN_SERIES` series
    with steps (``present``), over all classes; NaN where the denominator is 0."""
    out = np.full(len(numerator), np.nan)
    small = counted < MIN_SERIES
    own = ~small & (denominator > 0)
    out[own] = numerator[own] / denominator[own]
    if denominator.sum() > 0:
        out[small & present] = numerator.sum() / denominator.sum()
    return out
