"""The signed log scale of continuous variables whose values span orders of magnitude.

`scale_floor` decides, as `ContinuousEncoder.fit` and the plan do, whether a variable is
scaled on the signed log scale `to_log` (and with which floor) or linearly: "auto" takes
the log scale where the typical non-zero magnitudes span more than `LOG_DECADES` powers
of ten (`log_floor`), except for waves around 0 (`around_zero`), which the signed log
would square.
"""

from __future__ import annotations

import numpy as np

LOG_DECADES = 3.0
"""A continuous variable whose typical non-zero magnitudes (its 5% to 99% quantiles) span
more than this many powers of ten is scaled on a log scale (`log_floor`)."""


def log_floor(values: np.ndarray, always: bool = False) -> float | None:
    """The floor of the signed log scale `to_log` for ``values``: the 5% quantile of their
    non-zero magnitudes, when those span more than `LOG_DECADES` powers of ten up to their
    99% quantile (or ``always``); None: a linear scale suits them.

    Example:
        >>> log_floor(np.array([0.0, 0.02, 1.5, 40.0, 1000.0, 24000.0])) > 0
        True
        >>> log_floor(np.linspace(-1.0, 1.0, 50)) is None
        True
    """
    magnitudes = np.abs(np.asarray(values, dtype=np.float64))
    nonzero = magnitudes[(magnitudes > 0) & np.isfinite(magnitudes)]
    if nonzero.size < 2:
        return None
    low, high = np.quantile(nonzero, [0.05, 0.99])
    spans = high / 10**LOG_DECADES > low  # dividing: near the float maximum a product overflows
    return float(low) if always or spans else None


def to_log(values: np.ndarray, floor: float) -> np.ndarray:
    """The signed log scale: ``sign(x) * log10(1 + |x| / floor)``; 0 stays 0, values well
    above the floor are spaced by their orders of magnitude, and negatives mirror positives.

    Example:
        >>> to_log(np.array([-9.0, 0.0, 9.0, 99.0]), 1.0).tolist()
        [-1.0, 0.0, 1.0, 2.0]
    """
    values = np.asarray(values, dtype=np.float64)
    # As two logs: |x| / floor would overflow for a floor near the smallest float.
    return np.sign(values) * (np.log10(np.abs(values) + floor) - np.log10(floor))


def from_log(values: np.ndarray, floor: float) -> np.ndarray:
    """The inverse of `to_log`.

    Example:
        >>> from_log(np.array([-1.0, 0.0, 2.0]), 1.0).round(9).tolist()
        [-9.0, 0.0, 99.0]
    """
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float range: inf, as an overflow would give
        magnitude = np.exp(np.abs(values) * np.log(10.0) + np.log(floor)) - floor
    return np.sign(values) * magnitude


WAVE_BALANCE, MIN_WAVE_VALUES = 0.25, 10
"""`around_zero`: values are waves around 0 when at least this share of their non-zero
values is negative and at least this share positive; fewer non-zero values tell nothing."""


def around_zero(values: np.ndarray) -> bool:
    """Whether ``values`` swing both ways around 0 (`WAVE_BALANCE` or more of their non-zero
    values on each side), as an alternating current does: the signed log scale would
    flatten their peaks and steepen their zero crossings, squaring each wave
    (docs/quality.md, "The switch-on as an attribute").

    Example:
        >>> around_zero(100 * np.sin(np.arange(50.0))), around_zero(np.geomspace(0.01, 1e4, 50))
        (True, False)
    """
    values = np.asarray(values, dtype=np.float64)
    nonzero = values[(values != 0) & np.isfinite(values)]
    if nonzero.size < MIN_WAVE_VALUES:  # e.g. a private run's two public bounds
        return False
    negative = float((nonzero < 0).mean())
    return WAVE_BALANCE <= negative <= 1 - WAVE_BALANCE


def scale_floor(values: np.ndarray, log_scale: bool | str) -> float | None:
    """The floor of the signed log scale for a continuous variable's ``values`` under the
    ``log_scale`` setting, or None for a linear scale: True always (`log_floor`), False
    never, "auto" where they span orders of magnitude and are not waves around 0.

    Example:
        >>> loud = np.r_[0.01 * np.sin(np.arange(40.0)), 100 * np.sin(np.arange(40.0))]
        >>> scale_floor(loud, "auto") is None, scale_floor(loud, True) is None
        (True, False)
        >>> scale_floor(np.geomspace(0.01, 1e4, 50), "auto") > 0
        True
    """
    if log_scale is False or (log_scale == "auto" and around_zero(values)):
        return None
    return log_floor(values, always=log_scale is True)
