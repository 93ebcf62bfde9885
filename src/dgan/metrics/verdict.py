"""Verdicts: each metric read against real data compared with itself.

A score means little alone: two halves of the *real* data are not identical either, and
small data sets make every score noisy. `judge` compares a metric's score (mean over
seeds, with its spread) with its **baseline**, the same metric computed between two random
halves of the real data, and says "close to real", "noticeably different" or "far from
real". `overall_verdict` combines them: the worst verdict among the metrics that count.

The rule, for each metric, with ``gap`` = how much worse the score is than the baseline
(score - baseline where lower is better, baseline - score where higher is better) and
``noise`` = 2 * sqrt(std_score^2 + std_baseline^2) (the spreads over seeds):

* close to real: ``gap <= noise + close``
* far from real: ``gap > noise + far``
* noticeably different: in between.

``close`` and ``far`` are per metric, in its units (`THRESHOLDS`, stated in
the project's docs/metrics.md). A metric whose held-out test set has fewer than `MIN_TEST_SERIES`
series (or whose sides have fewer than `MIN_SERIES` series) is too small to mean
anything: it is reported with a warning and left out of the overall verdict.

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

THRESHOLDS: dict[str, tuple[float, float]] = {
    # metric: (close, far) margins beyond the noise, in the metric's own units
    "discriminative": (0.05, 0.20),  # |accuracy - 0.5|
    "tstr": (0.10, 0.30),  # ratio to train-on-real
    "autocorrelation": (0.01, 0.05),  # mean squared difference of autocorrelations
    "marginals": (0.05, 0.25),  # W1 in real standard deviations / total variation
    "attribute_feature_relation": (0.05, 0.25),  # W1 in real standard deviations
    "feature_correlation": (0.05, 0.20),  # mean absolute difference of correlations
}

MIN_TEST_SERIES = 50
"""Learned metrics whose held-out test set is smaller than this are not judged."""
MIN_SERIES = 20
"""Distance metrics with fewer series than this on a side are not judged."""


def judge(entry: dict[str, Any], baseline: dict[str, Any] | None, name: str) -> str:
    """The verdict of one metric ``entry`` against its real-vs-real ``baseline``.

    Both carry ``score`` and ``std``; ``entry`` carries ``better``. Returns one of
    `VERDICTS`, or `NOT_JUDGED` when a score or the baseline is missing.
    """
    score = entry.get("score")
    base = None if baseline is None else baseline.get("score")
    if score is None or base is None or name not in THRESHOLDS:
        return NOT_JUDGED
    gap = score - base if entry.get("better") == "lower" else base - score
    noise = 2 * math.hypot(entry.get("std") or 0.0, baseline.get("std") or 0.0)
    close, far = THRESHOLDS[name]
    if gap <= noise + close:
        return CLOSE
    if gap > noise + far:
        return FAR
    return DIFFERENT


def too_small(name: str, n_real: int, n_synthetic: int) -> str | None:
    """Why a metric computed on these numbers of series means little, or None.

    Example:
        >>> too_small("tstr", 48, 48)
        'its test set has 14 real series (fewer than 50), too few to mean anything'
    """
    if name == "discriminative":
        n = 2 * min(n_real, n_synthetic)
        test = n - round(0.7 * n)
        if test < MIN_TEST_SERIES:
            return (
                f"its test set has {test} series (fewer than {MIN_TEST_SERIES}), "
                "too few to mean anything"
            )
        return None
    if name == "tstr":
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
    "left_out"}``; the verdict is "not enough data to judge" when no metric counts.

    Example:
        >>> overall_verdict({"a": {"verdict": CLOSE}, "b": {"verdict": DIFFERENT},
        ...                  "c": {"verdict": NOT_JUDGED}})
        {'verdict': 'noticeably different', 'counted': ['a', 'b'], 'left_out': ['c']}
    """
    counted = [n for n, e in metrics.items() if e.get("verdict") in VERDICTS]
    left_out = [n for n in metrics if n not in counted]
    if not counted:
        return {"verdict": "not enough data to judge", "counted": [], "left_out": left_out}
    worst = max(VERDICTS.index(metrics[n]["verdict"]) for n in counted)
    return {"verdict": VERDICTS[worst], "counted": counted, "left_out": left_out}
