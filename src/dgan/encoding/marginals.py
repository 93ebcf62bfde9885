"""Generated values matched to the training values' distribution (quantile mapping).

The generator gets the shapes and levels of a class's series roughly right but not the
distribution of its values: a sensor that reads exactly 0 all night, or only whole hPa,
comes out at 0.3 and 991.4. `ValueMarginals` keeps `QUANTILES` quantiles of each mapped
feature's training values per class (the classes of one discrete attribute, or one class
for all); decoding maps each generated value through the generator's own quantiles onto
them, a monotone map per class: a series keeps its shape and its rank among the class's
values, and the values take the training data's distribution, repeated values included
(a value held by more than one quantile's share of the data comes out exactly). The
generator's quantiles come from a calibration sample (`dgan.sampling`), not from the
series being generated, so the map does not depend on how many are generated.
`dgan.encoding.mapped_features` says for which features.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dgan.encoding.noise_floor import held_values, median_step, noise_for, with_noise
from dgan.encoding.per_class import PerClassTable, series_classes
from dgan.encoding.series_shares import (
    SHARES,
    kept_per_series,
    own_shares,
    probabilities_among,
    training_shares,
)
from dgan.encoding.steady_levels import level_wanders, steadied
from dgan.encoding.switches import (
    MAX_GAPS,
    crossing_rates,
    gaps,
    kept_sides,
    level_edges,
    trigger_for,
)
from dgan.encoding.transients import STEPS, switch_on_profile, with_switch_ons
from dgan.series import SeriesRows

QUANTILES = 1001
"""Quantiles kept per feature and class (every 0.1% of the values)."""
PROBABILITIES = np.linspace(0.0, 1.0, QUANTILES)
KEPT_WITH_SWITCHES = ("switches", "steps", "wander", "shares", "switch_ons")
"""What `ValueMarginals` keeps beside the quantiles where it keeps switches, in the order
each came (the model file holds each as a key of the same name, files from before it
none): the gaps and their crossings, each level's median step and wander, the series'
shares of time above each gap and their transient after switching up."""


def quantiles_of(values: np.ndarray) -> np.ndarray:
    """``np.quantile(values, PROBABILITIES, axis=0)`` (its default, linear method), the
    same numbers from one sort: np.quantile partitions at each of the 2,002 points it
    reads, which on a CPU costs a hundred sorts of the same values.

    Example:
        >>> values = np.random.default_rng(0).normal(size=(50, 2))
        >>> bool((quantiles_of(values) == np.quantile(values, PROBABILITIES, axis=0)).all())
        True
    """
    ordered = np.sort(np.asarray(values, dtype=np.float64), axis=0)
    virtual = (len(ordered) - 1) * PROBABILITIES
    below = np.floor(virtual).astype(np.intp)
    above = np.minimum(below + 1, len(ordered) - 1)
    # As numpy interpolates: from the nearer end, so that equal neighbours give exactly it.
    gamma = (virtual - below).reshape((-1,) + (1,) * (ordered.ndim - 1))
    low, high = ordered[below], ordered[above]
    step = high - low
    return np.where(gamma >= 0.5, high - step * (1 - gamma), low + step * gamma)


def quantiles_over_gaps(values: np.ndarray, floor: float | None) -> np.ndarray:
    """`quantiles_of` one class's finite ``values`` (1-D), except that a quantile that
    would interpolate across a gap between them (`dgan.encoding.switches.gaps` of the
    sorted values, on the log scale of ``floor`` where given) takes the value at the
    nearer end. Interpolated, a gap between fewer values than `QUANTILES` spreads over
    several quantile steps (100 values: 10), so it is read as none, and with more values
    a quantile can still land inside it; either way the map puts values where the data
    has none.

    Example:
        >>> standby_or_on = np.r_[np.full(60, 0.3), np.full(60, 15.0)]
        >>> q = quantiles_over_gaps(standby_or_on, None)
        >>> int(((q > 0.3) & (q < 15.0)).sum()), gaps(q).tolist()
        (0, [499])
    """
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    out = quantiles_of(ordered)
    wide = gaps(ordered, floor)
    if wide.size:
        virtual = (len(ordered) - 1) * PROBABILITIES
        below = np.floor(virtual).astype(np.intp)
        across = np.isin(below, wide) & (virtual > below)
        nearer = np.where(virtual - below >= 0.5, below + 1, below)
        out[across] = ordered[nearer[across]]
    return out


def on_grid(quantiles: np.ndarray) -> bool:
    """Whether values sit on a grid (whole hPa, 0 all night): more than half of the
    neighbouring quantiles are equal. Then the training quantiles are values the data
    holds and the map picks the nearest, so generated values land on the grid; otherwise
    it interpolates between them.

    Example:
        >>> on_grid(np.repeat([0.0, 1.0, 2.0], 5)), on_grid(np.linspace(0, 1, 15))
        (True, False)
    """
    return bool(np.mean(quantiles[1:] == quantiles[:-1]) > 0.5)


class ValueMarginals(PerClassTable):
    """Each mapped feature's quantiles per class, and the map onto them.

    ``features``: indices of the mapped (continuous) features; ``attribute``: index of
    the discrete attribute whose categories are the classes, or None for one class;
    ``real``: (len(features), classes, `QUANTILES`) the training values' quantiles, NaN
    for a class without values.

    Example:
        >>> real = np.array([[0.0], [0.0], [0.0], [0.0], [0.0], [10.0]])  # 0 five times in six
        >>> rows = SeriesRows(real, np.array([2, 2, 2]))
        >>> marginals = ValueMarginals.fit(rows, [0], None, None, 1)
        >>> generated = SeriesRows(np.array([[0.1], [0.2], [0.3], [0.9]]), np.array([2, 2]))
        >>> own = marginals.quantiles(generated, None)
        >>> marginals.apply(generated, None, own).rows.ravel().round(3).tolist()
        [0.0, 0.0, 0.0, 10.0]
    """

    WIDTH = QUANTILES

    def __init__(self, features, attribute, real, switches: np.ndarray | None = None):
        super().__init__(features, attribute, real)
        # (features, classes, MAX_GAPS, 2): each gap's quantile step and the training
        # series' crossings of it per step, NaN past a class's gaps; None: no switches kept.
        self.switches = switches
        # (features, classes): the training series' median step on each level of a feature
        # that switches (`dgan.encoding.noise_floor`), NaN elsewhere; None: not kept.
        self.steps: np.ndarray | None = None
        # (features, classes, MAX_GAPS + 1): the training series' median slow wander on each
        # level of a feature that switches (`dgan.encoding.steady_levels`), NaN elsewhere;
        # None: not kept.
        self.wander: np.ndarray | None = None
        # (features, classes, MAX_GAPS, SHARES): the training series' shares of time above
        # each gap (`dgan.encoding.series_shares`), NaN past a class's gaps; None: not kept.
        self.shares: np.ndarray | None = None
        # (features, classes, MAX_GAPS, STEPS): the training series' offsets in their first
        # readings after switching up across each gap (`dgan.encoding.transients`), NaN past
        # a class's gaps; None: not kept.
        self.switch_ons: np.ndarray | None = None

    @classmethod
    def fit(
        cls,
        rows: SeriesRows,
        features: list[int],
        attribute: int | None,
        classes: np.ndarray | None,
        n_classes: int,
        floors: list[float | None] | None = None,
    ) -> ValueMarginals:
        """The quantiles of ``rows`` (training series, in their own units); ``classes``:
        each series' category index of ``attribute`` (None: one class). With ``floors``
        (each mapped feature's log floor, None for a linear scale: the generator's scale)
        the switches at each class's gaps are kept too (`dgan.encoding.switches`)."""
        marginals = cls(features, attribute, np.empty(0))
        marginals.real = marginals._quantiles(rows, classes, n_classes, floors)
        if floors is not None:
            marginals.switches = marginals._switches(rows, classes, floors)
            marginals.steps = marginals._steps(rows, classes, floors)
            marginals.wander = marginals._wanders(rows, classes, floors)
            marginals.shares = marginals._shares(rows, classes)
            marginals.switch_ons = marginals._switch_ons(rows, classes, floors)
        return marginals

    def _class_series(self, rows: SeriesRows, classes, values: np.ndarray, wanted: np.ndarray):
        """``(k, g, the class's series, their values)`` for each mapped feature ``k`` and
        class ``g`` that ``wanted`` (features, classes) marks and ``rows`` has series of;
        the values of feature ``k`` read from ``values`` (``rows``' own, or mapped)."""
        row_class = self._row_classes(rows, classes)
        series_class = series_classes(len(rows), classes)
        for k, i in enumerate(self.features):
            for g in np.flatnonzero(wanted[k]):
                if (series_class == g).any():
                    yield k, g, rows.take(series_class == g), values[row_class == g, i]

    def _switching(self) -> np.ndarray:
        """(features, classes) whether some class switches on each feature (no class: its
        noise is the texture's, its levels as the value map leaves them)."""
        some = np.isfinite(self.switches[..., 0]).any(axis=(1, 2))
        return np.repeat(some[:, None], self.n_classes, axis=1)

    def _steps(self, rows: SeriesRows, classes, floors) -> np.ndarray:
        """Each class's median step (`median_step`) of each feature that switches."""
        out = np.full((len(self.features), self.n_classes), np.nan)
        for k, g, part, mine in self._class_series(rows, classes, rows.rows, self._switching()):
            out[k, g] = median_step(part, mine, floors[k])
        return out

    def _wanders(self, rows: SeriesRows, classes, floors) -> np.ndarray:
        """Each class's slow wander on each level (`level_wanders`) of each feature that
        switches, where that class switches: a class of one level has a slow shape (a
        swell, a drift, a decay), not a level that wanders."""
        out = np.full((len(self.features), self.n_classes, MAX_GAPS + 1), np.nan)
        gapped = np.isfinite(self.switches[..., 0]).any(axis=2)
        wanted = self._switching() & gapped
        for k, g, part, mine in self._class_series(rows, classes, rows.rows, wanted):
            edges, held = self._levels(k, g)
            out[k, g, : len(edges) + 1] = level_wanders(part, mine, floors[k], edges, held)
        return out

    def _shares(self, rows: SeriesRows, classes) -> np.ndarray:
        """Each class's `training_shares` above each of its gaps of each mapped feature."""
        out = np.full((len(self.features), self.n_classes, MAX_GAPS, SHARES), np.nan)
        gapped = np.isfinite(self.switches[..., 0]).any(axis=2)
        for k, g, part, mine in self._class_series(rows, classes, rows.rows, gapped):
            edges = self._edges(k, g)
            out[k, g, : len(edges)] = training_shares(part, mine, edges)
        return out

    def _switch_ons(self, rows: SeriesRows, classes, floors) -> np.ndarray:
        """Each class's `switch_on_profile` at each of its gaps of each mapped feature,
        against its median step there (`_steps`)."""
        out = np.full((len(self.features), self.n_classes, MAX_GAPS, STEPS), np.nan)
        gapped = np.isfinite(self.switches[..., 0]).any(axis=2)
        for k, g, part, mine in self._class_series(rows, classes, rows.rows, gapped):
            step = self.steps[k, g]
            for n, edge in enumerate(self._edges(k, g)):
                out[k, g, n] = switch_on_profile(part, mine, floors[k], edge, step)
        return out

    def _levels(self, k: int, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Feature ``k``'s `level_edges` in class ``g`` and the values it holds exactly."""
        return self._edges(k, g), held_values(self.real[k, g])

    def _edges(self, k: int, g: int) -> np.ndarray:
        """Feature ``k``'s `level_edges` in class ``g``."""
        return level_edges(self.real[k, g], self.gaps_of(k, g)[0])

    def _switches(self, rows: SeriesRows, classes, floors) -> np.ndarray:
        row_class = self._row_classes(rows, classes)
        out = np.full((len(self.features), self.n_classes, MAX_GAPS, 2), np.nan)
        for k, i in enumerate(self.features):
            for g in range(self.n_classes):
                if not np.isfinite(self.real[k, g]).all():
                    continue
                at = gaps(self.real[k, g], floors[k])
                rates = crossing_rates(rows, i, row_class == g, self.real[k, g], at)
                out[k, g, : len(at)] = np.stack([at, rates], axis=1)
        return out

    def gaps_of(self, k: int, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Mapped feature ``k``'s gaps in class ``g`` (`dgan.encoding.switches.gaps`) and
        the training series' crossings of each per step; empty without switches."""
        if self.switches is None:
            return np.empty(0, np.int64), np.empty(0)
        kept = self.switches[k, g][np.isfinite(self.switches[k, g, :, 0])]
        return kept[:, 0].astype(np.int64), kept[:, 1]

    def to_json(self) -> dict[str, Any]:
        state = super().to_json()
        for name in KEPT_WITH_SWITCHES:  # NaN past a class's gaps: None in JSON
            kept = getattr(self, name)
            if kept is not None:
                state[name] = np.where(np.isnan(kept), None, kept).tolist()
        return state

    @classmethod
    def from_json(cls, state: dict[str, Any], width: int | None = None) -> ValueMarginals:
        """The map ``to_json`` wrote; a file from before one of `KEPT_WITH_SWITCHES` was
        kept has none of it."""
        marginals = super().from_json(state, width)
        for name in KEPT_WITH_SWITCHES:
            if state.get(name) is not None:
                setattr(marginals, name, np.array(state[name], dtype=np.float64))
        return marginals

    def quantiles(self, rows: SeriesRows, classes: np.ndarray | None) -> np.ndarray:
        """(features, classes, `QUANTILES`) quantiles of generated ``rows`` (NaN for a
        class none of them has): the calibration that `apply` maps from."""
        return self._quantiles(rows, classes, self.n_classes)

    def _quantiles(self, rows: SeriesRows, classes, n_classes: int, floors=None) -> np.ndarray:
        """(features, classes, `QUANTILES`) quantiles of ``rows``; with ``floors`` (the
        switches kept, `fit`) none falls inside a gap (`quantiles_over_gaps`)."""
        row_class = self._row_classes(rows, classes)
        out = np.full((len(self.features), n_classes, QUANTILES), np.nan)
        for k, i in enumerate(self.features):
            values = np.asarray(rows.rows[:, i], dtype=np.float64)
            for g in range(n_classes):
                mine = values[(row_class == g) & np.isfinite(values)]
                if not mine.size:
                    continue
                out[k, g] = quantiles_of(mine)
                if on_grid(out[k, g]):  # observed values only, none in between
                    out[k, g] = np.quantile(mine, PROBABILITIES, method="inverted_cdf")
                elif floors is not None:
                    out[k, g] = quantiles_over_gaps(mine, floors[k])
        return out

    def _row_classes(self, rows: SeriesRows, classes: np.ndarray | None) -> np.ndarray:
        if classes is None:
            return np.zeros(len(rows.rows), dtype=np.int64)
        return rows.per_row(np.asarray(classes, dtype=np.int64))

    def margins(self, rows: SeriesRows, classes: np.ndarray | None, generated: np.ndarray):
        """(features, classes, `MAX_GAPS`, 2 + `SHARES`) for each kept gap its trigger,
        the margin and the shift of its centre (`dgan.encoding.switches.trigger_for`), at
        which ``rows`` (a calibration sample, as `quantiles` reads it, with ``generated``
        its quantiles) cross the gap as often per step as the training series and spend
        as much time on each side as mapped without it, then the quantiles of their
        series' shares of time above it by that trigger (`own_shares`; NaN where no
        training shares are kept), NaN past a class's gaps; None without switches or
        gaps."""
        if self.switches is None or not np.isfinite(self.switches[..., 0]).any():
            return None  # no class has a gap: decoded as without switches
        out = np.full((*self.switches.shape[:3], 2 + SHARES), np.nan)
        for k, g, part, chances in self._class_chances(rows, classes, generated):
            at, rates = self.gaps_of(k, g)
            for n, (j, rate) in enumerate(zip(at, rates, strict=True)):
                threshold = (j + 0.5) / (QUANTILES - 1)
                margin, shift = trigger_for(part, chances, threshold, rate)
                out[k, g, n, :2] = margin, shift
                if self.shares is not None and np.isfinite(self.shares[k, g, n]).all():
                    out[k, g, n, 2:] = own_shares(part, chances, threshold + shift, margin)
                chances = self._kept(part, chances, k, g, n, out[k, g, n])
        return out

    def _kept(self, part: SeriesRows, chances, k: int, g: int, n: int, calibrated):
        """``chances`` of class ``g``'s series ``part`` with its ``n``-th gap of feature
        ``k`` kept by the trigger ``calibrated`` (a row of `margins`): with a centre per
        series where training shares are kept (`kept_per_series`), else the class's
        (`kept_sides`)."""
        at, own = self.gaps_of(k, g)[0], calibrated[2:]
        if np.isfinite(own).all() and self.shares is not None:
            real = self.shares[k, g, n]
            return kept_per_series(part, chances, at, n, calibrated[:2], own, real, QUANTILES)
        return kept_sides(part, chances, at[n : n + 1], calibrated[:2], QUANTILES)

    def noise(
        self,
        rows: SeriesRows,
        classes: np.ndarray | None,
        generated: np.ndarray,
        margins: np.ndarray | None,
        floors: list[float | None],
        steady: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """(features, classes) the noise (`dgan.encoding.noise_floor.noise_for`) that
        brings the median step of ``rows`` (a calibration sample, as `margins` reads it)
        mapped by `apply` (with the ``steady`` factors, `steadiness`) up to the training
        series' on each feature that switches, on the scale of its ``floors`` entry (0
        elsewhere); None where none is kept."""
        if self.steps is None or not np.isfinite(self.steps).any():
            return None
        mapped = self.apply(rows, classes, generated, margins, steady=steady, floors=floors)
        out = np.zeros(self.steps.shape)
        wanted = np.isfinite(self.steps)
        for k, g, part, values in self._class_series(rows, classes, mapped.rows, wanted):
            real, target = self.real[k, g], self.steps[k, g]
            held, bounds = held_values(real), (real[0], real[-1])
            out[k, g] = noise_for(part, values, floors[k], target, held, bounds)
        return out

    def steadiness(
        self,
        rows: SeriesRows,
        classes: np.ndarray | None,
        generated: np.ndarray,
        margins: np.ndarray | None,
        floors: list[float | None],
    ) -> np.ndarray | None:
        """(features, classes, `MAX_GAPS` + 1) the factor by which `apply` moves each
        level's slow wander towards each series' median there
        (`dgan.encoding.steady_levels.steadied`) so that it comes out at the training
        series': for ``rows`` (a calibration sample, as `margins` reads it) mapped by
        `apply`, of wander W and a rest R that steadying leaves (`level_wanders`), the
        training wander T, sqrt(T^2 - R^2) / W, in [0, 1] (1 where any is unknown); None
        where no wander is kept."""
        if self.wander is None or not np.isfinite(self.wander).any():
            return None
        mapped = self.apply(rows, classes, generated, margins)
        out = np.ones(self.wander.shape)
        kept = np.isfinite(self.wander).any(axis=2)
        for k, g, part, values in self._class_series(rows, classes, mapped.rows, kept):
            edges, held = self._levels(k, g)
            have = level_wanders(part, values, floors[k], edges, held)
            rest = level_wanders(part, values, floors[k], edges, held, rest=True)
            real = self.wander[k, g, : len(have)]
            with np.errstate(invalid="ignore", divide="ignore"):
                wanted = np.sqrt(np.maximum(real**2 - rest**2, 0.0))
                ratio = np.where(have > 0, wanted / have, np.nan)
            out[k, g, : len(have)] = np.where(np.isfinite(ratio), np.minimum(ratio, 1), 1)
        return out

    def apply(
        self,
        rows: SeriesRows,
        classes: np.ndarray | None,
        generated: np.ndarray,
        margins: np.ndarray | None = None,
        noise: np.ndarray | None = None,
        floors: list[float | None] | None = None,
        steady: np.ndarray | None = None,
    ) -> SeriesRows:
        """``rows`` (generated series, in their own units) with each mapped feature's
        values carried from ``generated`` quantiles (`quantiles` of a calibration sample)
        onto the training ones, class by class, each kept gap by its ``margins``
        (`margins`; None: no switches kept), each level's slow wander moved by its
        ``steady`` factor (`steadiness`; None: none), then the ``noise`` (`noise`; None:
        none) added and, with ``floors``, the training series' first readings after each
        switch up (`dgan.encoding.transients`), all on the scale of ``floors``; a new
        `SeriesRows`. A class missing from either side keeps its values as generated."""
        out = rows.rows.copy()
        row_class = self._row_classes(rows, classes)
        noisy = noise is not None and (noise > 0).any()
        for k, g, part, chances in self._class_chances(rows, classes, generated):
            if margins is not None:
                for n in range(len(self.gaps_of(k, g)[0])):
                    chances = self._kept(part, chances, k, g, n, margins[k, g, n])
            real, mine = self.real[k, g], row_class == g
            finite = np.isfinite(chances)
            values = out[mine, self.features[k]]
            if on_grid(real):  # the nearest quantile: a value the data holds
                values[finite] = real[np.rint(chances[finite] * (QUANTILES - 1)).astype(np.int64)]
            else:
                values[finite] = np.interp(chances[finite], PROBABILITIES, real)
            if steady is not None and (steady[k, g] < 1).any():  # as steady as in training
                edges, held = self._levels(k, g)
                factors = steady[k, g, : len(edges) + 1]
                values = steadied(part, values, floors[k], edges, held, factors)
            if noisy and noise[k, g] > 0:  # the noise on each level, as in training
                held, bounds = held_values(real), (real[0], real[-1])
                values = with_noise(part, values, noise[k, g], floors[k], held, bounds)
            if floors is not None and self.switch_ons is not None:
                values = self._with_switch_ons(k, g, part, values, floors[k])
            out[mine, self.features[k]] = values
        return rows.with_rows(out)

    def _with_switch_ons(self, k: int, g: int, part: SeriesRows, values, floor) -> np.ndarray:
        """``values`` of class ``g``'s series ``part`` with feature ``k``'s kept profile
        after each switch up across each of its gaps (`with_switch_ons`)."""
        real = self.real[k, g]
        for n, edge in enumerate(self._edges(k, g)):
            profile = self.switch_ons[k, g, n]
            if np.isfinite(profile).all() and (profile != 0).any():
                values = with_switch_ons(part, values, floor, edge, profile, (real[0], real[-1]))
        return values

    def _class_chances(self, rows: SeriesRows, classes, generated: np.ndarray):
        """``(k, g, the class's series, their values' chances)`` for each mapped feature
        ``k`` and class ``g`` that both sides have: each value's probability among the
        ``generated`` quantiles (NaN for a value that is not finite)."""
        series_class = series_classes(len(rows), classes)
        for k, i in enumerate(self.features):
            for g in range(self.n_classes):
                real, own = self.real[k, g], generated[k, g]
                if not (np.isfinite(real).all() and np.isfinite(own).all()):
                    continue
                part = rows.take(series_class == g)
                values = np.asarray(part.rows[:, i], dtype=np.float64)
                chances = np.full(len(values), np.nan)
                finite = np.isfinite(values)
                chances[finite] = probabilities_among(values[finite], own, PROBABILITIES)
                yield k, g, part, chances
