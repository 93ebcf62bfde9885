"""The plan's line of the settings a user gave that its other lines do not show.

A lever set in a config file (``change_critic = true``) or in Python changed the run
without a word in the plan, so a benchmark's recorded plan could not tell it apart from
the defaults' run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dgan.config import DGANConfig
from dgan.config.fields import field_default

SHOWN_ELSEWHERE = frozenset(
    {
        # the lengths and budget lines
        "max_sequence_len",
        "sample_len",
        "batch_size",
        "epochs",
        "training_steps",
        "training_minutes",
        # the settings, precision, device and privacy lines
        "large_data",
        "precision",
        "mixed_precision_training",
        "cuda",
        "dp_enabled",
        "dp_eps",
        "dp_epsilon",
        "dp_delta",
        "public_values",
        # how the run is kept and told, not what it trains
        "seed",
        "log_every",
        "checkpoint_dir",
        "checkpoint_every",
        "checkpoint_every_minutes",
        "checkpoint_keep",
    }
)
"""Fields the plan shows on other lines, or that do not change what is trained."""


def your_settings(asked: DGANConfig, said: Iterable[str] = ()) -> str:
    """The fields of ``asked`` that were set (`DGANConfig.fields_set`) to something other
    than their default, and that neither `SHOWN_ELSEWHERE` nor ``said`` (the names another
    line already gives) covers, as ``name value`` words; "" when there are none.

    Example:
        >>> config = DGANConfig(max_sequence_len=20, sample_len=5, change_critic=True,
        ...                     feature_num_units=64, match_texture="auto", seed=3)
        >>> your_settings(config)
        'change_critic true, feature_num_units 64'
        >>> your_settings(config, said=["feature_num_units"])
        'change_critic true'
    """
    skip = SHOWN_ELSEWHERE | set(said)
    names = sorted(
        name
        for name in asked.fields_set
        if name not in skip and getattr(asked, name) != field_default(name)
    )
    return ", ".join(f"{name} {_word(getattr(asked, name))}" for name in names)


def _word(value: Any) -> str:
    """A value as a config file writes it: true / false, numbers and names plainly."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(getattr(value, "value", value))  # an enum by its value
