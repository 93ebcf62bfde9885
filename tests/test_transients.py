"""match_switches: the first readings after a series switches up across a gap carry the
training series' transient (a compressor's start-up spike), through the value map
(dgan.encoding.transients, dgan.encoding.marginals)."""

import numpy as np
import pytest

from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.noise_floor import median_step
from dgan.encoding.switches import MAX_GAPS
from dgan.encoding.transients import (
    MIN_EDGES,
    SETTLED,
    STEPS,
    switch_on_profile,
    with_switch_ons,
)
from dgan.series import SeriesRows
from model_files import assert_kept_in_file, assert_named_when_broken
from tiny import value_mapped_model

LENGTH = 400
FLOORS = [0.5]


def _fridges(rng, n, spike=2.0, spiked=1.0, standby=1.0):
    """At ``standby``, cycles on at 80-120 for 60-100 readings and off for 40-80, the first
    two readings of ``spiked`` of the switch-ons at ``spike`` times the level; 1% of
    noise."""
    out = np.empty((n, LENGTH))
    for k in range(n):
        level, i, on = rng.uniform(80, 120), -int(rng.integers(0, 100)), False
        while i < LENGTH:
            width = int(rng.integers(60, 101) if on else rng.integers(40, 81))
            out[k, max(i, 0) : max(i + width, 0)] = level if on else standby
            if on and i > 0 and rng.random() < spiked:
                out[k, i : i + 2] = spike * level
            i, on = i + width, not on
    noisy = out * (1 + 0.01 * rng.standard_normal(out.shape))
    return SeriesRows.from_padded(noisy[:, :, None])


def _joined(*parts):
    return SeriesRows.from_padded(np.concatenate([p.padded(LENGTH) for p in parts]))


def _mapped(marginals, generated, calibration, classes=None, calibration_classes=None):
    own = marginals.quantiles(calibration, calibration_classes)
    margins = marginals.margins(calibration, calibration_classes, own)
    return marginals.apply(generated, classes, own, margins, floors=FLOORS)


def _first_after_switch_ons(rows, steps=3):
    """(switch-ons, ``steps``) each long stretch's first readings over its settled level."""
    out = []
    for start, length in zip(rows.starts, rows.lengths, strict=True):
        values = rows.rows[start : start + length, 0]
        above = np.r_[values > 20.0, False]
        ups = np.flatnonzero(above[1:] & ~above[:-1]) + 1
        downs = np.flatnonzero(~above[1:] & above[:-1]) + 1
        for up in ups:
            end = downs[downs > up][0]
            if end - up >= STEPS + SETTLED:
                out.append(values[up : up + steps] / np.median(values[up + STEPS : end]))
    return np.array(out)


def test_the_start_up_spike_is_kept_and_put_after_each_generated_switch_on():
    rng = np.random.default_rng(0)
    real = _fridges(rng, 30)
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=FLOORS)
    assert marginals.switch_ons.shape == (1, 1, MAX_GAPS, STEPS)
    profile = marginals.switch_ons[0, 0, 0]
    assert (profile[2:] == 0).all() and np.isnan(marginals.switch_ons[0, 0, 1:]).all()
    level = 100.0 / FLOORS[0]  # twice the level on the log scale: + log10(2) near the top
    np.testing.assert_allclose(profile[:2], np.log10((1 + 2 * level) / (1 + level)), atol=0.01)
    # The generator's: the same cycles with no spike; decoded, two readings at twice the
    # level start each of them, and the rest is the map's alone.
    generated = _fridges(rng, 20, spiked=0.0)
    calibration = _fridges(rng, 60, spiked=0.0)
    before = generated.rows.copy()
    out = _mapped(marginals, generated, calibration)
    np.testing.assert_array_equal(generated.rows, before)
    first = _first_after_switch_ons(out)
    assert len(first) > 20
    np.testing.assert_allclose(np.median(first, axis=0), [2.0, 2.0, 1.0], atol=0.05)
    marginals.switch_ons = None  # a model file from before: no spike
    plain = _mapped(marginals, generated, calibration)
    assert np.median(_first_after_switch_ons(plain)[:, 0]) < 1.1
    changed = out.rows[:, 0] != plain.rows[:, 0]
    assert 0 < changed.mean() < 0.03  # two readings a switch-on
    np.testing.assert_allclose(
        median_step(out, out.rows[:, 0], FLOORS[0]),
        median_step(plain, plain.rows[:, 0], FLOORS[0]),
        rtol=0.05,
    )


def test_each_class_keeps_its_own_profile():
    """Fridges with a start-up spike and fridges without, as two classes: only the first
    class's generated switch-ons get one."""
    rng = np.random.default_rng(4)
    spiked, plain = _fridges(rng, 20), _fridges(rng, 20, spiked=0.0)
    real = _joined(spiked, plain)
    classes = np.repeat([0, 1], 20)
    marginals = ValueMarginals.fit(real, [0], 0, classes, 2, floors=FLOORS)
    assert (marginals.switch_ons[0, 0, 0, :2] > 0.2).all()
    assert (marginals.switch_ons[0, 1, 0] == 0).all()
    generated = _fridges(rng, 20, spiked=0.0)
    calibration = _fridges(rng, 60, spiked=0.0)
    out = _mapped(marginals, generated, calibration, np.repeat([0, 1], 10), np.repeat([0, 1], 30))
    first = [_first_after_switch_ons(out.take(np.arange(20) // 10 == g)) for g in (0, 1)]
    np.testing.assert_allclose(np.median(first[0], axis=0), [2.0, 2.0, 1.0], atol=0.05)
    assert np.median(first[1][:, 0]) < 1.1


@pytest.mark.parametrize("spiked", [0.0, 0.5])
def test_no_profile_where_the_switch_ons_do_not_agree(spiked):
    """No spike, or a spike at half the switch-ons: the median may move, three quarters
    of them do not."""
    rng = np.random.default_rng(1)
    real = _fridges(rng, 30, spiked=spiked)
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=FLOORS)
    assert (marginals.switch_ons[0, 0, 0] == 0).all()
    generated, calibration = _fridges(rng, 10, spiked=0.0), _fridges(rng, 40, spiked=0.0)
    out = _mapped(marginals, generated, calibration)
    marginals.switch_ons = None
    np.testing.assert_array_equal(out.rows, _mapped(marginals, generated, calibration).rows)


def test_few_or_short_switch_ons_tell_no_profile():
    values = np.r_[np.ones(30), 200.0, 200.0, np.full(40, 100.0)]
    few = SeriesRows.from_list([values[:, None]] * (MIN_EDGES - 1))
    profile = switch_on_profile(few, np.tile(values, MIN_EDGES - 1), None, 50.0, 0.5)
    assert (profile == 0).all()
    short = np.r_[np.ones(30), 200.0, 200.0, np.full(STEPS + SETTLED - 3, 100.0), np.ones(10)]
    rows = SeriesRows.from_list([short[:, None]] * 8)
    assert (switch_on_profile(rows, np.tile(short, 8), None, 50.0, 0.5) == 0).all()
    # Nor is a short stretch given one, or a series that starts above the edge.
    spike = np.r_[100.0, 100.0, np.zeros(STEPS - 2)]
    assert (with_switch_ons(rows, rows.rows[:, 0], None, 50.0, spike) == rows.rows[:, 0]).all()
    on = SeriesRows.from_list([np.full((40, 1), 100.0)])
    assert (with_switch_ons(on, on.rows[:, 0], None, 50.0, spike) == 100.0).all()


def test_a_slow_decay_is_not_a_transient():
    """A charger plugged in at 5 W decays over hundreds of readings: its first readings
    are above the rest of the stretch, not above the readings just after them."""
    rng = np.random.default_rng(3)
    charger = np.r_[np.full(100, 0.3), 0.5 + 5.0 * np.exp(-np.arange(300) / 400)]
    noisy = charger * (1 + 0.02 * rng.standard_normal((8, len(charger))))  # 2% noise
    rows = SeriesRows.from_padded(noisy[:, :, None])
    step = median_step(rows, rows.rows[:, 0], FLOORS[0])
    assert (switch_on_profile(rows, rows.rows[:, 0], FLOORS[0], 0.4, step) == 0).all()


def test_a_switch_on_is_not_read_across_series():
    """One series ends below the edge and the next starts above it: no up-crossing."""
    off, on = np.ones(40), np.r_[np.full(2, 200.0), np.full(40, 100.0)]
    rows = SeriesRows.from_list([off[:, None], on[:, None]] * 6)
    values = np.tile(np.r_[off, on], 6)
    assert (switch_on_profile(rows, values, None, 50.0, 0.5) == 0).all()


def test_the_profile_stays_within_the_class_range():
    values = np.r_[np.ones(30), np.full(42, 100.0)]
    rows = SeriesRows.from_list([values[:, None]])
    spike = np.r_[1000.0, np.zeros(STEPS - 1)]
    out = with_switch_ons(rows, values, None, 50.0, spike, (0.0, 250.0))
    assert out[30] == 250.0 and (out[31:] == 100.0).all()


@pytest.fixture(scope="module")
def fridge_model():
    rng = np.random.default_rng(2)
    # Standby four decades below: the value map reads the feature on its log scale.
    return value_mapped_model(_fridges(rng, 24, standby=0.01).padded(LENGTH))


def test_the_profile_is_fitted_saved_checked_and_loaded(fridge_model, tmp_path):
    switch_ons = fridge_model.encoder.marginals.switch_ons
    assert switch_ons.shape == (1, 1, MAX_GAPS, STEPS) and (switch_ons[0, 0, 0, :2] > 0.2).all()
    assert_kept_in_file(fridge_model, tmp_path / "m.dgan", "encoder.marginals.switch_ons", None)


@pytest.mark.parametrize(
    "value",
    [
        [[[[0.3] * STEPS] * MAX_GAPS]] * 2,  # two features, where the map has one
        [[[[0.3] * (STEPS - 1)] + [[None] * STEPS] * (MAX_GAPS - 1)]],
        [[[["0.3"] * STEPS] + [[None] * STEPS] * (MAX_GAPS - 1)]],
        [[[[0.3] * STEPS] * (MAX_GAPS + 1)]],
    ],
)
def test_a_broken_profile_in_a_file_is_named(fridge_model, tmp_path, value):
    where = "encoder.marginals.switch_ons"
    assert_named_when_broken(fridge_model, tmp_path / "m.dgan", where, value)
