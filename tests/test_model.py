import numpy as np
import pandas as pd
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.errors import DataError, NotTrainedError, ParameterError
from dgan.precision import Precision, PrecisionPolicy
from tiny import tiny_config


def _config(**kw) -> DGANConfig:
    return tiny_config(
        **{"max_sequence_len": 4, "sample_len": 2, "batch_size": 16, "seed": 3, **kw}
    )


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
    assert "feature 0 is +/-inf at 1 time step(s) in 1 example(s) (indices [7])" in message
    assert "attribute 0 is NaN in 2 example(s) (indices [2, 5])" in message


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


def _generator_calls(model: DGAN, monkeypatch) -> list[int]:
    """The batch size of each generator call from now on."""
    calls: list[int] = []
    forward = type(model.generator).forward

    def counting(self, attribute_noise, *args, **kw):
        calls.append(len(attribute_noise))
        return forward(self, attribute_noise, *args, **kw)

    monkeypatch.setattr(type(model.generator), "forward", counting)
    return calls


def test_generation_has_its_own_batch_size_and_it_never_changes_the_values(rng, monkeypatch):
    """Before: generation ran in training's batches (16 here; the size rule picks 16 to
    128), so 4,096 series took 256 generator calls."""
    from dgan.sampling import GENERATION_BATCH, generation_batch_size

    model = _train(rng.normal(size=(16, 4, 1)))
    calls = _generator_calls(model, monkeypatch)
    noise = model.attribute_noise_func(100), model.feature_noise_func(100)
    _, one_call = model.generate_numpy(attribute_noise=noise[0], feature_noise=noise[1])
    assert calls == [100]
    calls.clear()
    _, in_batches = model.generate_numpy(
        attribute_noise=noise[0], feature_noise=noise[1], batch_size=30
    )
    assert calls == [30, 30, 30, 10]
    np.testing.assert_allclose(np.stack(in_batches), np.stack(one_call), rtol=1e-6, atol=1e-7)
    assert generation_batch_size(model.config, model.encoder) == GENERATION_BATCH
    long = dict(model.config.to_dict(), max_sequence_len=40_000, sample_len=1)
    assert generation_batch_size(DGANConfig(**long), model.encoder) < 1024  # bounded by memory
    with pytest.raises(ParameterError, match=r"batch_size must be None .* or a positive integer"):
        model.generate_numpy(3, batch_size=0)


def test_no_attributes_only_discrete_features_single_feature(rng):
    features = rng.choice(["up", "down"], size=(16, 4, 1)).astype(object)
    model = _train(features)
    attributes, series = model.generate_numpy(6)
    assert attributes is None
    assert set(np.concatenate(series).ravel()) <= {"up", "down"}


def _force_ends(generator, ends: list[int], tie: bool) -> None:
    """Make the generator's flag say: example i continues before step ends[i], ends there
    (or ties, which also ends a series), and "continues" again after it."""
    flag = generator.generation_flag_column

    def hook(module, inputs, output):
        out = output.clone()
        steps = torch.arange(out.shape[1])[None, :]
        end = torch.tensor(ends)[:, None]
        at_end = (steps == end).to(out.dtype)
        ends_value = 0.5 if tie else 0.9
        out[..., flag + 1] = at_end * ends_value + (1 - at_end) * 0.1
        out[..., flag] = 1 - out[..., flag + 1]
        return out

    generator.feature_activation.register_forward_hook(hook)


@pytest.mark.parametrize("tie", [False, True])
def test_variable_length_series_end_where_the_generator_says(rng, tie):
    features = [rng.uniform(1, 2, size=(length, 1)) for length in [2, 3, 4] * 8]
    model = _train(features)
    assert model.encoder.variable_length
    ends = [0, 1, 2, 3, 1, 99]  # end steps: lengths 1, 2, 3, 4, 2 and never (full length)
    _force_ends(model.generator, ends, tie)
    _, series = model.generate_numpy(len(ends))
    assert [len(s) for s in series] == [1, 2, 3, 4, 2, 4]
    assert all(np.isfinite(s).all() and (s >= 1 - 1e-9).all() for s in series)
    # The generator zeroes every step after the end, and only those.
    sampler = model.sampler
    noise = sampler.noise(len(ends))
    policy = PrecisionPolicy(model.device, Precision.FP32)
    encoded = sampler.generate_encoded(*noise, None, policy).features
    for k, end in enumerate(ends):
        assert (encoded[k, end + 1 :] == 0).all()
        assert (encoded[k, : end + 1] != 0).any(axis=-1).all()


def test_mixed_attribute_types_inferred(rng):
    attributes = np.empty((16, 2), dtype=object)
    attributes[:, 0] = rng.choice(["x", "y"], 16)
    attributes[:, 1] = rng.normal(size=16)
    model = _train(rng.normal(size=(16, 4, 1)), attributes=attributes)
    generated, _ = model.generate_numpy(8)
    assert set(generated[:, 0]) <= {"x", "y"}
    assert all(isinstance(v, float) for v in generated[:, 1])


def test_gretel_noise_functions_reproduce_generation(rng):
    model = _train(rng.normal(size=(16, 4, 1)), attributes=rng.normal(size=(16, 1)))
    with pytest.raises(NotTrainedError, match="train_numpy"):
        DGAN(_config()).attribute_noise_func(3)
    attribute_noise, feature_noise = model.attribute_noise_func(5), model.feature_noise_func(5)
    assert attribute_noise.shape == (5, 10) and feature_noise.shape == (5, 2, 10)
    assert not torch.equal(attribute_noise, model.attribute_noise_func(5))  # fresh each call
    # Tensors (as gretel users pass them) and arrays of the same noise give the same output.
    from_tensors = model.generate_numpy(
        attribute_noise=attribute_noise, feature_noise=feature_noise
    )
    from_arrays = model.generate_numpy(
        attribute_noise=attribute_noise.numpy(), feature_noise=feature_noise.numpy()
    )
    np.testing.assert_array_equal(from_tensors[0], from_arrays[0])
    np.testing.assert_array_equal(np.stack(from_tensors[1]), np.stack(from_arrays[1]))


def test_dataframe_messages_name_columns_and_examples(rng):
    wide = pd.DataFrame(rng.normal(size=(10, 4)), columns=["t0", "t1", "t2", "t3"])
    wide["kind"] = ["a", "b"] * 5
    wide.loc[3, "t2"] = np.inf
    with pytest.raises(DataError, match=r"feature 't0\.\.t3' is \+/-inf .* \(row 3\)"):
        DGAN(_config()).train_dataframe(wide, attribute_columns=["kind"], progress_bar=False)

    long = pd.DataFrame(
        {"sensor": np.repeat([f"s{i}" for i in range(6)], 4), "temp": rng.normal(size=24)}
    )
    long.loc[long["sensor"].isin(["s1", "s2", "s4", "s5"]), "temp"] = np.nan
    with pytest.raises(DataError) as error:
        DGAN(_config()).train_dataframe(
            long, example_id_column="sensor", df_style="long", progress_bar=False
        )
    assert "drop 4 of 6 examples (67%)" in str(error.value)
    assert "4 with feature 'temp' entirely NaN ('s1', 's2', 's4', 's5')" in str(error.value)


def test_categories_unseen_in_training_name_the_column_when_training_continues(rng):
    df = pd.DataFrame({"kind": ["a", "b"] * 8, "t0": rng.normal(size=16), "t1": 0.0})
    model = DGAN(_config(max_sequence_len=2, sample_len=1))
    model.train_dataframe(df, attribute_columns=["kind"], progress_bar=False)
    df.loc[0, "kind"] = "z"
    with pytest.raises(DataError, match=r"'kind' has values never seen in training: \['z'\]"):
        model.train_dataframe(df, attribute_columns=["kind"], progress_bar=False)


def test_numeric_output_is_float_and_other_output_keeps_its_categories(rng):
    features = np.concatenate([rng.normal(size=(16, 4, 1)), rng.integers(0, 3, (16, 4, 1))], 2)
    attributes = np.array([[0], [1], [np.nan], [1]] * 4)  # a missing category: NaN
    model = _train(
        features,
        feature_types=[OutputType.CONTINUOUS, OutputType.DISCRETE],
        attributes=attributes,
        attribute_types=[OutputType.DISCRETE],
    )
    generated_attributes, series = model.generate_numpy(30)
    assert generated_attributes.dtype == np.float64 and series[0].dtype == np.float64
    assert set(np.unique(np.stack(series)[:, :, 1])) <= {0.0, 1.0, 2.0}
    known = np.isin(generated_attributes, [0.0, 1.0]) | np.isnan(generated_attributes)
    assert known.all()

    strings = np.array([["a"], ["b"]] * 8, dtype=object)
    generated_attributes, _ = _train(features, attributes=strings).generate_numpy(5)
    assert generated_attributes.dtype == object and set(generated_attributes[:, 0]) <= {"a", "b"}


def test_dataframe_dtypes_decide_discreteness_and_round_trip(rng):
    n, length = 12, 3
    df = pd.DataFrame(
        {
            "id": np.repeat(np.arange(n), length),
            "when": np.tile(pd.date_range("2024-01-01", periods=length, freq="D"), n),
            "on": rng.choice([True, False], n * length),  # bool: discrete
            "mode": rng.choice(["eco", "fast", None], n * length),  # object, NaN a category
            "zone": pd.Categorical(rng.choice(["z1", "z2"], n * length)),
            "gear": rng.choice([0, 5, 10], n * length),  # int, forced discrete
            "rpm": rng.integers(800, 3000, n * length),  # int, continuous
        }
    )
    model = DGAN(_config(max_sequence_len=length, sample_len=1))
    model.train_dataframe(
        df,
        example_id_column="id",
        time_column="when",
        discrete_columns=["gear"],
        df_style="long",
        progress_bar=False,
    )
    kinds = {e.name: type(e).__name__ for e in model.encoder.feature_encoders}
    assert kinds == {
        "on": "DiscreteEncoder",
        "mode": "DiscreteEncoder",
        "zone": "DiscreteEncoder",
        "gear": "DiscreteEncoder",
        "rpm": "ContinuousEncoder",
    }
    assert None in model.encoder.feature_encoders[1].categories  # missing is a category

    out = model.generate_dataframe(40)
    assert list(out.columns) == list(df.columns)
    assert out.dtypes.to_dict() == df.dtypes.to_dict()  # ints stay ints, bools bools, ...
    assert set(out["gear"]) <= {0, 5, 10}
    assert set(out["mode"].dropna()) <= {"eco", "fast"} and set(out["zone"]) <= {"z1", "z2"}
    # Every generated series gets the training time grid, from its first day on.
    for _, series in out.groupby("id"):
        assert series["when"].tolist() == list(df["when"].iloc[: len(series)])


def test_bools_are_discrete_in_object_arrays_too(rng):
    features = np.empty((16, 4, 3), dtype=object)
    features[:, :, 0] = rng.normal(size=(16, 4))
    features[:, :, 1] = rng.choice([True, False], size=(16, 4))
    features[:, :, 2] = rng.choice(["a", "b"], size=(16, 4))
    model = _train(features)
    values = np.concatenate(model.generate_numpy(10)[1])
    assert {type(v) for v in values[:, 1]} == {bool}
    assert all(isinstance(v, float) for v in values[:, 0])
