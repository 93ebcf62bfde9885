"""What a switching class does in its first readings after it switches up: a fridge's
compressor draws twice its running power for two readings at each start.

The value map (`dgan.encoding.marginals`) keeps each generated value's rank within its
class, not where in a series it falls, and the generator does not put the class's few
highest readings at its switch-ons. On the simulated power set the missing start-up spike
alone gave the fridge away: held-out real fridges with only that spike taken off were told
from real ones with AUC 1.00 (docs/quality.md, "The first readings after a switch-on").

So for each gap a class switches across (`dgan.encoding.switches`), `switch_on_profile`
reads the training series' up-crossings of its edge (`level_edges`): the first `STEPS`
values after each, on the generator's scale (the feature's log scale where it has one),
less the median of the `SETTLED` readings after them (the level it settles at: not the
rest of the stretch, which a slow decay, a charger's, would read as a transient).
The profile keeps at each of those steps the median offset where at least three quarters
of the up-crossings move the same way by more than `NOISE_TIMES` the class's median step
(`dgan.encoding.noise_floor.median_step`: a transient, not the noise on the level), and 0
elsewhere. `with_switch_ons` adds it after each generated up-crossing whose stretch is as
long as the ones it was read from.
"""

from __future__ import annotations

import numpy as np

from dgan.encoding.log_scale import from_log
from dgan.encoding.noise_floor import on_scale
from dgan.series import SeriesRows

STEPS = 8
"""The readings after an up-crossing that a transient may move."""
SETTLED = STEPS
"""The readings after the first `STEPS` whose median is the level a stretch settles at; a
shorter stretch above the edge tells none."""
MIN_EDGES = 5
"""A class with fewer up-crossings (of long enough stretches) than this keeps no profile."""
NOISE_TIMES = 4.0
"""An offset counts where it is larger than this many times the class's median step."""
AGREE = 0.75
"""The share of up-crossings that must move a step the same way for the profile to keep it."""


def _stretches(rows: SeriesRows, above: np.ndarray):
    """``(start, end)`` row indices of each stretch of ``above`` (R,) that begins with an
    up-crossing inside a series (not at its first step) and holds at least `STEPS` +
    `SETTLED` readings; ``end`` is past its last."""
    up = np.flatnonzero(above[1:] & ~above[:-1]) + 1
    up = up[rows.step_of_row()[up] > 0]
    below = np.flatnonzero(~above)
    after = np.searchsorted(below, up)  # the first reading back below, if any
    ends = np.where(after < len(below), below[np.minimum(after, len(below) - 1)], len(above))
    series_ends = (rows.starts + rows.lengths)[rows.example_of_row()[up]]
    ends = np.minimum(ends, series_ends)
    for start, end in zip(up, ends, strict=True):
        if end - start >= STEPS + SETTLED:
            yield int(start), int(end)


def switch_on_profile(
    rows: SeriesRows, values: np.ndarray, floor: float | None, edge: float, step: float
) -> np.ndarray:
    """(`STEPS`,) the offsets on the scale of ``floor`` (`on_scale`) that one class's
    training series ``rows`` with ``values`` (R,) show in their first readings after an
    up-crossing of ``edge``, against their settled level; 0 where fewer than `MIN_EDGES`
    up-crossings tell or they do not agree beyond `NOISE_TIMES` ``step`` (the class's
    median step, `median_step`; NaN: none kept).

    Example:
        >>> on = np.r_[np.ones(30), 200.0, 200.0, np.full(40, 100.0)]
        >>> rows = SeriesRows.from_list([on[:, None]] * 6)
        >>> profile = switch_on_profile(rows, np.tile(on, 6), None, 50.0, 0.5)
        >>> profile[:3].tolist()  # twice the level for two readings, then the level
        [100.0, 100.0, 0.0]
    """
    out = np.zeros(STEPS)
    if not np.isfinite(step):
        return out
    scaled = on_scale(values, floor)
    offsets = np.array(
        [
            scaled[start : start + STEPS]
            - np.median(scaled[start + STEPS : start + STEPS + SETTLED])
            for start, _ in _stretches(rows, np.asarray(values) > edge)
        ]
    ).reshape(-1, STEPS)
    if len(offsets) < MIN_EDGES:
        return out
    middle = np.median(offsets, axis=0)
    beyond = NOISE_TIMES * step
    agree = np.maximum((offsets > beyond).mean(axis=0), (offsets < -beyond).mean(axis=0))
    kept = (agree >= AGREE) & (np.abs(middle) > beyond)
    out[kept] = middle[kept]
    return out


def with_switch_ons(
    rows: SeriesRows,
    values: np.ndarray,
    floor: float | None,
    edge: float,
    profile: np.ndarray,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> np.ndarray:
    """``values`` (R,) of ``rows`` with ``profile`` (`switch_on_profile`) added on the
    scale of ``floor`` to the first readings after each up-crossing of ``edge`` whose
    stretch above it is as long as those the profile was read from, within ``bounds``
    (the class's range); a new array.

    Example:
        >>> on = np.r_[np.ones(30), np.full(42, 100.0)]
        >>> rows = SeriesRows.from_list([on[:, None]])
        >>> profile = np.r_[100.0, 100.0, np.zeros(STEPS - 2)]
        >>> with_switch_ons(rows, on, None, 50.0, profile)[29:33].tolist()
        [1.0, 200.0, 200.0, 100.0]
    """
    values = np.asarray(values, dtype=np.float64)
    out = on_scale(values, floor).copy()
    moved = np.zeros(len(values), dtype=bool)
    for start, _ in _stretches(rows, values > edge):  # none within STEPS of a series' end
        out[start : start + STEPS] += profile
        moved[start : start + STEPS] = profile != 0
    back = np.clip(out if floor is None else from_log(out, floor), *bounds)
    return np.where(moved, back, values)
