"""Each level of a switching class held as steady within a series as the training series'.

The value map (`dgan.encoding.marginals`) keeps each value's rank among its class's
values, so a level's spread over the class, which is mostly the spread between series
(one lamp at 12 W, another at 18 W), is what a generated series' slow wander on that
level is stretched over. On the simulated power set a generated lamp's light wandered by
10-14% within a series where a real one holds its level to its 1.5% of noise, and a TV's
by 13-14% against 5% (docs/quality.md, "Steady levels"). For each class that switches on
a mapped feature (`dgan.encoding.switches`: a gap kept), `level_wanders` measures per
level (the values between two of the class's gaps, `dgan.encoding.switches.level_edges`)
the median over series of the spread of each series' slow part on that level (a running
median of `WINDOW` of its values there, in time order) about its median there, on the
generator's scale; the calibration measures the same on the mapped calibration sample,
and `steadied` scales each generated series' slow part about its median so that it comes
out at the training size (never grown), keeping the fast rest, which the noise on each
level (`dgan.encoding.noise_floor`) sets afterwards. Values the class holds exactly (a
standby of 0) neither count nor move. A class of one level keeps its slow shape.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.ndimage import median_filter

from dgan.encoding.log_scale import from_log
from dgan.encoding.noise_floor import on_scale
from dgan.series import SeriesRows

WINDOW = 25
"""Values of one series on one level in each running median: its slow part. The
simulated appliances' noise is white, their wander slower than this."""
MIN_VALUES = 3 * WINDOW
"""Values one series needs on a level for its wander there to count (and be moved)."""


def _slow_parts(
    rows: SeriesRows, scaled: np.ndarray, level: np.ndarray, free: np.ndarray, n_levels: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray, float]]:
    """``(level, indices, slow part, median)`` for each series of ``rows`` and level with
    `MIN_VALUES` or more ``free`` values ``scaled`` (on the generator's scale) there."""
    for start, length in zip(rows.starts, rows.lengths, strict=True):
        mine = np.arange(start, start + length)
        for n in range(n_levels):
            on = mine[(level[mine] == n) & free[mine]]
            if len(on) < MIN_VALUES:
                continue
            values = scaled[on]
            yield n, on, median_filter(values, WINDOW, mode="nearest"), float(np.median(values))


def _levels(
    values: np.ndarray, edges: np.ndarray, held: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(R,) each value's level (its place among ``edges``) and whether it counts: finite
    and not held exactly (in ``held``)."""
    level = np.searchsorted(np.asarray(edges, dtype=np.float64), values)
    free = np.isfinite(values) & ~np.isin(values, held)
    return level, free


def level_wanders(
    rows: SeriesRows,
    values: np.ndarray,
    floor: float | None,
    edges: np.ndarray,
    held: np.ndarray,
    rest: bool = False,
) -> np.ndarray:
    """(levels,) the median over the series of ``rows`` of the standard deviation of each
    one's slow part on each level (the values between neighbouring ``edges``,
    `dgan.encoding.switches.level_edges`) about its median there, on the scale of
    ``floor``; values in ``held`` (`dgan.encoding.noise_floor.held_values`) left out;
    NaN for a level no series has `MIN_VALUES` values on. With ``rest``, that of the
    slow part of the fast rest (the values less their slow part): what steadying cannot
    take away, since a running median of noise is not flat.

    Example:
        >>> t = np.arange(400)
        >>> lamp = np.where(t < 200, 0.0, 15 + 1.5 * np.sin(t / 30))
        >>> rows = SeriesRows.from_list([lamp[:, None]])
        >>> wander = level_wanders(rows, lamp, None, np.array([5.0]), np.zeros(1))
        >>> bool(np.isnan(wander[0])), round(float(wander[1]), 2)  # the 0s held; a sine's rms
        (True, 1.05)
    """
    values = np.asarray(values, dtype=np.float64)
    level, free = _levels(values, edges, held)
    n_levels = len(edges) + 1
    spreads: list[list[float]] = [[] for _ in range(n_levels)]
    scaled = on_scale(values, floor)
    for n, on, slow, middle in _slow_parts(rows, scaled, level, free, n_levels):
        if rest:
            fast = scaled[on] - slow
            slow, middle = median_filter(fast, WINDOW, mode="nearest"), float(np.median(fast))
        spreads[n].append(float(np.sqrt(np.mean((slow - middle) ** 2))))
    return np.array([np.median(s) if s else np.nan for s in spreads])


def steadied(
    rows: SeriesRows,
    values: np.ndarray,
    floor: float | None,
    edges: np.ndarray,
    held: np.ndarray,
    factors: np.ndarray,
) -> np.ndarray:
    """``values`` (R,) of ``rows`` with each series' slow part on each level (as
    `level_wanders` reads it) moved towards its median there by that level's
    ``factors`` entry (1: as it is), on the scale of ``floor``, the fast rest kept; a
    new array. A value stays on its level (between its ``edges``).

    Example:
        >>> t = np.arange(300)
        >>> light = 15 * (1 + 0.1 * np.sin(t / 30))
        >>> rows = SeriesRows.from_list([light[:, None]])
        >>> out = steadied(rows, light, 1.0, np.empty(0), np.empty(0), np.array([0.0]))
        >>> bool(np.ptp(out) < 0.1 * np.ptp(light))
        True
    """
    values = np.asarray(values, dtype=np.float64)
    factors = np.asarray(factors, dtype=np.float64)
    out = values.copy()
    if not (factors < 1).any():
        return out
    level, free = _levels(values, edges, held)
    scaled = on_scale(values, floor)
    moved = scaled.copy()
    touched = np.zeros(len(values), dtype=bool)
    for n, on, slow, middle in _slow_parts(rows, scaled, level, free, len(factors)):
        if factors[n] < 1:
            moved[on] = middle + factors[n] * (slow - middle) + (scaled[on] - slow)
            touched[on] = True
    back = moved if floor is None else from_log(moved, floor)
    bounds = np.r_[-np.inf, edges, np.inf]
    low, high = bounds[level], bounds[level + 1]
    kept = touched & (back > low) & (back < high)  # on its level still: else as it was
    out[kept] = back[kept]
    return out
