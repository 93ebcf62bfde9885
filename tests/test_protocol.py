"""Tests of dgan.metrics.protocol: the TimeGAN-protocol scores rank good and bad data right."""

import numpy as np
import pytest
import torch

from dgan.errors import DataError, ParameterError
from dgan.metrics import timegan_discriminative_score, timegan_predictive_score


def _sines(n: int, seed: int, dim: int = 4, steps: int = 12) -> np.ndarray:
    """Per-series frequency and phase shared by all features, so features predict each other."""
    rng = np.random.default_rng(seed)
    freq = rng.uniform(0.2, 0.6, size=(n, 1, 1))
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1, 1))
    shift = np.arange(dim)[None, None, :] * 0.5
    t = np.arange(steps)[None, :, None]
    return ((np.sin(freq * t + phase + shift) + 1) / 2).astype(np.float32)


def test_perfect_copy_scores_near_zero_and_noise_near_half():
    real = _sines(200, seed=0)
    copy = timegan_discriminative_score(real, real.copy(), runs=2, iterations=200)
    noise = np.random.default_rng(1).random(real.shape)
    told_apart = timegan_discriminative_score(real, noise, runs=1, iterations=800)
    assert copy < 0.1
    assert told_apart > 0.35


def test_predictive_score_is_lower_for_learnable_data_than_for_shuffled_data():
    real, train = _sines(200, seed=0), _sines(200, seed=1)
    rng = np.random.default_rng(2)
    shuffled = np.stack([w[rng.permutation(len(w))] for w in train])  # time order destroyed
    good = timegan_predictive_score(real, train, iterations=500)
    bad = timegan_predictive_score(real, shuffled, iterations=500)
    assert good < 0.8 * bad


def test_seeds_reproduce_and_leave_the_global_rng_alone():
    real, other = _sines(80, seed=0), _sines(80, seed=5)
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = timegan_discriminative_score(real, other, runs=2, iterations=30, seed=4)
    after = torch.rand(1)
    b = timegan_discriminative_score(real, other, runs=2, iterations=30, seed=4)
    assert a == b
    assert before == after  # the protocol drew from its own stream
    p1 = timegan_predictive_score(real, other, iterations=30, seed=4)
    p2 = timegan_predictive_score(real, other, iterations=30, seed=4)
    assert p1 == p2
    assert timegan_predictive_score(real, other, iterations=30, seed=5) != p1


def test_variable_length_windows_are_accepted():
    real = [w[: 6 + i % 6] for i, w in enumerate(_sines(60, seed=0))]
    synthetic = [w[: 6 + i % 5] for i, w in enumerate(_sines(60, seed=1))]
    assert 0 <= timegan_discriminative_score(real, synthetic, runs=1, iterations=20) <= 0.5
    assert timegan_predictive_score(real, synthetic, iterations=20) > 0


def test_bad_inputs_say_what_to_fix():
    real = _sines(20, seed=0)
    with pytest.raises(DataError, match="features"):
        timegan_discriminative_score(real, real[:, :, :2], runs=1, iterations=1)
    with pytest.raises(DataError, match="NaN"):
        timegan_predictive_score(real, np.full_like(real, np.nan), iterations=1)
    with pytest.raises(DataError, match="at least 2 features"):
        timegan_predictive_score(real[:, :, :1], None, iterations=1)
    with pytest.raises(DataError, match="shape"):
        timegan_discriminative_score(real[0], real[0], runs=1, iterations=1)
    with pytest.raises(ParameterError, match="runs"):
        timegan_discriminative_score(real, real, runs=0)
