"""Example scaling's per-series arithmetic (DoppelGANger's "additional attributes").

Each training series' continuous feature is rescaled to the full range and its midpoint
and half-range become generated attributes (`DataEncoder`); `series_ranges` measures
them, `to_series_range` rescales each series to them, `fill_ranges` stretches generated
series over their range when decoding and `fills_range` says for which features.
"""

from __future__ import annotations

import numpy as np

from dgan.series import SeriesRows


def fills_range(setting: bool | str, log_scaled: bool) -> bool:
    """Whether a continuous feature's generated series are stretched over their range
    (`fill_series_range`): always for True, never for False, for "auto" where the feature
    is on a log scale, where a peak short of the top by a tenth of the range comes out at
    half the height (on linear features the stretch cost quality: docs/quality.md).

    Example:
        >>> [fills_range("auto", True), fills_range("auto", False), fills_range(True, False)]
        [True, False, True]
    """
    return setting is True or (setting == "auto" and log_scaled)


def fill_ranges(unit: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(N, T) generated values in [0, 1], each series stretched over [0, 1] within its
    length: every training series spans exactly its own range there (example scaling), and
    the generator's sigmoid never quite reaches 0 or 1, which shrinks every amplitude (on
    a log scale, a peak at 0.9 of the range is half the real peak). A flat series stays
    where it is.

    Example:
        >>> fill_ranges(np.array([[0.2, 0.5, 0.8, 0.0]]), np.array([3])).round(6).tolist()
        [[0.0, 0.5, 1.0, 0.0]]
    """
    alive = np.arange(unit.shape[1]) < lengths[:, None]
    low = np.where(alive, unit, np.inf).min(axis=1, keepdims=True)
    span = np.where(alive, unit, -np.inf).max(axis=1, keepdims=True) - low
    flat = span <= 1e-6
    filled = np.clip((unit - low) / np.where(flat, 1.0, span), 0.0, 1.0)
    return np.where(flat | ~alive, unit, filled)


def series_ranges(part: SeriesRows, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, C) midpoints and half-ranges of each series of ``part``, given its ``z`` (C, R)."""
    lo = np.minimum.reduceat(z, part.starts, axis=1).T  # no series is empty
    hi = np.maximum.reduceat(z, part.starts, axis=1).T
    return (hi + lo) / 2.0, (hi - lo) / 2.0


def to_series_range(part: SeriesRows, z: np.ndarray, mid: np.ndarray, half: np.ndarray):
    """(C, R) each series' globally scaled values ``z`` (C, R) rescaled to [0, 1] over its
    own range (``mid`` +/- ``half``, (N, C)); a constant series sits at 0.5.

    Example:
        >>> part = SeriesRows(np.zeros((5, 1)), np.array([3, 2]))
        >>> z = np.array([[0.25, 0.5, 0.75, 0.7, 0.7]])
        >>> mid, half = series_ranges(part, z)
        >>> to_series_range(part, z, mid, half).round(6).tolist()
        [[0.0, 0.5, 1.0, 0.5, 0.5]]
    """
    # (C, N_chunk), contiguous: repeating a transposed array is slow
    lo, span = np.ascontiguousarray((mid - half).T), np.ascontiguousarray((2.0 * half).T)
    flat = ~(span > 0)
    # Each series' numbers repeated over its steps: flat (C, R) arrays are faster to
    # work on than (C, N, T) broadcasts over short steps.
    unit = z - part.per_row(lo, axis=1)
    unit /= part.per_row(np.where(flat, 1.0, span), axis=1)
    if flat.any():  # a constant series has no range: put it mid-range
        unit[part.per_row(flat, axis=1)] = 0.5
    return unit
