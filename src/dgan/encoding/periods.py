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

import warnings
from dataclasses import dataclass, field

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
"""The most harmonics of its frequency a newly fitted model draws a carried feature with,
those below half a cycle a step (`dgan.networks.carrier`): enough for the odd harmonics of
a distorted current. A model file keeps its own (`DataEncoder.period_harmonics`; 3 in
files from before it was kept, 7 in files from before `held_harmonics`)."""
HELD_SHARE = 0.01
"""A harmonic the median training series holds at this share of its fundamental or more
is drawn (`held_harmonics`): below it, a harmonic is lost in the noise."""
WAVEFORMS = ("series", "step")
"""How a carrier draws its wave: "series", one waveform and one loudness a series (a
level, and a switch-on that decays to it) that the steps only swing a little, with white
noise at the series' generated floor (a newly fitted model's); "step", each harmonic's
amplitude set by the steps on its own, and no noise (files from before it was kept:
`DataEncoder.period_waveform`)."""
FLOORS = (1e-4, 1.0)
"""The noise floors (the white noise's deviation over the wave's amplitude) a floor
attribute encodes, on a log scale; a floor outside encodes as the nearer end."""
GATE_SERIES = 4096
"""``"auto"``, the held harmonics and the median switch-on read at most this many series,
evenly spaced in the data (`gate_sample`)."""
_CHUNK_VALUES = 1 << 22  # padded values transformed at once (about): memory stays bounded


def series_frequencies(features: SeriesRows, column: int) -> tuple[np.ndarray, np.ndarray]:
    """(N,) each series' dominant frequency in ``column`` (cycles per step) and the share
    of its power there; NaN for series with no period (constant, or too short). A
    `GateSample` computes each column's once.

    Example:
        >>> t = np.arange(96.0)
        >>> rows = SeriesRows.from_list([np.sin(2 * np.pi * t / 12)[:, None], np.ones((5, 1))])
        >>> frequency, share = series_frequencies(rows, 0)
        >>> np.round(1 / frequency, 2).tolist(), bool(share[0] > 0.9)
        ([12.0, nan], True)
    """
    if isinstance(features, GateSample):
        return features.frequencies(column)
    return _frequencies(features, column)


def _frequencies(features: SeriesRows, column: int) -> tuple[np.ndarray, np.ndarray]:
    n = len(features)
    frequency, share = np.full(n, np.nan), np.full(n, np.nan)
    if not n:
        return frequency, share
    longest = int(features.lengths.max())
    for first, part in features.chunks(series=max(1, _CHUNK_VALUES // (longest * PADDING))):
        kept = slice(first, first + len(part))
        centred = _centred(part, column, longest)
        frequency[kept], share[kept] = dominant_frequencies(centred, part.lengths, PADDING)
    return frequency, share


def series_noise_floors(features: SeriesRows, column: int) -> np.ndarray:
    """(N,) each series' white-noise floor in ``column``: the deviation of its broadband
    noise over its wave's amplitude. The noise's power is read from the median of the
    series' Hann-windowed periodogram, whose few peaks (the wave's harmonics) do not
    move it and whose window keeps a switch-on's jump from leaking into it; the
    amplitude is sqrt(2) times the deviation left. NaN for a constant series.

    Example:
        >>> t = np.arange(600.0)
        >>> wave = 2 * np.sin(2 * np.pi * t / 24) + 0.02 * np.random.default_rng(0).normal(size=600)
        >>> floor = series_noise_floors(SeriesRows.from_list([wave[:, None]]), 0)
        >>> bool(0.007 < floor[0] < 0.013)  # 0.02 over 2
        True
    """
    floors = np.full(len(features), np.nan)
    if not len(features):
        return floors
    longest = int(features.lengths.max())
    for first, part in features.chunks(series=max(1, _CHUNK_VALUES // longest)):
        centred, window = _windowed(part, column, longest)
        lengths = part.lengths[:, None]
        power = np.abs(np.fft.rfft(centred * window, axis=1)) ** 2
        frequency = np.fft.rfftfreq(longest)[None, :]
        usable = (frequency >= 2.0 / lengths) & (frequency < 0.5)
        with warnings.catch_warnings():  # a series too short for any usable bin: NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            median = np.nanmedian(np.where(usable, power, np.nan), axis=1)
        # The median of a white noise's periodogram: ln 2 times its power there.
        noise = median / (np.log(2) * (window**2).sum(axis=1))
        variance = (centred**2).sum(axis=1) / part.lengths
        wave = 2 * (variance - noise)
        kept = slice(first, first + len(part))
        floors[kept] = np.where(wave > 0, np.sqrt(noise / np.where(wave > 0, wave, 1.0)), np.nan)
    return floors


@dataclass(frozen=True, eq=False)
class GateSample(SeriesRows):
    """At most `GATE_SERIES` of the training series, evenly spaced (`gate_sample`):
    ``keep``, (N,), says which of the N it holds. Each column's dominant frequencies are
    computed once and kept (`series_frequencies`): "auto", the held harmonics, the
    median switch-on and the period and centre maps all read them."""

    keep: np.ndarray = field(default=None, repr=False)
    _read: dict = field(default_factory=dict, init=False, repr=False)

    def frequencies(self, column: int) -> tuple[np.ndarray, np.ndarray]:
        """`series_frequencies` of ``column``, computed the first time (copies)."""
        if column not in self._read:
            self._read[column] = _frequencies(self, column)
        return tuple(a.copy() for a in self._read[column])

    def classes(self, classes: np.ndarray | None) -> np.ndarray | None:
        """The sampled series' entries of ``classes``, (N,) per series (None: None)."""
        return None if classes is None else np.asarray(classes)[self.keep]


def gate_sample(features: SeriesRows) -> GateSample:
    """At most `GATE_SERIES` of ``features``, evenly spaced: what ``"auto"``, the held
    harmonics, the median switch-on (`dgan.encoding.switch_on`) and the period and
    centre maps are read from, so that reading them costs the same for a million series
    as for four thousand (medians are told as well by evenly spaced series). A
    `GateSample` is its own; all the series are one without a copy.

    Example:
        >>> rows = SeriesRows.from_list([np.zeros((3, 1))] * 5000)
        >>> len(gate_sample(rows)), len(gate_sample(rows.take(np.arange(5000) < 10)))
        (4096, 10)
        >>> sample = gate_sample(rows)
        >>> gate_sample(sample) is sample, int(sample.keep.sum())
        (True, 4096)
    """
    if isinstance(features, GateSample):
        return features
    keep = gate_keep(len(features))
    sampled = features if keep.all() else features.take(keep)
    return GateSample(sampled.rows, sampled.lengths, keep)


def gate_keep(n: int) -> np.ndarray:
    """(n,) which of ``n`` series `gate_sample` keeps: all, or `GATE_SERIES` evenly spaced.

    Example:
        >>> int(gate_keep(5000).sum()), bool(gate_keep(10).all())
        (4096, True)
    """
    keep = np.zeros(n, dtype=bool)
    keep[np.linspace(0, n - 1, min(n, GATE_SERIES)).astype(np.int64)] = True
    return keep


def held_harmonics(features: SeriesRows, columns: list[int]) -> int:
    """How many harmonics a carrier draws for ``columns`` (the carried features): up to
    the highest of the first `HARMONICS` that the median series holds at `HELD_SHARE` of
    its fundamental or more, in any of them; at least 1 (a sine). Each harmonic's share
    is read from the series' Hann-windowed spectrum (no leakage from the fundamental or
    a switch-on) at that multiple of its dominant frequency; a freely shaped waveform
    where the data has none is noise that judges read (docs/quality.md, "One loudness
    and one noise floor a series"). At most `GATE_SERIES` series, evenly spaced, are read.

    Example:
        >>> t = np.arange(400.0)
        >>> sines = [np.sin(2 * np.pi * t / p)[:, None] for p in (10, 11, 12)]
        >>> square = [(np.sin(2 * np.pi * t / p) + 0.3 * np.sin(6 * np.pi * t / p))[:, None]
        ...           for p in (10, 11, 12)]
        >>> held_harmonics(SeriesRows.from_list(sines), [0])
        1
        >>> held_harmonics(SeriesRows.from_list(square), [0])
        3
    """
    features = gate_sample(features)
    held = 1
    for column in columns:
        shares = harmonic_shares(features, column)
        with warnings.catch_warnings():  # a harmonic past half a cycle a step in every series
            warnings.simplefilter("ignore", RuntimeWarning)
            medians = np.nanmedian(shares, axis=0)
        above = np.flatnonzero(medians >= HELD_SHARE)
        held = max(held, int(above[-1]) + 1 if len(above) else 1)
    return held


def harmonic_shares(features: SeriesRows, column: int) -> np.ndarray:
    """(N, `HARMONICS`) each series' harmonics' amplitudes over its fundamental's in
    ``column`` (the first 1), from the peaks of its Hann-windowed, padded spectrum
    around each multiple of its dominant frequency; NaN past half a cycle a step or for
    a series with no period."""
    n = len(features)
    shares = np.full((n, HARMONICS), np.nan)
    if not n:
        return shares
    frequency = series_frequencies(features, column)[0]
    longest = int(features.lengths.max())
    size = longest * PADDING
    for first, part in features.chunks(series=max(1, _CHUNK_VALUES // size)):
        centred, window = _windowed(part, column, longest)
        amplitude = np.abs(np.fft.rfft(centred * window, n=size, axis=1))
        kept = slice(first, first + len(part))
        at = frequency[kept] * size  # the fundamental's bin, fractional
        rows = np.arange(len(part))[:, None]
        peaks = np.full((len(part), HARMONICS), np.nan)
        for h in range(1, HARMONICS + 1):
            centre = np.where(np.isnan(at), -1, np.round(h * np.nan_to_num(at))).astype(np.int64)
            near = centre[:, None] + np.arange(-PADDING, PADDING + 1)[None, :]
            inside = (centre >= 0) & (h * np.nan_to_num(frequency[kept], nan=1.0) < 0.5)
            near = np.clip(near, 0, amplitude.shape[1] - 1)
            peaks[:, h - 1] = np.where(inside, amplitude[rows, near].max(axis=1), np.nan)
        shares[kept] = peaks / np.where(peaks[:, :1] > 0, peaks[:, :1], np.nan)
    return shares


def _centred(part: SeriesRows, column: int, longest: int) -> np.ndarray:
    """(n, longest) the chunk's series in ``column`` less their means, zero past each
    one's end."""
    values = part.rows[:, column].astype(np.float64)
    means = np.add.reduceat(values, part.starts) / part.lengths
    centred = np.zeros((len(part), longest))
    centred[part.example_of_row(), part.step_of_row()] = values - part.per_row(means)
    return centred


def _windowed(part: SeriesRows, column: int, longest: int) -> tuple[np.ndarray, np.ndarray]:
    """The chunk's `_centred` series and the Hann window over each one's own length."""
    centred = _centred(part, column, longest)
    lengths = part.lengths[:, None].astype(np.float64)
    steps = np.arange(longest)[None, :]
    turn = 2 * np.pi * steps / np.maximum(lengths - 1, 1)
    return centred, np.where(steps < lengths, 0.5 - 0.5 * np.cos(turn), 0.0)


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
    features = gate_sample(features)
    steady = []
    for i in continuous:
        frequency, share = series_frequencies(features, i)
        if np.isnan(frequency).mean() > 0.5:
            continue
        cycles = np.nanmedian(frequency * features.lengths)
        if cycles >= MIN_CYCLES and np.nanmedian(share) >= STEADY_SHARE:
            steady.append(i)
    return steady


def period_attributes(
    features: SeriesRows, columns: list[int], max_sequence_len: int, zero_one: bool, floors: bool
) -> list[np.ndarray]:
    """(N,) each series' frequency in each of ``columns`` (the carried features), then,
    with ``floors``, its noise floor in each, encoded as the model generates them
    (`encode_frequencies`, `encode_floors`).

    Example:
        >>> t = np.arange(100.0)
        >>> rows = SeriesRows.from_list([np.sin(2 * np.pi * t / 10)[:, None]])
        >>> [round(float(a[0]), 3) for a in period_attributes(rows, [0], 100, True, False)]
        [0.589]
    """
    frequencies = [
        encode_frequencies(series_frequencies(features, i)[0], max_sequence_len, zero_one)
        for i in columns
    ]
    if not floors:
        return frequencies
    return frequencies + [
        encode_floors(series_noise_floors(features, i), zero_one) for i in columns
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


def encode_floors(floors: np.ndarray, zero_one: bool) -> np.ndarray:
    """(N,) noise floors -> float32 in the attributes' output range, on a log scale over
    `FLOORS`; NaN (a constant series) encodes as the lowest.

    Example:
        >>> encode_floors(np.array([1e-4, 1e-2, 1.0, np.nan]), zero_one=True)
        array([0. , 0.5, 1. , 0. ], dtype=float32)
    """
    low, high = FLOORS
    floors = np.where(np.isnan(floors), low, floors)
    unit = np.clip(np.log(np.maximum(floors, low) / low) / np.log(high / low), 0.0, 1.0)
    return (unit if zero_one else 2 * unit - 1).astype(np.float32)
