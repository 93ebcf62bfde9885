"""Bad input and broken states that once went through silently (issue 10's model side)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.config import Normalization
from dgan.encoding.encoder import ContinuousEncoder
from dgan.errors import DataError, DGANError, NotTrainedError, ParameterError
from tiny import tiny_config

TYPES = [OutputType.DISCRETE, OutputType.CONTINUOUS]


def _data(rng, n=16, features=2):
    return rng.normal(size=(n, 6, features)), np.stack(
        [rng.integers(0, 3, n), rng.normal(size=n)], axis=1
    )


@pytest.fixture
def trained(rng) -> DGAN:
    features, attributes = _data(rng)
    model = DGAN(tiny_config())
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    return model


# ----- continuing training on data that does not fit the fitted encoders -------------------
@pytest.mark.parametrize(
    "change,expected",
    [
        ("more_features", "trained on 2 feature(s); this data has [3]"),
        ("fewer_features", "trained on 2 feature(s); this data has [1]"),
        ("more_attributes", "trained on 2 attribute(s); this data has 3"),
        ("shorter_series", "shorter ones, which it would pad with zeros"),
        ("far_values", "far outside the range the model was fitted on"),
    ],
)
def test_continued_training_on_mismatched_data_is_an_error(trained, rng, change, expected):
    features, attributes = _data(rng, features=2)
    if change == "more_features":
        features = rng.normal(size=(16, 6, 3))
    elif change == "fewer_features":
        features = features[:, :, :1]
    elif change == "more_attributes":
        attributes = np.concatenate([attributes, attributes[:, :1]], axis=1)
    elif change == "shorter_series":
        features = [f[:4] for f in features]
    else:
        features = features * 1000.0
    before = [p.clone() for p in trained.generator.parameters()]
    with pytest.raises(DataError, match="train a new DGAN") as error:
        trained.train_numpy(features, attributes=attributes, progress_bar=False)
    assert expected in str(error.value)
    after = trained.generator.parameters()
    assert all(torch.equal(p, q) for p, q in zip(before, after, strict=True))


def test_continued_training_on_fitting_data_still_works(trained, rng):
    features, attributes = _data(rng)
    trained.train_numpy(features * 1.5, attributes=attributes, progress_bar=False)  # mildly wider
    assert len(trained.history) == 2


# ----- range arithmetic ----------------------------------------------------------------------
def test_encoder_range_arithmetic_cannot_overflow():
    values = np.array([-1e308, 0.0, 1e308])
    encoder = ContinuousEncoder(Normalization.ZERO_ONE).fit(values)
    encoded = encoder.transform(values)
    assert np.isfinite(encoded).all() and encoded.tolist() == [0.0, 0.5, 1.0]
    decoded = encoder.inverse(encoded)
    assert np.isfinite(decoded).all() and decoded[0] == -1e308 and decoded[2] == 1e308


# ----- generation inputs ---------------------------------------------------------------------
@pytest.mark.parametrize("bad", [True, "3", 0, -2, 2.5])
def test_bad_n_is_a_parameter_error(trained, bad):
    with pytest.raises(ParameterError, match="n must be a positive integer"):
        trained.generate_numpy(bad)


def test_non_numeric_or_non_finite_noise_is_a_parameter_error(trained):
    good = trained.feature_noise_func(2)
    with pytest.raises(ParameterError, match="attribute_noise must be an array of numbers"):
        trained.generate_numpy(attribute_noise="noise", feature_noise=good)
    bad = trained.attribute_noise_func(2)
    bad[0, 0] = float("nan")
    with pytest.raises(ParameterError, match="NaN or infinite"):
        trained.generate_numpy(attribute_noise=bad, feature_noise=good)


@pytest.mark.parametrize("value", [1e6, 1e300])
def test_conditioning_far_outside_the_training_range_is_an_error(trained, value):
    with pytest.raises(DataError, match="far outside the range seen in training"):
        trained.generate_numpy(attributes=np.array([[0.0, value]]))


def test_conditioning_slightly_outside_the_range_warns(trained, caplog):
    high = trained.encoder.attribute_encoders[1].max
    with caplog.at_level(logging.WARNING, logger="dgan.sampling"):
        _, series = trained.generate_numpy(attributes=np.array([[0.0, high + 0.1]]))
    assert "extrapolates" in caplog.text and np.isfinite(series[0]).all()


def test_generating_before_training_speaks_gretels_words():
    with pytest.raises(NotTrainedError, match="Must build DGAN model prior to generating"):
        DGAN(tiny_config()).generate_numpy(2)
    assert issubclass(NotTrainedError, RuntimeError)  # gretel raises RuntimeError


def test_broken_weights_never_come_back_as_nan_series(trained):
    with torch.no_grad():
        trained.generator.head.bias.fill_(float("nan"))
    with pytest.raises(DGANError, match="produced NaN or infinite values from finite noise"):
        trained.generate_numpy(3)


# ----- divergence guard blind spots --------------------------------------------------------
def _poisoned_training(rng, poison):
    features, attributes = _data(rng)
    model = DGAN(tiny_config(epochs=3, log_every=1, batch_size=8))
    done = []

    def callback(info):
        if info.epoch == 1 and info.batch == 0 and not done:
            done.append(True)
            with torch.no_grad():
                poison(model)

    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=TYPES,
        progress_callback=callback,
        progress_bar=False,
    )
    return model


def _batchnorm(model):
    return next(m for m in model.generator.modules() if isinstance(m, torch.nn.BatchNorm1d))


@pytest.mark.parametrize(
    "poison,reason",
    [
        (lambda m: _batchnorm(m).running_mean.fill_(float("nan")), "non-finite weights"),
        (
            lambda m: next(iter(m.trainer.critic_opt.state.values()))["exp_avg_sq"].fill_(
                float("nan")
            ),
            "non-finite optimizer state",
        ),
    ],
)
def test_guard_sees_buffers_and_optimizer_state(rng, poison, reason):
    model = _poisoned_training(rng, poison)
    events = [e for h in model.history for e in h["guard_events"]]
    assert [e["reason"] for e in events] == [reason]
    assert torch.isfinite(_batchnorm(model).running_mean).all()
    for state in model.trainer.critic_opt.state.values():
        assert torch.isfinite(state["exp_avg_sq"]).all()
    _, series = model.generate_numpy(4)
    assert np.isfinite(np.stack(series)).all()


# ----- sizes that cannot fit -----------------------------------------------------------------
@pytest.mark.parametrize("entry", ["train_numpy", "preprocess"])
def test_networks_too_large_for_memory_fail_before_allocating(rng, entry):
    """Every public door that builds networks counts them first (there is no public build)."""
    model = DGAN(DGANConfig(max_sequence_len=6, sample_len=3, feature_num_units=10**6, cuda=False))
    with pytest.raises(ParameterError, match="feature_num_units") as error:
        getattr(model, entry)(rng.normal(size=(8, 6, 1)))
    assert "GiB" in str(error.value) and not model.is_built
    assert not [name for name in dir(model) if "build" in name and not name.startswith("_")]


# ----- a static loss scale that overflows on every step ---------------------------------------
def test_static_scale_skipping_every_step_is_a_guard_event(rng, monkeypatch):
    """A static scale never backs off: if every step overflows, training stands still."""
    from dgan.precision import PrecisionPolicy

    def always_overflowing(self, loss, scaler, optimizers, *args, **kwargs):
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        return torch.ones((), dtype=torch.bool, device=self.device)  # skipped, as on overflow

    monkeypatch.setattr(PrecisionPolicy, "backward_and_step", always_overflowing)
    features, attributes = _data(rng)
    model = DGAN(tiny_config(epochs=2, log_every=2, precision="fp16", loss_scale=1024.0))
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    events = [e for h in model.history for e in h["guard_events"]]
    assert events and "static loss scale 1024 overflows fp16" in events[0]["reason"]
    assert events[0]["precision"] == "fp16" and model.history[-1]["precision"] != "fp16"


def test_occasional_skips_are_not_divergence(rng):
    features, attributes = _data(rng)
    model = DGAN(tiny_config(epochs=2, log_every=2, precision="fp16", loss_scale=1024.0))
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    assert [e for h in model.history for e in h["guard_events"]] == []


@pytest.mark.parametrize("seed", [2**70, -1, 1.5, "3"])
def test_reseeding_outside_the_generators_range_is_a_parameter_error(trained, seed):
    with pytest.raises(ParameterError, match="seed must be None or an integer from 0"):
        trained.sampler.reseed(seed)
