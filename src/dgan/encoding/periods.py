"""Each series' own period, as a generated attribute that a carrier wave follows
(``period_carrier``).

Series that oscillate steadily (an appliance's current after its switch-on) keep one
period, phase and amplitude over hundreds of steps. An LSTM that draws them a group of
``sample_len`` steps at a time restarts the wave at each group: the phase breaks and the
amplitude swings at the seams (docs/quality.md, "A carrier of each series' own period").
So each such feature's dominant frequency becomes an additional attribute, drawn by the
attribute generator with the others and judged by the attribute critic, and the
generator draws that feature as a sum of harmonics of a wave at that frequency that
runs over the whole series (`dgan.networks.carrier`): no step can break its phase.

A feature is *steady* when its median training series has at least `MIN_CYCLES` cycles
of its dominant period with at least `STEADY_SHARE` of its power there
(`dgan.spectrum.dominant_frequencies`). ``"auto"`` carries the steady continuous
features, True every continuous feature, False none.
"""

from __future__ import annotations

import numpy as np

from dgan.errors import DataError
from dgan.series import SeriesRows
from dgan.spectrum import dominant_frequencies

MIN_CYCLES = 8.0
"""``"auto"``: cycles of its dominant period the median series must hold."""
STEADY_SHARE = 0.6
"""``"auto"``: the share of its power the median series must have at that period."""
PADDING = 8
"""The transform's length over the series' (a peak to within 1/16 of a plain bin)."""
HARMONICS = 7
"""Harmonics of its frequency a newly fitted model draws each carried feature with, those
below half a cycle a step (`dgan.networks.carrier`): enough for the odd harmonics of a
distorted current. A model file keeps its own (`DataEncoder.period_harmonics`; 3 in
files from before it was kept)."""
GATE_SERIES = 4096
"""``"auto"`` reads the medians of at most this many series, evenly spaced in the data."""
_CHUNK_VALUES = 1 << 22  # padded values transformed at once (about): memory stays bounded


def series_frequencies(features: SeriesRows, column: int) -> tuple[np.ndarray, np.ndarray]:
    """(N,) each series' dominant frequency in ``column`` (cycles per step) and the share
    of its power there; NaN for series with no period (constant, or too short).

    Example:
        >>> t = np.arange(96.0)
        >>> rows = SeriesRows.from_list([np.sin(2 * np.pi * t / 12)[:, None], np.ones((5, 1))])
        >>> frequency, share = series_frequencies(rows, 0)
        >>> np.round(1 / frequency, 2).tolist(), bool(share[0] > 0.9)
        ([12.0, nan], True)
    """
    n = len(features)
    frequency, share = np.full(n, np.nan), np.full(n, np.nan)
    if not n:
        return frequency, share
    longest = int(features.lengths.max())
    for first, part in features.chunks(rows=max(1, _CHUNK_VALUES // (longest * PADDING))):
        values = part.rows[:, column].astype(np.float64)
        means = np.add.reduceat(values, part.starts) / part.lengths
        centred = np.zeros((len(part), longest))
        centred[part.example_of_row(), part.step_of_row()] = values - part.per_row(means)
        kept = slice(first, first + len(part))
        frequency[kept], share[kept] = dominant_frequencies(centred, part.lengths, PADDING)
    return frequency, share


def carried_features(setting: bool | str, features: SeriesRows, continuous: list[int]) -> list[int]:
    """The features (indices among ``continuous``, the continuous ones) that get a period
    attribute and a carrier under ``setting`` (True, False or "auto"). Raises DataError
    where True has no continuous feature to carry.

    Example:
        >>> t = np.arange(200.0)
        >>> waves = [np.c_[np.sin(2 * np.pi * t / p), t] for p in (10, 11, 12)]
        >>> carried_features("auto", SeriesRows.from_list(waves), [0, 1])
        [0]
    """
    if setting is False:
        return []
    if setting is True:
        if not continuous:
            raise DataError(
                "period_carrier=True needs a continuous feature (it draws each one as a wave "
                "at the series' own period). Set period_carrier='auto' or False."
            )
        return list(continuous)
    if not len(features):
        return []
    if len(features) > GATE_SERIES:  # medians: evenly spaced series tell them as well
        keep = np.zeros(len(features), dtype=bool)
        keep[np.linspace(0, len(features) - 1, GATE_SERIES).astype(np.int64)] = True
        features = features.take(keep)
    steady = []
    for i in continuous:
        frequency, share = series_frequencies(features, i)
        if np.isnan(frequency).mean() > 0.5:
            continue
        cycles = np.nanmedian(frequency * features.lengths)
        if cycles >= MIN_CYCLES and np.nanmedian(share) >= STEADY_SHARE:
            steady.append(i)
    return steady


def frequency_attributes(
    features: SeriesRows, columns: list[int], max_sequence_len: int, zero_one: bool
) -> list[np.ndarray]:
    """(N,) each series' frequency in each of ``columns`` (the carried features), encoded
    as the model generates it (`encode_frequencies`).

    Example:
        >>> t = np.arange(100.0)
        >>> rows = SeriesRows.from_list([np.sin(2 * np.pi * t / 10)[:, None]])
        >>> [round(float(a[0]), 3) for a in frequency_attributes(rows, [0], 100, zero_one=True)]
        [0.589]
    """
    return [
        encode_frequencies(series_frequencies(features, i)[0], max_sequence_len, zero_one)
        for i in columns
    ]


def lowest_frequency(max_sequence_len: int) -> float:
    """The lowest frequency a period attribute encodes: one cycle over the longest series."""
    return 1.0 / max(max_sequence_len, 2)


def encode_frequencies(frequency: np.ndarray, max_sequence_len: int, zero_one: bool) -> np.ndarray:
    """(N,) cycles per step -> float32 in the attributes' output range, on a log scale from
    `lowest_frequency` to 0.5, fixed by ``max_sequence_len`` alone (no period is read
    from the data to set it); NaN (no period) encodes as the lowest.

    Example:
        >>> encode_frequencies(np.array([0.01, 0.1, 0.5, np.nan]), 100, zero_one=True).round(3)
        array([0.   , 0.589, 1.   , 0.   ], dtype=float32)
    """
    low = lowest_frequency(max_sequence_len)
    frequency = np.where(np.isnan(frequency), low, frequency)
    unit = np.clip(np.log(np.maximum(frequency, low) / low) / np.log(0.5 / low), 0.0, 1.0)
    return (unit if zero_one else 2 * unit - 1).astype(np.float32)
