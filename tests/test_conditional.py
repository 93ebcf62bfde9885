"""Conditional generation: series generated for attribute values the user asks for."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dgan import DGAN, DfStyle, DGANConfig, OutputType
from dgan.errors import DataError, ParameterError
from dgan.precision import Precision, PrecisionPolicy
from synthetic import CLASS_CYCLES, dominant_cycles, sine_dataset
from tiny import tiny_config

C, D = OutputType.CONTINUOUS, OutputType.DISCRETE


def _config(**kw) -> DGANConfig:
    return tiny_config(**{"sample_len": 2, "batch_size": 16, "seed": 3, **kw})


@pytest.fixture(scope="module")
def numpy_model() -> DGAN:
    """Tiny model with a discrete (class 0/1/2) and a continuous (amplitude) attribute."""
    attributes, features = sine_dataset(32, length=6, seed=0)
    model = DGAN(_config())
    model.train_numpy(features, attributes=attributes, attribute_types=[D, C], progress_bar=False)
    return model


@pytest.fixture(scope="module")
def frame_model() -> DGAN:
    """Tiny LONG-frame model with attributes 'site' (strings) and 'floor' (ints, discrete)."""
    rng = np.random.default_rng(0)
    n, length = 16, 3
    df = pd.DataFrame(
        {
            "id": np.repeat(np.arange(n), length),
            "site": np.repeat(rng.choice(["north", "south"], n), length),
            "floor": np.repeat(rng.integers(0, 3, n), length),
            "temp": rng.normal(20, 2, n * length),
        }
    )
    model = DGAN(_config(max_sequence_len=length, sample_len=1))
    model.train_dataframe(
        df,
        attribute_columns=["site", "floor"],
        example_id_column="id",
        discrete_columns=["floor"],
        df_style=DfStyle.LONG,
        progress_bar=False,
    )
    return model


@pytest.fixture(scope="module")
def unscaled_model() -> DGAN:
    """Like `numpy_model` without example scaling: the attributes reach the series only
    through the LSTM (no generated midpoints and half-ranges carry them)."""
    attributes, features = sine_dataset(32, length=6, seed=0)
    model = DGAN(_config(apply_example_scaling=False))
    model.train_numpy(features, attributes=attributes, attribute_types=[D, C], progress_bar=False)
    return model


def _noise(n: int, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return dict(attribute_noise=rng.normal(size=(n, 10)), feature_noise=rng.normal(size=(n, 3, 10)))


def test_generated_attributes_are_exactly_the_requested_ones(numpy_model):
    wanted = np.array([[0.0, 1.2345678], [2.0, 0.7], [1.0, 3.0], [2.0, 0.7]])
    attributes, series = numpy_model.generate_numpy(attributes=wanted)
    assert attributes.tolist() == wanted.tolist()  # not their float32 round trip
    assert len(series) == 4 and all(s.shape == (6, 1) for s in series)
    # n may be given as well, if it agrees.
    assert len(numpy_model.generate_numpy(4, attributes=wanted)[1]) == 4


def test_the_generator_receives_the_encoded_condition(numpy_model):
    """Not only echoed back by the facade: the generator itself outputs (and so is fed)
    the encoding of the requested attributes, and its other outputs follow them."""
    sampler = numpy_model.sampler
    noise = [torch.as_tensor(v, dtype=torch.float32) for v in _noise(3).values()]
    wanted = np.array([[0.0, 0.7], [1.0, 1.5], [2.0, 2.0]])
    _, condition = sampler.encode_condition(wanted)
    policy = PrecisionPolicy(numpy_model.device, Precision.FP32)
    encoded = sampler.generate_encoded(*noise, condition, policy)
    np.testing.assert_array_equal(encoded.attributes, condition.numpy())
    free = sampler.generate_encoded(*noise, None, policy)
    assert not np.allclose(free.additional_attributes, encoded.additional_attributes)


@pytest.mark.parametrize("fixture", ["numpy_model", "unscaled_model"])
def test_different_requested_attributes_give_different_series_from_the_same_noise(fixture, request):
    """Conditioning is reproducible for one request and changes the series for another."""
    model = request.getfixturevalue(fixture)
    n = 4
    noise = _noise(n)

    def series(label: float, amplitude: float) -> np.ndarray:
        wanted = np.tile([label, amplitude], (n, 1))
        return np.stack(model.generate_numpy(attributes=wanted, **noise)[1])

    reference = series(0, 1.0)
    np.testing.assert_array_equal(series(0, 1.0), reference)  # the same request: the same
    for other in (series(1, 1.0), series(2, 1.0), series(0, 1.9)):
        assert np.abs(other - reference).max() > 1e-4


@pytest.mark.parametrize(
    "attributes, error, match",
    [
        (np.array([[5, 1.0], [7, 1.0]]), DataError, r"attribute 0.*never seen.*\['5.0', '7.0'\]"),
        (np.array([[1, np.nan]]), DataError, r"attribute 1 is NaN.*finite number in every row"),
        (np.array([[1, np.inf]]), DataError, r"attribute 1 is \+/-inf.*finite number"),
        (np.array([1, 1.0]), DataError, r"shape \(n, 2\).*attributes\[None, :\]"),
        ([[1, "big"]], DataError, r"attribute 1 was continuous in training.*give numbers"),
        (np.zeros((3, 2)), ParameterError, "n=4 but 3 attribute rows"),
    ],
    ids=["unknown-category", "nan", "inf", "1-d", "text", "count"],
)
def test_bad_conditions_name_the_attribute_and_the_fix(numpy_model, attributes, error, match):
    n = 4 if error is ParameterError else None
    with pytest.raises(error, match=match):
        numpy_model.generate_numpy(n, attributes=attributes)


def test_a_model_without_attributes_cannot_be_conditioned(rng):
    model = DGAN(_config())
    model.train_numpy(rng.normal(size=(8, 6, 1)), progress_bar=False)
    with pytest.raises(ParameterError, match="trained without attributes"):
        model.generate_numpy(attributes=np.zeros((2, 1)))


def test_generate_dataframe_for_requested_attribute_rows(frame_model):
    wanted = pd.DataFrame({"floor": [2, 0, 2], "site": ["south", "north", "south"]})
    out = frame_model.generate_dataframe(attributes=wanted)
    per_example = out.groupby("id", sort=True)[["site", "floor"]].first()
    assert per_example.to_dict("list") == {
        "site": ["south", "north", "south"],
        "floor": [2, 0, 2],
    }
    assert out["floor"].dtype == np.int64 and len(out) == 3 * 3


def test_unknown_categories_in_a_frame_are_all_named_at_once(frame_model):
    wanted = pd.DataFrame({"site": ["east", "north"], "floor": [0, 9]})
    with pytest.raises(DataError) as error:
        frame_model.generate_dataframe(attributes=wanted)
    message = str(error.value)
    assert "2 problems" in message
    assert "'site' has values never seen in training: ['east']" in message
    assert "'floor' has values never seen in training: ['9']" in message
    assert "known categories are ['north', 'south']" in message
    assert "Use only those" in message


def test_attributes_frame_errors(frame_model):
    with pytest.raises(DataError, match=r"lacks column\(s\) \['floor'\]"):
        frame_model.generate_dataframe(attributes=pd.DataFrame({"site": ["north"]}))
    with pytest.raises(ParameterError, match="must be a pandas DataFrame"):
        frame_model.generate_dataframe(attributes=np.array([["north", 1]], dtype=object))


@pytest.mark.slow
def test_conditioning_reproduces_each_requested_class_and_amplitude():
    """Trained on `sine_dataset`, the model must give each requested class its own
    frequency and follow the requested amplitude; noise could not pass these checks."""
    attributes, features = sine_dataset(1000, length=20, seed=1)
    config = DGANConfig(  # gretel's settings, which the thresholds were measured with
        max_sequence_len=20, sample_len=5, batch_size=100, epochs=100, cuda=False, seed=0,
        large_data=False,
    )  # fmt: skip
    model = DGAN(config)
    model.train_numpy(features, attributes=attributes, attribute_types=[D, C], progress_bar=False)

    rng = np.random.default_rng(5)
    n = 200
    for label, cycles in enumerate(CLASS_CYCLES):
        amplitude = rng.uniform(0.5, 2.0, n)
        wanted = np.stack([np.full(n, float(label)), amplitude], axis=1)
        generated_attributes, series = model.generate_numpy(attributes=wanted)
        series = np.stack(series)[:, :, 0]
        assert generated_attributes.tolist() == wanted.tolist()
        matched = np.mean(dominant_cycles(series) == cycles)
        assert matched >= 0.8, f"class {label}: {matched:.0%} of series have {cycles} cycles"
        relation = np.corrcoef(amplitude, series.std(axis=1))[0, 1]
        assert relation > 0.4, f"class {label}: amplitude barely drives the series ({relation})"
    # The same noise conditioned on different classes gives different frequencies.
    noise = dict(
        attribute_noise=rng.normal(size=(n, 10)), feature_noise=rng.normal(size=(n, 4, 10))
    )
    by_class = [
        dominant_cycles(
            np.stack(model.generate_numpy(attributes=[[k, 1.5]] * n, **noise)[1])[:, :, 0]
        )
        for k in range(3)
    ]
    for k, cycles in enumerate(CLASS_CYCLES):
        assert np.mean(by_class[k] == cycles) >= 0.8
