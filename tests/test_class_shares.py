"""match_class_shares: each class generated at its share of the training series, by
choosing among a pool of attribute noise (dgan.encoding.class_shares, dgan.sampling)."""

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.class_shares import POOL, ClassShares
from dgan.errors import ParameterError, SerializationError
from model_files import rewritten
from tiny import tiny_config

SHARES = np.array([0.6, 0.3, 0.1])


def test_quotas_round_by_largest_remainder_and_sum_to_n():
    shares = ClassShares(0, SHARES)
    for n in (1, 2, 7, 10, 33, 1000):
        quotas = shares.quotas(n)
        assert quotas.sum() == n
        assert np.all(np.abs(quotas - SHARES * n) < 1)
    assert shares.quotas(10).tolist() == [6, 3, 1]
    assert shares.quotas(1).tolist() == [1, 0, 0]
    fitted = ClassShares.fit(2, np.array([0, 1, 1, 1]), 3)  # class 2: none in training
    assert fitted.attribute == 2 and fitted.shares.tolist() == [0.25, 0.75, 0.0]


def test_choose_keeps_pool_order_and_fills_a_short_class_with_the_next_drawn():
    shares = ClassShares(0, SHARES)
    pool = np.array([0] * 30 + [1] * 30 + [2] * 30)
    chosen, given = shares.choose(pool, 10)
    assert chosen.tolist() == [0, 1, 2, 3, 4, 5, 30, 31, 32, 60]
    assert given.tolist() == [-1] * 10  # every series as drawn
    # The pool holds no class 2: its place goes to the next series not kept (a 0), to be
    # generated as a 2.
    pool = np.array([0] * 20 + [1] * 20)
    chosen, given = shares.choose(pool, 10)
    assert np.bincount(pool[chosen]).tolist() == [7, 3]
    assert np.all(np.diff(chosen) > 0) and len(set(chosen)) == 10
    assert chosen[given >= 0].tolist() == [6] and given[given >= 0].tolist() == [2]
    classes = np.where(given >= 0, given, pool[chosen])  # the classes generated
    assert np.bincount(classes).tolist() == shares.quotas(10).tolist()


def _data(rng, n=60):
    """Series of 6 steps whose level follows a class of three (shares 0.6 / 0.3 / 0.1)."""
    classes = np.repeat([0, 1, 2], (SHARES * n).astype(int))
    features = classes[:, None, None] * 3.0 + rng.normal(size=(n, 6, 2))
    attributes = np.stack([classes, rng.normal(size=n)], axis=1)
    return features, attributes


def _train(**config):
    features, attributes = _data(np.random.default_rng(0))
    model = DGAN(tiny_config(epochs=2, **config))
    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=[OutputType.DISCRETE, OutputType.CONTINUOUS],
        progress_bar=False,
    )
    return model


@pytest.fixture(scope="module")
def trained():
    return _train()


def test_generated_classes_take_the_training_shares(trained):
    model = trained
    assert model.encoder.class_shares.attribute == 0
    assert np.allclose(model.encoder.class_shares.shares, SHARES)
    model.sampler.reseed(1)
    attributes, series = model.generate_numpy(50)
    counts = np.bincount(attributes[:, 0].astype(int), minlength=3)
    quotas = ClassShares(0, SHARES).quotas(50)
    assert counts.tolist() == quotas.tolist()
    # The draws: a pool of attribute noise, then the feature noise of the 50 kept; the
    # kept ones are the first of each class in the pool, generated as given noise is.
    model.sampler.reseed(1)
    pool = model.sampler.attribute_noise(POOL * 50)
    feature_noise = model.sampler.feature_noise(50)
    pool_classes = model.generate_numpy(attribute_noise=pool)[0][:, 0].astype(int)
    assert np.all(np.bincount(pool_classes, minlength=3) >= quotas)  # enough of each
    kept, given = model.encoder.class_shares.choose(pool_classes, 50)
    assert np.all(given == -1)  # no class short: every series from its noise
    again = model.generate_numpy(attribute_noise=pool[kept], feature_noise=feature_noise)
    assert np.array_equal(again[0], attributes)
    assert np.array_equal(np.stack(again[1]), np.stack(series))
    # Without the shares, the same model draws its own.
    shares, model.encoder.class_shares = model.encoder.class_shares, None
    try:
        model.sampler.reseed(1)
        plain = np.bincount(model.generate_numpy(50)[0][:, 0].astype(int), minlength=3)
    finally:
        model.encoder.class_shares = shares
    assert plain.tolist() != counts.tolist()


def test_a_class_the_attribute_generator_never_makes_is_generated_at_its_share(trained):
    model = trained
    layers = [m for m in model.generator.attribute_net.modules() if isinstance(m, torch.nn.Linear)]
    head = layers[-1]  # the attribute generator's output layer
    place = model.encoder.attribute_slices[0]  # the class's one-hot: classes 0, 1, 2
    saved = head.bias.detach().clone()
    try:
        with torch.no_grad():
            head.bias[place.start + 2] = -1e4  # the attribute generator never makes a 2
        model.sampler.reseed(1)
        pool = model.generate_numpy(attribute_noise=model.sampler.attribute_noise(POOL * 50))
        assert 2.0 not in pool[0][:, 0]
        model.sampler.reseed(1)
        attributes, series = model.generate_numpy(50)
    finally:
        with torch.no_grad():
            head.bias.copy_(saved)
    counts = np.bincount(attributes[:, 0].astype(int), minlength=3)
    assert counts.tolist() == ClassShares(0, SHARES).quotas(50).tolist()  # 30, 15, 5
    assert np.isfinite(np.stack(series)).all()


def test_given_noise_and_requested_attributes_are_generated_as_asked(trained):
    model = trained
    c, rng = model.config, np.random.default_rng(2)
    noise = dict(
        attribute_noise=rng.normal(size=(20, c.attribute_noise_dim)),
        feature_noise=rng.normal(
            size=(20, c.max_sequence_len // c.sample_len, c.feature_noise_dim)
        ),
    )
    given = model.generate_numpy(**noise)
    shares, model.encoder.class_shares = model.encoder.class_shares, None
    try:
        plain = model.generate_numpy(**noise)
    finally:
        model.encoder.class_shares = shares
    assert np.array_equal(given[0], plain[0])
    assert np.array_equal(np.stack(given[1]), np.stack(plain[1]))
    asked = np.array([[2.0, 0.0]] * 5)  # five of the rarest class
    attributes, _ = model.generate_numpy(attributes=asked)
    assert attributes[:, 0].tolist() == [2.0] * 5


def test_the_same_seed_gives_the_same_series_and_the_file_keeps_the_shares(trained, tmp_path):
    model = trained
    model.sampler.reseed(4)
    first = model.generate_numpy(30)
    model.sampler.reseed(4)
    again = model.generate_numpy(30)
    assert np.array_equal(first[0], again[0])
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert np.array_equal(loaded.encoder.class_shares.shares, model.encoder.class_shares.shares)
    loaded.sampler.reseed(4)
    assert np.array_equal(loaded.generate_numpy(30)[0], first[0])
    # A file from before the shares were kept generates as the model draws them.
    path = model.save(tmp_path / "old.dgan")
    with rewritten(path) as (_, state):
        del state["encoder"]["class_shares"]
    assert DGAN.load(path).encoder.class_shares is None


@pytest.mark.parametrize(
    "where, value, message",
    [
        ("attribute", 1, r"class_shares\.attribute must be a discrete attribute's index"),
        ("shares", [0.5, 0.5], r"class_shares\.shares must be 3 shares in \[0, 1\] summing to 1"),
        ("shares", [0.6, 0.3, 0.3], r"class_shares\.shares must be 3 shares in \[0, 1\]"),
    ],
)
def test_broken_shares_in_a_file_are_named(trained, tmp_path, where, value, message):
    path = trained.save(tmp_path / "m.dgan")
    with rewritten(path) as (_, state):
        state["encoder"]["class_shares"][where] = value
    with pytest.raises(SerializationError, match=rf"invalid header: .*encoder\.{message}"):
        DGAN.load(path)


def test_off_without_a_discrete_attribute_when_false_in_gretels_preset_and_private_runs():
    assert _train(match_class_shares=False).encoder.class_shares is None
    model = DGAN(tiny_config())
    model.train_numpy(np.random.default_rng(0).normal(size=(16, 6, 1)), progress_bar=False)
    assert model.encoder.class_shares is None
    assert DGANConfig.gretel(max_sequence_len=6, sample_len=3).match_class_shares is False
    with pytest.raises(ParameterError, match="match_class_shares=True generates each class"):
        DGANConfig(max_sequence_len=6, sample_len=3, dp_epsilon=5.0, match_class_shares=True)


def test_the_plan_names_the_attribute_whose_shares_are_kept():
    features, attributes = _data(np.random.default_rng(1))
    given = dict(
        attributes=attributes, attribute_types=[OutputType.DISCRETE, OutputType.CONTINUOUS]
    )
    plan = DGAN(tiny_config()).plan(features, **given, warm_up_steps=0)
    first, second = (c for c in plan.columns if c.role == "attribute")
    assert first.detail.endswith(
        "each class generated at its share of the training series (match_class_shares)"
    )
    assert "match_class_shares" not in second.detail
    plan = DGAN(tiny_config(match_class_shares=False)).plan(features, **given, warm_up_steps=0)
    assert not any("match_class_shares" in c.detail for c in plan.columns)
