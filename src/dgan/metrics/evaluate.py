"""`evaluate`: every fidelity metric in one call, each beside its real-vs-real baseline
and spread over seeds, with verdicts (`dgan.metrics.verdict`); `METRIC_DESCRIPTIONS` for
reports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dgan.metrics._common import _check_count, _number
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
from dgan.metrics.memorisation import judge_memorisation, memorisation
from dgan.metrics.verdict import NOT_JUDGED, judge, overall_verdict, too_small

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
    n_seeds: int = 3,
    baseline: bool = True,
    progress: Callable[[str, float], None] | None = None,
) -> dict[str, Any]:
    """Run every fidelity metric beside its real-vs-real baseline; return a JSON-ready dict.

    Keys of the result: ``info`` (counts, seed), one entry per metric, named as in
    `METRIC_DESCRIPTIONS` (``discriminative``, ``tstr``, ``autocorrelation``,
    ``marginals``, ``attribute_feature_relation``, ``feature_correlation``),
    ``verdict`` (`dgan.metrics.verdict.overall_verdict`, plus ``n_seeds``) and
    ``memorisation`` (`dgan.metrics.memorisation.memorisation` of the real series,
    which should be the training data, beside its real-vs-real baseline, with its own
    verdict from `judge_memorisation`; not part of the fidelity verdict). Each metric
    entry has a headline ``score``: the mean over ``n_seeds`` seeds (``seed``,
    ``seed + 1``, ...), with ``std`` and ``per_seed`` (None with a ``reason`` when the
    metric does not apply), ``better`` ("lower" or "higher"), its details (of the first
    seed; see each metric's function), ``baseline``: the same metric between two random
    halves of the real data (``score``, ``std``, ``per_seed``; None with
    ``baseline=False``), a ``verdict`` (`dgan.metrics.verdict.judge`) and, where the
    data is too small for the metric to mean anything, a ``warning`` (the metric is then
    left out of the overall verdict). At most ``max_examples`` series per side, drawn at
    random with ``seed``, are used (None: all of them); results are reproducible for a
    given ``seed``.

    ``progress``, when given, is called before each metric of each seed with what comes
    next ("tstr, seed 2 of 3", "real vs real: tstr, seed 1 of 3", "memorisation") and the
    fraction of the work done, counted in the series the learned metrics (discriminative,
    tstr) fit on, as they take nearly all the time.

    Example:
        >>> import json, numpy as np
        >>> rng = np.random.default_rng(0)
        >>> real = SeriesData.from_arrays(rng.normal(size=(30, 6, 2)))
        >>> synthetic = SeriesData.from_arrays(rng.normal(size=(30, 6, 2)))
        >>> result = evaluate(real, synthetic, n_seeds=1)
        >>> sorted(result) == sorted([*METRIC_DESCRIPTIONS, "info", "verdict", "memorisation"])
        True
        >>> result["memorisation"]["verdict"]
        'no sign of copying'
        >>> result["discriminative"]["warning"].split(",")[0]
        'discriminative: its test set has 18 series (fewer than 50)'
        >>> _ = json.dumps(result)  # plain Python types only
    """
    check_same_columns(real, synthetic)
    if max_examples is not None:
        _check_count(max_examples, "max_examples", minimum=1)
    _check_count(n_seeds, "n_seeds", minimum=1)
    _choose_target(real, target_attribute)  # fail fast on a bad target, before any work
    rng = np.random.default_rng(seed)
    real = real.subset(_sample_rows(real.n_examples, max_examples, rng))
    synthetic = synthetic.subset(_sample_rows(synthetic.n_examples, max_examples, rng))
    seeds = [seed + k for k in range(n_seeds)]
    with_baseline = baseline and real.n_examples >= 4
    size, half = real.n_examples + synthetic.n_examples, 2 * (real.n_examples // 2)
    done, total = [0.0], n_seeds * (size + half * with_baseline)

    def before_each(what: str, k: int, series: int) -> Callable[[str], None]:
        """Reports progress before each metric of seed ``k``'s pass over ``series``."""

        def before(name: str) -> None:
            if progress is not None:
                progress(f"{what}{name}, seed {k + 1} of {n_seeds}", done[0] / total)
            done[0] += series / 2 if name in ("discriminative", "tstr") else 0

        return before

    runs = [
        _all_metrics(real, synthetic, target_attribute, s, before_each("", k, size))
        for k, s in enumerate(seeds)
    ]
    baselines = [
        _all_metrics(*_halves(real, s), target_attribute, s, before_each("real vs real: ", k, half))
        for k, s in enumerate(seeds if with_baseline else [])
    ]
    if progress is not None:
        progress("memorisation", 1.0)
    result: dict[str, Any] = {
        "info": {
            "n_real": real.n_examples,
            "n_synthetic": synthetic.n_examples,
            "seed": int(seed),
        },
    }
    for name in METRIC_DESCRIPTIONS:
        entry = _over_seeds([run[name] for run in runs])
        entry["baseline"] = _baseline([b[name] for b in baselines]) if baselines else None
        warning = too_small(name, real.n_examples, synthetic.n_examples)
        if warning is not None and entry["score"] is not None:
            entry["warning"] = f"{name}: {warning}; left out of the verdict"
            entry["verdict"] = NOT_JUDGED
        else:
            entry["verdict"] = judge(entry, entry["baseline"], name)
        result[name] = entry
    result["verdict"] = {
        **overall_verdict({name: result[name] for name in METRIC_DESCRIPTIONS}),
        "n_seeds": n_seeds,
    }
    result["memorisation"] = _memorisation(real, synthetic, seeds, baseline)
    return result


def _memorisation(real: SeriesData, synthetic: SeriesData, seeds, baseline: bool) -> dict:
    """Memorisation of ``real`` by ``synthetic`` (deterministic on the sampled series),
    beside the same between two halves of the real data per seed; its own verdict, apart
    from the fidelity verdict."""
    entry = memorisation(real, synthetic, max_examples=None)
    entry["std"] = 0.0 if entry["score"] is not None else None
    halves = [memorisation(*_halves(real, s), max_examples=None) for s in seeds]
    entry["baseline"] = _baseline(halves) if baseline and real.n_examples >= 6 else None
    entry["verdict"] = judge_memorisation(entry, entry["baseline"])
    return entry


def _all_metrics(real: SeriesData, synthetic: SeriesData, target, seed: int, step) -> dict:
    """Every metric once, for one seed; ``step(name)`` before each."""
    metrics = {
        "discriminative": lambda: discriminative_score(
            real, synthetic, seed=seed, n_seeds=1, max_examples=None
        ),
        "tstr": lambda: train_synthetic_test_real(
            real, synthetic, target_attribute=target, seed=seed, max_examples=None
        ),
        "autocorrelation": lambda: autocorrelation_distance(real, synthetic),
        "marginals": lambda: marginal_distances(real, synthetic),
        "attribute_feature_relation": lambda: attribute_feature_relation(real, synthetic),
        "feature_correlation": lambda: feature_correlation_distance(real, synthetic),
    }
    results = {}
    for name, compute in metrics.items():
        step(name)
        results[name] = compute()
    return results


def _halves(real: SeriesData, seed: int) -> tuple[SeriesData, SeriesData]:
    """Two disjoint random halves of the real series (the baseline's "real" and "synthetic")."""
    order = np.random.default_rng([seed, 1]).permutation(real.n_examples)
    half = real.n_examples // 2
    return real.subset(np.sort(order[:half])), real.subset(np.sort(order[half : 2 * half]))


_NOT_FINITE = "Its value is not a finite number for this data (values too large or not finite)."


def _over_seeds(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The first seed's entry, with the score's mean, std and per-seed values over all."""
    entry = dict(entries[0])
    scores = [e.get("score") for e in entries]
    if any(s is None for s in scores):
        entry["score"], entry["std"], entry["per_seed"] = None, None, scores
        failed = [k for k, s in enumerate(scores) if s is None]
        why = entries[failed[0]].get("reason") or _NOT_FINITE
        entry["reason"] = entry.get("reason") or why
        if len(failed) < len(scores):  # the details (the first seed's) may look fine
            those = "That seed" if len(failed) == 1 else "Those seeds"
            entry["reason"] = (
                f"{len(failed)} of {len(scores)} seeds gave no score (see per_seed), so there "
                f"is no mean over the seeds. {those}: {why}"
            )
        return entry
    entry["score"] = _number(np.mean(scores))
    entry["std"] = _number(np.std(scores))
    entry["per_seed"] = [_number(s) for s in scores]
    return entry


def _baseline(entries: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [e.get("score") for e in entries]
    if any(s is None for s in scores):
        reason = next(e.get("reason") for e in entries if e.get("score") is None)
        return {"score": None, "std": None, "per_seed": scores, "reason": reason or _NOT_FINITE}
    return {
        "score": _number(np.mean(scores)),
        "std": _number(np.std(scores)),
        "per_seed": [_number(s) for s in scores],
    }
