"""The noise on each level of a switching class, kept at the training series' size.

The value map (`dgan.encoding.marginals`) keeps each value's rank within its class, not
the size of its steps: on a level, a generated series moves by whatever the class's
quantiles there make of its chances. On the simulated power set that left the noise on
each level of the switching appliances at a third to a half of the training series'
(whose readings carry 1-2% of noise), from a generator whose own output had three to
five times too much; both judges read it (docs/quality.md, "Noise kept on each level").
For each mapped feature that some class switches on (`dgan.encoding.switches`: a gap
kept), `median_step` measures each class's median step between neighbouring values on
the generator's scale (the log scale where the feature has one), over the steps that
move; the calibration finds per class the white noise on that scale that brings the
mapped calibration sample's median step to it (`noise_for`), and `with_noise` adds it at
generation. A class whose generated steps are as large already gets none, and values the
class holds exactly (a standby of 0: quantiles repeated) stay as they are.
"""

from __future__ import annotations

import hashlib

import numpy as np

from dgan.encoding.log_scale import from_log, to_log
from dgan.series import SeriesRows

_BISECTIONS = 20


def on_scale(values: np.ndarray, floor: float | None) -> np.ndarray:
    """``values`` on the generator's scale: the signed log of ``floor``, or as they are."""
    values = np.asarray(values, dtype=np.float64)
    return values if floor is None else to_log(values, floor)


def median_step(rows: SeriesRows, values: np.ndarray, floor: float | None) -> float:
    """The median absolute step between neighbouring ``values`` (R,) of each series of
    ``rows``, on the scale of ``floor`` (`on_scale`), over the finite steps that move;
    NaN where none does.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((4, 1)), np.zeros((3, 1))])
        >>> median_step(rows, np.array([0.0, 0.0, 1.0, 3.0, 9.0, 5.0, 5.0]), None)
        2.0
    """
    steps = np.abs(np.diff(on_scale(values, floor)))
    inside = rows.step_of_row()[1:] > 0  # not from one series' last value to the next's first
    moving = steps[inside & np.isfinite(steps) & (steps > 0)]
    return float(np.median(moving)) if moving.size else float("nan")


def held_values(quantiles: np.ndarray) -> np.ndarray:
    """The values a class holds exactly: those of neighbouring quantiles that are equal.

    Example:
        >>> held_values(np.array([0.0, 0.0, 0.0, 1.5, 2.0, 3.0])).tolist()
        [0.0]
    """
    q = np.asarray(quantiles, dtype=np.float64)
    return np.unique(q[1:][q[1:] == q[:-1]])


def standard_normals(rows: SeriesRows, values: np.ndarray) -> np.ndarray:
    """One standard normal per value of ``values`` (R,), the values of ``rows``, drawn
    per series from a seed read from that series' values: the same series get the same
    noise however many are generated beside them.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((2, 1)), np.zeros((3, 1))])
        >>> values = np.arange(5.0)
        >>> alone = standard_normals(rows.take(np.array([False, True])), values[2:])
        >>> bool(np.array_equal(standard_normals(rows, values)[2:], alone))
        True
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty(len(values))
    for start, length in zip(rows.starts, rows.lengths, strict=True):
        piece = values[start : start + length]
        seed = int.from_bytes(hashlib.blake2b(piece.data, digest_size=8).digest(), "little")
        out[start : start + length] = np.random.default_rng(seed).standard_normal(length)
    return out


def with_noise(
    rows: SeriesRows,
    values: np.ndarray,
    noise: float,
    floor: float | None,
    held: np.ndarray,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> np.ndarray:
    """``values`` (R,) of ``rows`` with white noise of standard deviation ``noise``
    (`standard_normals`) added on the scale of ``floor`` (`on_scale`), within
    ``bounds`` (the class's range: no reading below its least, a negative power), except
    to values in ``held`` (`held_values`); a new array.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((6, 1))])
        >>> out = with_noise(rows, np.r_[np.zeros(3), np.full(3, 100.0)], 0.01, 1.0, np.zeros(1))
        >>> out[:3].tolist(), bool((np.abs(out[3:] / 100 - 1) < 0.2).all())
        ([0.0, 0.0, 0.0], True)
        >>> bool(with_noise(rows, np.full(6, 0.001), 1.0, 1.0, np.zeros(0), (0.0, 1.0)).min() >= 0)
        True
    """
    values = np.asarray(values, dtype=np.float64)
    moved = np.isfinite(values) & ~np.isin(values, held)
    scaled = on_scale(values, floor) + noise * standard_normals(rows, values)
    back = np.clip(scaled if floor is None else from_log(scaled, floor), *bounds)
    return np.where(moved, back, values)


def noise_for(
    rows: SeriesRows,
    values: np.ndarray,
    floor: float | None,
    target: float,
    held: np.ndarray,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> float:
    """The standard deviation of the white noise (`with_noise`) that brings the median
    step (`median_step`) of one class's ``rows`` with ``values`` (R,) up to ``target``,
    found by bisection; 0 where it is that large already or either is unknown.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((400, 1))])
        >>> smooth = 100.0 * np.exp(0.001 * np.random.default_rng(1).standard_normal(400))
        >>> noise = noise_for(rows, smooth, 1.0, 0.006, np.empty(0))
        >>> 0.005 < noise < 0.007  # the median |difference| of white noise is 0.95 sd
        True
    """
    have = median_step(rows, values, floor)
    if not (np.isfinite(have) and np.isfinite(target)) or have >= target:
        return 0.0
    low, high = 0.0, 2.0 * target  # noise alone of 1.05 target reaches it
    for _ in range(_BISECTIONS):  # the same draw each time: the median moves smoothly
        middle = (low + high) / 2
        noisy = with_noise(rows, values, middle, floor, held, bounds)
        if median_step(rows, noisy, floor) < target:
            low = middle
        else:
            high = middle
    return high
