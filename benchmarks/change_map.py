"""A decoding experiment: generated series with their step changes mapped onto the real ones'.

On the leaves (docs/quality.md, "Standardized series kept") every real outline moves by
nearly the same amount at every step, and generated ones creep, then jump: catch22 reads
that (``CO_Embed2_Dist_tau_d_expfit_meandiff``, ``MD_pNN_pnn40``). This maps each
generated series' step changes, in units of its half-range and by size, onto its class's
real ones (quantile to quantile, the generated side read from the generated table
itself), keeps their signs, sums them again from the series' first value, takes out the
drift so that it ends where it did, and stretches it back over its range. With
``--standardize`` each series is then given mean 0 and sample deviation 1 (what
``match_standardization`` does for series standardized as the leaves are). Not part of
dgan: an upper bound on what such a map could do, to judge with
``benchmarks/independent_judge.py``:

    python benchmarks/change_map.py REAL.csv SYNTH.csv OUT.csv --class-column species --standardize
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

QUANTILES = np.linspace(0.0, 1.0, 1001)


def read(path: str, class_column: str) -> tuple[pd.DataFrame, list[np.ndarray], list]:
    table = pd.read_csv(path).sort_values(["example_id", "step"])
    groups = table.groupby("example_id", sort=True)
    return (
        table,
        [g["value"].to_numpy(np.float64) for _, g in groups],
        groups[class_column].first().tolist(),
    )


def relative_changes(x: np.ndarray) -> np.ndarray:
    return np.abs(np.diff(x)) / (0.5 * np.ptp(x) + 1e-12)


def class_quantiles(series: list[np.ndarray], classes: list) -> dict:
    return {
        c: np.quantile(
            np.concatenate(
                [relative_changes(x) for x, k in zip(series, classes, strict=True) if k == c]
            ),
            QUANTILES,
        )
        for c in set(classes)
    }


def mapped(x: np.ndarray, own: np.ndarray, real: np.ndarray) -> np.ndarray:
    half, dx = 0.5 * np.ptp(x), np.diff(x)
    level = np.interp(np.abs(dx) / (half + 1e-12), own, QUANTILES)
    y = x[0] + np.r_[0.0, np.cumsum(np.sign(dx) * np.interp(level, QUANTILES, real) * half)]
    y -= np.linspace(0.0, 1.0, len(y)) * (y[-1] - x[-1])  # ends where it did
    return (y - y.min()) / (np.ptp(y) + 1e-12) * np.ptp(x) + x.min()  # over its range


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("real")
    parser.add_argument("synthetic")
    parser.add_argument("out")
    parser.add_argument("--class-column", required=True)
    parser.add_argument("--standardize", action="store_true")
    args = parser.parse_args()
    _, real, real_classes = read(args.real, args.class_column)
    table, synthetic, classes = read(args.synthetic, args.class_column)
    real_q, own_q = class_quantiles(real, real_classes), class_quantiles(synthetic, classes)
    values = []
    for x, c in zip(synthetic, classes, strict=True):
        y = mapped(x, own_q[c], real_q[c])
        values.append((y - y.mean()) / y.std(ddof=1) if args.standardize else y)
    table["value"] = np.concatenate(values)
    table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
