"""Sampling standard errors: the noise of a score that one seed cannot measure.

`dgan.metrics.evaluate` repeats each learned metric over seeds and reads the spread of
its scores as their noise (`dgan.metrics.verdict`). One seed has no spread: a ``std`` of 0
there would claim a noiseless score, and any gap to the real-vs-real baseline would look
real (held-out real series read "noticeably different" from real ones). A score measured
once still carries the sampling error of the series it was scored on, which is known for
a ROC AUC (`auc_standard_error`) and an accuracy (`accuracy_standard_error`):
`seed_spread` takes the spread over seeds where there are two or more, and that error
where there is one, and says which in ``std_from``.

Example:
    >>> seed_spread([0.52, 0.56, 0.54], sampling=0.04)["std_from"]
    'seeds'
    >>> seed_spread([0.54], sampling=0.04)
    {'std': 0.04, 'std_from': 'sampling'}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dgan.metrics._common import _number

SEEDS, SAMPLING, ONE_SEED = "seeds", "sampling", "one seed"
"""What a ``std`` is (``std_from``): the spread over two or more seeds; the sampling
standard error of a score from one seed; or 0 from one seed with no such error known
(the distances, next-step TSTR): not measured."""


def auc_standard_error(auc: float, n_positive: int, n_negative: int) -> float | None:
    """The standard error of a ROC AUC from ``n_positive`` and ``n_negative`` scored
    cases (Hanley & McNeil 1982, Radiology 143:29-36), or None when it cannot be known.

    SE = sqrt((A(1-A) + (n1-1)(Q1-A^2) + (n2-1)(Q2-A^2)) / (n1 n2)), with Q1 = A/(2-A)
    and Q2 = 2A^2/(1+A).

    Example:
        >>> round(auc_standard_error(0.8, 50, 50), 4)
        0.0445
        >>> round(auc_standard_error(0.5, 90, 90), 4)  # about sqrt(1 / (6 n)) at chance
        0.0432
    """
    if auc is None or not 0.0 <= auc <= 1.0 or min(n_positive, n_negative) < 1:
        return None
    q1, q2, a2 = auc / (2 - auc), 2 * auc**2 / (1 + auc), auc**2
    variance = auc * (1 - auc) + (n_positive - 1) * (q1 - a2) + (n_negative - 1) * (q2 - a2)
    return math.sqrt(max(variance, 0.0) / (n_positive * n_negative))


def accuracy_standard_error(accuracy: float, n: int) -> float | None:
    """The binomial standard error sqrt(p(1-p)/n) of an accuracy ``p`` on ``n`` held-out
    series, or None when it cannot be known. It is also the error of |accuracy - 0.5|.

    Example:
        >>> round(accuracy_standard_error(0.7, 100), 4)
        0.0458
    """
    if accuracy is None or not 0.0 <= accuracy <= 1.0 or n < 1:
        return None
    return math.sqrt(accuracy * (1 - accuracy) / n)


def ratio_standard_error(
    top: float, top_se: float | None, bottom: float, bottom_se: float | None
) -> float | None:
    """The standard error of ``top / bottom`` from theirs, to first order (the delta
    method), taking them as independent; None where ``bottom`` is 0 or an error unknown.

    Example:
        >>> round(ratio_standard_error(0.6, 0.05, 0.8, 0.04), 4)
        0.0729
    """
    if top_se is None or bottom_se is None or bottom == 0:
        return None
    return math.hypot(top_se, top / bottom * bottom_se) / abs(bottom)


def seed_spread(values: Sequence[float], sampling: float | None = None) -> dict[str, Any]:
    """``{"std", "std_from"}`` of a score measured once per seed (``values``): the standard
    deviation over two or more seeds (``sampling`` is then unused), else the sampling
    standard error ``sampling`` of the one seed's score, else 0, flagged as not measured.

    Example:
        >>> seed_spread([0.2, 0.4])
        {'std': 0.1, 'std_from': 'seeds'}
        >>> seed_spread([0.5])
        {'std': 0.0, 'std_from': 'one seed'}
    """
    if len(values) > 1:
        return {"std": _number(np.std(values)), "std_from": SEEDS}
    if sampling is not None:
        return {"std": _number(sampling), "std_from": SAMPLING}
    return {"std": 0.0, "std_from": ONE_SEED}


def shows_sampling_error(metrics: dict[str, Any]) -> bool:
    """Whether any metric entry of ``metrics`` (an `dgan.metrics.evaluate` result), or its
    baseline, carries a sampling standard error as its ``std``: tables then say that their
    ± is one, not a spread over seeds.

    Example:
        >>> shows_sampling_error({"detection": {"std": 0.04, "std_from": "sampling"}})
        True
        >>> shows_sampling_error({"marginals": {"std": 0.0, "baseline": {"std": 0.01}}})
        False
    """
    entries = [e for e in metrics.values() if isinstance(e, dict)]
    entries += [e["baseline"] for e in entries if isinstance(e.get("baseline"), dict)]
    return any(e.get("std_from") == SAMPLING for e in entries)
