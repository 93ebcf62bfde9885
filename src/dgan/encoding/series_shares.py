"""Each series' time on each side of a gap spread over series as the training series'.

The switches' trigger (`dgan.encoding.switches`) keeps a class's time on each side of a
gap as the training series' on average, not each series' own: on the simulated power set
some generated fridges ran hardly at all and some most of the time where every training
one ran about a third of it (docs/quality.md, "A trigger centre per series"). The model
keeps `SHARES` quantiles of the training series' shares of values above each gap
(`training_shares`); the calibration keeps those of the calibration sample's series
under the class's trigger (`own_shares`); decoding gives each series the training share
at its rank among the calibration ones by a trigger centre of its own, found by
bisection (`kept_per_series`). The rank is read against the calibration sample, so a
series' share does not depend on the series generated beside it. A row that its own
centre moves across the gap takes the series' median on the level it joins.
"""

from __future__ import annotations

import numpy as np

from dgan.encoding.switches import kept_side, sides
from dgan.series import SeriesRows

SHARES = 101
"""Quantiles kept of the series' shares above each gap (every 1% of the series)."""
SHARE_PROBABILITIES = np.linspace(0.0, 1.0, SHARES)
_TIE = 1e-6
"""Series of equal share (all on one side) are ranked by their mean chance, weighted by
this: less than one step's share of a series of up to a million steps."""
_BISECTIONS = 20
MIN_OWN = 10
"""Rows a series needs on a level for their median to stand for its own place there."""


def probabilities_among(values: np.ndarray, quantiles: np.ndarray, probabilities) -> np.ndarray:
    """Each of ``values``' probability among ``quantiles`` (ascending, at
    ``probabilities``), linear between them; a value the quantiles repeat stands for the
    middle of its probabilities (np.interp needs increasing points).

    Example:
        >>> q = np.array([0.0, 0.0, 0.0, 1.0, 2.0])
        >>> probabilities_among(np.array([0.0, 1.5]), q, np.linspace(0, 1, 5)).tolist()
        [0.25, 0.875]
    """
    points, which = np.unique(quantiles, return_inverse=True)
    chance = np.bincount(which, probabilities) / np.bincount(which)
    return np.interp(values, points, chance)


def shares_above(rows: SeriesRows, above: np.ndarray) -> np.ndarray:
    """(N,) each series' share of its rows marked ``above`` (R,) bool (0 when empty).

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((4, 1)), np.zeros((2, 1))])
        >>> shares_above(rows, np.array([1, 1, 1, 0, 0, 1], bool)).tolist()
        [0.75, 0.5]
    """
    counts = np.zeros(len(rows))
    filled = rows.lengths > 0  # reduceat sums from each start to the next one's
    if filled.any():
        counts[filled] = np.add.reduceat(above, rows.starts[filled], dtype=np.int64)
    return counts / np.maximum(rows.lengths, 1)


def training_shares(rows: SeriesRows, values: np.ndarray, middles: np.ndarray) -> np.ndarray:
    """(len(middles), `SHARES`) quantiles over one class's training ``rows`` of each
    series' share of its ``values`` (R,) above each gap's middle (``middles``,
    `dgan.encoding.switches.level_edges`).

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((4, 1)), np.zeros((4, 1))])
        >>> values = np.array([0, 9, 9, 9, 0, 0, 0, 9.0])  # on 3/4 and 1/4 of the time
        >>> training_shares(rows, values, np.array([4.5]))[0, [0, 50, 100]].tolist()
        [0.25, 0.5, 0.75]
    """
    return np.stack(
        [np.quantile(shares_above(rows, values > m), SHARE_PROBABILITIES) for m in middles]
    )


def _ranked(rows: SeriesRows, chances: np.ndarray, threshold: float, margin: float):
    """(N,) each series' share above ``threshold`` by the trigger (`sides`), ties by its
    mean chance (`_TIE`)."""
    above = shares_above(rows, sides(rows, chances, threshold, margin))
    total = np.bincount(rows.example_of_row(), np.nan_to_num(chances), minlength=len(rows))
    return above + _TIE * total / np.maximum(rows.lengths, 1)


def own_shares(rows: SeriesRows, chances: np.ndarray, threshold: float, margin: float):
    """(`SHARES`,) quantiles over one class's calibration ``rows`` of each series' share
    of ``chances`` above ``threshold`` by the trigger of ``margin`` (`sides`): what
    `kept_per_series` ranks a generated series among.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((2, 1))] * 3)
        >>> chances = np.array([0.1, 0.9, 0.9, 0.9, 0.1, 0.1])
        >>> own_shares(rows, chances, 0.5, 0.0)[[0, 50, 100]].round(3).tolist()
        [0.0, 0.5, 1.0]
    """
    return np.quantile(_ranked(rows, chances, threshold, margin), SHARE_PROBABILITIES)


def kept_per_series(
    rows: SeriesRows,
    chances: np.ndarray,
    at: np.ndarray,
    n: int,
    trigger: np.ndarray,
    own: np.ndarray,
    real: np.ndarray,
    width: int,
) -> np.ndarray:
    """``chances`` (R,) of one class's ``rows`` with its ``n``-th gap ``at[n]`` (of its
    gaps ``at``, `dgan.encoding.switches.gaps`, quantile steps ``width`` apart) kept by a
    trigger of the class's margin (``trigger``: margin and shift, `trigger_for`) and a
    centre per series at which it spends the share of its time above the gap that the
    training series (``real``, `training_shares`) spend at its rank among the
    calibration series (``own``, `own_shares`) under the class's trigger. A row the
    series' own centre puts across the gap takes the series' median chance on the level
    it joins (`_on_own_level`).

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((10, 1))] * 2)
        >>> chances = np.r_[[0.1, 0.2, 0.3, 0.4, 0.6, 0.6, 0.7, 0.8, 0.9, 0.95],
        ...                 [0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.6, 0.7, 0.8, 0.9]]
        >>> own = np.linspace(0.4, 0.6, SHARES)  # the calibration series: on 40% to 60%
        >>> real = np.linspace(0.2, 0.8, SHARES)  # the training series: on 20% to 80%
        >>> kept = kept_per_series(rows, chances, np.array([50]), 0, np.zeros(2), own, real, 101)
        >>> shares_above(rows, kept > 0.5).tolist()  # on 60% and 40%: the ends, 80% and 20%
        [0.8, 0.2]
    """
    if not len(rows):
        return np.asarray(chances, dtype=np.float64)
    margin, shift = trigger
    j = at[n]
    threshold = (j + 0.5) / (width - 1) + shift
    rank = probabilities_among(_ranked(rows, chances, threshold, margin), own, SHARE_PROBABILITIES)
    target = np.interp(rank, SHARE_PROBABILITIES, real)
    centre = _centres(rows, chances, margin, target)
    out = kept_side(rows, chances, j, rows.per_row(centre), margin, width)
    # The levels beside the gap, in chances: up to the gaps before and after it, if any.
    below = ((at[n - 1] + 1) / (width - 1) if n else 0.0, j / (width - 1))
    above = ((j + 1) / (width - 1), at[n + 1] / (width - 1) if n + 1 < len(at) else 1.0)
    out = _on_own_level(rows, chances, out, (chances < above[0]) & (out >= above[0]), above)
    return _on_own_level(rows, chances, out, (chances > below[1]) & (out <= below[1]), below)


def _on_own_level(rows: SeriesRows, chances, out: np.ndarray, moved: np.ndarray, level):
    """``out`` with the ``moved`` rows (moved across a gap onto ``level``, a range of
    chances) at their series' median chance among its rows there that were there
    already (the level's middle for a series with fewer than `MIN_OWN`): squeezed onto
    the gap's edge, they sat at the class's lowest (or highest) value of the level, as
    if each series switched on at that value rather than its own."""
    if not moved.any():
        return out
    low, high = level
    there = ~moved & (chances >= low) & (chances <= high) & (out >= low) & (out <= high)
    example = rows.example_of_row()
    ordered = np.lexsort((out[there], example[there]))  # by series, then by chance
    values, counts = out[there][ordered], np.bincount(example[there], minlength=len(rows))
    first = np.cumsum(counts) - counts
    median = np.full(len(rows), (low + high) / 2)
    has = counts >= MIN_OWN
    middle = first[has] + (counts[has] - 1) // 2, first[has] + counts[has] // 2
    median[has] = (values[middle[0]] + values[middle[1]]) / 2
    return np.where(moved, median[example], out)


def _centres(rows: SeriesRows, chances: np.ndarray, margin: float, target: np.ndarray):
    """(N,) a trigger centre per series of ``rows`` at which its share above (`sides`)
    is the one nearest its ``target`` that a centre can give, in the middle of the
    centres that give it: a series' share moves in steps of a row, or of all the rows of
    a value it holds (a standby of exactly 0), and a centre at the edge of a step would
    turn on a rounding error in the chances. A series already at its target (the
    calibration sample itself) keeps its sides."""
    step = 0.5 / np.maximum(rows.lengths, 1)
    # Above a centre in (lower, upper) the share is target +- step, if any centre gives it.
    lower = _over(rows, chances, margin, target + step)
    upper = _over(rows, chances, margin, target - step)
    ends = np.stack([lower[0], (lower[1] + upper[0]) / 2, upper[1]])
    # The shares just below lower, between the two and just above upper.
    more, middle, fewer = _share_at(rows, chances, margin, ends)
    between = np.abs(middle - target) <= step
    closer_more = np.abs(more - target) < np.abs(fewer - target)
    # Otherwise the nearest of the shares next to the target: the middle of its centres.
    edge = _over(rows, chances, margin, np.where(closer_more, more + step, fewer - step))
    other = np.where(closer_more, (edge[1] + lower[0]) / 2, (upper[1] + edge[0]) / 2)
    return np.where(between, (lower[1] + upper[0]) / 2, other)


def _share_at(rows: SeriesRows, chances: np.ndarray, margin: float, centres: np.ndarray):
    """(..., N) each series' share above a trigger at each of its ``centres`` (..., N)."""
    flat = centres.reshape(-1, len(rows))
    out = [shares_above(rows, sides(rows, chances, rows.per_row(c), margin)) for c in flat]
    return np.reshape(out, centres.shape)


def _over(rows: SeriesRows, chances: np.ndarray, margin: float, share: np.ndarray):
    """``(low, high)`` (N,) each, by bisection, about the highest centre in [0, 1] of the
    trigger (`sides`) at which each series' share above it is more than ``share`` (N,):
    more at ``low``, not at ``high`` (a higher centre: above less of the time)."""
    low, high = np.zeros(len(rows)), np.ones(len(rows))
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        more = _share_at(rows, chances, margin, middle) > share
        low, high = np.where(more, middle, low), np.where(more, high, middle)
    return low, high
