"""match_periods: each generated period mapped, quantile to quantile, onto the training
series' periods before the carrier draws it (`dgan.encoding.period_map`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig
from dgan.encoding.marginals import QUANTILES
from dgan.encoding.period_map import PeriodMap, interpolate
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
    periods = PeriodMap.fit(SeriesRows.from_list(series), [0], T)
    assert periods.real.shape == (1, QUANTILES)
    units = _units(series)
    np.testing.assert_allclose(periods.real[0, [0, 500, -1]], np.quantile(units, [0, 0.5, 1]))
    assert np.all(np.diff(periods.real[0]) >= 0)


def test_the_generators_own_quantiles_land_on_the_training_ones():
    real = np.linspace(0.2, 0.8, QUANTILES)[None]
    periods = PeriodMap(real)
    own_units = np.random.default_rng(1).beta(5, 2, size=(5000, 1))  # skewed, narrow
    own = PeriodMap.quantiles(own_units)
    mapped = periods.apply(torch.from_numpy(own_units).float(), own).double().numpy()
    np.testing.assert_allclose(np.quantile(mapped, [0.05, 0.5, 0.95]), [0.23, 0.5, 0.77], atol=0.01)
    order = np.argsort(own_units[:, 0])  # monotone: each series keeps its rank
    assert np.all(np.diff(mapped[order, 0]) >= -1e-6)


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
    assert model.generator.carrier.unit_map is None  # generation alone maps


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
    assert "match_periods" not in str(DGAN(off).plan(series, warm_up_steps=0))
    model = DGAN(off)
    model.train_numpy(series, progress_bar=False)
    assert model.encoder.period_map is None
    assert DGANConfig.gretel(max_sequence_len=T, sample_len=10).match_periods is False


def test_true_in_a_private_run_is_a_clear_error():
    with pytest.raises(ParameterError, match="match_periods=True maps generated periods"):
        DGANConfig(max_sequence_len=T, sample_len=10, dp_epsilon=5.0, match_periods=True)
