import dataclasses
import json

import numpy as np
import pytest

from dgan import DGAN, DGANConfig, Normalization
from dgan.config import MAX_SEED
from dgan.errors import ParameterError
from tiny import tiny_config

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


def test_every_field_declares_its_check():
    """A field added without a check would accept anything: each must declare one."""
    from dgan.config.checks import Check

    unchecked = [
        f.name
        for f in dataclasses.fields(DGANConfig)
        if not isinstance(f.metadata.get("check"), Check)
    ]
    assert unchecked == []


def test_each_fields_check_rejects_a_wrong_value_naming_the_field():
    """Every field's check fires on a value of the wrong kind (a list fits none of them)."""
    base = {"max_sequence_len": 4, "sample_len": 2}
    for f in dataclasses.fields(DGANConfig):
        with pytest.raises(ParameterError, match=f"^{f.name} must be"):
            DGANConfig(**{**base, f.name: ["wrong"]})


def test_sample_len_must_divide_and_message_names_the_fix():
    with pytest.raises(ParameterError, match=r"not divisible by sample_len=7.*\[1, 2, 4, 5"):
        DGANConfig(max_sequence_len=20, sample_len=7)


def test_all_problems_reported_at_once():
    with pytest.raises(ParameterError) as info:
        DGANConfig(max_sequence_len=20, sample_len=5, batch_size=0, generator_beta1=1.5)
    message = str(info.value)
    assert "2 problems" in message and "batch_size" in message and "generator_beta1" in message


def test_gretels_dp_fields_mean_dp_epsilon_and_conflicts_are_named():
    config = DGANConfig(max_sequence_len=4, sample_len=2, dp_enabled=True, dp_eps=2.0)
    assert config.dp_target_epsilon == 2.0
    assert DGANConfig(max_sequence_len=4, sample_len=2, dp_eps=2.0).dp_target_epsilon is None
    with pytest.raises(ParameterError, match="two epsilons"):
        DGANConfig(max_sequence_len=4, sample_len=2, dp_enabled=True, dp_eps=2.0, dp_epsilon=3.0)
    with pytest.raises(ParameterError, match="dp_secure_mode=False"):
        DGANConfig(max_sequence_len=4, sample_len=2, dp_secure_mode=True)


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


# ----- issue 10: validation that cannot hang, types that are checked -------------------


@pytest.mark.parametrize("length", [200_000_001, 2**61 - 1, 10**30 + 1])
def test_divisibility_message_is_short_however_long_the_series(length):
    # Listing every divisor took ~19 s and then MemoryError for 200_000_001; the hint
    # must be built with bounded work.
    with pytest.raises(ParameterError) as info:
        DGANConfig(max_sequence_len=length, sample_len=2)
    message = str(info.value)
    assert len(message) < 400
    assert "one of [1, " in message and f"raise max_sequence_len to {length + 1}" in message


def test_messages_stay_short_for_huge_values():
    with pytest.raises(ParameterError) as info:
        DGANConfig(max_sequence_len=4, sample_len=2, precision="x" * 10**6, seed=10**5000)
    message = str(info.value)
    assert len(message) < 1000
    assert "(1000000 characters)" in message and "an integer of 16610 bits" in message


@pytest.mark.parametrize(
    "name, value, fix",
    [
        ("mixed_precision_training", "false", "write False without quotes"),
        ("cuda", "no", "write False without quotes"),
        ("divergence_guard", "off", "write False without quotes"),
        ("use_attribute_discriminator", "yes", "write True without quotes"),
        ("apply_feature_scaling", None, "None does not mean off; use False"),
        ("forget_bias", 1, "use True or False"),
    ],
)
def test_boolean_fields_are_type_checked(name, value, fix):
    with pytest.raises(ParameterError, match=rf"{name} must be True or False.*{fix}"):
        DGANConfig(max_sequence_len=4, sample_len=2, **{name: value})


@pytest.mark.parametrize(
    "name, value",
    [
        ("gradient_penalty_coef", float("nan")),
        ("attribute_gradient_penalty_coef", float("nan")),
        ("attribute_loss_coef", float("nan")),
        ("generator_learning_rate", float("inf")),
        ("discriminator_learning_rate", float("inf")),
        pytest.param("attribute_discriminator_learning_rate", 10**400, id="rate-10**400"),
        ("init_scale", float("inf")),
        ("growth_factor", float("inf")),
        ("max_grad_norm", float("inf")),
        ("max_nan_fraction", float("nan")),
        ("dp_eps", float("nan")),
        ("epochs", True),
        ("generator_learning_rate", True),
        ("generator_beta1", False),
        ("batch_size", 8.0),
    ],
)
def test_numbers_must_be_finite_real_numbers_not_bools(name, value):
    with pytest.raises(ParameterError, match=rf"{name} must be .*the default is"):
        DGANConfig(max_sequence_len=4, sample_len=2, **{name: value})


def test_numpy_scalars_are_accepted_and_stored_as_python_values():
    config = DGANConfig(
        max_sequence_len=np.int64(8),
        sample_len=np.int32(4),
        epochs=np.int64(2),
        generator_learning_rate=np.float32(0.5),
        gradient_penalty_coef=np.float64(3.0),
        cuda=np.bool_(False),
        seed=np.uint64(7),
    )
    for name, kind in [
        ("max_sequence_len", int),
        ("epochs", int),
        ("generator_learning_rate", float),
        ("gradient_penalty_coef", float),
        ("cuda", bool),
        ("seed", int),
    ]:
        assert type(getattr(config, name)) is kind, name
    assert (config.epochs, config.generator_learning_rate, config.cuda) == (2, 0.5, False)
    assert json.loads(json.dumps(config.to_json_dict()))["epochs"] == 2


def test_seed_range_is_what_the_generators_accept():
    for seed in (-1, 2**63 - 1, 2**70):
        with pytest.raises(ParameterError, match=r"seed must be None or an integer from 0 to"):
            DGANConfig(max_sequence_len=4, sample_len=2, seed=seed)
    # The largest seed accepted builds and trains (each random stream gets a 64-bit seed).
    model = DGAN(tiny_config(seed=MAX_SEED))
    model.train_numpy(np.zeros((8, 6, 1)), progress_bar=False)
    assert np.isfinite(model.generate_numpy(2)[1][0]).all()


def test_one_error_lists_every_bad_field_with_its_fix():
    with pytest.raises(ParameterError) as info:
        DGANConfig(
            max_sequence_len=4,
            sample_len=2,
            cuda="no",
            gradient_penalty_coef=float("nan"),
            epochs=True,
            seed=2**70,
        )
    message = str(info.value)
    assert message.startswith("4 problems with DGANConfig:")
    for name in ("cuda", "gradient_penalty_coef", "epochs", "seed"):
        assert f"  - {name} must be" in message


def test_loss_scales_that_would_skip_every_step_are_refused():
    with pytest.raises(
        ParameterError, match=r"loss_scale must be 'dynamic' or a number > 0 and <= 65504"
    ):
        DGANConfig(max_sequence_len=4, sample_len=2, loss_scale=1e30)
    with pytest.raises(ParameterError, match=r"init_scale must be a number > 0 and <= 2\*\*16"):
        DGANConfig(max_sequence_len=4, sample_len=2, init_scale=1e30)
    for bad in (float("nan"), float("inf"), True, "1024", 0):
        with pytest.raises(ParameterError, match="loss_scale must be"):
            DGANConfig(max_sequence_len=4, sample_len=2, loss_scale=bad)
    config = DGANConfig(max_sequence_len=4, sample_len=2, loss_scale=65504, init_scale=2.0**16)
    assert (config.loss_scale, config.init_scale) == (65504, 2.0**16)


def test_config_file_values_are_checked_the_same_way():
    with pytest.raises(ParameterError, match="mixed_precision_training must be True or False"):
        DGANConfig.from_json_dict(
            json.loads(
                '{"max_sequence_len": 4, "sample_len": 2, "mixed_precision_training": "false"}'
            )
        )


def test_a_config_table_that_is_not_a_table_is_a_clear_error():
    with pytest.raises(ParameterError, match=r"from a table of fields .*not \[4, 2\]"):
        DGANConfig.from_json_dict([4, 2])


@pytest.mark.parametrize(
    "name",
    [
        "attribute_num_layers",
        "feature_num_layers",
        "discriminator_num_layers",
        "discriminator_rounds",
        "generator_rounds",
    ],
)
def test_layers_and_rounds_have_an_upper_bound(name):
    """A million layers or rounds was accepted, and --dry-run's warm-up then ran until
    killed; the bound answers when the config is made."""
    from dgan.config import MAX_LAYERS, MAX_ROUNDS

    most = MAX_ROUNDS if name.endswith("rounds") else MAX_LAYERS
    assert getattr(tiny_config(**{name: most}), name) == most
    for huge in (most + 1, 1_000_000_000):
        with pytest.raises(ParameterError, match=f"^{name} must be at most {most:,}, got"):
            tiny_config(**{name: huge})


def test_a_model_header_with_too_many_layers_is_refused_before_building(tmp_path):
    from dgan.errors import SerializationError
    from dgan.storage.format import read_model_file, write_model_file

    model = DGAN(tiny_config())
    model.train_numpy(np.random.default_rng(0).random((8, 6, 1)), progress_bar=False)
    path = model.save(tmp_path / "m.dgan")
    tensors, state = read_model_file(path)
    forged = {**state, "config": {**state["config"], "feature_num_layers": 1_000}}
    write_model_file(path, tensors, forged)  # with a valid checksum
    with pytest.raises(SerializationError, match="feature_num_layers must be at most"):
        DGAN.load(path)


def test_a_dry_run_with_a_billion_rounds_answers_at_once(tmp_path, monkeypatch, capsys):
    from dgan.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text("discriminator_rounds = 1_000_000_000\n")
    assert main(["train", "nodata.csv", "--dry-run", "--config", "c.toml"]) == 1
    err = capsys.readouterr().err
    assert "discriminator_rounds must be at most" in err and "No such file" not in err, err
