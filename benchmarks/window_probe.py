"""What tells synthetic windows from real ones: per-window statistics and a strong classifier.

The TimeGAN-protocol discriminative score says *how often* a tiny GRU tells the sets apart;
this probe says *by what*. It compares real and synthetic windows (the fidelity suite's
scaled windows, e.g. saved by ``benchmarks/fidelity.py --save-samples``) on statistics a
classifier can use, and trains a gradient-boosted classifier (scikit-learn, 3-fold
cross-validation) on each group of per-window features alone: accuracy near 1.0 names a
difference the generator has not learned, 0.5 is chance.

Feature groups: each feature's level and range in the window; day-to-day steps (size,
lag-1 autocorrelation); the size of the steps that cross a boundary between the LSTM's
output groups of ``sample_len`` steps against the steps inside a group; and the mean
difference between every pair of features (how the columns relate).

Usage (the gretel scratch environment has scikit-learn; see benchmarks/speed.py)::

    OMP_NUM_THREADS=1 python benchmarks/fidelity.py --datasets stocks --systems dgan \\
        --seeds 1 --epochs 50 --disc-runs 3 --no-own-metrics --save-samples --tag probe
    python benchmarks/window_probe.py stocks \\
        benchmarks/results/samples/probe-stocks-dgan-seed0.npy --sample-len 4

Fixed-length datasets only (the windows must stack into one array).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fidelity_data import LOADERS


def window_features(x: np.ndarray, sample_len: int) -> dict[str, np.ndarray]:
    """Per-window feature groups, each (n, k), of windows ``x`` (n, T, F)."""
    steps = np.diff(x, axis=1)  # (n, T-1, F)
    at_join = (np.arange(steps.shape[1]) % sample_len) == sample_len - 1
    groups = {
        "level (window mean)": x.mean(axis=1),
        "range (window max - min)": x.max(axis=1) - x.min(axis=1),
        "mean |step|": np.abs(steps).mean(axis=1),
        "lag-1 autocorrelation of steps": (steps[:, :-1] * steps[:, 1:]).mean(axis=1)
        / (steps.var(axis=1) + 1e-12),
    }
    if sample_len > 1 and at_join.any():
        joins = np.abs(steps[:, at_join]).mean(axis=1)
        inside = np.abs(steps[:, ~at_join]).mean(axis=1)
        groups["log(|step| at joins / inside)"] = np.log(joins + 1e-6) - np.log(inside + 1e-6)
    n_features = x.shape[2]
    pairs = [(i, j) for i in range(n_features) for j in range(i + 1, n_features)]
    if pairs:
        groups["mean difference of feature pairs"] = np.stack(
            [(x[..., i] - x[..., j]).mean(axis=1) for i, j in pairs], axis=1
        )
    return groups


def probe(real: np.ndarray, synthetic: np.ndarray, sample_len: int) -> list[tuple[str, ...]]:
    """Rows (group, real mean, synthetic mean, classifier accuracy) for each feature group."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import cross_val_score

    real_groups = window_features(real, sample_len)
    synthetic_groups = window_features(synthetic, sample_len)
    labels = np.r_[np.ones(len(real)), np.zeros(len(synthetic))]

    def mean(values: np.ndarray) -> str:
        return np.array2string(values.mean(axis=0), precision=4, suppress_small=True)

    rows = []
    for name, values in real_groups.items():
        both = np.r_[values, synthetic_groups[name]]
        accuracy = cross_val_score(
            HistGradientBoostingClassifier(max_iter=100), both, labels, cv=3
        ).mean()
        rows.append((name, mean(values), mean(synthetic_groups[name]), f"{accuracy:.3f}"))
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset", choices=sorted(LOADERS), help="the real data to compare with")
    p.add_argument("samples", type=Path, help=".npy of synthetic windows (n, T, F), scaled")
    p.add_argument("--sample-len", type=int, required=True, help="the model's sample_len")
    args = p.parse_args(argv)
    data = LOADERS[args.dataset]()
    real = np.asarray(data.scaled(data.features), dtype=np.float64)
    synthetic = np.load(args.samples).astype(np.float64)
    if real.ndim != 3 or synthetic.shape[1:] != real.shape[1:]:
        raise SystemExit(
            f"need fixed-length windows of shape (n, {real.shape[1:]}); got {synthetic.shape}"
        )
    print(f"{'feature group':36s} classifier accuracy (0.5 = chance)")
    for name, real_mean, synthetic_mean, accuracy in probe(real, synthetic, args.sample_len):
        print(f"{name:36s} {accuracy}\n    real      {real_mean}\n    synthetic {synthetic_mean}")


if __name__ == "__main__":
    main()
