"""`evaluate`: every fidelity metric in one call, each beside its real-vs-real baseline
and spread over seeds, with verdicts (`dgan.metrics.verdict`); `METRIC_DESCRIPTIONS` for
reports. The feature judge (`dgan.metrics.judge`) comes first: a strong classifier that
sees whole series, so a verdict never rests on a weak classifier's silence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dgan.metrics._common import _check_count, _number, _skipped
from dgan.metrics.data import SeriesData, check_same_columns
from dgan.metrics.distances import (
    attribute_feature_relation,
    autocorrelation_distance,
    class_shares,
    feature_correlation_distance,
    marginal_distances,
)
from dgan.metrics.judge import class_shapes, detection_score, forest_tstr
from dgan.metrics.learned import (
    _choose_target,
    _sample_rows,
    discriminative_score,
    train_synthetic_test_real,
)
from dgan.metrics.memorisation import judge_memorisation, memorisation
from dgan.metrics.standard_error import SAMPLING, seed_spread
from dgan.metrics.verdict import (
    NOT_JUDGED,
    NOT_MEASURED,
    judge,
    not_measured,
    outlearned,
    overall_verdict,
    too_small,
)

METRIC_DESCRIPTIONS: dict[str, str] = {
    "detection": (
        "How well a random forest on per-series features (levels and spreads on a log "
        "scale, flat starts, jumps, roughness, periods, trends, lengths, attributes, and "
        "catch22's features when installed) tells synthetic from real series it did not "
        "train on, as ROC AUC: 0.5 means indistinguishable, 1.0 always told apart; lower "
        "is better."
    ),
    "discriminative": (
        "How well a small recurrent classifier (GRU) tells real from synthetic series on "
        "held-out data, as |accuracy - 0.5|: 0 means indistinguishable, 0.5 means always "
        "told apart; lower is better."
    ),
    "tstr": (
        "Train on synthetic, test on real: a random forest on series features learns a "
        "discrete attribute from synthetic series and predicts it for real ones; its "
        "accuracy over that of the same forest trained on real series (both beside always "
        "guessing the most common class). Without a discrete attribute, a small GRU "
        "predicts the next time step, as the ratio of errors. 1 means the synthetic data "
        "is as useful as the real data; higher is better."
    ),
    "classes": (
        "Whether every category of every discrete attribute is generated: the smallest "
        "ratio of a category's share of the synthetic series to its share of the real "
        "ones (1 means every class at its real share, 0 a class never generated); higher "
        "is better."
    ),
    "class_shapes": (
        "Whether each synthetic series has its class's shape: a random forest trained on "
        "real series, each standardised (its level and scale removed), names a discrete "
        "attribute of held-out real series and of the synthetic ones; its accuracy on "
        "synthetic series over that on real ones (both beside always guessing the most "
        "common class). 1 means synthetic series are named as surely as real ones; higher "
        "is better."
    ),
    "autocorrelation": (
        "Mean squared difference between the real and synthetic mean autocorrelation curves "
        "of each continuous feature: whether trends, cycles and memory over time are kept; "
        "lower is better, 0 is identical."
    ),
    "marginals": (
        "Average distance between the real and synthetic value distributions of every "
        "variable (Wasserstein-1 in real standard deviations for continuous ones, on a log "
        "scale where values span orders of magnitude, total variation from 0 to 1 for "
        "discrete ones, and sequence lengths); lower is better."
    ),
    "attribute_feature_relation": (
        "Whether features depend on attributes as in the real data: per category of each "
        "discrete attribute, the Wasserstein-1 distance of each continuous feature's values "
        "(log scale where they span orders of magnitude), weighted by how common the "
        "category is; lower is better."
    ),
    "feature_correlation": (
        "Mean absolute difference between the real and synthetic correlation matrices of the "
        "continuous features (0 to 2): whether features move together as in the real data; "
        "lower is better."
    ),
}
_WITH_BASELINE = ("detection", "discriminative", "autocorrelation", "marginals",
                  "attribute_feature_relation", "feature_correlation")  # fmt: skip
"""The metrics read against two halves of the real data (TSTR, the class shares and the
class shapes are read against what they measure: see `dgan.metrics.verdict`)."""

Progress = Callable[[str, float], None]
"""``progress(what, fraction_done)``: told before each step of `evaluate`."""


def evaluate(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    target_attribute: str | None = None,
    seed: int = 0,
    max_examples: int | None = 1000,
    n_seeds: int = 3,
    baseline: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run every fidelity metric beside its real-vs-real baseline; return a JSON-ready dict.

    Keys of the result: ``info`` (counts, seed), one entry per metric, named as in
    `METRIC_DESCRIPTIONS` (``detection``, ``discriminative``, ``tstr``, ``classes``,
    ``class_shapes``, ``autocorrelation``, ``marginals``, ``attribute_feature_relation``,
    ``feature_correlation``), ``verdict`` (`dgan.metrics.verdict.overall_verdict`, plus
    ``n_seeds``) and ``memorisation`` (`dgan.metrics.memorisation.memorisation` of the
    real series, which should be the training data, beside its real-vs-real baseline,
    with its own verdict from `judge_memorisation`; not part of the fidelity verdict).
    Each metric entry has a headline ``score``: the mean over ``n_seeds`` seeds (``seed``,
    ``seed + 1``, ...), with ``std`` and ``per_seed`` (None with a ``reason`` when the
    metric does not apply), ``std_from``: "seeds" (the spread over them), "sampling" (one
    seed: the score's sampling standard error, known for the classifiers' ROC AUC and
    accuracies: `dgan.metrics.standard_error`) or "one seed" (0: not measured),
    ``better`` ("lower" or "higher"), its details (see each metric's function),
    ``baseline``: the same metric between two random halves of the real data (``score``,
    ``std``, ``std_from``, ``per_seed``; None with ``baseline=False`` and for TSTR, the
    class shares and the class shapes), a ``verdict`` (`dgan.metrics.verdict.judge`),
    ``not_measured`` (why, when its classifier learned nothing) and, where the data is too
    small for the metric to mean anything, a ``warning`` (the metric is then left out of
    the overall verdict). At most ``max_examples`` series per side, drawn at random with ``seed``,
    are compared (None: all of them); the copy check searches all the real series.
    ``progress(what, fraction_done)`` is called before each step ("detection, 3 seeds",
    "discriminative, seed 2 of 3", "real vs real: discriminative, seed 1 of 3",
    "memorisation"), with the share of the work done, counted in the series the
    classifiers read (they take nearly all the time). Results are reproducible for a
    given ``seed``.

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
    target = _choose_target(real, target_attribute)  # fail fast on a bad target, before work
    rng = np.random.default_rng(seed)
    trained_on = real  # the copy check searches every real series, not a sample
    real = real.subset(_sample_rows(real.n_examples, max_examples, rng))
    synthetic = synthetic.subset(_sample_rows(synthetic.n_examples, max_examples, rng))
    seeds = [seed + k for k in range(n_seeds)]
    halves = [_halves(real, s) for s in seeds] if baseline and real.n_examples >= 4 else []
    heavy = [n for n in _HEAVY if n != "class_shapes" or target is not None]
    tell = _Progress(progress, real.n_examples, synthetic.n_examples, n_seeds, bool(halves), heavy)
    result: dict[str, Any] = {
        "info": {
            "n_real": real.n_examples,
            "n_synthetic": synthetic.n_examples,
            "seed": int(seed),
        },
    }
    for name in METRIC_DESCRIPTIONS:
        entry = _metric(name, real, synthetic, seeds, target, tell)
        entry["baseline"] = None
        if halves and name in _WITH_BASELINE:
            entry["baseline"] = _metric_on_halves(name, halves, tell)
        warning = too_small(name, real.n_examples, synthetic.n_examples)
        if warning is not None and entry["score"] is not None:
            entry["warning"] = f"{name}: {warning}; left out of the verdict"
            entry["verdict"] = NOT_JUDGED
        else:
            entry["verdict"] = judge(entry, entry["baseline"], name)
            if entry["verdict"] == NOT_MEASURED:
                entry["not_measured"] = not_measured(name, entry, entry["baseline"])
        result[name] = entry
    if (reason := outlearned(result)) is not None:  # the forest saw what the GRU missed
        result["discriminative"].update(verdict=NOT_MEASURED, not_measured=reason)
    result["verdict"] = {
        **overall_verdict({name: result[name] for name in METRIC_DESCRIPTIONS}),
        "n_seeds": n_seeds,
    }
    tell("memorisation", 0)
    result["memorisation"] = _memorisation(trained_on, synthetic, seeds, baseline, max_examples)
    return result


_HEAVY = ("detection", "discriminative", "tstr", "class_shapes")
"""The metrics that fit classifiers: nearly all of evaluate's time, in proportion to the
series they read; the distances take a moment. The class shapes run only with a discrete
attribute to name."""


_CLASS_FORESTS = {"tstr": forest_tstr, "class_shapes": class_shapes}
"""The feature judge's classifiers of a discrete attribute (`dgan.metrics.judge`): each
loops over the seeds itself, reusing the features, like its detection."""


class _Progress:
    """Tells ``progress`` what evaluate does next and the share of the work done, counted
    in the series the classifiers read."""

    def __init__(
        self,
        progress: Progress | None,
        n_real: int,
        n_synthetic: int,
        n_seeds: int,
        halves: bool,
        heavy: list[str],
    ):
        # Each seed reads both sides, and the real vs real baseline reads the real ones
        # again (its two halves), so the work sums to 1 when the copy check starts.
        self.total = n_seeds * sum(
            n_real + n_synthetic + n_real * (halves and name in _WITH_BASELINE) for name in heavy
        )
        self.progress, self.done = progress, 0.0

    def __call__(self, what: str, series: float) -> None:
        if self.progress is not None:
            self.progress(what, min(self.done / self.total, 1.0) if self.total else 0.0)
        self.done += series


def _metric(name: str, real: SeriesData, synthetic: SeriesData, seeds, target, tell) -> dict:
    """One metric over the seeds: the first seed's details, with the scores' mean, std and
    per-seed values (the forest metrics loop over the seeds themselves, reusing features)."""
    n, size = len(seeds), real.n_examples + synthetic.n_examples
    if name == "class_shapes" and target is None:
        return _skipped("There is no discrete attribute to name.", better="higher")
    if name == "detection" or (name in _CLASS_FORESTS and target is not None):
        tell(f"{name}, {n} seed{'s' if n > 1 else ''}", n * size)
        if name == "detection":
            return detection_score(real, synthetic, seed=seeds[0], n_seeds=n, max_examples=None)
        return _CLASS_FORESTS[name](
            real, synthetic, target, seed=seeds[0], n_seeds=n, max_examples=None
        )
    entries = []
    for k, s in enumerate(seeds):
        tell(f"{name}, seed {k + 1} of {n}", size if name in _HEAVY else 0)
        entries.append(_once(name, real, synthetic, s))
    return _over_seeds(entries)


def _metric_on_halves(name: str, halves, tell) -> dict[str, Any]:
    """The metric between two halves of the real data, one split per seed."""
    runs = []
    for k, (a, b) in enumerate(halves):
        tell(f"real vs real: {name}, seed {k + 1} of {len(halves)}",
             a.n_examples + b.n_examples if name in _HEAVY else 0)  # fmt: skip
        if name == "detection":
            runs.append(detection_score(a, b, seed=k, n_seeds=1, max_examples=None))
        else:
            runs.append(_once(name, a, b, k))
    return _baseline(runs)


def _once(name: str, real: SeriesData, synthetic: SeriesData, seed: int) -> dict[str, Any]:
    """A metric for one seed."""
    if name == "discriminative":
        return discriminative_score(real, synthetic, seed=seed, n_seeds=1, max_examples=None)
    if name == "tstr":  # no discrete attribute: next-step prediction
        return train_synthetic_test_real(real, synthetic, seed=seed, max_examples=None)
    return _DISTANCES[name](real, synthetic)


_DISTANCES = {
    "classes": class_shares,
    "autocorrelation": autocorrelation_distance,
    "marginals": marginal_distances,
    "attribute_feature_relation": attribute_feature_relation,
    "feature_correlation": feature_correlation_distance,
}


def _memorisation(
    real: SeriesData, synthetic: SeriesData, seeds, baseline: bool, max_examples: int | None
) -> dict:
    """Memorisation of ``real`` (all of it) by ``synthetic`` (the sampled series),
    beside the same between two halves of the real data per seed; its own verdict, apart
    from the fidelity verdict."""
    entry = memorisation(real, synthetic, max_examples=None)
    entry["std"] = 0.0 if entry["score"] is not None else None
    entry["baseline"] = None
    if baseline and real.n_examples >= 6:
        halves = [memorisation(*_halves(real, s), max_examples=max_examples) for s in seeds]
        entry["baseline"] = _baseline(halves)
    entry["verdict"] = judge_memorisation(entry, entry["baseline"])
    return entry


def _halves(real: SeriesData, seed: int) -> tuple[SeriesData, SeriesData]:
    """Two disjoint random halves of the real series (the baseline's "real" and "synthetic")."""
    order = np.random.default_rng([seed, 1]).permutation(real.n_examples)
    half = real.n_examples // 2
    return real.subset(np.sort(order[:half])), real.subset(np.sort(order[half : 2 * half]))


_NOT_FINITE = "Its value is not a finite number for this data (values too large or not finite)."


def _over_seeds(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The first seed's entry, with the score's mean, std and per-seed values over all."""
    entry = dict(entries[0])
    entry.pop("std_from", None)
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
    entry.update(seed_spread(scores, _sampling(entries)))
    entry["per_seed"] = [_number(s) for s in scores]
    return entry


def _baseline(entries: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [e.get("score") for e in entries]
    if any(s is None for s in scores):
        reason = next(e.get("reason") for e in entries if e.get("score") is None)
        return {"score": None, "std": None, "per_seed": scores, "reason": reason or _NOT_FINITE}
    return {
        "score": _number(np.mean(scores)),
        **seed_spread(scores, _sampling(entries)),
        "per_seed": [_number(s) for s in scores],
    }


def _sampling(entries: list[dict[str, Any]]) -> float | None:
    """The one seed's sampling standard error, where its metric knows one: one seed has no
    spread, and a std of 0 would make any gap to the baseline look real."""
    first = entries[0]
    return first.get("std") if len(entries) == 1 and first.get("std_from") == SAMPLING else None
