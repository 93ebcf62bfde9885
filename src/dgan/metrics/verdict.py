"""Verdicts: each metric read against real data compared with itself.

A score means little alone: two halves of the *real* data are not identical either, and
small data sets make every score noisy. `judge` compares a metric's score (mean over
seeds, with its spread) with its **baseline**, the same metric computed between two random
halves of the real data, and says "close to real", "noticeably different" or "far from
real". `overall_verdict` combines them: the worst verdict among the metrics that count,
so the verdict follows the worst credible signal.

The rule, for each metric, with ``gap`` = how much worse the score is than the baseline
(score - baseline where lower is better, baseline - score where higher is better) and
``noise`` = 2 * sqrt(std_score^2 + std_baseline^2) (the spreads over seeds; one seed has
no spread, so there the classifiers' scores carry their sampling standard errors instead,
of a ROC AUC or an accuracy: `dgan.metrics.standard_error`, marked ``std_from``):

* close to real: ``gap <= noise + close``
* far from real: ``gap > noise + far``
* noticeably different: in between.

``close`` and ``far`` are per metric, in its units (`THRESHOLDS`, stated in the project's
docs/metrics.md). Three metrics are read against what they measure rather than against
halves of the real data: TSTR against the real data's own usefulness (the gap is the
share of what a classifier learns from real series beyond the majority class that it
does not learn from synthetic ones; for next-step prediction, 1 - the ratio of errors),
the class shapes against held-out real series (the gap is the share of a real-trained
classifier's skill beyond the majority class that it loses on synthetic series), and the
class shares against every class at its real share (the gap is 1 - the smallest ratio of
generated to real share).

**A classifier that learned nothing measured nothing** (`not_measured`): a detection
forest or GRU scoring below chance on held-out series (it learned the sides the wrong way
round, as when synthetic series copy real ones), or a TSTR or class-shape classifier
trained on *real* series that does not beat always guessing the most common class on
held-out real series, gives "not measured",
never "close to real"; it is left out of the overall verdict with its reason. So does the
real-vs-synthetic GRU where it scores "close to real" while the detection forest, reading
the same two sides, tells them apart (`outlearned`): its silence is a failure to learn
what the forest found, not evidence that there is nothing to find.

A metric whose held-out test set has fewer than `MIN_TEST_SERIES` series (or whose sides
have fewer than `MIN_SERIES` series) is too small to mean anything: it is reported with a
warning and left out of the overall verdict.

Example:
    >>> judge({"score": 0.05, "std": 0.01, "better": "lower"},
    ...       {"score": 0.04, "std": 0.01}, "discriminative")
    'close to real'
    >>> judge({"score": 0.45, "std": 0.01, "better": "lower"},
    ...       {"score": 0.04, "std": 0.01}, "discriminative")
    'far from real'
"""

from __future__ import annotations

import math
from typing import Any

CLOSE, DIFFERENT, FAR = "close to real", "noticeably different", "far from real"
VERDICTS = (CLOSE, DIFFERENT, FAR)
"""From best to worst."""
NOT_JUDGED = "not judged"
NOT_MEASURED = "not measured"

THRESHOLDS: dict[str, tuple[float, float]] = {
    # metric: (close, far) margins beyond the noise, in the metric's own units
    "detection": (0.10, 0.30),  # ROC AUC of the feature forest
    "discriminative": (0.05, 0.20),  # |accuracy - 0.5|
    "tstr": (0.25, 0.60),  # share of the real data's skill (beyond the majority) lost
    "classes": (0.50, 0.80),  # 1 - smallest generated/real share of a class
    "class_shapes": (0.25, 0.60),  # share of the real shapes' skill (beyond the majority) lost
    "autocorrelation": (0.01, 0.05),  # mean squared difference of autocorrelations
    "marginals": (0.05, 0.25),  # W1 in real standard deviations / total variation
    "attribute_feature_relation": (0.05, 0.25),  # W1 in real standard deviations
    "feature_correlation": (0.05, 0.20),  # mean absolute difference of correlations
}
_TRAINED_ON_ONE_SIDE = ("tstr", "class_shapes")
"""Classifiers of an attribute trained on one side and scored on both: read by their skill
beyond the majority class."""


NEXT_STEP_THRESHOLDS = (0.10, 0.30)
"""TSTR by next-step prediction: (close, far) margins on 1 - real error / synthetic error."""
BELOW_CHANCE = {"detection": 0.10, "discriminative": 0.05}
"""A classifier this far below chance (AUC 0.5, accuracy 0.5) beyond the noise learned the
sides the wrong way round: its score measures nothing."""

MIN_TEST_SERIES = 50
"""Learned metrics whose held-out test set is smaller than this are not judged."""
MIN_SERIES = 20
"""Distance metrics with fewer series than this on a side are not judged."""


def judge(entry: dict[str, Any], baseline: dict[str, Any] | None, name: str) -> str:
    """The verdict of one metric ``entry`` against its real-vs-real ``baseline``.

    Both carry ``score`` and ``std``; ``entry`` carries ``better``. Returns one of
    `VERDICTS`, `NOT_MEASURED` when the metric's classifier learned nothing
    (`not_measured` says why), or `NOT_JUDGED` when a score or the baseline is missing.
    """
    score = entry.get("score")
    if score is None or name not in THRESHOLDS:
        return NOT_JUDGED
    if not_measured(name, entry, baseline) is not None:
        return NOT_MEASURED
    close, far = THRESHOLDS[name]
    if name in _TRAINED_ON_ONE_SIDE:
        gap, noise = _tstr_gap(entry)
        if entry.get("task") != "classification":
            close, far = NEXT_STEP_THRESHOLDS
    elif name == "classes":
        gap, noise = 1.0 - score, 0.0
    else:
        base = None if baseline is None else baseline.get("score")
        if base is None:
            return NOT_JUDGED
        gap = score - base if entry.get("better") == "lower" else base - score
        noise = 2 * math.hypot(entry.get("std") or 0.0, baseline.get("std") or 0.0)
    if gap <= noise + close:
        return CLOSE
    if gap > noise + far:
        return FAR
    return DIFFERENT


def _tstr_gap(entry: dict[str, Any]) -> tuple[float, float]:
    """What the synthetic series lose against real ones (as training data for TSTR, as test
    data for the class shapes), and its noise."""
    if entry.get("task") == "classification" and entry.get("skill") is not None:
        return 1.0 - entry["skill"], 2 * (entry.get("skill_std") or 0.0)
    return 1.0 - entry["score"], 2 * (entry.get("std") or 0.0)


def not_measured(
    name: str, entry: dict[str, Any], baseline: dict[str, Any] | None = None
) -> str | None:
    """Why the metric's classifier measured nothing (see the module docstring), or None.

    Example:
        >>> not_measured("tstr", {"score": 0.9, "task": "classification", "n_test": 100,
        ...     "real_accuracy": 0.25, "majority_class_accuracy": 0.24,
        ...     "synthetic_accuracy": 0.2}).split(":")[0]
        'the classifier trained on real series does not beat the majority class'
    """
    if entry.get("score") is None:
        return None
    if name in BELOW_CHANCE:
        chance = 0.5 if name == "detection" else 0.0
        value = entry["score"] if name == "detection" else (entry.get("accuracy") or 0.5) - 0.5
        base_std = (baseline or {}).get("std") or 0.0
        noise = 2 * math.hypot(entry.get("std") or 0.0, base_std)
        if value < chance - BELOW_CHANCE[name] - noise:
            return (
                "below chance on held-out series: the classifier learned the sides the wrong "
                "way round, which happens when synthetic series copy real ones (see "
                "memorisation), so its score says nothing about how close they are"
            )
        return None
    if name in _TRAINED_ON_ONE_SIDE and entry.get("task") == "classification":
        real, majority = entry.get("real_accuracy"), entry.get("majority_class_accuracy")
        n_test = entry.get("n_test") or 1
        if real is None or majority is None:
            return None
        # Two standard errors of an accuracy near the majority rate on this many series.
        margin = max(0.05, 2 * math.sqrt(majority * (1 - majority) / n_test))
        if real - majority <= margin:
            return (
                f"the classifier trained on real series does not beat the majority class: "
                f"{real:.2f} against {majority:.2f} for always guessing the most common "
                f"{entry.get('target')!r}, so "
                + (
                    "what the synthetic series teach cannot be told"
                    if name == "tstr"
                    else "whether the synthetic series have their class's shape cannot be told"
                )
            )
    return None


def outlearned(metrics: dict[str, dict[str, Any]]) -> str | None:
    """Why the real-vs-synthetic GRU (``metrics["discriminative"]``) measured nothing
    because the detection forest (``metrics["detection"]``) learned the same two sides
    apart, or None: the GRU judged "close to real" where the forest's verdict is
    "noticeably different" or worse. Both entries carry a ``verdict`` (`judge`).

    Example:
        >>> outlearned({"detection": {"score": 0.97, "verdict": FAR},
        ...             "discriminative": {"accuracy": 0.47, "verdict": CLOSE}})[:56]
        'it scored 0.47 accuracy where the detection forest tells'
        >>> outlearned({"detection": {"score": 0.55, "verdict": CLOSE},
        ...             "discriminative": {"accuracy": 0.47, "verdict": CLOSE}}) is None
        True
    """
    forest, gru = metrics.get("detection") or {}, metrics.get("discriminative") or {}
    if gru.get("verdict") != CLOSE or forest.get("verdict") not in (DIFFERENT, FAR):
        return None
    accuracy = gru.get("accuracy")
    said = "near chance" if accuracy is None else f"{accuracy:.2f} accuracy"
    return (
        f"it scored {said} where the detection forest tells the same real and synthetic "
        f"series apart (ROC AUC {forest['score']:.2f}, {forest['verdict']}): it did not "
        "learn what separates them, so its score says nothing about how close they are"
    )


def too_small(name: str, n_real: int, n_synthetic: int) -> str | None:
    """Why a metric computed on these numbers of series means little, or None.

    Example:
        >>> too_small("tstr", 48, 48)
        'its test set has 14 real series (fewer than 50), too few to mean anything'
    """
    if name == "detection":  # cross-validated: every series is held out once
        n = 2 * min(n_real, n_synthetic)
        if n < MIN_TEST_SERIES:
            return (
                f"it holds out {n} series in all (fewer than {MIN_TEST_SERIES}), "
                "too few to mean anything"
            )
        return None
    if name == "discriminative":
        n = 2 * min(n_real, n_synthetic)
        test = n - round(0.7 * n)
        if test < MIN_TEST_SERIES:
            return (
                f"its test set has {test} series (fewer than {MIN_TEST_SERIES}), "
                "too few to mean anything"
            )
        return None
    if name in _TRAINED_ON_ONE_SIDE:
        test = n_real - round(0.7 * n_real)
        if test < MIN_TEST_SERIES:
            return (
                f"its test set has {test} real series (fewer than {MIN_TEST_SERIES}), "
                "too few to mean anything"
            )
        return None
    if min(n_real, n_synthetic) < MIN_SERIES:
        return f"there are fewer than {MIN_SERIES} series on a side"
    return None


def what_to_try(verdict: str) -> str:
    """What to try when the overall ``verdict`` is not "close to real" ("" when it is, or
    when there was too little data to judge): the one place this advice is written, for
    ``dgan evaluate``, ``dgan demo`` and the report alike.

    Example:
        >>> what_to_try(CLOSE)
        ''
        >>> what_to_try(FAR).split(":")[0]
        'What to try'
    """
    if verdict not in (DIFFERENT, FAR):
        return ""
    return (
        "What to try: a longer training budget (--training-steps or --training-minutes, or "
        "more --epochs; in Python the DGANConfig fields of those names): on small data much "
        "of the gap is too few optimizer steps; more data (more series of the same kind); "
        "and the settings for the data's size, which the plan shows (the README's 'Settings "
        "that follow the data's size'). Then evaluate again."
    )


def overall_verdict(metrics: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The verdict over all metrics: the worst one among those judged.

    ``metrics`` maps names to entries with a ``verdict``. Returns ``{"verdict", "counted",
    "left_out", "not_measured"}`` (the last: the metrics whose classifier measured
    nothing); the verdict is "not enough data to judge" when no metric counts.

    Example:
        >>> result = overall_verdict({"a": {"verdict": CLOSE}, "b": {"verdict": DIFFERENT},
        ...                           "c": {"verdict": NOT_JUDGED}})
        >>> result["verdict"], result["counted"], result["left_out"]
        ('noticeably different', ['a', 'b'], ['c'])
    """
    counted = [n for n, e in metrics.items() if e.get("verdict") in VERDICTS]
    left_out = [n for n in metrics if n not in counted]
    unmeasured = [n for n in left_out if metrics[n].get("verdict") == NOT_MEASURED]
    if not counted:
        verdict = "not enough data to judge"
    else:
        verdict = VERDICTS[max(VERDICTS.index(metrics[n]["verdict"]) for n in counted)]
    return {
        "verdict": verdict,
        "counted": counted,
        "left_out": left_out,
        "not_measured": unmeasured,
    }
