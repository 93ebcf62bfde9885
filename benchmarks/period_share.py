"""How much of each class's variance sits at one period, real against synthetic.

For every series (standardised) it takes the share of its variance carried by the Fourier
component of the given period (24 for a daily cycle in hourly data; 1.0 for a pure
sinusoid of that period, about 2 / length for noise), and prints the median per class of
each table, with the concentration of the cycle's phase (1: every series starts at the
same point of the cycle, 0: anywhere). On the long sensors (docs/quality.md) the
generated water vapour, pressure and visibility carried a daily cycle the real ones have
not: what the classifiers' autocorrelation features saw.

    python benchmarks/period_share.py runs/sensors.csv runs/synthetic.csv \\
        --class-column sensor --period 24

LONG tables (example_id, step, value, the class column), as `independent_judge.py` reads
them. It imports nothing from dgan.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def period_shares(table: pd.DataFrame, class_column: str, period: float) -> pd.DataFrame:
    """One row per class: the median share of variance at ``period`` and the phase
    concentration, over its non-constant series.

    Example:
        >>> t = np.arange(96)
        >>> rows = [("a", i, k, np.cos(2 * np.pi * (k + 5 * i) / 24)) for i in range(3) for k in t]
        >>> table = pd.DataFrame(rows, columns=["cls", "example_id", "step", "value"])
        >>> period_shares(table, "cls", 24).round(2).to_dict("records")
        [{'class': 'a', 'share': 1.0, 'phase_concentration': 0.51, 'series': 3}]
    """
    rows = []
    for name, group in table.groupby(class_column):
        shares, phases = [], []
        for _, one in group.groupby("example_id"):
            values = one.sort_values("step")["value"].to_numpy(np.float64)
            if values.std() == 0:
                continue
            z = (values - values.mean()) / values.std()
            component = (z * np.exp(-2j * np.pi * np.arange(len(z)) / period)).mean()
            shares.append(2 * abs(component) ** 2)
            phases.append(component / abs(component))
        rows.append(
            {
                "class": str(name),
                "share": float(np.median(shares)) if shares else float("nan"),
                "phase_concentration": float(abs(np.mean(phases))) if phases else float("nan"),
                "series": len(shares),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("real")
    p.add_argument("synthetic")
    p.add_argument("--class-column", required=True)
    p.add_argument("--period", type=float, default=24.0)
    args = p.parse_args(argv)
    real, synthetic = (
        period_shares(pd.read_csv(path), args.class_column, args.period)
        for path in (args.real, args.synthetic)
    )
    both = real.merge(synthetic, on="class", suffixes=("_real", "_synthetic"))
    print(both.round(2).to_string(index=False))


if __name__ == "__main__":
    main()
