"""Example scaling's per-series arithmetic (DoppelGANger's "additional attributes").

Each training series' continuous feature is rescaled to the full range and its midpoint
and half-range become generated attributes (`DataEncoder`); `series_ranges` measures
them, `to_series_range` rescales each series to them, `from_series_range` back, and
`fill_ranges` stretches generated series over their range when decoding and `fills_range`
says for which features;
`range_encoders` encode the midpoints and half-ranges, the half-ranges on a log scale
where `logs_ranges` says so.
"""

from __future__ import annotations

import numpy as np

from dgan.config import DGANConfig
from dgan.config.sizing import LONG_SERIES
from dgan.encoding.log_scale import log_floor
from dgan.encoding.variables import ContinuousEncoder
from dgan.series import SeriesRows

SQUEEZED = 0.1
"""`logs_ranges`' "auto": a median half-range below this share of the largest is squeezed
(measured on the long benchmark sets: docs/quality.md, "A wider bridge")."""
RANGE_FLOOR_SHARE = 0.1
"""A logged half-range's floor: this share of the 5% quantile of the non-zero half-ranges.
Near its floor the signed log is nearly linear, so a floor at the quantile itself would
leave the bulk of the ranges as squeezed as before; a tenth of it spaces them by their
ratios."""


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


def logs_ranges(setting: bool | str, max_sequence_len: int, half: np.ndarray) -> bool:
    """Whether a feature's series half-ranges ``half`` (N,) are learned on a log scale
    (`log_series_ranges`): always for True, never for False, for "auto" where series are
    `LONG_SERIES` steps or longer and a linear encoding squeezes most ranges together:
    the median non-zero half-range is below `SQUEEZED` of the largest, so half the series
    share the bottom tenth of the generated attribute's range. The TimeGAN protocol's
    short windows keep gretel's linear encoding.

    Example:
        >>> wide = np.array([1.0, 1.2, 1.5, 2.0, 50.0])  # one recording far wider
        >>> logs_ranges("auto", 2000, wide), logs_ranges("auto", 24, wide)
        (True, False)
        >>> logs_ranges("auto", 2000, np.array([1.0, 1.2, 1.5, 2.0, 5.0]))
        False
    """
    if setting != "auto":
        return setting is True
    nonzero = half[half > 0]
    return (
        max_sequence_len >= LONG_SERIES
        and nonzero.size > 1
        and bool(np.median(nonzero) < SQUEEZED * nonzero.max())
    )


def range_encoders(
    config: DGANConfig, names: list[str], mid: np.ndarray, half: np.ndarray
) -> list[ContinuousEncoder]:
    """The encoders of the example-scaling attributes, fitted to each continuous feature's
    (``names``) series midpoints and half-ranges ``mid``, ``half`` (N, C) in the scaled
    space: midpoints linear, half-ranges too or, where `logs_ranges` says, on the signed log
    scale with a floor of `RANGE_FLOOR_SHARE` of the 5% quantile of the non-zero ones. On
    a linear scale a few series with wide ranges squeeze every other series' range into a
    sliver of the generated attribute's, which the critic hardly sees.

    Example:
        >>> from dgan import DGANConfig
        >>> half = np.array([[0.01], [0.012], [0.015], [0.02], [0.5]])  # one outlying range
        >>> for length in (24, 2000):  # linear, then on a log scale
        ...     config = DGANConfig(max_sequence_len=length, sample_len=4 if length == 24 else 200,
        ...                         log_series_ranges="auto")
        ...     encoders = range_encoders(config, ["x"], np.zeros_like(half), half)
        ...     print(encoders[1].name, round(float(encoders[1].transform(half[:, 0])[3]), 3))
        x half-range 0.02
        x half-range 0.169
    """
    encoders = []
    for j, name in enumerate(names):
        logged = logs_ranges(config.log_series_ranges, config.max_sequence_len, half[:, j])
        for part, values, log in (
            ("midpoint", mid[:, j], False),
            ("half-range", half[:, j], logged),
        ):
            encoder = ContinuousEncoder(
                config.normalization, True, f"{name} {part}", log_scale=False
            )
            encoders.append(encoder.fit(values))
            floor = log_floor(values, always=True) if log else None
            if floor is not None:
                encoder.log_floor = floor * RANGE_FLOOR_SHARE
    return encoders


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


def from_series_range(
    column: np.ndarray,
    mid: np.ndarray,
    half: np.ndarray,
    zero_one: bool,
    fill: bool,
    lengths: np.ndarray,
) -> np.ndarray:
    """(N, T) one feature's generated values ``column`` (in the normalization's range:
    [0, 1] where ``zero_one``, else [-1, 1]) back in the globally scaled space, over each
    series' generated midpoint ``mid`` and half-range ``half`` (N,); stretched over that
    range first where ``fill`` (`fill_ranges`).

    Example:
        >>> column = np.array([[-1.0, 0.0, 1.0]])
        >>> from_series_range(column, np.array([0.5]), np.array([0.25]), False, False,
        ...                   np.array([3])).tolist()
        [[0.25, 0.5, 0.75]]
    """
    half = np.maximum(half, 0.0)  # a generated negative half-range means zero
    unit = column if zero_one else (column + 1) / 2
    if fill:
        unit = fill_ranges(unit, lengths)
    # Back to the globally scaled space, which spans the normalization range by
    # construction: a generated midpoint +/- half-range may overshoot it (e.g. negative
    # rainfall), so clip there. The feature encoder does the rest.
    z = (mid - half)[:, None] + unit * (2.0 * half)[:, None]
    return np.clip(z, 0.0 if zero_one else -1.0, 1.0)


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
