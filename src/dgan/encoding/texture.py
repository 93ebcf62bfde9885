"""Generated series filtered to the training series' step-to-step texture, per class.

On long series the generator gets a class's levels, cycles and values right but not its
texture: a temperature that rises smoothly comes out jittery, a gusty wind too smooth
(docs/quality.md, "Texture matched per class"). Independent classifiers read exactly
that (catch22's roughness and motif features). `SeriesTexture` keeps, per mapped feature
and class (the categories of one discrete attribute, or one class for all), the training
series' mean autocorrelation at lags 0..`LAGS`; each series is centred and scaled by its
own mean and spread first, so the classes' levels and amplitudes do not enter. From a
calibration sample of the generator's own series (`dgan.sampling`) it designs one
zero-phase filter per feature and class whose gain is the square root of the ratio of the
two spectra (real over generated) that those autocorrelations imply, and filters each
generated series with it, keeping the series' mean and standard deviation: the texture
moves towards the class's, the level and spread stay as generated.

What a linear filter cannot make is a sensor's holds: real readings on a grid (whole
hPa, 0.1 degrees) repeat for hours, generated ones flicker between neighbouring values or
move at every step. The texture also keeps each class's share of steps at which a
series holds its value and how long its runs of holds last (`dgan.encoding.holds`), and
where the value map decides the final values (`dgan.encoding.marginals`) the calibration
finds, per class, the dead band (in units of each series' own spread) within which a
generated series keeps its last value so that the share comes out as in training, by
whichever of the two rules of `dgan.encoding.holds` gives runs nearer the training ones
(`SeriesTexture.hold_thresholds`). A class that already holds as often as the real one,
or more, is left as it is. Where its series turn back less often than the training ones
(`reversal_shares`), the band also carries a dither that brings their flicker back, never
larger than the class's typical move (`move_sizes`): noise the size of a series' whole
spread would carry a charger's readings back and forth between its standby and its slow
decay at every step. Both corrections are fixed per model; a jump at switch-on is left to
the generator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dgan.encoding.holds import (
    MAX_DITHER,
    MAX_HOLD,
    MIN_SERIES,
    DeadBands,
    bisected,
    held,
    hold_runs,
    hold_shares,
    move_sizes,
    padded_moments,
    reversal_shares,
    written,
)
from dgan.encoding.per_class import PerClassTable, series_classes
from dgan.series import SeriesRows

LAGS = 96
"""Autocorrelation lags a new texture keeps per feature and class; its filters are
2 * LAGS + 1 taps. Four days of hourly data: a daily cycle's spectral line is only as
narrow as the lags read, and at 32 the filters could not keep generated days as alike as
real ones (docs/quality.md, "Four days of lags"). A texture read from a file keeps the
count it was saved with."""
ITERATIONS = 3
"""Rounds of design: each measures what the filter so far (and decoding after it) left."""
MAX_GAIN = 20.0
"""The filter's gain at any frequency stays within [1 / MAX_GAIN, MAX_GAIN]."""
_FREQUENCIES = np.linspace(0.0, np.pi, 512)
_PAD_ELEMENTS = 1 << 22  # padded values per chunk when filtering


def matches_texture(setting: bool | str, max_sequence_len: int, long_series: int) -> bool:
    """Whether generated series are filtered to the training texture (`match_texture`):
    always for True, never for False, for "auto" where series are ``long_series`` steps
    or longer (the short windows of the TimeGAN protocol are left as generated).

    Example:
        >>> matches_texture("auto", 427, 100), matches_texture("auto", 24, 100)
        (True, False)
    """
    return setting is True or (setting == "auto" and max_sequence_len >= long_series)


def all_pass(lags: int = LAGS) -> np.ndarray:
    """The 2 * ``lags`` + 1 taps of the filter that leaves a series as it is.

    Example:
        >>> all_pass(2).tolist()
        [0.0, 0.0, 1.0, 0.0, 0.0]
    """
    return np.eye(1, 2 * lags + 1, lags).ravel()


def autocorrelations(
    rows: SeriesRows,
    feature: int,
    classes: np.ndarray | None,
    n_classes: int,
    lags: int = LAGS,
) -> np.ndarray:
    """(n_classes, ``lags`` + 1) the mean autocorrelation of feature ``feature``'s series
    per class (``classes``: each series' class, None for one class), each series centred
    and scaled by its own mean and spread; NaN for a class without a varying series. A
    class of fewer than `MIN_SERIES` such series gets the mean over all of them. Works
    through chunks of series, so temporary memory stays bounded for millions of them.

    Example:
        >>> t = np.arange(200.0)
        >>> rows = SeriesRows.from_list([np.sin(t / 5)[:, None], np.sin(t / 7)[:, None]])
        >>> autocorrelations(rows, 0, None, 1, lags=2).round(2).tolist()
        [[1.0, 0.98, 0.94]]
    """
    classes = series_classes(len(rows), classes)
    sums, counts = np.zeros((n_classes, lags + 1)), np.zeros(n_classes)
    for first, part in rows.chunks():
        per_series, usable = _series_autocorrelations(part, feature, lags)
        mine = classes[first : first + len(part)][usable]
        np.add.at(sums, mine, per_series[usable])
        counts += np.bincount(mine, minlength=n_classes)
    out = np.full((n_classes, lags + 1), np.nan)
    enough = counts >= MIN_SERIES
    out[enough] = sums[enough] / counts[enough, None]
    if counts.sum() > 0:  # a class with a few series: the mean over all of them
        out[~enough & (counts > 0)] = sums.sum(axis=0) / counts.sum()
    return out


def _series_autocorrelations(
    rows: SeriesRows, feature: int, lags: int
) -> tuple[np.ndarray, np.ndarray]:
    """(N, ``lags`` + 1) each series' autocorrelation of ``feature``, and whether it varies."""
    values = np.asarray(rows.rows[:, feature], dtype=np.float64)
    series = rows.example_of_row()
    count = np.maximum(rows.lengths, 1)
    means = np.bincount(series, values, minlength=len(rows)) / count
    centred = values - means[series]
    power = np.bincount(series, centred * centred, minlength=len(rows))
    varying = (power > 1e-12 * np.maximum(1.0, means**2) * count) & np.isfinite(power)
    # Each series' sums of lagged products through its power spectrum, zero-padded past
    # its end so nothing wraps round: the same sums as lag by lag, at a cost that does not
    # grow with the lags (97 passes over every row made fitting millions of series slow).
    steps, ends = rows.step_of_row(), rows.starts + rows.lengths
    longest = int(rows.lengths.max()) if len(rows) else 0
    per_pass = max(1, _PAD_ELEMENTS // _fft_size(longest, lags))  # series a pass
    sums = np.zeros((len(rows), lags + 1))
    for first in range(0, len(rows), per_pass):
        last = min(first + per_pass, len(rows))
        at = slice(rows.starts[first], ends[last - 1])
        padded = np.zeros((last - first, int(rows.lengths[first:last].max())))
        padded[series[at] - first, steps[at]] = centred[at]
        size = _fft_size(padded.shape[1], lags)
        spectra = np.fft.rfft(padded, size, axis=1)
        power_spectra = spectra.real**2 + spectra.imag**2
        sums[first:last] = np.fft.irfft(power_spectra, size, axis=1)[:, : lags + 1]
        sums[first:last, padded.shape[1] :] = 0.0  # fewer steps than lags: none that far
    sums[:, 0] = power  # exactly: lag 0 is 1 (the file's check), not 1 +- 1e-16
    out = np.clip(sums / np.where(varying, power, 1.0)[:, None], -1.0, 1.0)
    return out, varying & np.isfinite(out).all(axis=1)


def _fft_size(steps: int, lags: int) -> int:
    """The power of two at which series of ``steps`` steps, zero-padded, give their lagged
    sums up to ``lags`` without wrapping round."""
    return 1 << int(np.ceil(np.log2(max(steps + lags + 1, 2))))


def spectrum(autocorrelation: np.ndarray) -> np.ndarray:
    """The power spectrum at `_FREQUENCIES` that ``autocorrelation`` (lags 0, 1, ...)
    implies, through a Bartlett lag window, kept above 1e-4 of its peak."""
    lags = np.arange(len(autocorrelation))
    window = 1.0 - lags / len(autocorrelation)
    weights = autocorrelation * window * np.where(lags == 0, 1.0, 2.0)
    power = np.cos(np.outer(_FREQUENCIES, lags)) @ weights
    return np.maximum(power, 1e-4 * power.max())


def kernel_of(gain: np.ndarray, lags: int = LAGS) -> np.ndarray:
    """The 2 * ``lags`` + 1 taps of a symmetric (zero-phase) filter with ``gain`` at
    `_FREQUENCIES`, tapered by a Hann window.

    Example:
        >>> flat = kernel_of(np.ones(512), lags=8)
        >>> bool(np.abs(flat - all_pass(8)).max() < 1e-6)
        True
    """
    taps = np.arange(-lags, lags + 1)
    waves = np.cos(np.outer(_FREQUENCIES, taps))  # (frequencies, taps)
    kernel = np.trapezoid(gain[:, None] * waves, _FREQUENCIES, axis=0)
    return kernel / np.pi * 0.5 * (1.0 + np.cos(np.pi * taps / (lags + 1)))


class SeriesTexture(PerClassTable):
    """Each mapped feature's mean autocorrelation per class, and the filters onto it.

    ``features``: indices of the filtered (continuous) features; ``attribute``: index of
    the discrete attribute whose categories are the classes, or None for one class;
    ``real``: (len(features), classes, `lags` + 1) the training series' autocorrelations
    (`autocorrelations`; `LAGS` lags when fitted), NaN for a class without them;
    ``holds``: (len(features), classes) their `hold_shares`, or None (files from before
    holds were matched); ``runs``: their `hold_runs`, or None (files from before runs
    were kept: one dead band a series); ``reversals``: their `reversal_shares`, or None
    (files from before they were kept: no dither); ``moves``: their `move_sizes`, or None
    (files from before they were kept: a dither up to `MAX_DITHER` alone).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> smooth = np.cumsum(rng.normal(size=(40, 300)), axis=1)  # random walks
        >>> real = SeriesRows.from_padded(smooth[..., None])
        >>> texture = SeriesTexture.fit(real, [0], None, None, 1)
        >>> noise = 30 * rng.normal(size=smooth.shape)
        >>> jittery = SeriesRows.from_padded((smooth + noise)[..., None])
        >>> kernels = texture.kernels(jittery, None)
        >>> filtered = texture.apply(jittery, None, kernels)
        >>> def rough(rows):  # step size over spread
        ...     x = rows.rows[:, 0].reshape(40, 300)
        ...     return float(np.median(np.diff(x).std(axis=1) / x.std(axis=1)))
        >>> rough(filtered) < rough(jittery) / 2
        True
    """

    WIDTH = LAGS + 1

    def __init__(
        self,
        features: list[int],
        attribute: int | None,
        real: np.ndarray,
        holds: np.ndarray | None = None,
        runs: np.ndarray | None = None,
        reversals: np.ndarray | None = None,
        moves: np.ndarray | None = None,
    ):
        super().__init__(features, attribute, real)
        self.holds = None if holds is None else np.asarray(holds, dtype=np.float64)
        self.runs = None if runs is None else np.asarray(runs, dtype=np.float64)
        self.reversals = None if reversals is None else np.asarray(reversals, np.float64)
        self.moves = None if moves is None else np.asarray(moves, np.float64)

    @classmethod
    def fit(
        cls,
        rows: SeriesRows,
        features: list[int],
        attribute: int | None,
        classes: np.ndarray | None,
        n_classes: int,
    ) -> SeriesTexture:
        """The autocorrelations of ``rows`` (training series, in their own units);
        ``classes``: each series' category index of ``attribute`` (None: one class)."""
        real = np.stack([autocorrelations(rows, i, classes, n_classes) for i in features])
        holds = np.stack([hold_shares(rows, i, classes, n_classes) for i in features])
        runs = np.stack([hold_runs(rows, i, classes, n_classes) for i in features])
        reversals = np.stack([reversal_shares(rows, i, classes, n_classes) for i in features])
        moves = np.stack([move_sizes(rows, i, classes, n_classes) for i in features])
        return cls(features, attribute, real, holds, runs, reversals, moves)

    @property
    def lags(self) -> int:
        """The autocorrelation lags this texture keeps (`LAGS`, or a file's count)."""
        return self.real.shape[-1] - 1

    def kernels(
        self,
        generated: SeriesRows,
        classes: np.ndarray | None,
        decode: Callable[[SeriesRows], SeriesRows] | None = None,
    ) -> np.ndarray:
        """(len(features), classes, 2 * `lags` + 1) the filters for series like
        ``generated`` (a calibration sample of the generator's, in their own units), in
        `ITERATIONS` rounds: each filters the sample with the filters so far, passes it
        through ``decode`` (what decoding does after the filter: the value map), and
        multiplies each filter's gain by the square root of real over remaining spectrum.
        A class missing from either side gets the all-pass filter."""
        gains = np.ones((len(self.features), self.n_classes, len(_FREQUENCIES)))
        flat = all_pass(self.lags)
        kernels = np.broadcast_to(flat, (*gains.shape[:2], len(flat))).copy()
        for _ in range(ITERATIONS):
            filtered = self.apply(generated, classes, kernels)
            if decode is not None:
                filtered = decode(filtered)
            for k, i in enumerate(self.features):
                own = autocorrelations(filtered, i, classes, self.n_classes, self.lags)
                for c in range(self.n_classes):
                    if np.isfinite(self.real[k, c]).all() and np.isfinite(own[c]).all():
                        ratio = np.sqrt(spectrum(self.real[k, c]) / spectrum(own[c]))
                        gains[k, c] = np.clip(gains[k, c] * ratio, 1 / MAX_GAIN, MAX_GAIN)
                        kernels[k, c] = kernel_of(gains[k, c], self.lags)
        return kernels

    def hold_thresholds(
        self,
        filtered: SeriesRows,
        classes: np.ndarray | None,
        decode: Callable[[SeriesRows], SeriesRows],
        exact: list[int],
    ) -> DeadBands:
        """The dead bands (`hold`) for series like ``filtered`` (a calibration sample,
        filtered by `kernels`) after which ``decode`` (the value map) gives each class
        the training share of held steps (`hold_shares`), found by bisection between 0
        and `MAX_HOLD` for each rule of `dgan.encoding.holds` (one width a series, or
        scaled by local activity). Each class takes the rule whose runs of holds come out
        nearer its training ones (`hold_runs`, by ratio; one width a series on a tie or
        without them). A class whose series then turn back less often than the training
        ones (`reversal_shares`) gets the most dither, up to `MAX_DITHER`, that does not
        take it past them, at most its typical move (`move_sizes`), and its band is found
        again with that dither. Only features in ``exact`` (those whose decoded values
        are final; values rounded later hold more on their own) get a band: a class that
        holds less often than in training, or a dithered one; the rest 0."""
        shape = (len(self.features), self.n_classes)
        if self.holds is None:
            return DeadBands.uniform(np.zeros(shape))

        def measured(measure: Callable, bands: DeadBands) -> np.ndarray:
            rows = decode(self.hold(filtered, classes, bands))
            return np.stack([measure(rows, i, classes, self.n_classes) for i in self.features])

        def widths(need: np.ndarray, local: np.ndarray, dither: np.ndarray | None) -> np.ndarray:
            def short(middle: np.ndarray) -> np.ndarray:
                return measured(hold_shares, DeadBands(middle, local, dither)) < self.holds

            return bisected(need, MAX_HOLD, short)[1]

        mapped = np.isin(self.features, exact)[:, None]
        none = DeadBands.uniform(np.zeros(shape))
        with np.errstate(invalid="ignore", divide="ignore"):
            # A band where a class holds less often than in training, by either rule.
            need = mapped & np.isfinite(self.holds) & (measured(hold_shares, none) < self.holds)
            bands = DeadBands.uniform(widths(need, none.local, None))
            if self.runs is not None and need.any():
                local = DeadBands(widths(need, ~none.local, None), ~none.local)
                off = [np.abs(np.log(measured(hold_runs, b) / self.runs)) for b in (bands, local)]
                take = need & (
                    np.nan_to_num(off[1], nan=np.inf) < np.nan_to_num(off[0], nan=np.inf)
                )
                bands = DeadBands(np.where(take, local.widths, bands.widths), take)
            if self.reversals is None:
                return bands
            # A dither where a class then turns back less often than in training, never
            # past it, and that class's band again with it.
            turns = measured(reversal_shares, bands) < self.reversals
            need = mapped & np.isfinite(self.reversals) & turns
            if not need.any():
                return bands

            def rare(middle: np.ndarray) -> np.ndarray:
                dithered = DeadBands(bands.widths, bands.local, middle)
                return measured(reversal_shares, dithered) < self.reversals

            dither = bisected(need, MAX_DITHER, rare)[0]
            if self.moves is not None:  # noise no larger than a real series' moves
                dither = np.minimum(dither, np.nan_to_num(self.moves, nan=MAX_DITHER))
            alone = DeadBands(np.zeros(shape), bands.local, dither)
            short = need & np.isfinite(self.holds) & (measured(hold_shares, alone) < self.holds)
            found = widths(short, bands.local, dither)
        return DeadBands(np.where(need, found, bands.widths), bands.local, dither)

    def hold(self, rows: SeriesRows, classes: np.ndarray | None, bands: DeadBands) -> SeriesRows:
        """``rows`` with each feature's series held at a value until it moves more than
        its class's dead band (``bands``, `hold_thresholds`) away from it
        (`dgan.encoding.holds.held`); a new `SeriesRows`.

        Example:
            >>> texture = SeriesTexture([0], None, np.ones((1, 1, LAGS + 1)))
            >>> rows = SeriesRows.from_list([np.array([[0.0], [0.1], [0.05], [2.0], [2.1]])])
            >>> bands = DeadBands.uniform(np.array([[0.2]]))
            >>> texture.hold(rows, None, bands).rows.ravel().tolist()
            [0.0, 0.0, 0.0, 2.0, 2.0]
        """
        return held(rows, self.features, classes, bands)

    def apply(
        self,
        rows: SeriesRows,
        classes: np.ndarray | None,
        kernels: np.ndarray,
        bands: DeadBands | None = None,
    ) -> SeriesRows:
        """``rows`` with each mapped feature's series filtered by its class's kernel
        (`kernels`), each keeping its mean and standard deviation, then held within its
        class's dead band (`hold`; ``bands`` None: not held); a new `SeriesRows`.
        Series are mirrored at their ends, so a filter does not pull them towards 0."""
        filtered = self._filter(rows, classes, kernels)
        return filtered if bands is None else self.hold(filtered, classes, bands)

    def _filter(
        self, rows: SeriesRows, classes: np.ndarray | None, kernels: np.ndarray
    ) -> SeriesRows:
        out = rows.rows.copy()
        row_classes = series_classes(len(rows), classes)
        longest = int(rows.lengths.max()) if len(rows) else 0
        step = max(1, _PAD_ELEMENTS // (longest + 2 * self.lags + 1))
        for first in range(0, len(rows), step):
            part = slice(first, min(first + step, len(rows)))
            for k, i in enumerate(self.features):
                out[:, i] = _filter_part(out[:, i], rows, part, kernels[k][row_classes[part]])
        return rows.with_rows(out)

    def to_json(self) -> dict[str, Any]:
        tables = {k: _nullable(getattr(self, k)) for k in ("holds", "runs", "reversals", "moves")}
        return {**super().to_json(), "lags": self.lags, **tables}

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> SeriesTexture:
        texture = super().from_json(state, width=state["lags"] + 1)
        # Files from before holds were matched have none of these; from before runs were
        # kept, no runs (one dead band a series); from before reversals, no dither; from
        # before moves, a dither not held to them.
        texture.holds = _from_nullable(state.get("holds"))
        texture.runs = _from_nullable(state.get("runs"))
        texture.reversals = _from_nullable(state.get("reversals"))
        texture.moves = _from_nullable(state.get("moves"))
        return texture


def _filter_part(
    column: np.ndarray, rows: SeriesRows, part: slice, kernels: np.ndarray
) -> np.ndarray:
    """``column`` with the series of ``part`` filtered, one kernel (2 * lags + 1 taps) a
    series."""
    lags = kernels.shape[1] // 2
    lengths, starts = rows.lengths[part], rows.starts[part]
    longest = int(lengths.max())
    if longest < 2:
        return column
    last = np.maximum(lengths - 1, 0)[:, None]
    positions = np.abs(np.arange(-lags, longest + lags)[None, :])
    mirrored = np.clip(last - np.abs(last - positions), 0, last)  # reflect at both ends
    at = np.minimum(starts[:, None] + mirrored, len(column) - 1)  # empty series: unused
    values = np.asarray(column, dtype=np.float64)[at]
    filtered = np.zeros((len(lengths), longest))
    for tap in range(2 * lags + 1):
        filtered += kernels[:, tap, None] * values[:, tap : tap + longest]
    inside = np.arange(longest)[None, :] < lengths[:, None]
    mean, spread = padded_moments(values[:, lags : lags + longest], inside)
    new_mean, new_spread = padded_moments(filtered, inside)
    scale = np.where(new_spread > 0, spread / np.where(new_spread > 0, new_spread, 1), 1.0)
    result = mean[:, None] + (filtered - new_mean[:, None]) * scale[:, None]
    changed = (lengths > 1) & ~(kernels == all_pass(lags)).all(axis=1)  # all-pass: exactly
    return written(column, starts, result, changed[:, None] & inside & np.isfinite(result))


def _nullable(table: np.ndarray | None) -> list | None:
    """A (features, classes) table as JSON lists, NaN (a class without it) as null."""
    if table is None:
        return None
    return [[None if np.isnan(v) else float(v) for v in per] for per in table]


def _from_nullable(table: list | None) -> np.ndarray | None:
    """The table `_nullable` wrote, null as NaN."""
    if table is None:
        return None
    return np.array([[np.nan if v is None else v for v in per] for per in table], float)
