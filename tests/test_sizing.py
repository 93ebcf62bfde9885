"""The settings that follow the data's size (dgan.config.sizing) and the record of the
fields set that they honour (dgan.config.given)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from dgan import DGAN, DGANConfig, OutputType
from dgan.config.sizing import MAX_STEPS, MIN_STEPS, SIZE_SETTINGS, size_steps
from dgan.errors import ParameterError
from dgan.storage.schema import saved_config
from tiny import TINY_NETWORKS


def _untouched_config(**kw) -> DGANConfig:
    """Tiny networks; every field the rule picks, and the length, left out."""
    base = dict(max_sequence_len=4, sample_len=2, cuda=False, seed=0)
    return DGANConfig(**{**base, **TINY_NETWORKS, **kw})


def test_auto_picks_the_settings_and_the_budget_from_the_number_of_series():
    """One rule for every size, no switch at a threshold."""
    config = _untouched_config()
    picked = {n: config.resolved_for(n) for n in (48, 256, 1000, 3661, 10**6)}
    assert {n: c.batch_size for n, c in picked.items()} == {
        48: 16,
        256: 32,
        1000: 64,
        3661: 128,
        10**6: 128,
    }
    assert {n: c.training_steps for n, c in picked.items()} == {
        48: MIN_STEPS,
        256: MIN_STEPS,
        1000: MIN_STEPS,
        3661: 400 * 29,  # 400 epochs of 29 batches of 128
        10**6: MAX_STEPS,
    }
    for resolved in picked.values():
        assert resolved.large_data is True
        assert {k: getattr(resolved, k) for k in SIZE_SETTINGS} == SIZE_SETTINGS
    assert config.large_data == "auto" and config.batch_size == 1024  # a new object
    assert config.training_steps is None


def test_long_series_get_a_budget_that_grows_with_their_length(rng):
    """Up to 100 steps the budget is the number of series' alone; from there it grows in
    proportion to the length, to four times at 400 steps and beyond; a length you set
    keeps."""
    steps = {
        n: _untouched_config(max_sequence_len=n, sample_len=1).resolved_for(256).training_steps
        for n in (24, 100, 250, 400, 1344)
    }
    assert steps == {24: MIN_STEPS, 100: MIN_STEPS, 250: 25_000, 400: 40_000, 1344: 40_000}
    assert size_steps(10**6, 128, length=800) == 4 * MAX_STEPS
    mine = _untouched_config(max_sequence_len=400, sample_len=4, training_steps=123)
    assert mine.resolved_for(256).training_steps == 123
    plan = DGAN(_untouched_config(max_sequence_len=400, sample_len=4)).plan(
        rng.random((256, 400, 1)), warm_up_steps=0
    )
    assert plan.steps == 40_000 and "x4 for series of 400 steps" in plan.budget_reason


def _picked_for_long_series_only(name: str) -> None:
    """The size rule turns the flag ``name`` on from 100 steps on, and never for shorter
    series, under gretel's settings, or where the user set it False."""
    at = {n: _untouched_config(max_sequence_len=n, sample_len=1) for n in (24, 99, 100, 427)}
    resolved = {n: getattr(c.resolved_for(256), name) for n, c in at.items()}
    assert resolved == {24: False, 99: False, 100: True, 427: True}, name
    gretels = _untouched_config(max_sequence_len=100, sample_len=4, large_data=False)
    assert not getattr(gretels.resolved_for(256), name)
    mine = _untouched_config(max_sequence_len=100, sample_len=4, **{name: False})
    assert not getattr(mine.resolved_for(256), name)


def _picked_by_length(name: str, cases) -> dict:
    """The rule's ``name`` for 256 series at each (max_sequence_len, sample_len) of ``cases``."""
    return {
        (length, sample_len): getattr(
            _untouched_config(max_sequence_len=length, sample_len=sample_len).resolved_for(256),
            name,
        )
        for length, sample_len in cases
    }


def test_long_series_get_the_spectral_critic_unless_you_say_otherwise(rng):
    """From 100 steps on the rule adds the critic that reads spectra (auto and
    large_data=True), the plan says so; shorter series, gretel's settings and a value you
    set keep the MLP critic alone."""
    _picked_for_long_series_only("spectral_critic")
    assert (
        DGANConfig.for_large_data(max_sequence_len=100, sample_len=1)
        .resolved_for(256)
        .spectral_critic
    )
    plan = DGAN(_untouched_config(max_sequence_len=100, sample_len=4)).plan(
        rng.random((64, 100, 1)), warm_up_steps=0
    )
    assert "a critic of spectra too (series of 100+ steps)" in plan.settings_reason
    model = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1))
    model.train_numpy(rng.random((64, 100, 1)), progress_bar=False)
    assert model.config.spectral_critic and model.critic.spectrum


def test_long_series_get_a_noise_number_per_emitted_step_unless_you_say_otherwise(rng):
    """From 100 steps on the rule gives each LSTM step as many numbers of feature noise as
    it generates time steps (``sample_len``, at least gretel's 10), and the plan says so; shorter
    series, gretel's settings and a value you set keep theirs."""
    picked = _picked_by_length(
        "feature_noise_dim", ((24, 12), (99, 33), (100, 4), (100, 25), (799, 47))
    )
    assert picked == {(24, 12): 10, (99, 33): 10, (100, 4): 10, (100, 25): 25, (799, 47): 47}
    forced = DGANConfig.for_large_data(max_sequence_len=100, sample_len=25).resolved_for(256)
    assert forced.feature_noise_dim == 25
    gretels = _untouched_config(max_sequence_len=100, sample_len=25, large_data=False)
    assert gretels.resolved_for(256).feature_noise_dim == 10
    mine = _untouched_config(max_sequence_len=100, sample_len=25, feature_noise_dim=10)
    assert mine.resolved_for(256).feature_noise_dim == 10
    assert (
        "yours: feature_noise_dim"
        in DGAN(mine).plan(rng.random((64, 100, 1)), warm_up_steps=0).settings_reason
    )
    plan = DGAN(_untouched_config(max_sequence_len=100, sample_len=25)).plan(
        rng.random((64, 100, 1)), warm_up_steps=0
    )
    assert "25 numbers of feature noise per LSTM step" in plan.settings_reason
    model = DGAN(_untouched_config(max_sequence_len=100, sample_len=25, epochs=1))
    model.train_numpy(rng.random((64, 100, 1)), progress_bar=False)
    assert model.config.feature_noise_dim == 25
    assert model.generate_numpy(3)[1][0].shape == (100, 1)


def test_long_series_get_a_critic_that_reads_the_class_unless_you_say_otherwise(rng):
    """From 100 steps on the rule turns on the projection critic; the plan says so where a
    discrete attribute gives it a class to read, and a model trained with one projects it;
    shorter series, gretel's settings and a value you set keep the plain critic."""
    _picked_for_long_series_only("projection_critic")
    features = rng.random((64, 100, 1))
    classes = {"attributes": rng.integers(0, 2, (64, 1)).astype(float),
               "attribute_types": [OutputType.DISCRETE]}  # fmt: skip
    said = {}
    for name, how in {"classes": classes, "none": {}}.items():
        model = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1))
        said[name] = (
            "a critic that reads the discrete attributes"
            in model.plan(features, warm_up_steps=0, **how).settings_reason
        )
        model.train_numpy(features, progress_bar=False, **how)
        assert model.config.projection_critic
        assert (model.critic.projection is not None) == bool(how)
    assert said == {"classes": True, "none": False}
    model = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1,
                                   projection_critic=False))  # fmt: skip
    model.train_numpy(features, progress_bar=False, **classes)
    assert model.critic.projection is None


def test_long_series_start_the_lstm_from_their_attributes_unless_you_say_otherwise(rng):
    """From 100 steps on the rule makes the feature LSTM's first state from each series'
    attributes; the plan says so where there are attributes or additional ones (example
    scaling's ranges, a varied length, an onset), and a model trained so has the map;
    shorter series, gretel's settings and a value you set start from zeros."""
    _picked_for_long_series_only("attribute_state")
    features = rng.random((64, 100, 1))
    classes = {"attributes": rng.integers(0, 2, (64, 1)).astype(float),
               "attribute_types": [OutputType.DISCRETE]}  # fmt: skip
    varied = [rng.random((length, 1)) for length in rng.integers(20, 101, 64)]
    # switched on after 2..9 zero steps: the onset is the only additional attribute
    off = [np.r_[np.zeros(2 + i % 8), 1 + s[:, 0]][:100, None] for i, s in enumerate(varied)]
    steps = {"feature_types": [OutputType.DISCRETE]}  # example scaling has no range to fit
    levels = rng.integers(0, 3, (64, 100, 1)).astype(float)
    cases = {"classes": ({"apply_example_scaling": True}, features, classes),
             "none": ({"apply_example_scaling": False}, features, {}),
             "lengths": ({"apply_example_scaling": False}, varied, {}),
             "onsets": ({"apply_example_scaling": False, "length_attribute": False}, off, {}),
             "discrete scaled": ({"apply_example_scaling": True}, levels, steps)}  # fmt: skip
    said, mapped = {}, {}
    for name, (settings, data, how) in cases.items():
        config = _untouched_config(max_sequence_len=100, sample_len=4, epochs=1, **settings)
        model = DGAN(config)
        reason = model.plan(data, warm_up_steps=0, **how).settings_reason
        said[name] = "each series' LSTM started from its attributes" in reason
        model.train_numpy(data, progress_bar=False, **how)
        assert model.config.attribute_state
        mapped[name] = model.generator.initial_state is not None
    assert said == mapped == {"classes": True, "none": False, "lengths": True, "onsets": True,
                              "discrete scaled": False}  # fmt: skip
    mine = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1,
                                  attribute_state=False))  # fmt: skip
    mine.train_numpy(features, progress_bar=False, **classes)
    assert mine.generator.initial_state is None


def test_long_series_of_varied_lengths_generate_their_length_unless_you_say_otherwise(rng):
    """From 100 steps on the rule also asks for the length as a generated attribute; the
    encoder uses it where lengths vary, and the plan says so there; a value you set is
    honoured."""
    varied = [rng.random((length, 1)) for length in rng.integers(20, 101, 64)]
    used, said = {}, {}
    for name, features in {"varied": varied, "one length": rng.random((64, 100, 1))}.items():
        model = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1))
        reason = model.plan(features, warm_up_steps=0).settings_reason
        said[name] = "each series' length generated as an attribute" in reason
        model.train_numpy(features, progress_bar=False)
        assert model.config.length_attribute
        used[name] = model.encoder.length_attribute
    assert used == said == {"varied": True, "one length": False}
    assert (
        not _untouched_config(max_sequence_len=99, sample_len=1).resolved_for(64).length_attribute
    )
    mine = _untouched_config(max_sequence_len=100, sample_len=4, length_attribute=False)
    assert not mine.resolved_for(64).length_attribute
    reason = DGAN(mine).plan(varied, warm_up_steps=0).settings_reason
    assert "generated as an attribute" not in reason and "yours: length_attribute" in reason


def test_values_given_equal_to_gretels_defaults_are_honoured():
    """Before: batch_size=1024, epochs=400 on 64 series trained at batch 16 for 10,000
    steps with learning rate 1e-4, as if nothing had been given."""
    config = _untouched_config(batch_size=1024, epochs=400, generator_learning_rate=1e-3)
    assert config.batch_size == 1024 and config.epochs == 400  # as gretel's users see them
    resolved = config.resolved_for(64)
    assert (resolved.batch_size, resolved.epochs, resolved.training_steps) == (1024, 400, None)
    assert resolved.generator_learning_rate == 1e-3
    plan = DGAN(config).plan(__import__("numpy").zeros((64, 4, 1)), warm_up_steps=0)
    assert (plan.batch_size, plan.steps) == (1024, 400) and "epochs=400" in plan.budget_reason


def test_the_rule_applies_per_field_to_the_fields_not_set():
    """Before: setting batch_size alone (as the torchrun error advises) turned off the
    whole rule: gretel's learning rates and no budget in steps."""
    resolved = _untouched_config(batch_size=64).resolved_for(2000)
    assert resolved.batch_size == 64 and resolved.large_data is True
    assert {k: getattr(resolved, k) for k in SIZE_SETTINGS} == SIZE_SETTINGS
    assert resolved.training_steps == size_steps(2000, 64) == 400 * 32  # at the batch in effect
    mine = _untouched_config(generator_learning_rate=5e-4, feature_feedback=False)
    resolved = mine.resolved_for(10**5)
    assert resolved.batch_size == 128 and resolved.discriminator_learning_rate == 1e-4
    assert resolved.generator_learning_rate == 5e-4 and resolved.feature_feedback is False


def test_a_length_you_set_is_kept_and_epochs_and_steps_are_not_both_set():
    assert _untouched_config(epochs=7).resolved_for(256).training_steps is None
    chosen = _untouched_config(training_steps=123).resolved_for(256)
    assert chosen.training_steps == 123 and chosen.batch_size == 32
    for epochs in (7, 400):  # 400, gretel's default, is a length given too
        with pytest.raises(ParameterError, match="set one of them"):
            _untouched_config(epochs=epochs, training_steps=123)


def test_large_data_true_and_false_keep_your_fields():
    forced = _untouched_config(large_data=True, batch_size=1024).resolved_for(10)
    assert forced.batch_size == 1024 and forced.generator_learning_rate == 1e-4
    assert forced.training_steps is None  # trained for epochs
    assert _untouched_config(large_data=False).resolved_for(10**5).batch_size == 1024
    assert (
        DGANConfig.gretel(max_sequence_len=4, sample_len=2).resolved_for(10**5).large_data is False
    )
    everything = dict.fromkeys(["epochs"], 3) | {"batch_size": 16, **SIZE_SETTINGS}
    assert _untouched_config(**everything).resolved_for(100).large_data is False  # all yours
    with pytest.raises(ParameterError, match="large_data must be True, False or 'auto'"):
        _untouched_config(large_data="yes")


def test_the_record_of_fields_set_survives_copies_dicts_and_json():
    config = _untouched_config(batch_size=1024, epochs=400)
    assert "batch_size" in dataclasses.replace(config, seed=1).fields_set
    assert "seed" in dataclasses.replace(config, seed=1).fields_set  # a changed value
    for copy in (
        DGANConfig(**config.to_dict()),
        DGANConfig.from_json_dict(json.loads(json.dumps(config.to_json_dict()))),
    ):
        assert copy == config and copy.fields_set == config.fields_set
        assert copy.resolved_for(64).batch_size == 1024
    later = _untouched_config()
    later.batch_size = 64  # assigned after the config was made (gretel's users do)
    assert later.resolved_for(5000).batch_size == 64
    with pytest.raises(ParameterError, match="_given must list DGANConfig fields"):
        DGANConfig.from_json_dict({**config.to_json_dict(), "_given": ["bach_size"]})


def test_a_settled_config_keeps_its_settings_when_settled_again():
    settled = _untouched_config(generator_ema_decay=None).resolved_for(64)
    assert settled.generator_ema_decay is None and settled.batch_size == 16
    again = saved_config(settled.to_json_dict()).resolved_for(10**6)
    assert again == settled  # a loaded model trained on more data keeps what it trained with
    assert {"batch_size", "training_steps"} <= again.fields_set


def test_a_model_file_from_before_the_record_reads_set_fields_from_their_values():
    """Format-2 files hold no record: a field counts as set where it differs from
    gretel's default, as dgan read them then (so epochs=400 beside the rule's
    training_steps is not refused as two lengths)."""
    settled = _untouched_config().resolved_for(64)
    old = {k: v for k, v in settled.to_json_dict().items() if k != "_given"}
    loaded = saved_config(old)
    assert loaded == settled and "epochs" not in loaded.fields_set
    with pytest.raises(ParameterError, match="set one of them"):
        DGANConfig.from_json_dict(old)  # a config file's table: every field in it is set


def test_training_uses_the_settings_picked_for_its_size_and_keeps_them(rng, tmp_path, caplog):
    config = _untouched_config(epochs=1)
    features = rng.random((256, 4, 1))
    model = DGAN(config)
    plan = model.plan(features, warm_up_steps=0)
    assert plan.large_data and plan.batch_size == 32 and "picked for 256 series" in str(plan)
    with caplog.at_level("INFO", logger="dgan.prepare"):
        model.train_numpy(features, progress_bar=False)
    assert "settings picked for that size" in caplog.text
    assert model.config.large_data is True and model.config.batch_size == 32
    assert model.trainer.generator_ema is not None and model.generator.feature_feedback
    assert config.large_data == "auto" and config.batch_size == 1024  # the caller's object
    loaded = DGAN.load(model.save(tmp_path / "sized.dgan"))
    assert loaded.config == model.config and loaded.generator.feature_feedback
    assert loaded.config.fields_set == model.config.fields_set


def test_resuming_an_auto_run_continues_with_the_settings_picked_for_its_size(rng, tmp_path):
    features = rng.random((1000, 4, 1))
    folder = tmp_path / "checkpoints"
    first = DGAN(_untouched_config(epochs=1, checkpoint_dir=str(folder)))
    first.train_numpy(features, progress_bar=False)
    resumed = DGAN(_untouched_config(epochs=2, checkpoint_dir=str(folder)))
    resumed.train_numpy(features, progress_bar=False, resume_from=folder)
    assert len(resumed.history) == 2 and resumed.config.batch_size == 64


def test_cli_honours_values_given_equal_to_gretels_defaults(tmp_path, capsys):
    """Before: --epochs 400 (in a flag or a config file) was ignored, 399 and 401 not."""
    from test_ux import cli, long_frame

    data = tmp_path / "data.csv"
    long_frame(n_series=64, n_steps=4).to_csv(data, index=False)
    flags = ["--example-id", "id", "--time", "step", "--attributes", "kind"]
    config = tmp_path / "dgan.toml"
    config.write_text("epochs = 400\nbatch_size = 1024\n")
    for given in (["--epochs", "400", "--batch-size", "1024"], ["--config", str(config)]):
        assert cli(["train", str(data), "--dry-run", *given, *flags]) == 0
        out = capsys.readouterr().out
        assert "--batch-size 1024: 1 step per epoch; training 400 steps (400 epochs)" in out
        assert "settings: picked for 64 series: learning rates 0.0001" in out


def test_one_step_epochs_are_warned_about_whenever_the_budget_is_in_epochs(rng):
    """Before: large_data=True (batch 128) on 48 series trained 400 one-step epochs
    without the plan's warning."""
    features = rng.random((48, 4, 1))

    def one_step_warnings(**kw) -> list[str]:
        plan = DGAN(_untouched_config(**kw)).plan(features, warm_up_steps=0)
        return [w for w in plan.warnings if "every epoch is a single optimizer step" in w]

    assert len(one_step_warnings(large_data=True)) == 1
    assert len(one_step_warnings(batch_size=1024, epochs=400)) == 1  # auto, epochs given
    assert one_step_warnings() == []  # auto: batch 16, 3 steps per epoch
    assert one_step_warnings(batch_size=1024) == []  # a budget in steps: 10,000 of them


def test_long_series_get_bridged_seams_unless_you_say_otherwise(rng):
    """From 100 steps on the rule joins each LSTM step's values to the step before's, and
    the plan says so; shorter series, gretel's settings and a value you set keep the seams."""
    _picked_for_long_series_only("bridge_seams")
    features = rng.random((64, 100, 1))
    model = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1))
    plan = model.plan(features, warm_up_steps=0)
    assert "no jumps where LSTM steps meet (every 4 steps)" in plan.settings_reason
    model.train_numpy(features, progress_bar=False)
    assert model.config.bridge_seams and model.trainer.generator.bridge is not None
    mine = DGAN(_untouched_config(max_sequence_len=100, sample_len=4, epochs=1,
                                  bridge_seams=False))  # fmt: skip
    mine.train_numpy(features, progress_bar=False)
    assert mine.trainer.generator.bridge is None


def test_long_series_bridge_an_eighth_of_each_step_unless_you_say_otherwise(rng):
    """From 100 steps on the rule fits the bridge's lines to an eighth of each LSTM step's
    values (at least 2), and the plan says so; shorter series, gretel's settings and a
    width you set keep theirs."""
    picked = _picked_by_length(
        "bridge_width", ((24, 12), (99, 33), (100, 4), (100, 25), (2000, 200))
    )
    assert picked == {(24, 12): 2, (99, 33): 2, (100, 4): 2, (100, 25): 3, (2000, 200): 25}
    gretels = _untouched_config(max_sequence_len=100, sample_len=25, large_data=False)
    assert gretels.resolved_for(256).bridge_width == 2
    mine = _untouched_config(max_sequence_len=100, sample_len=25, bridge_width=2)
    assert mine.resolved_for(256).bridge_width == 2
    plan = DGAN(_untouched_config(max_sequence_len=100, sample_len=25)).plan(
        rng.random((64, 100, 1)), warm_up_steps=0
    )
    assert "the join fitted to 3 values each side" in plan.settings_reason
    model = DGAN(_untouched_config(max_sequence_len=100, sample_len=25, epochs=1))
    model.train_numpy(rng.random((64, 100, 1)), progress_bar=False)
    assert model.trainer.generator.reach.shape == (3,)
