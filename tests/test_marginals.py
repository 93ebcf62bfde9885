"""match_marginals: generated values mapped onto the training values' distribution, per
class (dgan.encoding.marginals), calibrated on the generator's own output (dgan.sampling)."""

import json

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.encoder import DataEncoder
from dgan.encoding.mapped_features import HOLDING, MIN_SERIES_ONE_MAP
from dgan.encoding.marginals import PROBABILITIES, QUANTILES, ValueMarginals, quantiles_of
from dgan.errors import ParameterError, SerializationError
from dgan.series import SeriesRows
from model_files import rewritten
from tiny import tiny_config


def _rows(values, length):
    values = np.asarray(values, dtype=np.float64)[:, None]
    return SeriesRows(values, np.full(len(values) // length, length))


def test_the_map_carries_values_onto_each_class_distribution_with_its_repeats():
    rng = np.random.default_rng(0)
    # Class 0 reads exactly 0 half the time and whole numbers otherwise; class 1 is 1e4 +.
    zeros = np.where(rng.random(400) < 0.5, 0.0, rng.integers(1, 20, 400).astype(float))
    real = np.concatenate([zeros, 1e4 + rng.random(400)])
    classes = np.repeat([0, 1], 40)  # 80 series of 10 steps
    marginals = ValueMarginals.fit(_rows(real, 10), [0], 0, classes, 2)
    generated = _rows(rng.normal(size=800), 10)  # the same distribution for both classes
    own = marginals.quantiles(generated, classes)
    mapped = marginals.apply(generated, classes, own).rows[:, 0]
    first, second = mapped[:400], mapped[400:]
    assert abs((first == 0).mean() - (zeros == 0).mean()) < 0.02  # the repeated 0 comes back
    on_grid = first[(first != 0)]
    assert np.mean(on_grid == np.round(on_grid)) > 0.9  # mostly the whole numbers
    assert second.min() >= 1e4 and second.max() <= 1e4 + 1  # each class onto its own
    # A monotone map: each series keeps the order of its values.
    before, after = generated.rows[:, 0], mapped
    assert np.all(np.diff(after[np.argsort(before[:400])]) >= 0)
    assert generated.rows[0, 0] == before[0]  # the input is not changed


def test_a_class_missing_on_either_side_keeps_its_values():
    real = _rows(np.arange(20.0), 10)
    marginals = ValueMarginals.fit(real, [0], 0, np.array([0, 0]), 2)  # class 1: no values
    assert np.isnan(marginals.real[0, 1]).all()
    generated = _rows(np.linspace(0, 1, 20), 10)
    classes = np.array([0, 1])
    out = marginals.apply(generated, classes, marginals.quantiles(generated, classes))
    assert np.array_equal(out.rows[10:], generated.rows[10:])
    assert not np.array_equal(out.rows[:10], generated.rows[:10])
    state = json.loads(json.dumps(marginals.to_json()))  # NaN saved as null
    assert state["real"][0][1] is None
    back = ValueMarginals.from_json(state)
    assert np.array_equal(back.real, marginals.real, equal_nan=True)


def _decades(n=60, t=8, seed=0):
    """Series whose levels span four decades by class (log scale at "auto"), with exact
    zeros, and a linear feature beside them."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 2, n)
    level = np.where(kind == 0, 0.1, 1000.0)[:, None] * (1 + rng.random((n, t)))
    level[rng.random((n, t)) < 0.3] = 0.0
    linear = rng.normal(size=(n, t))
    return np.stack([level, linear], axis=2), kind[:, None].astype(float)


def _fit(**config):
    features, attributes = _decades()
    types = [OutputType.CONTINUOUS] * 2
    base = dict(max_sequence_len=8, sample_len=2)
    return DataEncoder.fit(
        DGANConfig(**{**base, **config}), features, types, attributes, [OutputType.DISCRETE]
    )


def test_auto_maps_the_log_scaled_features_per_class_true_maps_every_continuous_one():
    auto = _fit()
    assert auto.marginals.features == [0]  # the log-scaled one only
    assert auto.marginals.attribute == 0 and auto.marginals.n_classes == 2  # per class
    assert _fit(match_marginals=True).marginals.features == [0, 1]
    assert _fit(match_marginals=False).marginals is None
    assert DGANConfig.gretel(max_sequence_len=8, sample_len=2).match_marginals is False
    # One class for all where no attribute's classes get ranges of their own.
    assert _fit(per_class_scaling=False).marginals.attribute is None
    old = {k: v for k, v in auto.to_json().items() if k != "marginals"}
    assert DataEncoder.from_json(old).marginals is None  # files from before: as generated


def test_auto_maps_every_continuous_feature_of_data_without_classes():
    """One map is the data's one distribution where no discrete attribute splits it and
    there are enough series (Stocks gained, 64 of its windows lost); with an attribute
    (leaves' species would share a map) only log-scaled features."""
    features, _ = _decades(n=MIN_SERIES_ONE_MAP)
    config = DGANConfig(max_sequence_len=8, sample_len=2)
    types = [OutputType.CONTINUOUS] * 2
    encoder = DataEncoder.fit(config, features, types, None, None)
    assert encoder.marginals.features == [0, 1] and encoder.marginals.attribute is None
    plan = DGAN(config).plan(features, warm_up_steps=0)
    assert all(c.detail.endswith("(match_marginals)") for c in plan.columns)
    # Fewer series: their quantiles are the sample's; only the log-scaled feature is mapped.
    few = features[: MIN_SERIES_ONE_MAP - 1]
    assert DataEncoder.fit(config, few, types, None, None).marginals.features == [0]
    plan = DGAN(config).plan(few, warm_up_steps=0)
    assert [c.detail.endswith("(match_marginals)") for c in plan.columns] == [True, False]


def _readings(n=12, t=120, seed=0):
    """A class attribute; a feature of readings on a grid that hold at about half of the
    steps (an accelerometer's counts), and a smooth one that never holds."""
    rng = np.random.default_rng(seed)
    counts = 5.0 + 0.04 * np.cumsum(rng.choice([-1, 0, 0, 1], size=(n, t)), axis=1)
    smooth = np.cumsum(rng.normal(size=(n, t)), axis=1)
    return np.stack([counts, smooth], axis=2), rng.integers(0, 2, (n, 1)).astype(float)


def test_auto_maps_long_series_that_hold_their_values_often():
    """Readings on a grid: mapped, their values land on the grid and the texture's dead
    band can match their holds (gestures held at 1% of steps generated, 48% real)."""
    features, attributes = _readings()
    types = [OutputType.CONTINUOUS] * 2
    config = DGANConfig(max_sequence_len=120, sample_len=10)
    encoder = DataEncoder.fit(config, features, types, attributes, [OutputType.DISCRETE])
    assert encoder.marginals.features == [0]  # not the smooth one, and not log-scaled
    how = dict(feature_types=types, attributes=attributes, attribute_types=[OutputType.DISCRETE])
    plan = DGAN(config).plan(features, warm_up_steps=0, **how)
    mapped = [c.detail.count("(match_marginals)") for c in plan.columns if c.role == "feature"]
    assert mapped == [1, 0]
    # Short windows (the protocol's 24 steps) are left as they were; so are False settings.
    short = DGANConfig(max_sequence_len=24, sample_len=4)
    windows = np.ascontiguousarray(features[:, :24])
    assert (
        DataEncoder.fit(short, windows, types, attributes, [OutputType.DISCRETE]).marginals is None
    )
    off = DGANConfig(max_sequence_len=120, sample_len=10, match_marginals=False)
    assert (
        DataEncoder.fit(off, features, types, attributes, [OutputType.DISCRETE]).marginals is None
    )
    # A grid that holds at fewer steps than `HOLDING` is not mapped.
    moves = np.random.default_rng(1).choice([-1, 1], size=features.shape[:2])
    moves[:, ::10] = 0  # holds at a tenth of the steps
    rare = features.copy()
    rare[:, :, 0] = 5.0 + 0.04 * np.cumsum(moves, axis=1)
    assert np.mean(np.diff(rare[:, :, 0], axis=1) == 0) < HOLDING
    assert DataEncoder.fit(config, rare, types, attributes, [OutputType.DISCRETE]).marginals is None


@pytest.fixture(scope="module")
def trained():
    features, attributes = _decades()
    model = DGAN(tiny_config(max_sequence_len=8, sample_len=2, epochs=2))
    model.train_numpy(
        features, [OutputType.CONTINUOUS] * 2, attributes, [OutputType.DISCRETE],
        progress_bar=False,
    )  # fmt: skip
    return model, features


def test_generated_values_take_the_training_values_repeats(trained):
    model, features = trained
    assert model.encoder.marginals is not None
    model.sampler.reseed(1)
    generated = np.stack(model.generate_numpy(300)[1])
    real_zeros = (features[:, :, 0] == 0).mean()
    assert abs((generated[:, :, 0] == 0).mean() - real_zeros) < 0.1  # exact zeros, ~30%
    assert (generated[:, :, 1] == 0).mean() == 0  # the linear feature as generated


def test_what_is_generated_does_not_depend_on_how_many_nor_on_the_calibration(trained):
    model, _ = trained
    c, rng = model.config, np.random.default_rng(0)
    attribute_noise = rng.normal(size=(50, c.attribute_noise_dim))
    feature_noise = rng.normal(size=(50, c.max_sequence_len // c.sample_len, c.feature_noise_dim))
    many = model.generate_numpy(attribute_noise=attribute_noise, feature_noise=feature_noise)[1]
    few = model.generate_numpy(attribute_noise=attribute_noise[:2], feature_noise=feature_noise[:2])
    # The same map whatever the number (a map read from the generated batch would differ
    # by orders of magnitude here); float noise of batch-size-dependent kernels aside.
    assert np.allclose(np.stack(few[1]), np.stack(many[:2]), rtol=1e-5, atol=1e-6)
    model.sampler.reseed(3)
    first = model.generate_numpy(5)[1]
    model.sampler._calibration = None  # calibrating again draws nothing from the sampler
    model.sampler.reseed(3)
    assert np.array_equal(np.stack(model.generate_numpy(5)[1]), np.stack(first))
    cached = model.sampler.own_quantiles()
    assert model.sampler.own_quantiles() is cached
    with torch.no_grad():  # new weights: calibrated again
        next(model.generator.parameters()).mul_(1.01)
    assert model.sampler.own_quantiles() is not cached
    # Another decoding, the same weights: calibrated again (a map taken off and put back
    # once left the calibration without quantiles, and decoding failed).
    marginals, model.encoder.marginals = model.encoder.marginals, None
    assert model.sampler.own_quantiles() is None
    model.encoder.marginals = marginals
    assert model.sampler.own_quantiles() is not None
    model.generate_numpy(2)


def test_the_quantiles_are_saved_checked_and_loaded(trained, tmp_path):
    model, _ = trained
    path = model.save(tmp_path / "m.dgan")
    loaded = DGAN.load(path)
    assert np.array_equal(loaded.encoder.marginals.real, model.encoder.marginals.real)
    model.sampler.reseed(5)
    loaded.sampler.reseed(5)
    assert np.array_equal(
        np.stack(model.generate_numpy(4)[1]), np.stack(loaded.generate_numpy(4)[1])
    )
    assert len(model.encoder.marginals.to_json()["real"][0][0]) == QUANTILES


@pytest.mark.parametrize(
    "where, value, message",
    [
        ("real", [[list(range(QUANTILES, 0, -1)), None]], r"marginals\.real must be a 1 x 2 list"),
        ("features", [7], r"marginals\.features must be indices of continuous features"),
        ("attribute", 3, r"marginals\.attribute must be null or a discrete attribute's index"),
    ],
)
def test_a_broken_quantile_table_in_a_file_is_named(trained, tmp_path, where, value, message):
    model, _ = trained
    path = model.save(tmp_path / "m.dgan")
    with rewritten(path) as (_, state):
        state["encoder"]["marginals"][where] = value
    with pytest.raises(SerializationError, match=rf"invalid header: .*encoder\.{message}"):
        DGAN.load(path)


def test_a_private_run_refuses_true_and_reads_no_distribution_at_auto():
    with pytest.raises(ParameterError, match="match_marginals=True maps generated values"):
        DGANConfig(max_sequence_len=8, sample_len=2, dp_epsilon=5.0, match_marginals=True)


@pytest.mark.parametrize("kind", ["normal", "tiny and huge", "few values", "rounded", "columns"])
def test_quantiles_from_one_sort_are_numpy_s_exactly(kind):
    """The maps' quantiles come from one sort; they must be np.quantile's, bit for bit, or
    every model would generate other values than before."""
    rng = np.random.default_rng(len(kind))
    draws = {
        "normal": lambda n: rng.normal(size=n),
        "tiny and huge": lambda n: rng.normal(size=n) * 10.0 ** rng.uniform(-30, 30, n),
        "few values": lambda n: rng.integers(0, 4, n).astype(np.float64),
        "rounded": lambda n: np.round(rng.exponential(size=n), 1),
        "columns": lambda n: rng.normal(size=(n, 3)),
    }
    for n in [1, 2, 3, 7, 1000, 1001, 1002, 4321]:
        values = draws[kind](n)
        expected = np.quantile(values, PROBABILITIES, axis=0)
        assert np.array_equal(quantiles_of(values), expected), n
