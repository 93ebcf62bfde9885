"""Where a "series" carrier's loudness starts training: the training series' median
switch-on (``period_waveform`` "series", `dgan.networks.carrier`).

The carrier draws each carried wave's loudness as L + (A - L) exp(-t / tau) from the
series' first LSTM output, through a layer whose weights start at 0, so every series
starts training at one envelope. Started at a steady wave of half the bound that decays
over one LSTM step, the generator fell short of the data's own switch-on on the
oscillating simulation, too low and too slow, and the steps' swing made up for part of
it (docs/quality.md, "The centre and the band, each alone"). So that layer's bias starts at the
training series' medians (`median_switch_ons`), read from the same evenly spaced sample
as "auto" (`periods.gate_sample`); the GAN then learns each series' spread around them.
Not saved: after training the weights hold it.
"""

from __future__ import annotations

import numpy as np

from dgan.encoding.periods import gate_sample, series_frequencies
from dgan.series import SeriesRows

DECAYS = np.geomspace(1.0, 4096.0, 193)
"""The decay times tau (steps) each series' envelope is fitted over (`series_switch_on`), 4.4%
apart."""
MIN_PERIODS = 4
"""A series shorter than this many periods tells no envelope."""


def series_switch_on(wave: np.ndarray, period: float) -> tuple[float, float, float] | None:
    """(L, A, tau): the envelope L + (A - L) exp(-t / tau) that fits ``wave``'s amplitude
    (sqrt 2 times its moving RMS over one ``period``, about the mean of its second half),
    in units of the series' half range, least squares over `DECAYS`; None where the
    series holds fewer than `MIN_PERIODS` periods, is flat, or fits no positive L and A.

    Example:
        >>> t = np.arange(600.0)
        >>> wave = (1 + np.exp(-t / 40)) * np.sin(2 * np.pi * t / 12)
        >>> [round(v, 1) for v in series_switch_on(wave, 12.0)]  # half range about 2
        [0.5, 1.1, 39.7]
    """
    steps = round(period) if np.isfinite(period) else 0
    if steps < 2 or len(wave) < MIN_PERIODS * steps:
        return None
    low, high = float(wave.min()), float(wave.max())
    if high <= low:
        return None
    unit = (wave - (high + low) / 2) / ((high - low) / 2)
    unit = unit - unit[len(unit) // 2 :].mean()  # about the wave's own centre
    y = np.sqrt(2 * np.convolve(unit**2, np.ones(steps) / steps, mode="valid"))  # [t, t + p)
    # Each window averages the decay over its p steps: exp(-t / tau) times `window_mean`
    # (a decay faster than a period would read too loud at the window's middle).
    b = np.exp(-np.arange(len(y))[None, :] / DECAYS[:, None])  # (D, m)
    m, sb, sbb = len(y), b.sum(axis=1), (b * b).sum(axis=1)
    sy, sby = y.sum(), b @ y
    det = m * sbb - sb**2
    usable = det > 1e-9 * m * m  # a decay far longer than the series: no fit
    det = np.where(usable, det, 1.0)
    excess = (m * sby - sb * sy) / det
    level = (sy - excess * sb) / m
    residual = np.where(usable, (y * y).sum() - level * sy - excess * sby, np.inf)
    best = int(np.argmin(residual))
    start = level[best] + excess[best] / window_mean(DECAYS[best], steps)
    if level[best] <= 0 or start <= 0:
        return None
    return float(level[best]), float(start), float(DECAYS[best])


def window_mean(decay: float, steps: int) -> float:
    """The mean of exp(-s / ``decay``) over s = 0 .. ``steps`` - 1.

    Example:
        >>> round(window_mean(1e9, 12), 6), round(window_mean(1.0, 4), 3)
        (1.0, 0.388)
    """
    return float(np.expm1(-steps / decay) / (steps * np.expm1(-1.0 / decay)))


def median_switch_ons(
    features: SeriesRows, columns: list[int], scales: list
) -> list[tuple[float, float, float]] | None:
    """Each of ``columns``' (the carried features') median (L, A, tau) over the training
    series' `gate_sample`: L and tau the medians of `series_switch_on`'s, A the median
    L times the median A / L. ``scales``: each feature's global encoder (its transform
    gives the values as the model sees them). None where some column tells no envelope.

    Example:
        >>> t = np.arange(600.0)
        >>> waves = [((1 + np.exp(-t / tau)) * np.sin(2 * np.pi * t / 12))[:, None]
        ...          for tau in (30, 40, 50)]
        >>> class Same:
        ...     def transform(self, values): return values
        >>> [[round(v, 1) for v in e] for e in median_switch_ons(
        ...     SeriesRows.from_list(waves), [0], [Same()])]
        [[0.5, 1.1, 39.7]]
    """
    sample = gate_sample(features)
    envelopes = []
    for column in columns:
        frequency = series_frequencies(sample, column)[0]
        values = scales[column].transform(sample.rows[:, column])
        fits = [
            series_switch_on(values[start : start + length], 1 / f if f > 0 else np.nan)
            for start, length, f in zip(sample.starts, sample.lengths, frequency, strict=True)
        ]
        fits = np.array([f for f in fits if f is not None])
        if not len(fits):
            return None
        level = float(np.median(fits[:, 0]))
        ratio = float(np.median(fits[:, 1] / fits[:, 0]))
        envelopes.append((level, level * ratio, float(np.median(fits[:, 2]))))
    return envelopes
