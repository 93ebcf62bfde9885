"""Helpers shared by the metric modules: JSON-safe numbers, skipped results, units."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dgan.errors import ParameterError


def _real_scale(values: np.ndarray) -> float:
    """Standard deviation used as the unit for a continuous variable (1 if constant)."""
    std = float(np.std(values))
    return std if std > 0 else 1.0


def _number(value: float | np.floating | None) -> float | None:
    """A plain float for JSON, or None for a missing or undefined value."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return _number(np.mean(present)) if present else None


def _skipped(reason: str, better: str = "lower") -> dict[str, Any]:
    return {"score": None, "better": better, "reason": reason}


def _check_count(value: Any, name: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}.")
