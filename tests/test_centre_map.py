"""match_centres: each generated wave moved, quantile to quantile within its class, onto
the training series' centres (`dgan.encoding.centre_map`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig
from dgan.encoding.centre_map import CentreMap, series_centres
from dgan.encoding.encoder_state import encoder_arguments, encoder_state
from dgan.encoding.marginals import QUANTILES
from dgan.errors import ParameterError
from dgan.series import SeriesRows
from tiny import tiny_config

T = 120


def _waves(rng, n=32, offsets=(0.0, 0.0)):
    """n series of T steps: a sine at a period of 8-16 steps, its amplitude 1-3 and its
    centre drawn within ``offsets`` (shares of the amplitude), with 1% noise."""
    out = []
    steps = np.arange(T)
    for _ in range(n):
        amplitude = rng.uniform(1, 3)
        wave = np.sin(2 * np.pi * steps / rng.uniform(8, 16) + rng.uniform(0, 2 * np.pi))
        noise = 0.01 * rng.normal(size=T)
        out.append((amplitude * (wave + rng.uniform(*offsets) + noise))[:, None])
    return out


# ----- the centres -------------------------------------------------------------------------
def test_a_centre_is_read_over_whole_periods_of_the_second_half():
    steps = np.arange(250.0)
    switch_on = np.where(steps < 100, 3 * np.exp(-steps / 20), 0)  # a transient at the start
    wave = (1 + switch_on) * np.sin(2 * np.pi * steps / 11.3 + 0.4) - 0.2
    centre, amplitude = series_centres(SeriesRows.from_list([wave[:, None]]), 0)
    np.testing.assert_allclose([centre[0], amplitude[0]], [-0.2, 1.0], atol=0.01)


def test_a_series_with_nothing_to_move_keeps_centre_and_amplitude_zero():
    rows = SeriesRows.from_list(
        [np.ones((50, 1)), np.full((50, 1), np.nan), np.zeros((1, 1)), np.arange(3.0)[:, None]]
    )
    centre, amplitude = series_centres(rows, 0)
    np.testing.assert_array_equal(centre[:3], 0.0)
    np.testing.assert_array_equal(amplitude[:3], 0.0)
    assert amplitude[3] > 0 and np.isfinite(centre[3])  # shorter than a period: its half


def test_centres_are_read_from_each_column_and_series_alone(rng):
    waves = _waves(rng, n=6, offsets=(-0.5, 0.5))
    two = [np.concatenate([w, 100 + 0 * w], axis=1) for w in waves]
    alone = series_centres(SeriesRows.from_list(waves), 0)
    together = series_centres(SeriesRows.from_list(two), 0)
    np.testing.assert_allclose(together, alone)
    first = series_centres(SeriesRows.from_list(waves[:1]), 0)
    np.testing.assert_allclose([first[0][0], first[1][0]], [alone[0][0], alone[1][0]])


# ----- the map -----------------------------------------------------------------------------
def test_the_map_holds_each_classes_centres(rng):
    centred, lifted = _waves(rng, n=30), _waves(rng, n=30, offsets=(0.4, 0.6))
    rows = SeriesRows.from_list(centred + lifted)
    classes = np.repeat([0, 1], 30)
    centres = CentreMap.fit(rows, [0], 0, classes, 3)
    assert centres.real.shape == (3, 1, QUANTILES) and centres.columns == [0]
    assert abs(np.median(centres.real[0, 0])) < 0.01
    assert 0.4 < np.median(centres.real[1, 0]) < 0.6
    # a class with too few series (here none) takes all classes' quantiles
    np.testing.assert_allclose(centres.real[2, 0, [0, -1]], centres.real[:2, 0].min(), atol=1)


def test_generated_waves_are_moved_onto_their_classes_centres_and_keep_their_shape(rng):
    real = SeriesRows.from_list(_waves(rng, n=40) + _waves(rng, n=40, offsets=(0.4, 0.6)))
    classes = np.repeat([0, 1], 40)
    centres = CentreMap.fit(real, [0], 0, classes, 2)
    generated = SeriesRows.from_list(_waves(rng, n=80, offsets=(-0.3, 0.3)))
    own = centres.quantiles(generated, classes)
    moved = centres.apply(generated, classes, own)
    centre, amplitude = series_centres(moved, 0)
    assert np.abs(centre[:40]).max() < 0.05  # the centred class: as near 0 as the real
    assert np.all((centre[40:] > 0.35) & (centre[40:] < 0.65))
    # each series moved by one amount: its changes and its amplitude as generated
    changes = [np.diff(rows.padded(T)[:, :, 0], axis=1) for rows in (moved, generated)]
    np.testing.assert_allclose(*changes, atol=1e-9)
    np.testing.assert_allclose(amplitude, series_centres(generated, 0)[1])


def test_a_class_missing_on_either_side_stays_as_generated(rng):
    real = SeriesRows.from_list(_waves(rng, n=30))
    centres = CentreMap.fit(real, [0], 0, np.zeros(30, dtype=int), 2)
    generated = SeriesRows.from_list(_waves(rng, n=4, offsets=(0.5, 0.5)))
    classes = np.array([0, 0, 1, 1])
    own = centres.quantiles(generated, np.zeros(4, dtype=int))  # class 1 never generated
    moved = centres.apply(generated, classes, own)
    np.testing.assert_array_equal(moved.rows[-2 * T :], generated.rows[-2 * T :])
    assert not np.array_equal(moved.rows[: 2 * T], generated.rows[: 2 * T])
    assert np.isnan(centres.quantiles(generated, np.zeros(4, dtype=int))[1]).all()


def test_the_map_leaves_other_columns_and_its_input_as_they_were(rng):
    waves = _waves(rng, n=30)
    rows = SeriesRows.from_list([np.concatenate([w + 5, w], axis=1) for w in waves])
    before = rows.rows.copy()
    centres = CentreMap.fit(SeriesRows.from_list(waves), [0])
    moved = centres.apply(rows, None, centres.quantiles(rows, None))
    np.testing.assert_array_equal(rows.rows, before)
    np.testing.assert_array_equal(moved.rows[:, 1], before[:, 1])
    assert np.abs(series_centres(moved, 0)[0]).max() < 0.05


# ----- in dgan -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained():
    series = _waves(np.random.default_rng(0), offsets=(0.4, 0.6))
    config = tiny_config(max_sequence_len=T, sample_len=10, epochs=1, period_carrier=True)
    model = DGAN(config)
    model.train_numpy(series, progress_bar=False)
    return model, series


def test_generation_moves_the_decoded_waves_by_the_calibrated_map(rng):
    series = _waves(rng, offsets=(0.4, 0.6))
    config = tiny_config(
        max_sequence_len=T, sample_len=10, epochs=1, period_carrier=True, match_marginals=False
    )
    model = DGAN(config)
    model.train_numpy(series, progress_bar=False)
    centre_map = model.encoder.centre_map
    assert centre_map.columns == [0] and model.encoder.marginals is None
    model.sampler.reseed(0)
    moved = SeriesRows.from_list(list(model.generate_numpy(50)[1]))
    own = model.sampler.calibration().centres
    assert own.shape == (1, 1, QUANTILES)
    model.encoder.centre_map = None
    try:
        model.sampler.reseed(0)
        drawn = SeriesRows.from_list(list(model.generate_numpy(50)[1]))
    finally:
        model.encoder.centre_map = centre_map
    np.testing.assert_allclose(moved.rows, centre_map.apply(drawn, None, own).rows, rtol=1e-6)
    assert not np.allclose(moved.rows, drawn.rows)


def test_training_never_sees_the_map(rng):
    """The map is fitted with the encoder and read at generation only: a model trained
    with it has the weights of one trained without it, so a map attached to a model
    trained before it existed generates what a fresh training would."""
    series = _waves(rng, n=16, offsets=(0.4, 0.6))
    weights = []
    for setting in ("auto", False):
        config = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=True)
        model = DGAN(dataclasses.replace(config, match_centres=setting))
        model.train_numpy(series, progress_bar=False)
        weights.append(model.generator.state_dict())
    assert weights[0].keys() == weights[1].keys()
    for name, value in weights[0].items():
        torch.testing.assert_close(weights[1][name], value, rtol=0, atol=0)


def test_the_map_is_saved_and_a_file_from_before_it_decodes_as_then(trained, tmp_path):
    model, _ = trained
    loaded = DGAN.load(model.save(tmp_path / "centres.dgan"))
    np.testing.assert_array_equal(loaded.encoder.centre_map.real, model.encoder.centre_map.real)
    model.sampler.reseed(3)
    loaded.sampler.reseed(3)
    for a, b in zip(model.generate_numpy(5)[1], loaded.generate_numpy(5)[1], strict=True):
        np.testing.assert_array_equal(a, b)
    state = encoder_state(model.encoder)
    del state["centre_map"]
    assert encoder_arguments(state)["centre_map"] is None


def test_the_plan_says_so_and_false_or_gretel_turns_it_off(rng):
    series = _waves(rng, n=16)
    config = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=True)
    plan = DGAN(config).plan(series, warm_up_steps=0)
    assert "generated waves moved onto the training centres (match_centres)" in str(plan)
    off = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=True, match_centres=False)
    assert "(match_centres)" not in str(DGAN(off).plan(series, warm_up_steps=0))
    model = DGAN(off)
    model.train_numpy(series, progress_bar=False)
    assert model.encoder.centre_map is None
    assert DGANConfig.gretel(max_sequence_len=T, sample_len=10).match_centres is False
    uncarried = tiny_config(max_sequence_len=T, sample_len=10, period_carrier=False)
    model = DGAN(uncarried)
    model.train_numpy(series, progress_bar=False)
    assert model.encoder.centre_map is None  # no carrier, nothing to move


def test_true_in_a_private_run_is_a_clear_error():
    with pytest.raises(ParameterError, match="match_centres=True moves generated waves"):
        DGANConfig(max_sequence_len=T, sample_len=10, dp_epsilon=5.0, match_centres=True)
