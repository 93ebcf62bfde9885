"""The noise on each level of a switching class (dgan.encoding.noise_floor), kept by the
value map (dgan.encoding.marginals) at the training series' size."""

import numpy as np
import pytest

from dgan import DGAN, OutputType
from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.noise_floor import median_step
from dgan.series import SeriesRows
from model_files import assert_kept_in_file, assert_named_when_broken
from tiny import tiny_config

LENGTH = 300


def _lamps(rng, n, noise=0.015):
    """Off (exactly 0) or on at 10-20 with ``noise`` of the level, switched twice."""
    out = np.zeros((n, LENGTH))
    for k in range(n):
        start, end = np.sort(rng.choice(np.arange(20, LENGTH - 20), 2, replace=False))
        level = rng.uniform(10, 20)
        out[k, start:end] = level * (1 + noise * rng.standard_normal(end - start))
    return out


def _smooth_lamps(rng, n):
    """What the value map makes of a generator's lamps: on and off at the right times,
    each level moving too little from step to step."""
    return _lamps(rng, n, noise=0.002)


def test_mapped_levels_get_the_training_series_noise_and_exact_zeros_stay():
    rng = np.random.default_rng(0)
    real = SeriesRows.from_padded(_lamps(rng, 40)[:, :, None])
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=[0.5])
    target = marginals.steps[0, 0]
    assert target == pytest.approx(median_step(real, real.rows[:, 0], 0.5))
    calibration = SeriesRows.from_padded(_smooth_lamps(rng, 100)[:, :, None])
    own = marginals.quantiles(calibration, None)
    triggers = marginals.margins(calibration, None, own)
    noise = marginals.noise(calibration, None, own, triggers, [0.5])
    assert noise[0, 0] > 0
    generated = SeriesRows.from_padded(_smooth_lamps(rng, 50)[:, :, None])
    plain = marginals.apply(generated, None, own, triggers).rows[:, 0]
    noisy = marginals.apply(generated, None, own, triggers, noise, [0.5]).rows[:, 0]
    assert median_step(generated, plain, 0.5) < 0.5 * target
    assert median_step(generated, noisy, 0.5) == pytest.approx(target, rel=0.15)
    assert np.array_equal(noisy == 0, plain == 0)  # standby stays exactly 0
    # The same series, the same noise, however many are generated beside them.
    again = marginals.apply(generated, None, own, triggers, noise, [0.5]).rows[:, 0]
    np.testing.assert_array_equal(noisy, again)
    last = generated.take(np.arange(len(generated)) >= len(generated) - 5)
    alone = marginals.apply(last, None, own, triggers, noise, [0.5]).rows[:, 0]
    np.testing.assert_array_equal(alone, noisy[-len(alone) :])


def test_levels_as_noisy_as_the_training_ones_and_features_without_gaps_get_none():
    rng = np.random.default_rng(1)
    real = SeriesRows.from_padded(_lamps(rng, 40)[:, :, None])
    marginals = ValueMarginals.fit(real, [0], None, None, 1, floors=[0.5])
    own = marginals.quantiles(real, None)
    triggers = marginals.margins(real, None, own)
    assert marginals.noise(real, None, own, triggers, [0.5])[0, 0] == 0.0
    smooth = SeriesRows.from_padded(rng.normal(size=(30, 50, 1)))
    no_gaps = ValueMarginals.fit(smooth, [0], None, None, 1, floors=[None])
    assert np.isnan(no_gaps.steps).all()
    assert no_gaps.noise(smooth, None, no_gaps.quantiles(smooth, None), None, [None]) is None
    assert ValueMarginals.fit(real, [0], None, None, 1).steps is None  # switches off


@pytest.fixture(scope="module")
def lamp_model():
    rng = np.random.default_rng(2)
    features = _lamps(rng, 24)[:, :120, None]
    config = tiny_config(max_sequence_len=120, sample_len=10, epochs=1, match_marginals=True)
    model = DGAN(config)
    model.train_numpy(features, [OutputType.CONTINUOUS], progress_bar=False)
    return model


def test_the_noise_is_fitted_saved_checked_and_loaded(lamp_model, tmp_path):
    steps = lamp_model.encoder.marginals.steps
    assert steps is not None and steps.shape == (1, 1) and steps[0, 0] > 0
    assert lamp_model.sampler.calibration().noise is not None
    # A file from before the noise was kept decodes without it.
    assert_kept_in_file(lamp_model, tmp_path / "m.dgan", "encoder.marginals.steps", "noise")


@pytest.mark.parametrize("value", [[[-1.0]], [[0.1, 0.2]], [0.1], "x"])
def test_broken_steps_in_a_file_are_named(lamp_model, tmp_path, value):
    assert_named_when_broken(lamp_model, tmp_path / "m.dgan", "encoder.marginals.steps", value)
