"""The enums users pass to `DGANConfig` and the training methods (gretel's names)."""

from __future__ import annotations

from enum import Enum


class OutputType(Enum):
    """Type of one variable (attribute or feature): decides its encoding and activation."""

    DISCRETE = 0
    CONTINUOUS = 1


class Normalization(Enum):
    """Range continuous variables are scaled to: [0, 1] (sigmoid) or [-1, 1] (tanh)."""

    ZERO_ONE = 0
    MINUSONE_ONE = 1


class DfStyle(str, Enum):
    """Layout of a training DataFrame: one row per example (WIDE) or per time step (LONG)."""

    WIDE = "wide"
    LONG = "long"
