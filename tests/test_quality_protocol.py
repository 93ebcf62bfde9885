"""Quality regression guard: TimeGAN-protocol scores of a short training on TimeGAN's sines.

Trains on 1,000 sine windows (24 steps x 5 features, TimeGAN's generator) for about a
minute on one CPU thread, then scores the samples with shortened protocol metrics. The
thresholds come from measured runs (docs/quality.md) with a margin; a model trained for
one epoch fails them, so the test can fail.
"""

import numpy as np
import pytest

from dgan import DGAN, DGANConfig, OutputType
from dgan.metrics import timegan_discriminative_score, timegan_predictive_score

EPOCHS = 60
# Measured (docs/quality.md, "Regression test"): 60 epochs scored 0.19 and a ratio of 1.23;
# one epoch 0.47 and 1.51. The margins absorb seed noise.
MAX_DISCRIMINATIVE = 0.32
MAX_PREDICTIVE_RATIO = 1.4  # predictive MAE / train-on-real MAE


def timegan_sines(n: int, seed: int, steps: int = 24, dim: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    freq, phase = rng.uniform(0, 0.1, (2, n, 1, dim))
    return ((np.sin(freq * np.arange(steps)[None, :, None] + phase) + 1) / 2).astype(np.float32)


def train_and_score(epochs: int, seed: int = 0) -> dict[str, float]:
    """Protocol scores of a model trained ``epochs`` epochs (shortened classifier runs)."""
    real = timegan_sines(1000, seed=seed)
    # gretel's settings, which the thresholds were measured with, and its decoding: the
    # value map (match_marginals) alone takes a one-epoch model under the thresholds of
    # these shortened classifiers, so the guard checks the generator as it generates.
    config = DGANConfig(
        max_sequence_len=24, sample_len=4, batch_size=100, epochs=epochs, cuda=False, seed=seed,
        large_data=False, match_marginals=False,
    )  # fmt: skip
    model = DGAN(config)
    model.train_numpy(real, feature_types=[OutputType.CONTINUOUS] * 5, progress_bar=False)
    _, series = model.generate_numpy(len(real))
    synthetic = np.clip(np.stack(series), 0, 1).astype(np.float32)  # sigmoid head: in [0, 1]
    return {
        "discriminative": timegan_discriminative_score(real, synthetic, runs=2, iterations=1000),
        "predictive": timegan_predictive_score(real, synthetic, iterations=2000),
        "train_on_real": timegan_predictive_score(real, None, iterations=2000),
    }


def problems(scores: dict[str, float]) -> list[str]:
    found = []
    if scores["discriminative"] > MAX_DISCRIMINATIVE:
        found.append(f"discriminative {scores['discriminative']:.3f} > {MAX_DISCRIMINATIVE}")
    ratio = scores["predictive"] / scores["train_on_real"]
    if ratio > MAX_PREDICTIVE_RATIO:
        found.append(f"predictive / train-on-real {ratio:.2f} > {MAX_PREDICTIVE_RATIO}")
    return found


@pytest.mark.slow
def test_short_training_on_sines_keeps_protocol_quality():
    scores = train_and_score(EPOCHS)
    assert problems(scores) == [], scores


@pytest.mark.slow
def test_the_guard_rejects_an_undertrained_model():
    assert problems(train_and_score(1)), "one epoch must fail the quality thresholds"
