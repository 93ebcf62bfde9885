"""match_switches: generated series switch between a class's levels as often as the
training series (dgan.encoding.switches), through the value map (dgan.encoding.marginals)."""

import numpy as np
import pytest

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.encoder import DataEncoder
from dgan.encoding.marginals import QUANTILES, ValueMarginals
from dgan.encoding.switches import MAX_GAPS, crossings, gaps, sides
from dgan.series import SeriesRows
from model_files import assert_named_when_broken, rewritten
from tiny import tiny_config

LENGTH = 400


def _lamps(rng, n, switches):
    """Series at 0.3 (standby) or about 15 (on), switched ``switches`` times each, with
    1% noise: two levels with nothing between."""
    out = np.empty((n, LENGTH))
    for k in range(n):
        edges = np.sort(rng.choice(np.arange(20, LENGTH - 20), switches, replace=False))
        on = np.zeros(LENGTH, bool)
        state, last = bool(rng.integers(2)), 0
        for edge in [*edges, LENGTH]:
            on[last:edge], state, last = state, not state, edge
        out[k] = np.where(on, 15.0, 0.3) * (1 + 0.01 * rng.standard_normal(LENGTH))
    return out


def _wandering(rng, n):
    """What the generator draws for lamps: a level that wanders across the gap, with
    noise, crossing it dozens of times a series."""
    steps = rng.standard_normal((n, LENGTH)) * 0.05
    level = np.cumsum(steps, axis=1) + rng.normal(0, 0.3, (n, 1))
    return np.exp(1.5 + level + 0.2 * rng.standard_normal((n, LENGTH)))


def _fitted(rng, switches=2):
    real = _lamps(rng, 40, switches)
    rows = SeriesRows.from_padded(real[:, :, None])
    return ValueMarginals.fit(rows, [0], None, None, 1, floors=[0.5]), rows


def test_a_gap_is_a_wide_empty_step_between_levels_on_the_generators_scale():
    standby_or_on = np.r_[np.full(600, 0.3), np.linspace(14.0, 16.0, 401)]
    assert gaps(standby_or_on).tolist() == [599]
    assert gaps(np.linspace(0.0, 1.0, QUANTILES)).size == 0
    # A lone extreme value is an outlier, not a level, and does not stretch the range:
    # a fridge's start-up spikes at three times its level leave its standby/on gap.
    assert gaps(np.r_[np.linspace(0.0, 1.0, QUANTILES - 1), 50.0]).size == 0
    fridge = np.r_[np.full(600, 1.0), np.linspace(95.0, 105.0, 396), np.full(5, 300.0)]
    assert gaps(fridge).tolist() == [599]
    # Levels 1, 100 and 1,000: the wide step is 100 -> 1,000 on a linear scale, 1 -> 100
    # on the log scale the generator draws on.
    three = np.r_[np.full(400, 1.0), np.full(400, 100.0), np.full(201, 1000.0)]
    assert gaps(three).tolist() == [799]
    assert gaps(three, floor=0.1).tolist() == [399]
    assert gaps(np.repeat(np.arange(10.0), 101)[:QUANTILES]).size == 0  # a grid, no gap
    assert gaps(np.repeat([0.0, 1.0, 2.0], 334)[:QUANTILES]).size == MAX_GAPS


def test_generated_series_switch_as_often_as_the_training_ones():
    rng = np.random.default_rng(11)
    marginals, _ = _fitted(rng)
    at, rates = marginals.gaps_of(0, 0)
    assert len(at) == 1 and 0 < rates[0] < 0.01  # 2 switches in 399 steps
    calibration = SeriesRows.from_padded(_wandering(rng, 200)[:, :, None])
    own = marginals.quantiles(calibration, None)
    margins = marginals.margins(calibration, None, own)
    assert margins[0, 0, 0, 0] > 0 and np.isnan(margins[0, 0, 1:]).all()

    generated = SeriesRows.from_padded(_wandering(rng, 100)[:, :, None])
    plain = marginals.apply(generated, None, own).rows[:, 0]
    kept = marginals.apply(generated, None, own, margins).rows[:, 0]
    middle = (marginals.real[0, 0, at[0]] + marginals.real[0, 0, at[0] + 1]) / 2
    chatter = crossings(generated, plain > middle)
    switched = crossings(generated, kept > middle)
    assert chatter > 5 * rates[0]  # the value map alone: a switch at every crossing
    assert 0.5 * rates[0] <= switched <= 1.5 * rates[0]
    # No value inside the gap, and each state keeps its noise (not a flat line).
    low, high = marginals.real[0, 0, at[0]], marginals.real[0, 0, at[0] + 1]
    assert not ((kept > low) & (kept < high)).any()
    on = kept[kept > middle]
    assert 0.002 < on.std() / on.mean() < 0.05
    # The same values as the plain map where the series stays on one side, and as much
    # of the time on each side.
    same = (plain > middle) == (kept > middle)
    assert same.mean() > 0.8
    assert abs(np.mean(kept > middle) - np.mean(plain > middle)) < 0.03


def _skewed(rng, n):
    """A generator's lamps whose level wanders above the gap or far below it: near the
    gap, most values are just above it."""
    level = np.abs(np.cumsum(rng.standard_normal((n, LENGTH)) * 0.05, axis=1))
    level = level * np.where(rng.random((n, 1)) < 0.5, 1, -3)
    return np.exp(1.8 + level + 0.2 * rng.standard_normal((n, LENGTH)))


def test_switched_series_spend_as_much_time_on_each_side_as_mapped_without_switches():
    rng = np.random.default_rng(11)
    marginals, _ = _fitted(rng)
    at = marginals.gaps_of(0, 0)[0]
    calibration = SeriesRows.from_padded(_skewed(rng, 200)[:, :, None])
    own = marginals.quantiles(calibration, None)
    triggers = marginals.margins(calibration, None, own)
    generated = SeriesRows.from_padded(_skewed(rng, 100)[:, :, None])
    middle = (marginals.real[0, 0, at[0]] + marginals.real[0, 0, at[0] + 1]) / 2
    plain = marginals.apply(generated, None, own).rows[:, 0] > middle
    kept = marginals.apply(generated, None, own, triggers).rows[:, 0] > middle
    # A margin about the gap's middle alone kept them above it 5 points more often.
    centred = triggers.copy()
    centred[0, 0, 0, 1] = 0.0
    off = marginals.apply(generated, None, own, centred).rows[:, 0] > middle
    assert abs(off.mean() - plain.mean()) > 0.03
    assert abs(kept.mean() - plain.mean()) < 0.02
    assert crossings(generated, kept) < 0.5 * crossings(generated, plain)


def test_series_that_switch_no_more_often_than_the_training_ones_keep_their_values():
    rng = np.random.default_rng(12)
    marginals, real = _fitted(rng, switches=6)
    own = marginals.quantiles(real, None)  # the training series as the calibration
    margins = marginals.margins(real, None, own)
    assert margins[0, 0, 0, :2].tolist() == [0.0, 0.0]
    plain = marginals.apply(real, None, own).rows
    kept = marginals.apply(real, None, own, margins).rows
    at = marginals.gaps_of(0, 0)[0][0]
    inside = (plain > marginals.real[0, 0, at]) & (plain < marginals.real[0, 0, at + 1])
    assert np.array_equal(kept[~inside], plain[~inside])


def test_sides_start_where_each_series_starts():
    rows = SeriesRows.from_list([np.zeros((3, 1)), np.zeros((2, 1))])
    chances = np.array([0.9, 0.5, 0.5, 0.1, 0.5])
    assert sides(rows, chances, 0.5, 0.2).tolist() == [True, True, True, False, False]
    # An empty series (last, or between two) has no first row to start from.
    gappy = SeriesRows(np.zeros((5, 1)), np.array([3, 0, 2, 0]))
    above = sides(gappy, chances, 0.5, 0.2)
    assert above.tolist() == [True, True, True, False, False]
    assert crossings(gappy, above) == 0.0
    assert crossings(gappy, np.array([True, False, True, False, True])) == 3 / 3


def test_continuous_values_with_no_gap_map_as_before():
    rng = np.random.default_rng(13)
    smooth = SeriesRows.from_padded(rng.normal(size=(30, 50, 1)))
    marginals = ValueMarginals.fit(smooth, [0], None, None, 1, floors=[None])
    assert marginals.gaps_of(0, 0)[0].size == 0
    generated = SeriesRows.from_padded(rng.normal(size=(10, 50, 1)) * 2)
    own = marginals.quantiles(generated, None)
    assert marginals.margins(generated, None, own) is None  # decoded as without switches


@pytest.fixture(scope="module")
def lamp_model():
    rng = np.random.default_rng(14)
    features = _lamps(rng, 24, 2)[:, :120, None]
    attributes = rng.integers(0, 2, size=(24, 1)).astype(float)
    config = tiny_config(max_sequence_len=120, sample_len=10, epochs=1, match_marginals=True)
    model = DGAN(config)
    model.train_numpy(
        features, [OutputType.CONTINUOUS], attributes, [OutputType.DISCRETE], progress_bar=False
    )
    return model


def test_switches_are_fitted_saved_checked_and_loaded(lamp_model, tmp_path):
    switches = lamp_model.encoder.marginals.switches
    marginals = lamp_model.encoder.marginals
    assert switches is not None and switches.shape == (1, marginals.n_classes, MAX_GAPS, 2)
    assert np.isfinite(switches[:, :, 0]).all()  # each class's standby/on gap
    assert lamp_model.sampler.calibration().switches is not None
    path = lamp_model.save(tmp_path / "m.dgan")
    loaded = DGAN.load(path)
    assert np.array_equal(loaded.encoder.marginals.switches, switches, equal_nan=True)
    lamp_model.sampler.reseed(2)
    loaded.sampler.reseed(2)
    assert np.array_equal(
        np.stack(lamp_model.generate_numpy(4)[1]), np.stack(loaded.generate_numpy(4)[1])
    )
    # A file from before switches were kept decodes without them.
    with rewritten(path) as (_, state):
        del state["encoder"]["marginals"]["switches"]
    assert DGAN.load(path).encoder.marginals.switches is None


@pytest.mark.parametrize(
    "value",
    [[[[[2000, 0.1]] * MAX_GAPS]], [[[[3, -0.5]] * MAX_GAPS]], [[[[3, 0.1]]]]],
)
def test_broken_switches_in_a_file_are_named(lamp_model, tmp_path, value):
    where = "encoder.marginals.switches"
    assert_named_when_broken(lamp_model, tmp_path / "m.dgan", where, value)


def test_auto_maps_a_linear_feature_whose_classes_sit_at_levels_apart():
    """Standby at 0.3, on at about 15: one decade, so a linear scale, which the value map
    leaves alone at "auto" unless a class has levels with nothing between them."""
    rng = np.random.default_rng(16)
    lamps = _lamps(rng, 12, 2)[:, :120, None]
    smooth = 5.0 + np.cumsum(rng.normal(size=(12, 120, 1)), axis=1)
    config = DGANConfig(max_sequence_len=120, sample_len=10)
    types = [OutputType.CONTINUOUS] * 2
    encoder = DataEncoder.fit(config, np.concatenate([lamps, smooth], axis=2), types, None, None)
    assert encoder.feature_encoders[0].log_floor is None
    assert encoder.marginals.features == [0]  # the lamps, not the smooth walk
    assert encoder.marginals.gaps_of(0, 0)[0].size == 1
    off = DGANConfig(max_sequence_len=120, sample_len=10, match_switches=False)
    assert DataEncoder.fit(off, lamps, types[:1], None, None).marginals is None


def test_match_switches_false_keeps_none():
    rng = np.random.default_rng(15)
    features = _lamps(rng, 12, 2)[:, :120, None]
    config = tiny_config(
        max_sequence_len=120, sample_len=10, epochs=1, match_marginals=True, match_switches=False
    )
    model = DGAN(config)
    model.train_numpy(features, [OutputType.CONTINUOUS], progress_bar=False)
    assert model.encoder.marginals.switches is None
    assert DGANConfig(max_sequence_len=8, sample_len=2).match_switches is True


def test_a_gap_between_few_values_is_read_and_nothing_lands_in_it():
    # 3 lamps of 40 readings: 120 values, fewer than the 1,001 quantiles. Interpolated,
    # the step from standby to on spread over about ten quantile steps and no gap was read.
    rng = np.random.default_rng(15)
    on = np.arange(40)[None, :] >= np.array([[12], [25], [31]])  # each switched on once
    lamps = np.where(on, 15.0, 0.3) * (1 + 0.01 * rng.standard_normal((3, 40)))
    few = SeriesRows.from_padded(lamps[:, :, None])
    values = few.rows[:, 0]
    assert gaps(np.quantile(values, np.linspace(0, 1, QUANTILES)), 0.5).size == 0
    marginals = ValueMarginals.fit(few, [0], None, None, 1, floors=[0.5])
    at, rates = marginals.gaps_of(0, 0)
    assert len(at) == 1 and rates[0] > 0
    low, high = marginals.real[0, 0, at[0]], marginals.real[0, 0, at[0] + 1]
    assert low < 1.0 and high > 10.0  # the two levels' ends, nothing between
    table = marginals.real[0, 0]
    assert not ((table > low) & (table < high)).any()
    # Without the switches the quantiles are interpolated, as before.
    plain = ValueMarginals.fit(few, [0], None, None, 1)
    assert ((plain.real[0, 0] > 1.0) & (plain.real[0, 0] < 10.0)).sum() >= 5
