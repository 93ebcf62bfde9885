"""Configuration: `DGANConfig` (`fields`: gretel's fields and defaults, then dgan's, each
declared with its check from `checks`), the enums (`enums`) and the settings that follow
the data's size (`sizing`).

Example:
    >>> from dgan.config import DGANConfig
    >>> DGANConfig(max_sequence_len=20, sample_len=5).batch_size
    1024
"""

from dgan.config.checks import (
    FP16_MAX,
    MAX_INIT_SCALE,
    MAX_LAYERS,
    MAX_ROUNDS,
    MAX_SEED,
    short_repr,
)
from dgan.config.enums import DfStyle, Normalization, OutputType
from dgan.config.fields import DGANConfig
from dgan.config.sizing import LARGE_DATA_SETTINGS, size_settings

__all__ = [
    "FP16_MAX",
    "LARGE_DATA_SETTINGS",
    "MAX_INIT_SCALE",
    "MAX_LAYERS",
    "MAX_ROUNDS",
    "MAX_SEED",
    "DGANConfig",
    "DfStyle",
    "Normalization",
    "OutputType",
    "short_repr",
    "size_settings",
]
