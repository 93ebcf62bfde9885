"""match_switches: each generated series spends the share of its time above a gap that the
training series at its rank spend (dgan.encoding.series_shares), through the value map
(dgan.encoding.marginals)."""

import numpy as np
import pytest

from dgan import DGAN
from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.series_shares import (
    MIN_OWN,
    SHARE_PROBABILITIES,
    SHARES,
    kept_per_series,
    shares_above,
)
from dgan.encoding.switches import MAX_GAPS
from dgan.series import SeriesRows
from model_files import assert_kept_in_file, assert_named_when_broken
from tiny import value_mapped_model

LENGTH = 300
FLOORS = [0.5]


def _lamps(rng, shares, first=False):
    """Standby at 0.3, on at about 15 for one stretch of each of ``shares`` of the time
    (one series each, in random order; ``first``: from the start, switched once), with
    1% of noise."""
    out = np.full((len(shares), LENGTH), 0.3)
    for k, share in enumerate(rng.permutation(shares)):
        on = round(share * LENGTH)
        start = 0 if first else rng.integers(0, LENGTH - on + 1)
        out[k, start : start + on] = 15.0
    return SeriesRows.from_padded((out * (1 + 0.01 * rng.standard_normal(out.shape)))[:, :, None])


def _spread(n, low, high):
    """On for ``low`` to ``high`` of the time, evenly (the mean of the two on average)."""
    return np.linspace(low, high, n)


def _on(rows):
    return shares_above(rows, rows.rows[:, 0] > 5.0)


def test_each_series_is_on_for_the_training_share_at_its_rank():
    rng = np.random.default_rng(0)
    real = _lamps(rng, _spread(60, 0.25, 0.4))  # each on for a quarter to two fifths of the time
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=FLOORS)
    assert marginals.shares.shape == (1, 1, MAX_GAPS, SHARES)
    np.testing.assert_allclose(
        marginals.shares[0, 0, 0], np.quantile(_on(real), np.linspace(0, 1, SHARES))
    )
    assert np.isnan(marginals.shares[0, 0, 1:]).all()
    # The generator's: switched no more often (a margin of 0), on as much of the time on
    # average, but some series most of it, some hardly at all.
    calibration = _lamps(rng, _spread(200, 0.05, 0.6), first=True)
    generated = _lamps(rng, _spread(60, 0.05, 0.6), first=True)
    own = marginals.quantiles(calibration, None)
    margins = marginals.margins(calibration, None, own)
    assert margins[0, 0, 0, :2].tolist() == [0.0, 0.0] and np.isnan(margins[0, 0, 1:]).all()
    assert np.isfinite(margins[0, 0, 0, 2:]).all()
    out = marginals.apply(generated, None, own, margins)
    spread = [np.quantile(_on(x), [0.1, 0.5, 0.9]) for x in (real, generated, out)]
    assert spread[1][2] - spread[1][0] > 0.4
    np.testing.assert_allclose(spread[2], spread[0], atol=0.03)
    # A reading switched on (or off) by a series' own centre takes its own level there,
    # not the class's lowest (highest) value of the level.
    was, now = generated.rows[:, 0] > 5.0, out.rows[:, 0] > 5.0
    example = generated.example_of_row()
    for k in np.unique(example[was != now]):
        moved = (example == k) & (was != now)
        side = now[moved][0]
        stayed = (example == k) & (was == now) & (now == side)
        assert (now[moved] == side).all() and np.unique(out.rows[moved, 0]).size == 1
        level = np.median(out.rows[stayed, 0])
        np.testing.assert_allclose(out.rows[moved, 0][0], level, rtol=2e-3)
    # Each keeps its rank: the longer on as generated, the longer on as decoded.
    order = np.argsort(_on(generated), kind="stable")
    assert (np.diff(_on(out)[order]) >= -1 / LENGTH).all()
    # Without the training shares (a model file from before) only the class's mean is kept.
    marginals.shares = None
    margins = marginals.margins(calibration, None, own)
    assert np.isnan(margins[0, 0, 0, 2:]).all()
    plain = marginals.apply(generated, None, own, margins)
    assert np.quantile(_on(plain), 0.9) - np.quantile(_on(plain), 0.1) > 0.4


def test_a_series_decodes_alike_however_many_are_generated_and_nothing_is_mutated():
    rng = np.random.default_rng(1)
    marginals = ValueMarginals.fit(
        _lamps(rng, _spread(60, 0.25, 0.4)), [0], None, None, 1, floors=FLOORS
    )
    calibration = _lamps(rng, _spread(200, 0.05, 0.6), first=True)
    generated = _lamps(rng, _spread(40, 0.05, 0.6), first=True)
    own = marginals.quantiles(calibration, None)
    margins = marginals.margins(calibration, None, own)
    before = generated.rows.copy()
    many = marginals.apply(generated, None, own, margins)
    np.testing.assert_array_equal(generated.rows, before)
    first = np.arange(40) < 3
    few = marginals.apply(generated.take(first), None, own, margins)
    np.testing.assert_array_equal(few.rows, many.take(first).rows)
    # The calibration sample itself is already spread as its own ranks say: kept as is
    # where the training shares are its own.
    same = ValueMarginals.fit(calibration, [0], None, None, 1, floors=FLOORS)
    own = same.quantiles(calibration, None)
    margins = same.margins(calibration, None, own)
    kept = same.apply(calibration, None, own, margins)
    np.testing.assert_array_equal(_on(kept), _on(calibration))


@pytest.fixture(scope="module")
def lamp_model():
    rng = np.random.default_rng(2)
    return value_mapped_model(_lamps(rng, _spread(24, 0.2, 0.6)).padded(LENGTH))


def test_the_shares_are_fitted_saved_checked_and_loaded(lamp_model, tmp_path):
    shares = lamp_model.encoder.marginals.shares
    assert shares.shape == (1, 1, MAX_GAPS, SHARES) and np.isfinite(shares[0, 0, 0]).all()
    assert np.isfinite(lamp_model.sampler.calibration().switches[0, 0, 0, 2:]).all()
    path = tmp_path / "m.dgan"
    assert_kept_in_file(lamp_model, path, "encoder.marginals.shares", None)
    # A file from before the shares were kept decodes with the class's trigger alone.
    assert np.isnan(DGAN.load(path).sampler.calibration().switches[..., 2:]).all()


@pytest.mark.parametrize(
    "value",
    [
        [[[[0.5] * SHARES] * MAX_GAPS]] * 2,  # two features, where the map has one
        [[[[0.5] * (SHARES - 1)] + [[None] * SHARES] * (MAX_GAPS - 1)]],
        [[[list(np.linspace(1, 0, SHARES))] + [[None] * SHARES] * (MAX_GAPS - 1)]],
        [[[[1.5] * SHARES] + [[None] * SHARES] * (MAX_GAPS - 1)]],
    ],
)
def test_broken_shares_in_a_file_are_named(lamp_model, tmp_path, value):
    assert_named_when_broken(lamp_model, tmp_path / "m.dgan", "encoder.marginals.shares", value)


def _three_levels(rng, n, low, high):
    """Off at 0.3, then a stretch at about 5 and one at about 50, each of a share of the
    time drawn from [``low``, ``high``], with 1% of noise."""
    out = np.full((n, LENGTH), 0.3)
    for k in range(n):
        mid, top = (round(rng.uniform(low, high) * LENGTH) for _ in range(2))
        start = rng.integers(0, LENGTH - mid - top + 1)
        out[k, start : start + mid] = 5.0
        out[k, start + mid : start + mid + top] = 50.0
    return SeriesRows.from_padded((out * (1 + 0.01 * rng.standard_normal(out.shape)))[:, :, None])


def test_with_two_gaps_each_value_stays_on_a_level():
    rng = np.random.default_rng(3)
    real = _three_levels(rng, 60, 0.2, 0.3)
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=FLOORS)
    at = marginals.gaps_of(0, 0)[0]
    assert len(at) == 2 and np.isfinite(marginals.shares[0, 0, :2]).all()
    calibration, generated = _three_levels(rng, 200, 0.05, 0.45), _three_levels(rng, 60, 0.05, 0.45)
    own = marginals.quantiles(calibration, None)
    margins = marginals.margins(calibration, None, own)
    assert np.isfinite(margins[0, 0, :2, 2:]).all()
    out = marginals.apply(generated, None, own, margins).rows[:, 0]
    q = marginals.real[0, 0]
    for j in at:  # nothing inside either gap
        assert not ((out > q[j]) & (out < q[j + 1])).any()
    # Each series' time above each gap spread nearer the training series' (the generated
    # spread is more than twice as wide; the class's margin keeps some of it).
    for edge in (2.0, 20.0):  # between the levels (0.3, 5 and 50)
        shares = [shares_above(x, x.rows[:, 0] > edge) for x in (real, generated)]
        mine = shares_above(generated, out > edge)
        width = [np.ptp(np.quantile(x, [0.1, 0.9])) for x in (*shares, mine)]
        assert width[1] > 2 * width[0] and width[2] < 0.5 * width[1]


def test_a_row_switched_across_a_gap_joins_the_series_own_level_next_to_it():
    # Chances: off (0.1), on the middle level (0.5) and on the top one (0.9); gaps at
    # 0.30-0.31 and 0.70-0.71. The training series are all above the lower gap all the time.
    chances = np.r_[np.full(10, 0.1), np.full(11, 0.5), np.full(12, 0.9)]
    rows = SeriesRows.from_list([np.zeros((33, 1))])
    at, everywhere = np.array([30, 70]), np.ones(SHARES)
    own = SHARE_PROBABILITIES
    kept = kept_per_series(rows, chances, at, 0, np.zeros(2), own, everywhere, 101)
    np.testing.assert_array_equal(kept[:10], 0.5)  # its middle level's, not the top's
    np.testing.assert_array_equal(kept[10:], chances[10:])
    # A series with fewer than MIN_OWN rows on that level takes the level's middle.
    few = np.r_[np.full(10, 0.1), np.full(MIN_OWN - 1, 0.5), np.full(12, 0.9)]
    rows = SeriesRows.from_list([np.zeros((len(few), 1))])
    kept = kept_per_series(rows, few, at, 0, np.zeros(2), own, everywhere, 101)
    np.testing.assert_allclose(kept[:10], (0.31 + 0.70) / 2)
