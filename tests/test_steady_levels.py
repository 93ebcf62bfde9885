"""Each level of a switching class held as steady within a series as the training series'
(dgan.encoding.steady_levels), by the value map (dgan.encoding.marginals)."""

import numpy as np
import pytest

from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.steady_levels import MIN_VALUES, level_wanders, steadied
from dgan.series import SeriesRows
from model_files import assert_kept_in_file, assert_named_when_broken
from tiny import value_mapped_model

LENGTH = 400
FLOORS = [0.5]


def _lamps(rng, n, wander=0.0):
    """Off (exactly 0) for the first 100-150 steps, then on at 10-20 with 1.5% of white
    noise and a slow swell of ``wander`` of the level."""
    out = np.zeros((n, LENGTH))
    t = np.arange(LENGTH)
    for k in range(n):
        start = rng.integers(100, 150)
        swell = 1 + wander * np.sin(2 * np.pi * t / rng.uniform(80, 160) + rng.uniform(0, 6))
        level = rng.uniform(10, 20) * swell * (1 + 0.015 * rng.standard_normal(LENGTH))
        out[k, start:] = level[start:]
    return out


def _rows(values):
    return SeriesRows.from_padded(values[:, :, None])


def _on_wander(marginals, rows, values):
    edges = np.array([5.0])
    return level_wanders(rows, values, FLOORS[0], edges, np.zeros(1))[1]


def test_a_wandering_level_comes_out_as_steady_as_the_training_ones():
    rng = np.random.default_rng(0)
    real = _rows(_lamps(rng, 40))
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=FLOORS)
    assert np.isnan(marginals.wander[0, 0, 0])  # the standby is held exactly
    target = marginals.wander[0, 0, 1]
    assert target == pytest.approx(_on_wander(marginals, real, real.rows[:, 0]))
    calibration = _rows(_lamps(rng, 100, wander=0.12))
    own = marginals.quantiles(calibration, None)
    triggers = marginals.margins(calibration, None, own)
    steady = marginals.steadiness(calibration, None, own, triggers, FLOORS)
    assert steady.shape == marginals.wander.shape and 0 < steady[0, 0, 1] < 0.5
    assert steady[0, 0, 0] == 1.0 and (steady[0, 0, 2:] == 1.0).all()
    generated = _rows(_lamps(rng, 50, wander=0.12))
    plain = marginals.apply(generated, None, own, triggers).rows[:, 0]
    kept = marginals.apply(generated, None, own, triggers, floors=FLOORS, steady=steady)
    out = kept.rows[:, 0]
    assert _on_wander(marginals, generated, plain) > 2 * target
    assert _on_wander(marginals, generated, out) == pytest.approx(target, rel=0.25)
    assert np.array_equal(out == 0, plain == 0)  # switched at the same steps, 0 exactly
    # The fast rest is kept: the noise on the level stays its size.
    fast = [np.diff(np.log(x[x > 0])).std() for x in (plain, out)]
    assert fast[1] == pytest.approx(fast[0], rel=0.1)


def test_levels_as_steady_as_the_training_ones_and_features_without_gaps_are_left():
    rng = np.random.default_rng(1)
    real = _rows(_lamps(rng, 40, wander=0.05))
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=FLOORS)
    steadier = _rows(_lamps(rng, 40))
    own = marginals.quantiles(steadier, None)
    triggers = marginals.margins(steadier, None, own)
    steady = marginals.steadiness(steadier, None, own, triggers, FLOORS)
    assert (steady == 1.0).all()  # a wander is never grown
    plain = marginals.apply(steadier, None, own, triggers)
    same = marginals.apply(steadier, None, own, triggers, floors=FLOORS, steady=steady)
    np.testing.assert_array_equal(plain.rows, same.rows)
    # A class of one level (a hum that swells) keeps its slow shape: no wander kept.
    hum = 20 * (1 + 0.1 * np.sin(np.arange(LENGTH) / 40)) + rng.normal(size=(20, LENGTH))
    both = _rows(np.concatenate([_lamps(rng, 20), hum]))
    classes = np.repeat([0, 1], 20)
    two = ValueMarginals.fit(both, [0], 0, classes, 2, floors=FLOORS)
    assert np.isfinite(two.wander[0, 0, 1]) and np.isnan(two.wander[0, 1]).all()
    smooth = _rows(rng.normal(size=(30, 200)))
    no_gaps = ValueMarginals.fit(smooth, [0], None, None, 1, floors=[None])
    assert np.isnan(no_gaps.wander).all()
    own = no_gaps.quantiles(smooth, None)
    assert no_gaps.steadiness(smooth, None, own, None, [None]) is None
    assert ValueMarginals.fit(real, [0], None, None, 1).wander is None  # switches off


def test_a_steadied_value_stays_on_its_level_and_short_stays_are_left():
    t = np.arange(2 * MIN_VALUES)
    values = 15 + 1.5 * np.sin(t / 40)  # on, swelling slowly, then a short visit to 2
    values[-10:] = 2.0
    rows = _rows(values[None])
    out = steadied(rows, values, None, np.array([5.0]), np.empty(0), np.array([1.0, 0.0]))
    assert np.ptp(out[:-10]) < 0.2 * np.ptp(values[:-10])
    np.testing.assert_array_equal(out[-10:], values[-10:])  # fewer than MIN_VALUES there
    on_log = steadied(rows, values, 1.0, np.array([5.0]), np.empty(0), np.array([1.0, 0.0]))
    np.testing.assert_array_equal(on_log[-10:], values[-10:])  # not even rounded
    crossing = steadied(rows, values, None, np.array([14.0]), np.empty(0), np.array([1.0, 0.0]))
    np.testing.assert_array_equal(crossing > 14.0, values > 14.0)  # each value on its level
    before = values.copy()
    steadied(rows, values, None, np.array([5.0]), np.empty(0), np.array([0.0, 0.0]))
    np.testing.assert_array_equal(values, before)  # not mutated


@pytest.fixture(scope="module")
def lamp_model():
    rng = np.random.default_rng(2)
    return value_mapped_model(_lamps(rng, 24)[:, :, None])


def test_the_wander_is_fitted_saved_checked_and_loaded(lamp_model, tmp_path):
    wander = lamp_model.encoder.marginals.wander
    assert wander is not None and wander.shape == (1, 1, 3) and wander[0, 0, 1] > 0
    assert lamp_model.sampler.calibration().steady is not None
    # A file from before levels were steadied decodes without it.
    assert_kept_in_file(lamp_model, tmp_path / "m.dgan", "encoder.marginals.wander", "steady")


@pytest.mark.parametrize("value", [[[[-1.0, None, None]]], [[[0.1, 0.2]]], [[0.1]], "x"])
def test_a_broken_wander_in_a_file_is_named(lamp_model, tmp_path, value):
    assert_named_when_broken(lamp_model, tmp_path / "m.dgan", "encoder.marginals.wander", value)
