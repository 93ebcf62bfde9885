"""Which continuous features the value map (`dgan.encoding.marginals`) maps under
`match_marginals="auto"`: `matches_marginals` and the rules it reads from the training
data (one distribution for every feature, readings on a grid, levels with nothing
between them)."""

from __future__ import annotations

import numpy as np

from dgan.config.sizing import LONG_SERIES
from dgan.encoding.holds import hold_shares
from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.switches import gaps
from dgan.series import SeriesRows

MIN_SERIES_ONE_MAP = 1_000
"""Data without a discrete attribute gets one map for every continuous feature from this
many series on (`one_distribution`): Stocks (3,661 windows) gained, its cut to 64 windows
lost (quantiles of 64 series are that sample's, not the source's; docs/quality.md)."""


def one_distribution(classed: bool, n_series: int) -> bool:
    """Whether the training values are one distribution worth mapping every continuous
    feature onto: no discrete attribute splits them, and there are enough series.

    Example:
        >>> one_distribution(False, 3661), one_distribution(False, 64), one_distribution(True, 3661)
        (True, False, False)
    """
    return not classed and n_series >= MIN_SERIES_ONE_MAP


HOLDING = 0.25
"""Long series that keep their value at this share of their steps or more are readings
on a grid (an accelerometer's counts, whole hPa): their values are mapped (`holds_often`)."""


def holds_often(rows: SeriesRows, feature: int, max_sequence_len: int) -> bool:
    """Whether ``feature``'s training series, of `LONG_SERIES` steps or more, hold their
    value (equal the step before) at `HOLDING` of their steps or more. Mapped, generated
    values land on the values the data holds, and the texture's dead band gives each class
    its share of holds, which it can only do where the map decides the final values;
    without it generated gestures held at 1% of steps against 48% real (docs/quality.md,
    "Readings on a grid").

    Example:
        >>> stairs = SeriesRows.from_list([np.repeat(np.arange(60.0), 2)[:, None]])
        >>> holds_often(stairs, 0, 120), holds_often(stairs, 0, 24)
        (True, False)
    """
    if max_sequence_len < LONG_SERIES:
        return False
    return bool(hold_shares(rows, feature, None, 1)[0] >= HOLDING)


def levels_apart(
    rows: SeriesRows,
    feature: int,
    classes: np.ndarray | None,
    n_classes: int,
    floor: float | None,
) -> bool:
    """Whether some class's training values of ``feature`` sit at levels with nothing
    between them (`dgan.encoding.switches.gaps` of its quantiles, on the log scale of
    ``floor`` where given): standby and on. ``classes``: each series' class (None: one).

    Example:
        >>> lamps = SeriesRows.from_list([np.r_[np.full(50, 0.3), np.full(50, 15.0)][:, None]])
        >>> levels_apart(lamps, 0, None, 1, None), levels_apart(
        ...     SeriesRows.from_list([np.linspace(0, 1, 100)[:, None]]), 0, None, 1, None)
        (True, False)
    """
    table = ValueMarginals([feature], None if classes is None else 0, np.empty(0))
    real = table._quantiles(rows, classes, n_classes, [floor])  # as the map's fit reads them
    return any(gaps(q, floor).size for q in real[0] if np.isfinite(q).all())


def matches_marginals(
    setting: bool | str,
    log_scaled: bool,
    whole: bool = False,
    holds: bool = False,
    carried: bool = False,
    gapped: bool = False,
) -> bool:
    """Whether a continuous feature's generated values are mapped onto the training
    values' distribution (`match_marginals`): always for True, never for False; for
    "auto" where the feature is on a log scale, where its long series hold their values
    often (``holds``: `holds_often`), where a carrier draws it (``carried``:
    `dgan.encoding.periods`), where a class's values sit at levels with nothing between
    them (``gapped``: `levels_apart`, for the switches), and every feature where the data
    is one distribution (``whole``: `one_distribution`). Measured (docs/quality.md):
    sensors (log scale, per class), gestures (holds), the oscillating simulation
    (carried), Stocks (no attribute) and on/off appliances on a linear scale (gapped)
    gained; leaves, whose species would share one map, and Stocks cut to 64 windows lost.

    Example:
        >>> [matches_marginals("auto", True), matches_marginals("auto", False)]
        [True, False]
        >>> matches_marginals("auto", False, whole=True)
        True
        >>> matches_marginals("auto", False, holds=True), matches_marginals(False, True, holds=True)
        (True, False)
        >>> matches_marginals("auto", False, carried=True)
        True
        >>> matches_marginals("auto", False, gapped=True)
        True
    """
    own = log_scaled or whole or holds or carried or gapped
    return setting is True or (setting == "auto" and own)
