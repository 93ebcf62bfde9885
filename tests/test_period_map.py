"""match_periods: each generated period mapped, quantile to quantile, onto the training
series' periods before the carrier draws it (`dgan.encoding.period_map`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.marginals import QUANTILES
from dgan.encoding.period_map import MIN_CLASS_SERIES, PeriodMap, interpolate
from dgan.encoding.periods import encode_frequencies, series_frequencies
from dgan.errors import ParameterError
from dgan.series import SeriesRows
from tiny import tiny_config

T = 120
PERIODS = (5.0, 30.0)


def _waves(rng, n=32, periods=PERIODS):
    """n series of T steps, each a sine at its own period, spread over ``periods``."""
    out = []
    for _ in range(n):
        steps = np.arange(T)
        period = np.exp(rng.uniform(*np.log(periods)))
        wave = np.sin(2 * np.pi * steps / period + rng.uniform(0, 2 * np.pi))
        out.append((rng.uniform(1, 3) * wave + 0.05 * rng.normal(size=len(steps)))[:, None])
    return out


def _units(series) -> np.ndarray:
    """Each series' dominant frequency as the carrier's unit."""
    frequency = series_frequencies(SeriesRows.from_list(list(series)), 0)[0]
    return encode_frequencies(frequency, T, zero_one=True).astype(np.float64)


@pytest.fixture(scope="module")
def trained():
    series = _waves(np.random.default_rng(0))
    config = tiny_config(max_sequence_len=T, sample_len=10, epochs=2, period_carrier=True)
    model = DGAN(config)
    model.train_numpy(series, progress_bar=False)
    return model, series


# ----- the map -----------------------------------------------------------------------------
def test_the_map_holds_the_training_periods_quantiles_on_the_carriers_scale(rng):
    series = _waves(rng, n=40)
    classes = np.arange(40) % 2
    periods = PeriodMap.fit(SeriesRows.from_list(series), [0], T, 0, classes, 3)
    assert periods.real.shape == (3, 1, QUANTILES)
    units = _units(series)
    for k in (0, 1):
        mine = np.quantile(units[classes == k], [0, 0.5, 1])
        np.testing.assert_allclose(periods.real[k, 0, [0, 500, -1]], mine)
    # a class with too few series (here none) takes all classes' quantiles
    np.testing.assert_allclose(periods.real[2, 0, [0, -1]], [units.min(), units.max()])
    assert np.all(np.diff(periods.real, axis=-1) >= 0)


def test_a_class_reads_its_own_quantiles_from_enough_of_its_series():
    units = np.concatenate([np.full(MIN_CLASS_SERIES, 0.2), np.full(MIN_CLASS_SERIES - 1, 0.8)])
    classes = np.repeat([0, 1], [MIN_CLASS_SERIES, MIN_CLASS_SERIES - 1])
    own = PeriodMap.quantiles(units[:, None], classes, 2)
    assert np.all(own[0] == 0.2)
    assert own[1, 0, 0] == 0.2 and own[1, 0, -1] == 0.8  # too few: all series' quantiles


def test_the_generators_own_quantiles_land_on_the_training_ones():
    real = np.stack([np.linspace(0.2, 0.8, QUANTILES), np.linspace(0.1, 0.3, QUANTILES)])
    periods = PeriodMap(0, real[:, None])
    rng = np.random.default_rng(1)
    own_units = rng.beta(5, 2, size=(6000, 1))  # skewed, narrow, the same for both classes
    classes = rng.integers(0, 2, size=6000)
    own = PeriodMap.quantiles(own_units, classes, 2)
    units, codes = torch.from_numpy(own_units).float(), torch.from_numpy(classes)
    mapped = periods.apply(units, codes, own).double().numpy()[:, 0]
    for k, expected in ((0, [0.23, 0.5, 0.77]), (1, [0.11, 0.2, 0.29])):
        got = np.quantile(mapped[classes == k], [0.05, 0.5, 0.95])
        np.testing.assert_allclose(got, expected, atol=0.01)
        order = np.argsort(own_units[classes == k, 0])  # monotone: each keeps its rank
        assert np.all(np.diff(mapped[classes == k][order]) >= -1e-6)


def test_interpolation_holds_its_ends_and_takes_the_first_of_repeated_knots():
    knots = torch.tensor([[0.1, 0.1, 0.5, 0.9], [0.0, 0.3, 0.6, 1.0]])
    values = torch.tensor([[0.0, 0.2, 0.6, 1.0], [1.0, 2.0, 3.0, 4.0]])
    x = torch.tensor([[0.0, 0.1, 0.3, 0.95], [-1.0, 0.15, 0.6, 5.0]])
    out = interpolate(x, knots, values)
    torch.testing.assert_close(out, torch.tensor([[0.0, 0.0, 0.4, 1.0], [1.0, 1.5, 3.0, 4.0]]))


# ----- in a model --------------------------------------------------------------------------
def test_generated_periods_take_the_training_spread(trained):
    model, series = trained
    assert model.encoder.period_map is not None
    real = np.quantile(_units(series), [0.1, 0.5, 0.9])
    model.sampler.reseed(0)
    mapped = np.quantile(_units(model.generate_numpy(200)[1]), [0.1, 0.5, 0.9])
    kept, model.encoder.period_map = model.encoder.period_map, None
    try:
        model.sampler.reseed(0)
        as_generated = np.quantile(_units(model.generate_numpy(200)[1]), [0.1, 0.5, 0.9])
    finally:
        model.encoder.period_map = kept
    # two epochs leave the generator's periods far from the training ones; the map does not
    assert np.abs(as_generated - real).max() > 0.1
    np.testing.assert_allclose(mapped, real, atol=0.05)


def test_each_class_keeps_its_own_periods(rng):
    bands = {0: (5.0, 7.0), 1: (20.0, 30.0)}
    classes = np.arange(48) % 2
    series = [_waves(rng, 1, bands[k])[0] for k in classes]
    config = tiny_config(max_sequence_len=T, sample_len=10, epochs=2, period_carrier=True)
    model = DGAN(config)
    how = dict(attributes=classes[:, None].astype(float), attribute_types=[OutputType.DISCRETE])
    model.train_numpy(series, **how, progress_bar=False)
    assert model.encoder.period_map.real.shape == (2, 1, QUANTILES)

    def in_band(generated):
        attributes, features = generated
        periods = 1 / series_frequencies(SeriesRows.from_list(features), 0)[0]
        low = np.array([bands[int(k)][0] for k in attributes[:, 0]]) * 0.95
        high = np.array([bands[int(k)][1] for k in attributes[:, 0]]) * 1.05
        return np.mean((periods >= low) & (periods <= high))

    model.sampler.reseed(0)
    assert in_band(model.generate_numpy(100)) >= 0.95
    model.sampler.reseed(0)
    asked = np.repeat([[0.0], [1.0]], 50, axis=0)  # conditioned: each series' given class
    assert in_band(model.generate_numpy(attributes=asked)) >= 0.95
    model.encoder.period_map = None
    model.sampler.reseed(0)
    assert in_band(model.generate_numpy(100)) < 0.8  # two epochs learn no periods


def test_the_map_and_the_texture_filter_calibrate_together(rng):
    waves = _waves(rng, n=24)
    series = [np.concatenate([w, rng.normal(size=(T, 1))], axis=1) for w in waves]
    config = tiny_config(max_sequence_len=T, sample_len=10, epochs=1, period_carrier="auto")
    model = DGAN(config)
    model.train_numpy(series, progress_bar=False)
    assert model.encoder.period_features == [0] and model.encoder.texture is not None
    assert model.encoder.marginals.features == [0]  # "auto" maps the carried values only
    calibration = model.sampler.calibration()
    assert calibration.kernels is not None and calibration.periods.shape == (1, 1, QUANTILES)
    _, features = model.generate_numpy(4)
    assert all(np.isfinite(f).all() for f in features)


def test_the_map_is_saved_and_a_loaded_model_generates_the_same(trained, tmp_path):
    model, _ = trained
    loaded = DGAN.load(model.save(tmp_path / "periods.dgan"))
    np.testing.assert_array_equal(loaded.encoder.period_map.real, model.encoder.period_map.real)
    model.sampler.reseed(3)
    loaded.sampler.reseed(3)
    for a, b in zip(model.generate_numpy(5)[1], loaded.generate_numpy(5)[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_training_draws_the_periods_as_generated(trained):
    model, _ = trained
    noise = model.sampler.noise(4)
    with torch.no_grad():
        before = model.generator(*noise)[2]
    model.sampler.reseed(1)
    model.generate_numpy(3)  # sets and clears the carrier's map
    with torch.no_grad():
        after = model.generator(*noise)[2]
    torch.testing.assert_close(after, before)


def test_the_plan_says_so_and_false_or_gretel_turns_it_off(rng):
    series = _waves(rng, n=16)
    config = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=True)
    plan = DGAN(config).plan(series, warm_up_steps=0)
    assert "generated periods mapped onto the training series' (match_periods)" in str(plan)
    off = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=True, match_periods=False)
    assert "(match_periods)" not in str(DGAN(off).plan(series, warm_up_steps=0))
    model = DGAN(off)
    model.train_numpy(series, progress_bar=False)
    assert model.encoder.period_map is None
    assert DGANConfig.gretel(max_sequence_len=T, sample_len=10).match_periods is False


def test_auto_maps_a_carried_features_values_and_the_plan_says_so(rng):
    series = [np.concatenate([w, w], axis=1) for w in _waves(rng, n=16)]
    config = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=True)
    lines = str(DGAN(config).plan(series, warm_up_steps=0)).splitlines()
    mapped = [line for line in lines if "take the data's distribution (match_marginals)" in line]
    assert len(mapped) == 2  # both features carried
    off = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=False)
    assert "(match_marginals)" not in str(DGAN(off).plan(series, warm_up_steps=0))
    neither = tiny_config(
        max_sequence_len=T, sample_len=10, period_carrier=True, match_marginals=False
    )
    assert "(match_marginals)" not in str(DGAN(neither).plan(series, warm_up_steps=0))


def test_true_in_a_private_run_is_a_clear_error():
    with pytest.raises(ParameterError, match="match_periods=True maps generated periods"):
        DGANConfig(max_sequence_len=T, sample_len=10, dp_epsilon=5.0, match_periods=True)
