"""Tiny, fast DGAN settings shared by the unit tests."""

from __future__ import annotations

from dgan import DGANConfig

# Networks small enough that a training step takes milliseconds on one CPU thread.
TINY_NETWORKS = dict(
    attribute_num_units=16,
    feature_num_units=16,
    discriminator_num_units=16,
    discriminator_num_layers=2,
)


def tiny_config(**overrides) -> DGANConfig:
    """A seeded, one-epoch CPU config with tiny networks and gretel's settings at any size
    (``large_data=False``: the tests that use it test other things); ``overrides`` win.

    Example:
        >>> tiny_config(epochs=3).epochs, tiny_config().feature_num_units
        (3, 16)
    """
    base = dict(
        max_sequence_len=6,
        sample_len=3,
        epochs=1,
        batch_size=8,
        cuda=False,
        seed=0,
        large_data=False,
    )
    if "training_steps" in overrides:  # the length in steps: no epochs beside it
        del base["epochs"]
    return DGANConfig(**{**base, **TINY_NETWORKS, **overrides})
