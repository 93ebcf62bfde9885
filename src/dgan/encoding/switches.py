"""Switches between a class's levels, made as often as the training series make them.

Appliances sit at standby and switch on: a class's training values cluster at two or
more levels with nothing between them. The generator draws such a series as a level that
wanders between the clusters, and the value map (`dgan.encoding.marginals`), being
monotone, turns each crossing of the empty gap into a full switch: a simulated fridge
switched 180 times a series against 7 real, a lamp 69 against 2 (docs/quality.md, "A
simulated power-consumption set").

`gaps` finds each class's gaps in its training quantiles (a step between neighbouring
quantiles wider than `GAP` of the class's range, on the generator's scale: the log scale
where the feature has one), and `crossing_rates` how often the training series cross
each one. At generation each series keeps a state per gap, the side of the gap its
values are on, that flips only where its chance (the generated value's quantile among
the generator's own, as the value map reads it) passes the gap by a margin: a Schmitt
trigger (`sides`). The margin of each class and gap is found on the calibration sample
so that generated series cross as often per step as the training ones, and the trigger's
centre so that they spend as much of their time on each side as without it
(`trigger_for`): a margin alone kept the simulated lamps and TVs on 12-15 points less of
the time than the training ones; where the model keeps the training series' shares of
time on each side, each series gets a centre of its own (`dgan.encoding.series_shares`).
A class that crosses no more often than the training one keeps a margin of 0. Within a
state, chances are squeezed onto the state's side of the gap (`kept_sides`), so the
noise within each state stays and no value lands inside the gap.
"""

from __future__ import annotations

import numpy as np

from dgan.encoding.log_scale import to_log
from dgan.series import SeriesRows

GAP = 0.4
"""A step between neighbouring training quantiles of a class wider than this share of the
class's range is a gap between two levels. The simulated appliances' gaps are 0.44-0.96
of their range; the widest step of any class of the real long sets is 0.36 (the sensors'
aerosol depth, on a grid of few values), the next under 0.2 (docs/quality.md, "Switches
kept")."""
MAX_GAPS = int(1 / GAP)
"""The most gaps of `GAP` that fit in a class's range."""
MIN_SIDE = 0.005
"""A gap has at least this share of the class's values on each side, and the range it is
measured against leaves this share out at each end: a lone extreme (a fridge's start-up
spike) is an outlier, not a level, and does not stretch the range."""
_BISECTIONS = 24
_ROUNDS = 3
"""Rounds of `trigger_for`: each finds the margin at the centre so far, then the centre."""


def gaps(quantiles: np.ndarray, floor: float | None = None) -> np.ndarray:
    """Indices ``j`` of the steps from ``quantiles[j]`` to ``quantiles[j + 1]`` (one
    class's training quantiles, evenly spaced probabilities) that are gaps: wider than
    `GAP` of their range without the `MIN_SIDE` at each end, on the signed log scale of
    ``floor`` where given, with `MIN_SIDE` of the values on each side (at most
    `MAX_GAPS`), in increasing order.

    Example:
        >>> standby_or_on = np.r_[np.full(600, 0.5), np.linspace(90.0, 110.0, 401)]
        >>> gaps(standby_or_on).tolist(), gaps(np.linspace(0.0, 1.0, 1001)).tolist()
        ([599], [])
    """
    q = np.asarray(quantiles, dtype=np.float64)
    if floor is not None:
        q = to_log(q, floor)
    n = len(q) - 1
    side = round(MIN_SIDE * n)
    span = q[n - side] - q[side]  # the extremes neither make a level nor stretch the range
    if not np.isfinite(q).all() or not span > 0:
        return np.empty(0, dtype=np.int64)
    steps = np.diff(q) / span
    steps[:side], steps[n - side :] = 0.0, 0.0
    return np.flatnonzero(steps > GAP)


def sides(
    rows: SeriesRows, chances: np.ndarray, threshold: float | np.ndarray, margin: float
) -> np.ndarray:
    """(R,) bool: whether each row of ``rows`` is above the gap at ``threshold`` (a
    chance, or one per row), by a Schmitt trigger on its series' ``chances`` (R,): a
    series starts on the side its first chance is on and changes side only where a
    chance passes the threshold by more than ``margin``. NaN chances keep the side.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((6, 1))])
        >>> wobbly = np.array([0.2, 0.55, 0.45, 0.8, 0.45, 0.2])
        >>> sides(rows, wobbly, 0.5, 0.0).tolist()
        [False, True, False, True, False, False]
        >>> sides(rows, wobbly, 0.5, 0.2).tolist()
        [False, False, False, True, True, False]
    """
    above, below = chances > threshold + margin, chances < threshold - margin
    mark = np.where(above, 1, np.where(below, 0, -1)).astype(np.int8)
    first = rows.starts[rows.lengths > 0]  # each series starts on its first chance's side
    mark[first] = chances[first] > np.broadcast_to(threshold, chances.shape)[first]
    last = np.where(mark >= 0, np.arange(len(mark)), 0)
    np.maximum.accumulate(last, out=last)  # the last row that set the side
    return mark[last] == 1


def level_edges(quantiles: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The values that part a class's levels: the middle of each of its gaps ``at``
    (`gaps`, steps of its ``quantiles``), in increasing order.

    Example:
        >>> level_edges(np.r_[np.zeros(600), np.linspace(90.0, 110.0, 401)], np.array([599]))
        array([45.])
    """
    q = np.asarray(quantiles, dtype=np.float64)
    at = np.asarray(at, dtype=np.int64)
    return (q[at] + q[at + 1]) / 2


def crossings(rows: SeriesRows, above: np.ndarray) -> float:
    """Changes of side per step, over all of ``rows``' steps but each series' first.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((3, 1)), np.zeros((3, 1))])
        >>> crossings(rows, np.array([0, 1, 1, 1, 1, 0], bool))  # 2 changes in 4 steps
        0.5
    """
    changed = np.r_[False, above[1:] != above[:-1]]
    first = rows.starts[rows.lengths > 0]  # an empty series has no first row
    changed[first] = False
    steps = len(above) - len(first)
    return float(changed.sum() / steps) if steps > 0 else 0.0


def crossing_rates(
    rows: SeriesRows, feature: int, mine: np.ndarray, quantiles: np.ndarray, at: np.ndarray
) -> np.ndarray:
    """The training series' crossings per step (`crossings`) of each gap ``at`` (`gaps`)
    of one class: ``mine`` (R,) marks the class's rows of ``rows``, ``quantiles`` its
    training quantiles; a value is above a gap when it is above the gap's middle.

    Example:
        >>> rows = SeriesRows.from_list([np.r_[np.zeros(500), np.full(501, 9.0)][:, None]])
        >>> q = np.quantile(rows.rows[:, 0], np.linspace(0, 1, 1001))
        >>> crossing_rates(rows, 0, np.ones(1001, bool), q, gaps(q)).tolist()  # 1 in 1,000
        [0.001]
    """
    part = rows.take(np.bincount(rows.example_of_row()[mine], minlength=len(rows)) > 0)
    values = part.rows[:, feature]
    return np.array([crossings(part, values > edge) for edge in level_edges(quantiles, at)])


def margin_for(rows: SeriesRows, chances: np.ndarray, threshold: float, rate: float) -> float:
    """The smallest margin (`sides`) at which ``rows``' ``chances`` cross ``threshold`` no
    more often per step than ``rate`` (found by bisection; 0 where they already do), at
    most the room on each side of the threshold.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((8, 1))])
        >>> chatter = np.array([0.1, 0.6, 0.4, 0.6, 0.4, 0.9, 0.9, 0.9])
        >>> margin_for(rows, chatter, 0.5, 1 / 7) > 0.09, margin_for(rows, chatter, 0.5, 1.0)
        (True, 0.0)
    """
    if crossings(rows, sides(rows, chances, threshold, 0.0)) <= rate:
        return 0.0
    low, high = 0.0, min(threshold, 1.0 - threshold)
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if crossings(rows, sides(rows, chances, threshold, middle)) > rate:
            low = middle
        else:
            high = middle
    return high


def trigger_for(
    rows: SeriesRows, chances: np.ndarray, threshold: float, rate: float
) -> tuple[float, float]:
    """``(margin, shift)`` of the trigger (`sides`, centred at ``threshold`` + shift) at
    which ``rows``' ``chances`` cross no more often per step than ``rate``
    (`margin_for`) and lie above it as often as above ``threshold``: a margin alone keeps
    series on the side they were on, which shifts their time on each side wherever
    their chances are not spread alike about the threshold. Found in `_ROUNDS` rounds of
    one, then the other; ``(0, 0)`` where the chances cross no more often already.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((8, 1))])
        >>> chatter = np.array([0.1, 0.6, 0.4, 0.6, 0.4, 0.9, 0.9, 0.9])
        >>> margin, shift = trigger_for(rows, chatter, 0.5, 1 / 7)  # one crossing at most
        >>> margin > 0.09, float(np.mean(sides(rows, chatter, 0.5 + shift, margin)))
        (True, 0.875)

        Above 0.5 five times in eight, once up and never back it is above 7 or 3 times.
    """
    share = float(np.mean(chances > threshold))
    margin, shift = 0.0, 0.0
    for _ in range(_ROUNDS):
        margin = margin_for(rows, chances, threshold + shift, rate)
        if margin == 0.0:
            return 0.0, 0.0
        low, high = -threshold, 1.0 - threshold  # the centre within [0, 1]
        for _ in range(_BISECTIONS):  # a higher centre: less of the time above
            middle = (low + high) / 2
            if np.mean(sides(rows, chances, threshold + middle, margin)) > share:
                low = middle
            else:
                high = middle
        shift = (low + high) / 2
    return margin, shift


def kept_sides(
    rows: SeriesRows, chances: np.ndarray, at: np.ndarray, triggers: np.ndarray, width: int
) -> np.ndarray:
    """``chances`` (R,) of one class's ``rows`` with each gap ``at`` (`gaps`, of
    quantiles ``width`` apart in probability: ``width`` - 1 steps) kept by its trigger,
    a row of ``triggers`` (n, 2): the margin and the shift of its centre from the gap's
    middle (`trigger_for`, `sides`; `kept_side`).

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((4, 1))])
        >>> kept = kept_sides(rows, np.array([0.1, 0.9, 0.45, 0.9]), np.array([5]),
        ...                   np.array([[0.2, 0.0]]), 11)
        >>> kept.round(4).tolist()  # the dip to 0.45 stays above the gap (0.5..0.6)
        [0.1, 0.9, 0.6375, 0.9]
    """
    out = np.array(chances, dtype=np.float64)  # a new array, even without gaps
    for j, (margin, shift) in zip(at, np.asarray(triggers).reshape(-1, 2), strict=True):
        middle = (j / (width - 1) + (j + 1) / (width - 1)) / 2
        out = kept_side(rows, out, j, middle + shift, margin, width)
    return out


def kept_side(
    rows: SeriesRows,
    chances: np.ndarray,
    j: int,
    threshold: float | np.ndarray,
    margin: float,
    width: int,
) -> np.ndarray:
    """``chances`` (R,) of one class's ``rows`` (a new array) with the gap of quantile
    step ``j`` (`gaps`, of quantiles ``width`` apart in probability) kept by the trigger
    at ``threshold`` (one, or one per row) and ``margin`` (`sides`). A row above the gap
    whose chance is within the margin of the threshold takes one above the gap, the band
    squeezed linearly from [threshold - margin, threshold + margin] onto [the gap's top,
    threshold + margin], and one below likewise onto [threshold - margin, the gap's
    bottom]; chances beyond the band stay as they are.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((2, 1)), np.zeros((2, 1))])
        >>> chances = np.array([0.45, 0.45, 0.45, 0.45])  # the gap: 0.5 to 0.6
        >>> kept_side(rows, chances, 5, np.array([0.3, 0.3, 0.7, 0.7]), 0.0, 11).tolist()
        [0.6, 0.6, 0.45, 0.45]
    """
    out = np.asarray(chances, dtype=np.float64)
    bottom, top = j / (width - 1), (j + 1) / (width - 1)
    above = sides(rows, out, threshold, margin)
    low, high = threshold - margin, threshold + margin
    share = (out - low) / (2 * margin) if margin > 0 else np.full_like(out, 0.5)
    band = (out > low) & (out < high)
    # A centre of its own (`dgan.encoding.series_shares`) can put the band past 0 or 1.
    up = np.clip(top + share * np.maximum(high - top, 0.0), top, 1.0)
    down = np.clip(bottom - (1 - share) * np.maximum(bottom - low, 0.0), 0.0, bottom)
    moved = np.where(above, np.maximum(out, up), np.minimum(out, down))
    return np.where(band | (above & (out < top)) | (~above & (out > bottom)), moved, out)
