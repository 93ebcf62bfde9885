import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.errors import DataError, NotTrainedError, ParameterError


def _config(**kw) -> DGANConfig:
    base = dict(max_sequence_len=4, sample_len=2, epochs=1, batch_size=16, cuda=False, seed=3,
                attribute_num_units=16, feature_num_units=16, discriminator_num_units=16,
                discriminator_num_layers=2)  # fmt: skip
    return DGANConfig(**{**base, **kw})


def _train(features, **kw) -> DGAN:
    model = DGAN(_config())
    model.train_numpy(features, progress_bar=False, **kw)
    return model


@pytest.mark.parametrize(
    "features,kw,match",
    [
        (np.zeros((10, 4)), {}, r"3-d.*features\[:, :, None\]"),
        (np.zeros((10, 5, 1)), {}, "max_sequence_len=4"),
        (np.zeros((0, 4, 1)), {}, "at least 2 examples"),
        (np.zeros((1, 4, 1)), {}, "at least 2 examples"),
        (np.zeros((10, 4, 1)), {"attributes": np.zeros((9, 1))}, "one attribute row per example"),
        (np.zeros((10, 4, 1)), {"attributes": np.zeros(10)}, r"attributes\[:, None\]"),
        ([np.zeros((4, 1)), np.zeros((6, 1))], {}, "longer than max_sequence_len=4"),
        ([np.zeros((4, 1)), np.zeros((3, 2))], {}, "different numbers of features"),
    ],
)
def test_bad_shapes_name_the_fix(features, kw, match):
    with pytest.raises(DataError, match=match):
        _train(features, **kw)


def test_type_list_of_wrong_length():
    with pytest.raises(ParameterError, match="one OutputType per feature"):
        _train(np.zeros((10, 4, 2)), feature_types=[OutputType.CONTINUOUS])


def test_inf_and_nan_attributes_are_located():
    features = np.zeros((10, 4, 1))
    features[7, 2, 0] = np.inf
    attributes = np.zeros((10, 1))
    attributes[[2, 5], 0] = np.nan
    with pytest.raises(DataError) as info:
        _train(features, attributes=attributes)
    message = str(info.value)
    assert "2 problems" in message
    assert "feature 0 has infinite values in example [7]" in message
    assert "attribute 0 is continuous and has NaN in examples [2, 5]" in message


def test_callers_arrays_are_not_modified(rng):
    features = rng.normal(size=(12, 4, 1))
    attributes = np.array([["a"], ["b"]] * 6, dtype=object)
    before_f, before_a = features.copy(), attributes.copy()
    _train(features, attributes=attributes)
    np.testing.assert_array_equal(features, before_f)
    np.testing.assert_array_equal(attributes, before_a)


def test_seed_makes_training_bit_for_bit_reproducible(rng):
    features = rng.normal(size=(24, 4, 2))
    a, b = _train(features), _train(features)
    for pa, pb in zip(a.generator.parameters(), b.generator.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert a.history[0]["generator_loss"] == b.history[0]["generator_loss"]
    np.testing.assert_array_equal(
        np.stack(a.generate_numpy(5)[1]), np.stack(b.generate_numpy(5)[1])
    )


def test_seeding_leaves_the_global_rng_alone(rng):
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    _train(rng.normal(size=(8, 4, 1)))
    assert torch.equal(torch.rand(3), expected)


def test_generation_with_given_noise_is_deterministic_and_keeps_train_mode(rng):
    model = _train(rng.normal(size=(16, 4, 1)))
    attribute_noise = rng.normal(size=(5, 10))
    feature_noise = rng.normal(size=(5, 2, 10))
    first = model.generate_numpy(attribute_noise=attribute_noise, feature_noise=feature_noise)
    second = model.generate_numpy(attribute_noise=attribute_noise, feature_noise=feature_noise)
    np.testing.assert_array_equal(np.stack(first[1]), np.stack(second[1]))
    assert model.generator.training


def test_generation_argument_errors(rng):
    with pytest.raises(NotTrainedError, match="train_numpy"):
        DGAN(_config()).generate_numpy(3)
    model = _train(rng.normal(size=(16, 4, 1)))
    with pytest.raises(ParameterError, match="Pass n"):
        model.generate_numpy()
    with pytest.raises(ParameterError, match=r"expected \(n, 10\)"):
        model.generate_numpy(attribute_noise=np.zeros((3, 4)))
    with pytest.raises(ParameterError, match="disagree"):
        model.generate_numpy(3, feature_noise=np.zeros((4, 2, 10)))


def test_generates_in_batches_in_original_units(rng):
    features = rng.uniform(100, 200, size=(16, 4, 1))
    model = _train(features)
    _, series = model.generate_numpy(40)  # > batch_size=16
    values = np.stack(series)
    assert len(series) == 40 and values.dtype == np.float64
    assert values.min() >= 100 - 1e-6 and values.max() <= 200 + 1e-6


def test_no_attributes_only_discrete_features_single_feature(rng):
    features = rng.choice(["up", "down"], size=(16, 4, 1)).astype(object)
    model = _train(features)
    attributes, series = model.generate_numpy(6)
    assert attributes is None
    assert set(np.concatenate(series).ravel()) <= {"up", "down"}


def test_variable_length_series_generate_learned_lengths(rng):
    features = [rng.normal(size=(length, 1)) for length in [2, 3, 4] * 8]
    model = _train(features)
    _, series = model.generate_numpy(30)
    assert {len(s) for s in series} <= {1, 2, 3, 4}


def test_mixed_attribute_types_inferred(rng):
    attributes = np.empty((16, 2), dtype=object)
    attributes[:, 0] = rng.choice(["x", "y"], 16)
    attributes[:, 1] = rng.normal(size=16)
    model = _train(rng.normal(size=(16, 4, 1)), attributes=attributes)
    generated, _ = model.generate_numpy(8)
    assert set(generated[:, 0]) <= {"x", "y"}
    assert all(isinstance(v, float) for v in generated[:, 1])
