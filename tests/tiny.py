"""Tiny, fast DGAN settings shared by the unit tests."""

from __future__ import annotations

import numpy as np

from dgan import DGAN, DGANConfig, OutputType

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


def value_mapped_model(features: np.ndarray, sample_len: int = 20) -> DGAN:
    """A tiny model trained one epoch on ``features`` (N, T, 1), one continuous feature,
    with the value map on and the texture off (its calibration would take most of the
    time): what the value map's model-file tests save and load.

    Example:
        >>> lamps = np.where(np.arange(40) < 20, 0.3, 15.0) * np.ones((8, 40))
        >>> value_mapped_model(lamps[:, :, None]).encoder.marginals is not None
        True
    """
    config = tiny_config(
        max_sequence_len=features.shape[1],
        sample_len=sample_len,
        match_marginals=True,
        match_texture=False,
    )
    model = DGAN(config)
    model.train_numpy(features, [OutputType.CONTINUOUS], progress_bar=False)
    return model
