"""An independent judge of synthetic series: the field's tools, none of dgan's code.

Run it in its own environment (aeon pins older pandas and numba than dgan's):

    python3 -m venv ../venv-judge && ../venv-judge/bin/pip install aeon scikit-learn
    ../venv-judge/bin/python benchmarks/independent_judge.py REAL.csv SYNTH.csv \\
        --class-column sensor [--json out.json]

Both tables are LONG (``example_id``, ``step``, ``value`` and attribute columns). It
reports, with 5-fold cross-validation repeated over ``--seeds`` seeds:

* ``catch22_forest_auc``: a random forest (500 trees) on aeon's catch22 features plus the
  log10 of each series' largest magnitude, spread and length, telling synthetic from real;
* ``minirocket_auc``: aeon's MiniRocket transform of the series (zero-padded to the
  longest) plus the same three scale numbers, into a ridge classifier;
* ``tstr``: MiniRocket + ridge trained on synthetic series predicting ``--class-column``
  on every real series, beside the same trained on real series (cross-validated) and the
  majority class;
* ``class_from_shape``: a random forest (500 trees) on catch22 of each series standardised
  (its shape alone) trained on the real series to name ``--class-column``: its accuracy on
  held-out real series (cross-validated) and on every synthetic series, overall and per
  class; a synthetic series with another class's shape (humidity drawn like irradiance)
  is named wrong;
* ``class_shares``: each class's share of the synthetic series over its real share;
* with ``--by-scale``, ``minirocket_auc_by_dilation``: the MiniRocket detection AUC of
  each dilation's features alone (one cross-validation seed, no scale numbers). A
  dilation of d reads patterns 9 points long spaced d steps apart, so the column says
  at which time scale the synthetic series differ: fine texture at d = 1-4, shapes of
  tens of steps further out.

It imports nothing from dgan, so dgan's own judge (``dgan evaluate``) can be checked
against it.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import RidgeClassifierCV
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def read(path: str, class_column: str | None) -> tuple[list[np.ndarray], np.ndarray | None]:
    table = pd.read_csv(path).sort_values(["example_id", "step"])
    groups = table.groupby("example_id", sort=True)
    series = [g["value"].to_numpy(np.float64) for _, g in groups]
    labels = groups[class_column].first().astype(str).to_numpy() if class_column else None
    return series, labels


def scale_numbers(series: list[np.ndarray]) -> np.ndarray:
    floor = 1e-9
    return np.array(
        [[np.log10(np.abs(x).max() + floor), np.log10(x.std() + floor), np.log10(len(x))]
         for x in series]
    )  # fmt: skip


def catch22(series: list[np.ndarray]) -> np.ndarray:
    from aeon.transformations.collection.feature_based import Catch22

    values = Catch22(replace_nans=True).fit_transform([x[None, :] for x in series])
    return np.hstack([values, scale_numbers(series)])


def padded(series: list[np.ndarray], longest: int) -> np.ndarray:
    """(N, 1, ``longest``) the series, zero-padded at the end, as MiniRocket reads them."""
    out = np.zeros((len(series), 1, longest))
    for i, x in enumerate(series):
        out[i, 0, : len(x)] = x
    return out


def minirocket(train: list[np.ndarray], test: list[np.ndarray], longest: int, seed: int):
    from aeon.transformations.collection.convolution_based import MiniRocket

    transform = MiniRocket(random_state=seed)
    a = transform.fit_transform(padded(train, longest))
    b = transform.transform(padded(test, longest))
    return np.hstack([a, scale_numbers(train)]), np.hstack([b, scale_numbers(test)])


def ridge():
    return make_pipeline(StandardScaler(), RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))


def balanced(real, synth) -> tuple[list[np.ndarray], np.ndarray, int]:
    """As many series of each side (a fixed random draw of the larger one), real first;
    their labels (1: synthetic) and how many of each."""
    n = min(len(real), len(synth))
    rng = np.random.default_rng(0)
    series = [real[i] for i in rng.permutation(len(real))[:n]]
    series += [synth[i] for i in rng.permutation(len(synth))[:n]]
    return series, np.repeat([0, 1], n), n


def detection(real, synth, seeds: int) -> dict:
    series, y, n = balanced(real, synth)
    longest = max(len(x) for x in series)
    features = catch22(series)
    forest_auc, rocket_auc = [], []
    for seed in range(seeds):
        forest_score, rocket_score = np.zeros(2 * n), np.zeros(2 * n)
        for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(series, y):
            forest = RandomForestClassifier(500, random_state=seed, n_jobs=1)
            forest.fit(features[train], y[train])
            forest_score[test] = forest.predict_proba(features[test])[:, 1]
            a, b = minirocket([series[i] for i in train], [series[i] for i in test], longest, seed)
            model = ridge().fit(a, y[train])
            rocket_score[test] = model.decision_function(b)
        forest_auc.append(roc_auc_score(y, forest_score))
        rocket_auc.append(roc_auc_score(y, rocket_score))
    return {
        "catch22_forest_auc": float(np.mean(forest_auc)),
        "catch22_forest_auc_std": float(np.std(forest_auc)),
        "minirocket_auc": float(np.mean(rocket_auc)),
        "minirocket_auc_std": float(np.std(rocket_auc)),
        "n_per_side": n,
    }


def by_dilation(real, synth) -> dict[str, float]:
    """MiniRocket's detection AUC per dilation: each dilation's features alone into the
    ridge classifier, 5-fold cross-validated (seed 0), on as many series of each side."""
    from aeon.transformations.collection.convolution_based import MiniRocket

    series, y, n = balanced(real, synth)
    padded_series = padded(series, max(len(x) for x in series))
    scores: dict[int, np.ndarray] = {}
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(series, y):
        transform = MiniRocket(random_state=0).fit(padded_series[train])
        a, b = transform.transform(padded_series[train]), transform.transform(padded_series[test])
        # aeon lays the features out dilation by dilation, 84 kernels x features per dilation
        dilations, per_dilation = transform.parameters[2], transform.parameters[3]
        start = 0
        for dilation, count in zip(dilations, per_dilation, strict=True):
            columns = slice(start, start + 84 * int(count))
            start = columns.stop
            model = ridge().fit(a[:, columns], y[train])
            scores.setdefault(int(dilation), np.zeros(2 * n))[test] = model.decision_function(
                b[:, columns]
            )
        assert start == a.shape[1], "aeon's MiniRocket feature layout changed"
    return {str(d): float(roc_auc_score(y, s)) for d, s in sorted(scores.items())}


def tstr(real, real_y, synth, synth_y, seeds: int) -> dict:
    longest = max(max(len(x) for x in real), max(len(x) for x in synth))
    a, b = minirocket(synth, real, longest, 0)
    from_synthetic = float(np.mean(ridge().fit(a, synth_y).predict(b) == real_y))
    real_acc, majority = [], []
    for seed in range(seeds):
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        for train, test in folds.split(real, real_y):
            a, b = minirocket([real[i] for i in train], [real[i] for i in test], longest, seed)
            real_acc.append(np.mean(ridge().fit(a, real_y[train]).predict(b) == real_y[test]))
            values, counts = np.unique(real_y[train], return_counts=True)
            majority.append(np.mean(real_y[test] == values[counts.argmax()]))
    return {
        "synthetic_trained_accuracy": from_synthetic,
        "real_trained_accuracy": float(np.mean(real_acc)),
        "majority_class_accuracy": float(np.mean(majority)),
        "ratio": from_synthetic / float(np.mean(real_acc)),
    }


def class_from_shape(real, real_y, synth, synth_y, seeds: int) -> dict:
    def shapes(series):
        return np.nan_to_num(catch22([(x - x.mean()) / (x.std() + 1e-12) for x in series]))[:, :22]

    def forest(seed):
        return RandomForestClassifier(500, random_state=seed, n_jobs=1)

    a, b = shapes(real), shapes(synth)
    on_real = []
    for seed in range(seeds):
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        for train, test in folds.split(a, real_y):
            on_real.append(
                np.mean(forest(seed).fit(a[train], real_y[train]).predict(a[test]) == real_y[test])
            )
    named = forest(0).fit(a, real_y).predict(b)
    per_class = {str(c): float(np.mean(named[synth_y == c] == c)) for c in sorted(set(synth_y))}
    return {
        "real_accuracy": float(np.mean(on_real)),
        "synthetic_accuracy": float(np.mean(named == synth_y)),
        "synthetic_per_class": per_class,
    }


def class_shares(real_y: np.ndarray, synth_y: np.ndarray) -> dict:
    classes = sorted(set(real_y))
    real_share = {c: float(np.mean(real_y == c)) for c in classes}
    synth_share = {c: float(np.mean(synth_y == c)) for c in classes}
    ratios = {c: synth_share[c] / real_share[c] for c in classes}
    return {"ratios": ratios, "lowest": min(ratios.values()), "real": real_share}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("real")
    parser.add_argument("synthetic")
    parser.add_argument("--class-column")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--json")
    parser.add_argument(
        "--by-scale", action="store_true", help="also MiniRocket's AUC per dilation"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    real, real_y = read(args.real, args.class_column)
    synth, synth_y = read(args.synthetic, args.class_column)
    result = {"real": args.real, "synthetic": args.synthetic}
    result["detection"] = detection(real, synth, args.seeds)
    if args.by_scale:
        result["minirocket_auc_by_dilation"] = by_dilation(real, synth)
    if args.class_column:
        result["tstr"] = tstr(real, real_y, synth, synth_y, args.seeds)
        result["class_from_shape"] = class_from_shape(real, real_y, synth, synth_y, args.seeds)
        result["class_shares"] = class_shares(real_y, synth_y)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
