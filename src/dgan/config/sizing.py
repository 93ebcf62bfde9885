"""Settings that follow the training data's size (``DGANConfig.large_data``).

A pure rule of the data's size, separate from the config's fields: `DGANConfig` applies it
(`DGANConfig.resolved_for`) when training first sees the data. Measurements behind it are
in docs/quality.md.

Example:
    >>> large_data_applies(5000), large_data_applies(48)
    (True, False)
"""

from __future__ import annotations

from typing import Any

LARGE_DATA_MIN_SERIES = 1000
"""From this many training series on, ``large_data="auto"`` trains with the large-data
settings (docs/quality.md, "The defaults choose their settings from the data's size")."""
LARGE_DATA_SETTINGS: dict[str, Any] = {
    "batch_size": 128,
    "generator_learning_rate": 1e-4,
    "discriminator_learning_rate": 1e-4,
    "attribute_discriminator_learning_rate": 1e-4,
    "generator_ema_decay": 0.999,
    "feature_feedback": True,
}
"""The large-data settings: more, smaller steps, sampling from a weight average, feature
feedback."""


def large_data_applies(n_series: int) -> bool:
    """Whether ``large_data="auto"`` picks the large-data settings for ``n_series`` series."""
    return n_series >= LARGE_DATA_MIN_SERIES
