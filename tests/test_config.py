import dataclasses

import pytest

from dgan import DGAN, DGANConfig, Normalization
from dgan.errors import ParameterError

# gretel-synthetics' DGANConfig defaults, field by field: users switch by changing an import.
GRETEL_DEFAULTS = {
    "attribute_noise_dim": 10,
    "feature_noise_dim": 10,
    "attribute_num_layers": 3,
    "attribute_num_units": 100,
    "feature_num_layers": 1,
    "feature_num_units": 100,
    "use_attribute_discriminator": True,
    "normalization": Normalization.ZERO_ONE,
    "apply_feature_scaling": True,
    "apply_example_scaling": True,
    "binary_encoder_cutoff": 150,
    "forget_bias": False,
    "gradient_penalty_coef": 10.0,
    "attribute_gradient_penalty_coef": 10.0,
    "attribute_loss_coef": 1.0,
    "generator_learning_rate": 0.001,
    "generator_beta1": 0.5,
    "discriminator_learning_rate": 0.001,
    "discriminator_beta1": 0.5,
    "attribute_discriminator_learning_rate": 0.001,
    "attribute_discriminator_beta1": 0.5,
    "batch_size": 1024,
    "epochs": 400,
    "discriminator_rounds": 1,
    "generator_rounds": 1,
    "cuda": True,
    "mixed_precision_training": False,
}


def test_defaults_match_gretel():
    config = DGANConfig(max_sequence_len=20, sample_len=5)
    for name, value in GRETEL_DEFAULTS.items():
        assert getattr(config, name) == value, name
    assert (config.discriminator_num_layers, config.discriminator_num_units) == (5, 200)


def test_sample_len_must_divide_and_message_names_the_fix():
    with pytest.raises(ParameterError, match=r"not divisible by sample_len=7.*\[1, 2, 4, 5"):
        DGANConfig(max_sequence_len=20, sample_len=7)


def test_all_problems_reported_at_once():
    with pytest.raises(ParameterError) as info:
        DGANConfig(max_sequence_len=20, sample_len=5, batch_size=0, generator_beta1=1.5)
    message = str(info.value)
    assert "2 problems" in message and "batch_size" in message and "generator_beta1" in message


def test_dp_is_rejected_clearly():
    with pytest.raises(ParameterError, match="dp_enabled=False"):
        DGANConfig(max_sequence_len=4, sample_len=2, dp_enabled=True)


def test_json_round_trip_and_unknown_fields():
    config = DGANConfig(max_sequence_len=8, sample_len=4, normalization=Normalization.MINUSONE_ONE)
    assert DGANConfig.from_json_dict(config.to_json_dict()) == config
    assert DGANConfig(**config.to_dict()) == config
    with pytest.raises(ParameterError, match="batchsize"):
        DGANConfig.from_json_dict({**config.to_json_dict(), "batchsize": 3})


def test_model_never_mutates_the_users_config():
    config = DGANConfig(max_sequence_len=8, sample_len=4)
    before = dataclasses.asdict(config)
    model = DGAN(config)
    model.config.epochs = 1
    assert dataclasses.asdict(config) == before
