"""Per-series features: what a person sees in a plot, as numbers a classifier can compare.

Each series becomes one row of numbers. For every continuous feature: its level, peak and
spread on a log scale (series 1,000x apart in amplitude differ by 3, not by 1,000), its
shape (how long it sits flat before it first moves, its largest jump, how rough it is, its
dominant period and how strong that period is, its trend, where its mass lies), and, when
``pycatch22`` is installed (``pip install "dgan[judge]"``), the 22 canonical time-series
features of catch22 (Lubba et al., "catch22: CAnonical Time-series CHaracteristics",
2019). For every discrete feature: each category's share of the steps and how often the
value switches. For every series: its length and its attributes (discrete ones one-hot).

`feature_tables` computes both sides of a comparison with the same constants, taken from
the real side (the log scale's floor, the code books), so a synthetic series and a real
one with the same values get the same row.

Example:
    >>> import numpy as np
    >>> from dgan.metrics.data import SeriesData
    >>> rng = np.random.default_rng(0)
    >>> real = SeriesData.from_arrays(rng.normal(size=(4, 50, 1)))
    >>> table, _ = feature_tables(real, real, catch22=False)
    >>> table.values.shape, table.names[:2]
    ((4, 18), ['length (log10 steps)', 'feature_0: level (log10 of median |x|)'])
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np

from dgan.metrics.data import SeriesData
from dgan.metrics.distances import factorize_pair
from dgan.spectrum import dominant_frequencies

_MAX_CATEGORIES = 20
"""Discrete variables contribute at most this many categories (the most common in the real
data); the rest are pooled."""
_CHUNK = 4_000_000
"""Series are processed in groups of at most this many padded values (bounded memory)."""


@dataclass(frozen=True)
class FeatureTable:
    """One row of features per series: ``values`` ``(N, K)`` (NaN where a feature is undefined,
    e.g. the period of a constant series) and a readable name per column."""

    names: list[str]
    values: np.ndarray

    def without(self, prefix: str) -> FeatureTable:
        """The table without the columns whose name starts with ``prefix``.

        Example:
            >>> t = FeatureTable(["a: x", "b: y"], np.zeros((1, 2)))
            >>> t.without("a: ").names
            ['b: y']
        """
        keep = [i for i, n in enumerate(self.names) if not n.startswith(prefix)]
        return FeatureTable([self.names[i] for i in keep], self.values[:, keep])


def catch22_available() -> bool:
    """Whether the catch22 features can be computed (``pycatch22`` is installed).

    Example:
        >>> isinstance(catch22_available(), bool)
        True
    """
    return importlib.util.find_spec("pycatch22") is not None


def feature_tables(
    real: SeriesData, synthetic: SeriesData, *, catch22: bool | None = None
) -> tuple[FeatureTable, FeatureTable]:
    """The features of every real and every synthetic series, computed alike.

    ``catch22``: add the catch22 features (None: when ``pycatch22`` is installed). Columns
    are named ``"<variable>: <what>"``; attributes as ``"attribute <name>: <category>"``.
    """
    if catch22 is None:
        catch22 = catch22_available()
    columns: tuple[list, list] = ([], [])
    names: list[str] = ["length (log10 steps)"]
    for k, side in enumerate((real, synthetic)):
        columns[k].append(np.log10(side.lengths.astype(np.float64))[:, None])
    for name, discrete in zip(real.feature_names, real.feature_discrete, strict=True):
        sides = (real.feature_column(name), synthetic.feature_column(name))
        if discrete:
            block_names, blocks = _discrete_blocks(name, *sides)
        else:
            floor = _log_floor(np.concatenate(sides[0]))
            blocks = tuple(_continuous_block(series, floor) for series in sides)
            block_names = [f"{name}: {what}" for what in CONTINUOUS_FEATURES]
            if catch22:
                blocks = tuple(
                    np.hstack([b, _catch22_block(s)]) for b, s in zip(blocks, sides, strict=True)
                )
                block_names += [f"{name}: catch22 {n}" for n in _catch22_names()]
        names += block_names
        for k in range(2):
            columns[k].append(blocks[k])
    for name, discrete in zip(real.attribute_names, real.attribute_discrete, strict=True):
        real_values, synth_values = real.attribute_column(name), synthetic.attribute_column(name)
        if discrete:
            block_names, blocks = _one_hot(f"attribute {name}", real_values, synth_values)
        else:
            block_names = [f"attribute {name}"]
            blocks = (real_values[:, None], synth_values[:, None])
        names += block_names
        for k in range(2):
            columns[k].append(np.asarray(blocks[k], dtype=np.float64))
    return tuple(FeatureTable(list(names), np.hstack(c)) for c in columns)  # type: ignore[return-value]


CONTINUOUS_FEATURES = [
    "level (log10 of median |x|)",
    "peak (log10 of max |x|)",
    "spread (log10 of std)",
    "sign balance (mean x / mean |x|)",
    "low tail ((5% quantile - median) / std)",
    "high tail ((95% quantile - median) / std)",
    "flat start (share of steps before the first move)",
    "near zero (share of steps within 1% of max |x|)",
    "largest jump (share of the range)",
    "largest jump (log10)",
    "roughness (mean |step change| / std)",
    "lag-1 autocorrelation",
    "dominant period (log10 steps)",
    "period strength (share of power)",
    "tail / peak (mean |x| of the last quarter / max |x|)",
    "trend (correlation with time)",
    "start - end ((first tenth - last tenth) / std)",
]
"""What `feature_tables` measures of each continuous feature, in column order."""


def _log_floor(pooled: np.ndarray) -> float:
    """The log scale's floor: a tenth of the smallest typical non-zero magnitude, so zeros
    and constants stay finite without flattening the smallest real values."""
    magnitudes = np.abs(pooled[np.isfinite(pooled)])
    nonzero = magnitudes[magnitudes > 0]
    return float(0.1 * np.quantile(nonzero, 0.01)) if nonzero.size else 1.0


def _continuous_block(series: list[np.ndarray], floor: float) -> np.ndarray:
    """`CONTINUOUS_FEATURES` of each series, ``(N, 17)``, vectorised over groups of series.

    A group holds series whose lengths round up to the same power of two, padded to it, so
    a series' features (its periodogram's frequency grid above all) depend on it alone,
    never on which other series share its table.
    """
    lengths = np.array([len(x) for x in series], dtype=np.int64)
    width = 2 ** np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    out = np.zeros((len(series), len(CONTINUOUS_FEATURES)))
    for size in np.unique(width):
        members = np.flatnonzero(width == size)
        rows = max(1, _CHUNK // int(size))
        for start in range(0, len(members), rows):
            chosen = members[start : start + rows]
            out[chosen] = _continuous_rows(
                [series[i] for i in chosen], lengths[chosen], int(size), floor
            )
    return out


def _continuous_rows(series, lengths: np.ndarray, longest: int, floor: float) -> np.ndarray:
    n = len(series)
    x = np.full((n, longest), np.nan)
    for row, values in enumerate(series):  # the one per-series step: placing each row
        x[row, : len(values)] = values
    steps = np.arange(longest)[None, :]
    inside = steps < lengths[:, None]  # (N, T)
    magnitude = np.abs(x)
    peak = np.nanmax(magnitude, axis=1)
    # Shape features are computed on each series over its own peak (at most 1), so values
    # near the float limit give numbers, not overflows; scales come back from ``peak``.
    unit = x / np.where(peak > 0, peak, 1.0)[:, None]
    median = np.nanmedian(x, axis=1)
    std = np.nanstd(unit, axis=1) * peak
    low, high = np.nanquantile(x, [0.05, 0.95], axis=1)
    spread = std + floor
    value_range = (np.nanmax(unit, axis=1) - np.nanmin(unit, axis=1)) * peak
    moved = (
        np.abs(unit - unit[:, :1]) > 0.05 * (value_range / np.where(peak > 0, peak, 1.0))[:, None]
    ) & inside
    first_move = np.where(moved.any(axis=1), moved.argmax(axis=1), lengths)
    change = np.abs(np.diff(unit, axis=1)) * peak[:, None]  # NaN beyond each series' end
    if longest > 1:
        largest_change = np.nanmax(np.where(np.isnan(change), -np.inf, change), axis=1)
        largest_change = np.where(lengths > 1, largest_change, 0.0)
    else:  # series of one step: no change at all
        largest_change = np.zeros(n)
    quarter = steps >= (lengths[:, None] - np.maximum(lengths[:, None] // 4, 1))
    tenth = np.maximum(lengths // 10, 1)[:, None]
    head = np.nanmean(np.where(steps < tenth, x, np.nan), axis=1)
    tail = np.nanmean(np.where(inside & (steps >= lengths[:, None] - tenth), x, np.nan), axis=1)
    centred = np.where(inside, unit - np.nanmean(unit, axis=1)[:, None], 0.0)
    frequency, strength = dominant_frequencies(centred, lengths)
    period = 1.0 / frequency
    with np.errstate(invalid="ignore", divide="ignore"):
        features = [
            np.log10(np.nanmedian(magnitude, axis=1) + floor),
            np.log10(peak + floor),
            np.log10(spread),
            np.nanmean(x, axis=1) / (np.nanmean(magnitude, axis=1) + floor),
            (low - median) / spread,
            (high - median) / spread,
            first_move / lengths,
            np.nanmean(np.where(inside, magnitude <= 0.01 * peak[:, None], np.nan), axis=1),
            largest_change / (value_range + floor),
            np.log10(largest_change + floor),
            np.nanmean(change, axis=1) / spread if longest > 1 else np.zeros(n),
            _lag_one(centred, lengths),
            np.log10(period),
            strength,
            np.nanmean(np.where(quarter & inside, magnitude, np.nan), axis=1) / (peak + floor),
            _trend(centred, lengths),
            (head - tail) / spread,
        ]
    return np.column_stack(features)


def _lag_one(centred: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Lag-1 autocorrelation of each zero-padded, centred series (NaN for constant ones)."""
    energy = (centred**2).sum(axis=1)
    lagged = (centred[:, 1:] * centred[:, :-1]).sum(axis=1)
    return np.where((energy > 0) & (lengths > 1), lagged / np.where(energy > 0, energy, 1), np.nan)


def _trend(centred: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Correlation of each series with time (-1..1; NaN for constant ones)."""
    time = np.arange(centred.shape[1], dtype=np.float64)[None, :]
    time = np.where(time < lengths[:, None], time - (lengths[:, None] - 1) / 2, 0.0)
    numerator = (centred * time).sum(axis=1)
    denominator = np.sqrt((centred**2).sum(axis=1) * (time**2).sum(axis=1))
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def _catch22_names() -> list[str]:
    import pycatch22

    return list(pycatch22.catch22_all([0.0, 1.0, 0.0, 1.0] * 4)["names"])


def _catch22_block(series: list[np.ndarray]) -> np.ndarray:
    """catch22's 22 features of each series (NaN where catch22 has no value, e.g. for
    series shorter than 10 steps or constant ones)."""
    import pycatch22

    width = len(_catch22_names())
    out = np.full((len(series), width), np.nan)
    for row, values in enumerate(series):
        values = np.asarray(values, dtype=np.float64)
        if values.size >= 10 and np.ptp(values) > 0:
            out[row] = pycatch22.catch22_all(values.tolist())["values"]
    out[~np.isfinite(out)] = np.nan
    return out


def _discrete_blocks(
    name: str, real_series: list[np.ndarray], synth_series: list[np.ndarray]
) -> tuple[list[str], tuple[np.ndarray, np.ndarray]]:
    """Each category's share of a series' steps, and the share of steps where it switches."""
    real_codes, synth_codes, labels = factorize_pair(
        np.concatenate(real_series), np.concatenate(synth_series)
    )
    kept = _most_common(real_codes, len(labels))
    names = [f"{name}: share of {labels[c]!s}" for c in kept] + [f"{name}: switches per step"]
    blocks = []
    for codes, series in ((real_codes, real_series), (synth_codes, synth_series)):
        lengths = np.array([len(s) for s in series])
        owner = np.repeat(np.arange(len(series)), lengths)
        shares = np.zeros((len(series), len(kept)))
        for column, code in enumerate(kept):
            shares[:, column] = np.bincount(owner, codes == code, len(series)) / lengths
        same_series = owner[1:] == owner[:-1]
        switched = np.bincount(owner[1:], (codes[1:] != codes[:-1]) & same_series, len(series))
        blocks.append(np.column_stack([shares, switched / np.maximum(lengths - 1, 1)]))
    return names, (blocks[0], blocks[1])


def _one_hot(
    name: str, real_values: np.ndarray, synth_values: np.ndarray
) -> tuple[list[str], tuple[np.ndarray, np.ndarray]]:
    real_codes, synth_codes, labels = factorize_pair(real_values, synth_values)
    kept = _most_common(real_codes, len(labels))
    names = [f"{name}: {labels[c]!s}" for c in kept]
    blocks = tuple((codes[:, None] == kept[None, :]).astype(np.float64)
                   for codes in (real_codes, synth_codes))  # fmt: skip
    return names, blocks  # type: ignore[return-value]


def _most_common(codes: np.ndarray, n_labels: int) -> np.ndarray:
    counts = np.bincount(codes, minlength=n_labels)
    return np.argsort(-counts, kind="stable")[:_MAX_CATEGORIES]
