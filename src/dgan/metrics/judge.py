"""The feature judge: a random forest reads per-series features (`dgan.metrics.features`).

`detection_score` asks how well the forest tells synthetic series from real ones (a
classifier two-sample test, scored by ROC AUC on held-out folds), and names the features
that tell them apart; `forest_tstr` trains the forest on synthetic series to predict an
attribute of real ones (train on synthetic, test on real), beside the same forest trained
on real series and the majority class; `class_shapes` trains it on the shapes of real
series (each standardised) to name their class, and asks it to name the synthetic ones
(train on real, test on synthetic). A forest on features of the whole series sees what
a person sees in a plot (levels 100x off, a missing flat start, a jump, a wrong period)
however long the series are, where a small recurrent network over 1,000 steps learns
little and its silence would read as "indistinguishable".

Example:
    >>> import numpy as np
    >>> from dgan.metrics.data import SeriesData
    >>> rng = np.random.default_rng(0)
    >>> real = SeriesData.from_arrays(rng.normal(size=(60, 30, 1)))
    >>> louder = SeriesData.from_arrays(10 * rng.normal(size=(60, 30, 1)))
    >>> detection_score(real, louder, n_seeds=1)["score"]
    1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dgan.metrics._common import _check_count, _number, _skipped
from dgan.metrics.data import SeriesData, _columns_of, check_same_columns
from dgan.metrics.distances import factorize_pair
from dgan.metrics.features import FeatureTable, catch22_available, feature_tables
from dgan.metrics.standard_error import (
    accuracy_standard_error,
    auc_standard_error,
    ratio_standard_error,
    seed_spread,
)

_MIN_SERIES = 10
"""Fewer series than this on a side: the judge does not run."""
_TREES = 100
_FOLDS = 5
_TOP = 5
"""How many of the most telling features a result names."""


def detection_score(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    seed: int = 0,
    n_seeds: int = 3,
    max_examples: int | None = 1000,
    catch22: bool | None = None,
) -> dict[str, Any]:
    """How well a random forest on per-series features tells synthetic from real series.

    The same number n of series is drawn from each side (at most ``max_examples``); each
    becomes a row of `dgan.metrics.features` (with catch22's features when ``catch22`` is
    True, or None and ``pycatch22`` is installed). A random forest is trained on 4 of 5
    folds and scores the fifth, round the folds; ``score`` is the ROC AUC of those held-out
    scores: 0.5 means the forest cannot tell the sides apart, 1.0 that it always can
    (lower is better). Repeated with ``n_seeds`` seeds (folds and forest), reporting the
    mean, ``std`` and ``per_seed``; with one seed, ``std`` is the AUC's sampling standard
    error (Hanley & McNeil, n series a side: `dgan.metrics.standard_error`), and
    ``std_from`` says which. ``telling_features`` names the features the forest used
    most, with their real and synthetic medians; ``per_class`` the AUC within each category
    of the first discrete attribute (with 10 or more series on each side), worst first.
    An AUC clearly below 0.5 means the forest learned the wrong way round: synthetic series
    that copy real ones put twins on both sides (see `dgan.metrics.memorisation`).
    """
    check_same_columns(real, synthetic)
    _check_count(n_seeds, "n_seeds", minimum=1)
    n = min(real.n_examples, synthetic.n_examples, max_examples or math.inf)
    if n < _MIN_SERIES:
        return _skipped(f"It needs at least {_MIN_SERIES} series on each side, got {n}.")
    rng = np.random.default_rng(seed)
    real = real.subset(np.sort(rng.permutation(real.n_examples)[:n]))
    synthetic = synthetic.subset(np.sort(rng.permutation(synthetic.n_examples)[:n]))
    real_table, synth_table = feature_tables(real, synthetic, catch22=catch22)
    x = _finite(np.vstack([real_table.values, synth_table.values]))
    y = np.repeat([0, 1], n)
    aucs, importances, scores = [], np.zeros(x.shape[1]), np.zeros(2 * n)
    for k in range(n_seeds):
        held_out, weights = _cross_validated(x, y, seed * 1000 + k)
        aucs.append(_auc(y, held_out))
        importances += weights / n_seeds
        scores += held_out / n_seeds
    return {
        "score": _number(np.mean(aucs)),
        # Every series is held out once, so the AUC ranks all n real against all n synthetic.
        **seed_spread(aucs, auc_standard_error(aucs[0], n, n)),
        "per_seed": [_number(a) for a in aucs],
        "better": "lower",
        "n_per_side": int(n),
        "telling_features": _telling(real_table, synth_table, importances),
        "per_class": _per_class(real, synthetic, y, scores),
        "features": _features_used(real_table, catch22),
    }


def forest_tstr(
    real: SeriesData,
    synthetic: SeriesData,
    target: str,
    *,
    seed: int = 0,
    n_seeds: int = 3,
    max_examples: int | None = 1000,
    catch22: bool | None = None,
) -> dict[str, Any]:
    """Train on synthetic, test on real: predict the discrete attribute ``target``.

    The real series are split 70/30 (stratified where every class has two series) per
    seed. A random forest on the series' features (without ``target`` itself) is trained
    on the 70% real series and, separately, on as many synthetic series; both predict the
    same 30% of real series. Returns the mean accuracies over ``n_seeds`` seeds
    (``synthetic_accuracy``, ``real_accuracy``) beside ``majority_class_accuracy`` (always
    guessing the real training split's most common class), ``score`` = synthetic accuracy
    / real accuracy (1: the synthetic data teaches as much as the real data; higher is
    better), ``skill`` = (synthetic - majority) / (real - majority): the share of what
    real data teaches beyond guessing that synthetic data teaches too, and their spreads
    (with one seed, binomial sampling standard errors: see `_accuracies`).
    """
    check_same_columns(real, synthetic)
    _check_count(n_seeds, "n_seeds", minimum=1)
    if (too_few := _too_few(real, synthetic)) is not None:
        return too_few
    real, synthetic = _drawn(real, synthetic, seed, max_examples)
    real_table, synth_table = feature_tables(real, synthetic, catch22=catch22)
    real_table = real_table.without(f"attribute {target}: ")
    synth_table = synth_table.without(f"attribute {target}: ")
    real_y, synth_y, labels = factorize_pair(
        real.attribute_column(target), synthetic.attribute_column(target)
    )
    real_x, synth_x = _finite(real_table.values), _finite(synth_table.values)
    runs = []
    for k in range(n_seeds):
        split = np.random.default_rng([seed, k])
        train, test = _stratified_split(real_y, split)
        picked = np.sort(split.permutation(len(synth_y))[: len(train)])
        majority = np.bincount(real_y[train]).argmax()
        runs.append(
            (
                _fit_predict(synth_x[picked], synth_y[picked], real_x[test], seed * 1000 + k),
                _fit_predict(real_x[train], real_y[train], real_x[test], seed * 1000 + k),
                real_y[test] == majority,
                real_y[test],
            )
        )
    synthetic_acc = [float(np.mean(s == t)) for s, _, _, t in runs]
    real_acc = [float(np.mean(r == t)) for _, r, _, t in runs]
    majority_acc = [float(np.mean(m)) for _, _, m, _ in runs]
    n_test = len(runs[0][3])
    errors = _sampling_errors(synthetic_acc, real_acc, majority_acc, n_test, n_test)
    result = {
        "task": "classification",
        "target": target,
        "classifier": "random forest on series features",
        **_accuracies(synthetic_acc, real_acc, majority_acc, errors),
        "n_test": n_test,
        "n_classes": len(labels),
        "better": "higher",
    }
    if np.mean(real_acc) > 0:
        ratios = [s / r if r > 0 else 0.0 for s, r in zip(synthetic_acc, real_acc, strict=True)]
        result.update(score=_number(np.mean(ratios)), **seed_spread(ratios, errors["ratio"]))
        result["per_seed"] = [_number(r) for r in ratios]
    else:
        result.update(score=None, std=None)
        others = [
            repr(n) for n, d in _columns_of(real, "attribute")
            if d and n != target and len(set(map(str, real.attribute_column(n)))) > 1
        ]  # fmt: skip
        result["reason"] = (
            f"The forest trained on real series predicts no held-out real {target!r} right: "
            "no baseline to compare with"
            + (f"; choose another target_attribute ({', '.join(others)})." if others else ".")
        )
    return result


def class_shapes(
    real: SeriesData,
    synthetic: SeriesData,
    target: str,
    *,
    seed: int = 0,
    n_seeds: int = 3,
    max_examples: int | None = 1000,
    catch22: bool | None = None,
) -> dict[str, Any]:
    """Train on real, test on synthetic: does each synthetic series have its class's shape?

    Every continuous feature of every series is standardised (its own mean and standard
    deviation removed), so levels and scales, which tell classes far apart in scale apart
    at a glance, say nothing; the features of what is left (`dgan.metrics.features`, without
    the length and the attributes) are the series' shape. Per seed, a random forest is
    trained on 70% of the real series (stratified where every class has two) to name the
    discrete attribute ``target`` from the shape; it names the other 30%
    (``real_accuracy``) and every synthetic series (``synthetic_accuracy``), beside always
    guessing the training split's most common class (``majority_class_accuracy``).
    ``score`` = synthetic / real accuracy (1: synthetic series are named as surely as
    held-out real ones; higher is better); ``skill`` = (synthetic - majority) / (real -
    majority), the verdict's reading. ``per_class``: the share of each class's synthetic
    series named right beside the share of its held-out real ones (over the seeds), most
    lost first (classes with at least 5 synthetic series). A synthetic humidity
    series drawn with irradiance's flat nights and sharp peaks keeps the right label and
    the right level, so the class shares and TSTR (which learns from many series at once)
    pass it; this names it wrong.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> t = np.arange(64)
        >>> def data(period_of):  # class "a" has period 8, class "b" period 20
        ...     labels = rng.choice(["a", "b"], size=60)
        ...     waves = [np.sin(2 * np.pi * t / period_of[c])[:, None] for c in labels]
        ...     noisy = [w + 0.1 * rng.normal(size=w.shape) for w in waves]
        ...     return SeriesData.from_arrays(noisy, labels[:, None].astype(object))
        >>> real = data({"a": 8, "b": 20})
        >>> class_shapes(real, data({"a": 8, "b": 20}), "attribute_0", n_seeds=1)["skill"]
        1.0
        >>> class_shapes(real, data({"a": 20, "b": 8}), "attribute_0", n_seeds=1)["skill"] < 0
        True
    """
    check_same_columns(real, synthetic)
    _check_count(n_seeds, "n_seeds", minimum=1)
    if all(real.feature_discrete):
        return _skipped(
            "It reads the shapes of continuous features, and the data has none.", "higher"
        )
    if (too_few := _too_few(real, synthetic)) is not None:
        return too_few
    real, synthetic = _drawn(real, synthetic, seed, max_examples)
    real_table, synth_table = feature_tables(
        _standardised(real), _standardised(synthetic), catch22=catch22
    )
    real_x = _finite(real_table.without("length ").without("attribute ").values)
    synth_x = _finite(synth_table.without("length ").without("attribute ").values)
    real_y, synth_y, labels = factorize_pair(
        real.attribute_column(target), synthetic.attribute_column(target)
    )
    real_acc, synthetic_acc, majority_acc = [], [], []
    right = {"real": np.zeros(len(labels)), "synthetic": np.zeros(len(labels))}
    tested = np.zeros(len(labels))
    for k in range(n_seeds):
        train, test = _stratified_split(real_y, np.random.default_rng([seed, k]))
        forest = _forest(seed * 1000 + k).fit(real_x[train], real_y[train])
        named, named_real = forest.predict(synth_x), forest.predict(real_x[test])
        real_acc.append(float(np.mean(named_real == real_y[test])))
        synthetic_acc.append(float(np.mean(named == synth_y)))
        majority_acc.append(float(np.mean(real_y[test] == np.bincount(real_y[train]).argmax())))
        right["synthetic"] += np.bincount(synth_y[named == synth_y], minlength=len(labels))
        right["real"] += np.bincount(
            real_y[test][named_real == real_y[test]], minlength=len(labels)
        )
        tested += np.bincount(real_y[test], minlength=len(labels))
    counts = np.bincount(synth_y, minlength=len(labels))
    per_class = [
        {"class": str(label),
         "synthetic_accuracy": _number(right["synthetic"][c] / (n_seeds * counts[c])),
         "real_accuracy": _number(right["real"][c] / tested[c]) if tested[c] else None,
         "n_synthetic": int(counts[c])}
        for c, label in enumerate(labels) if counts[c] >= _MIN_PER_CLASS
    ]  # fmt: skip
    # Most lost first: a rare class the forest cannot name on real series either is no news.
    per_class.sort(key=lambda e: e["synthetic_accuracy"] - (e["real_accuracy"] or 0.0))
    ratios = [s / r if r > 0 else None for s, r in zip(synthetic_acc, real_acc, strict=True)]
    # One seed: its accuracies on every synthetic series and on the held-out real ones.
    errors = _sampling_errors(synthetic_acc, real_acc, majority_acc, len(synth_y), len(test))
    result: dict[str, Any] = {
        "task": "classification",
        "target": target,
        "classifier": "random forest on the features of standardised series",
        **_accuracies(synthetic_acc, real_acc, majority_acc, errors),
        "n_test": len(test),
        "n_classes": len(labels),
        "per_class": {"attribute": target, "classes": per_class},
        "better": "higher",
        "score": None,
        "std": None,
    }
    if all(r is not None for r in ratios):
        result.update(score=_number(np.mean(ratios)), **seed_spread(ratios, errors["ratio"]))
        result["per_seed"] = [_number(r) for r in ratios]
    else:
        result["reason"] = (
            f"The forest trained on real series' shapes names no held-out real {target!r} "
            "right: no baseline to compare with."
        )
    return result


def _too_few(real: SeriesData, synthetic: SeriesData) -> dict[str, Any] | None:
    """The entry of a classifier of an attribute that cannot run on so few series, or None."""
    n = min(real.n_examples, synthetic.n_examples)
    if n >= _MIN_SERIES:
        return None
    return _skipped(f"It needs at least {_MIN_SERIES} series on each side, got {n}.", "higher")


def _drawn(
    real: SeriesData, synthetic: SeriesData, seed: int, max_examples: int | None
) -> tuple[SeriesData, SeriesData]:
    """At most ``max_examples`` series of each side, drawn with ``seed``, in their order."""
    rng = np.random.default_rng(seed)
    return tuple(
        side.subset(np.sort(rng.permutation(side.n_examples)[: max_examples or None]))
        for side in (real, synthetic)
    )  # type: ignore[return-value]


def _accuracies(
    synthetic: list[float], real: list[float], majority: list[float], errors: dict
) -> dict:
    """The mean accuracies over the seeds of a classifier's two sides and of always guessing
    the most common class, and its skill beyond that guess where real series beat it in
    every seed: (synthetic - majority) / (real - majority); their spreads over the seeds,
    or with one seed their sampling standard errors (``errors``, `_sampling_errors`)."""
    skills = [
        (s - m) / (r - m) if r > m else None
        for s, r, m in zip(synthetic, real, majority, strict=True)
    ]
    entry = {
        "synthetic_accuracy": _number(np.mean(synthetic)),
        "real_accuracy": _number(np.mean(real)),
        "majority_class_accuracy": _number(np.mean(majority)),
        "real_accuracy_std": seed_spread(real, errors["real"])["std"],
    }
    if all(s is not None for s in skills):
        entry.update(skill=_number(np.mean(skills)),
                     skill_std=seed_spread(skills, errors["skill"])["std"])  # fmt: skip
    return entry


def _sampling_errors(
    synthetic: list[float], real: list[float], majority: list[float], n_synthetic: int,
    n_real: int,
) -> dict[str, float | None]:  # fmt: skip
    """The binomial standard errors of the first seed's accuracies (on ``n_synthetic`` and
    ``n_real`` series), carried to the ratio synthetic / real and to the skill, the
    majority's rate held fixed: the noise the verdict reads where one seed has no spread.
    TSTR scores both sides on the same real series; taking them as independent overstates
    the error a little where both forests miss the same series."""
    s, r, m = synthetic[0], real[0], majority[0]
    s_se, r_se = accuracy_standard_error(s, n_synthetic), accuracy_standard_error(r, n_real)
    return {
        "real": r_se,
        "ratio": ratio_standard_error(s, s_se, r, r_se),
        "skill": ratio_standard_error(s - m, s_se, r - m, r_se),
    }


_MIN_PER_CLASS = 5
"""`class_shapes` reports a class's accuracy when it has this many synthetic series."""


def _standardised(data: SeriesData) -> SeriesData:
    """``data`` with every continuous feature of every series at mean 0 and standard
    deviation 1 (a constant one at 0): its shape without its level and scale."""
    continuous = [j for j, d in enumerate(data.feature_discrete) if not d]
    features = []
    for x in data.features:
        x = x.copy() if x.dtype == object else x.astype(np.float64)
        block = np.asarray(x[:, continuous], dtype=np.float64)
        spread = block.std(axis=0)
        x[:, continuous] = (block - block.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
        features.append(x)
    return SeriesData(
        features=features,
        feature_names=list(data.feature_names),
        feature_discrete=list(data.feature_discrete),
        attributes=data.attributes,
        attribute_names=list(data.attribute_names),
        attribute_discrete=list(data.attribute_discrete),
    )


def _finite(x: np.ndarray) -> np.ndarray:
    """Undefined features (NaN) and overflows as a value no real feature takes: a forest
    splits them off like any other value."""
    return np.nan_to_num(x, nan=-1e12, posinf=1e12, neginf=-1e12)


def _forest(seed: int):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=_TREES, random_state=seed, n_jobs=1)


def _cross_validated(x: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Held-out probability of "synthetic" for every row (each scored by a forest that did
    not see it), and the forests' mean feature importances."""
    from sklearn.model_selection import StratifiedKFold

    held_out = np.zeros(len(y))
    importances = np.zeros(x.shape[1])
    folds = StratifiedKFold(n_splits=_FOLDS, shuffle=True, random_state=seed)
    for train, test in folds.split(x, y):
        forest = _forest(seed).fit(x[train], y[train])
        held_out[test] = forest.predict_proba(x[test])[:, 1]
        importances += forest.feature_importances_ / _FOLDS
    return held_out, importances


def _fit_predict(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, seed: int) -> np.ndarray:
    return _forest(seed).fit(x, y).predict(x_test)


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, score))


def _stratified_split(labels: np.ndarray, rng: np.random.Generator) -> tuple:
    """70/30 split keeping each class's share, where every class has two or more series."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(labels))
    stratify = labels if np.bincount(labels).min(initial=2) >= 2 else None
    seed = int(rng.integers(2**31))
    train, test = train_test_split(rows, test_size=0.3, random_state=seed, stratify=stratify)
    return np.sort(train), np.sort(test)


def _telling(real: FeatureTable, synthetic: FeatureTable, importance: np.ndarray) -> list[dict]:
    order = np.argsort(-importance, kind="stable")[:_TOP]
    with np.errstate(all="ignore"):
        real_median = np.nanmedian(real.values[:, order], axis=0)
        synth_median = np.nanmedian(synthetic.values[:, order], axis=0)
    return [
        {
            "feature": real.names[i],
            "importance": _number(importance[i]),
            "real_median": _number(r),
            "synthetic_median": _number(s),
        }
        for i, r, s in zip(order, real_median, synth_median, strict=True)
    ]


def _per_class(real: SeriesData, synthetic: SeriesData, y: np.ndarray, scores: np.ndarray):
    """AUC within each category of the first discrete attribute, worst first."""
    discrete = [n for n, d in _columns_of(real, "attribute") if d]
    if not discrete:
        return None
    name = discrete[0]
    codes_real, codes_synth, labels = factorize_pair(
        real.attribute_column(name), synthetic.attribute_column(name)
    )
    codes = np.concatenate([codes_real, codes_synth])
    out = []
    for code, label in enumerate(labels):
        mine = codes == code
        counts = np.bincount(y[mine], minlength=2)
        if counts.min() >= _MIN_SERIES:
            out.append({"class": str(label), "auc": _number(_auc(y[mine], scores[mine]))})
    out.sort(key=lambda e: -(e["auc"] or 0))
    return {"attribute": name, "classes": out}


def _features_used(table: FeatureTable, catch22: bool | None) -> str:
    used_catch22 = any(": catch22 " in n for n in table.names)
    text = f"{len(table.names)} per-series features"
    if used_catch22:
        return text + " (dgan's and catch22's)"
    if catch22 is None and not catch22_available():
        return text + " (dgan's; catch22's were not used: pip install 'dgan[judge]' adds them)"
    return text + " (dgan's)"
