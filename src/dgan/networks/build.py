"""The networks of a model, built from its config and fitted encoder."""

from __future__ import annotations

from torch import nn

from dgan.encoding.encoder import SOFTMAX
from dgan.networks.critics import Critic, EnvelopeCritic, TemporalCritic
from dgan.networks.generator import Generator


def build_networks(config, encoder) -> tuple[Generator, Critic, Critic | None]:
    """The generator, critic and (if used) attribute critic for a fitted `DataEncoder`.

    Initialisation draws from torch's global RNG: seed it (under ``fork_rng``) first for
    reproducible weights. The critic sees attributes, additional attributes and the whole
    flattened series; the attribute critic only the (additional) attributes.

    Example:
        >>> import numpy as np
        >>> from dgan import DGANConfig, OutputType
        >>> from dgan.encoding.encoder import DataEncoder
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> encoder = DataEncoder.fit(config, [np.zeros((4, 1))] * 2, [OutputType.CONTINUOUS],
        ...                           None, None)
        >>> generator, critic, attribute_critic = build_networks(config, encoder)
        >>> attribute_critic is not None  # example scaling makes additional attributes
        True
    """
    c, enc = config, encoder
    generator = Generator(
        attribute_slices=enc.attribute_slices,
        additional_slices=enc.additional_slices,
        feature_slices=enc.feature_slices,
        max_sequence_len=c.max_sequence_len,
        sample_len=c.sample_len,
        attribute_noise_dim=c.attribute_noise_dim,
        feature_noise_dim=c.feature_noise_dim,
        attribute_num_layers=c.attribute_num_layers,
        attribute_num_units=c.attribute_num_units,
        feature_num_layers=c.feature_num_layers,
        feature_num_units=c.feature_num_units,
        forget_bias=c.forget_bias,
        generation_flag_column=enc.generation_flag_column,
        feature_feedback=c.feature_feedback,
        attribute_state=c.attribute_state,
        length_column=enc.length_column,
        bridge_seams=c.bridge_seams,
        bridge_width=c.bridge_width,
        carried_columns=[enc.feature_slices[i].start for i in enc.period_features],
        frequency_columns=enc.period_columns,
        carrier_harmonics=enc.period_harmonics,
        carrier_switch_ons=enc.period_switch_ons,
        carrier_waveform=enc.period_waveform,
        floor_columns=enc.floor_columns,
    )
    attribute_dim = enc.attribute_dim + enc.additional_dim
    critic_dim = attribute_dim + c.max_sequence_len * enc.feature_dim
    if c.spectral_critic:
        critic_dim += (c.max_sequence_len // 2 + 1) * enc.feature_dim
    if c.change_critic:
        critic_dim += (c.max_sequence_len - 1) * enc.feature_dim
    projected = [  # the discrete attributes' one-hot columns come first in the input
        i for s in enc.attribute_slices or [] if s.activation == SOFTMAX
        for i in range(s.start, s.start + s.width)
    ]  # fmt: skip
    critic = Critic(
        critic_dim,
        c.discriminator_num_layers,
        c.discriminator_num_units,
        c.spectral_critic,
        projected if c.projection_critic else None,
        c.change_critic,
    )
    attribute_critic = None
    if c.use_attribute_discriminator and attribute_dim > 0:
        attribute_critic = Critic(
            attribute_dim, c.discriminator_num_layers, c.discriminator_num_units
        )
    return generator, critic, attribute_critic


def build_temporal_critic(config, encoder) -> TemporalCritic:
    """The optional temporal critic (``config.temporal_critic``) for a fitted encoder."""
    attribute_dim = encoder.attribute_dim + encoder.additional_dim
    return TemporalCritic(encoder.feature_dim, attribute_dim, config.temporal_critic_num_units)


def envelope_window(sample_len: int) -> int:
    """Steps per window of the envelope critic: half an LSTM step's values (two windows a
    step, so both a swell from one step to the next and a transient within one show), at
    least 2 (one value has no spread).

    Example:
        >>> envelope_window(100), envelope_window(3)
        (50, 2)
    """
    return max(2, sample_len // 2)


def wants_envelope_critic(config, encoder) -> bool:
    """Whether a model trains the envelope critic: ``envelope_critic`` True, or "auto" where
    the encoder carries a feature (``period_carrier``)."""
    if config.envelope_critic == "auto":
        return bool(encoder.period_features)
    return bool(config.envelope_critic)


def build_envelope_critic(config, encoder) -> EnvelopeCritic:
    """The optional envelope critic (``config.envelope_critic``) for a fitted encoder: the
    main critic's depth and width, windows of `envelope_window` steps."""
    return EnvelopeCritic(
        encoder.attribute_dim + encoder.additional_dim,
        encoder.feature_dim,
        config.max_sequence_len,
        envelope_window(config.sample_len),
        config.discriminator_num_layers,
        config.discriminator_num_units,
    )


def build_model_networks(config, encoder) -> dict[str, nn.Module | None]:
    """Every network a model of ``config`` trains, by name, for a fitted encoder: the
    generator, the critic and the attribute, temporal and envelope critics (None where
    the config has none), built in that order (the order seeded weights depend on).

    Example:
        >>> import numpy as np
        >>> from dgan import DGANConfig, OutputType
        >>> from dgan.encoding.encoder import DataEncoder
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> encoder = DataEncoder.fit(config, [np.zeros((4, 1))] * 2, [OutputType.CONTINUOUS],
        ...                           None, None)
        >>> networks = build_model_networks(config, encoder)
        >>> [name for name, net in networks.items() if net is not None]
        ['generator', 'critic', 'attribute_critic']
        >>> list(networks)[3:]  # none at these settings
        ['temporal_critic', 'envelope_critic']
    """
    generator, critic, attribute_critic = build_networks(config, encoder)
    temporal = build_temporal_critic(config, encoder) if config.temporal_critic else None
    envelope = (
        build_envelope_critic(config, encoder) if wants_envelope_critic(config, encoder) else None
    )
    return {
        "generator": generator,
        "critic": critic,
        "attribute_critic": attribute_critic,
        "temporal_critic": temporal,
        "envelope_critic": envelope,
    }
