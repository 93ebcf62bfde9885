"""`evaluate`: every fidelity metric in one call, and `METRIC_DESCRIPTIONS` for reports."""

from __future__ import annotations

from typing import Any

import numpy as np

from dgan.metrics._common import _check_count
from dgan.metrics.data import SeriesData, check_same_columns
from dgan.metrics.distances import (
    attribute_feature_relation,
    autocorrelation_distance,
    feature_correlation_distance,
    marginal_distances,
)
from dgan.metrics.learned import (
    _choose_target,
    _sample_rows,
    discriminative_score,
    train_synthetic_test_real,
)

METRIC_DESCRIPTIONS: dict[str, str] = {
    "discriminative": (
        "How well a small recurrent classifier tells real from synthetic series on held-out "
        "data, as |accuracy - 0.5|: 0 means indistinguishable, 0.5 means always told apart; "
        "lower is better."
    ),
    "tstr": (
        "Train on synthetic, test on real: how well a model trained on synthetic data "
        "predicts real data (an attribute, or the next time step) relative to a model trained "
        "on real data; 1 means the synthetic data is as useful as the real data, higher is "
        "better."
    ),
    "autocorrelation": (
        "Mean squared difference between the real and synthetic mean autocorrelation curves "
        "of each continuous feature: whether trends, cycles and memory over time are kept; "
        "lower is better, 0 is identical."
    ),
    "marginals": (
        "Average distance between the real and synthetic value distributions of every "
        "variable (Wasserstein-1 in real standard deviations for continuous ones, total "
        "variation from 0 to 1 for discrete ones, and sequence lengths); lower is better."
    ),
    "attribute_feature_relation": (
        "Whether features depend on attributes as in the real data: per category of each "
        "discrete attribute, the Wasserstein-1 distance of each continuous feature's values, "
        "weighted by how common the category is; lower is better."
    ),
    "feature_correlation": (
        "Mean absolute difference between the real and synthetic correlation matrices of the "
        "continuous features (0 to 2): whether features move together as in the real data; "
        "lower is better."
    ),
}


def evaluate(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    target_attribute: str | None = None,
    seed: int = 0,
    max_examples: int | None = 1000,
) -> dict[str, Any]:
    """Run every fidelity metric; return a JSON-serializable nested dict.

    Keys of the result: ``info`` (counts, seed) and one entry per metric, named as in
    `METRIC_DESCRIPTIONS`: ``discriminative``, ``tstr``, ``autocorrelation``,
    ``marginals``, ``attribute_feature_relation``, ``feature_correlation``. Each metric
    entry has a headline ``score`` (None with a ``reason`` when it does not apply),
    ``better`` ("lower" or "higher") and its details; see each metric's function for its
    definition. At most ``max_examples`` series per side, drawn at random with ``seed``,
    are used (None: all of them); results are reproducible for a given ``seed``.

    Example:
        >>> import json, numpy as np
        >>> rng = np.random.default_rng(0)
        >>> real = SeriesData.from_arrays(rng.normal(size=(30, 6, 2)))
        >>> synthetic = SeriesData.from_arrays(rng.normal(size=(30, 6, 2)))
        >>> result = evaluate(real, synthetic)
        >>> sorted(result) == sorted([*METRIC_DESCRIPTIONS, "info"])
        True
        >>> _ = json.dumps(result)  # plain Python types only
    """
    check_same_columns(real, synthetic)
    if max_examples is not None:
        _check_count(max_examples, "max_examples", minimum=1)
    _choose_target(real, target_attribute)  # fail fast on a bad target, before any work
    rng = np.random.default_rng(seed)
    real = real.subset(_sample_rows(real.n_examples, max_examples, rng))
    synthetic = synthetic.subset(_sample_rows(synthetic.n_examples, max_examples, rng))
    return {
        "info": {
            "n_real": real.n_examples,
            "n_synthetic": synthetic.n_examples,
            "seed": int(seed),
        },
        "discriminative": discriminative_score(real, synthetic, seed=seed, max_examples=None),
        "tstr": train_synthetic_test_real(
            real, synthetic, target_attribute=target_attribute, seed=seed, max_examples=None
        ),
        "autocorrelation": autocorrelation_distance(real, synthetic),
        "marginals": marginal_distances(real, synthetic),
        "attribute_feature_relation": attribute_feature_relation(real, synthetic),
        "feature_correlation": feature_correlation_distance(real, synthetic),
    }
