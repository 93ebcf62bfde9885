"""Generated series with their changes at chosen positions of each LSTM step smoothed: a
decoding experiment that asks how much the jumps there tell a judge.

Each series' change at each chosen position (position p: from value p to p + 1 of a
step, as `seams.py` counts them) becomes the mean of the nearest changes either side
(two each way, none of them at a chosen position); the series is summed again from its
first value and given back its own mean and spread. Judge the output with
`independent_judge.py` or `dgan evaluate` beside the original.

    python benchmarks/smooth_step_positions.py SYNTH.csv OUT.csv --sample-len 200 \\
        --positions 0 25 174 199

The table is LONG (``example_id``, ``step``, ``value``); nothing from dgan.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def smooth_positions(x: np.ndarray, sample_len: int, positions: list[int]) -> np.ndarray:
    """``x`` with its changes at ``positions`` (mod ``sample_len``) replaced by the mean of
    their neighbours', summed again, at ``x``'s own mean and standard deviation.

    Example:
        >>> x = np.r_[np.arange(4.0), np.arange(4.0) + 10]  # a jump of 7 at position 3
        >>> y = smooth_positions(x, 4, [3])
        >>> np.round(np.diff(y) / np.diff(y)[0], 2).tolist()  # now even, rescaled
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    change = np.diff(x.astype(float))
    at = np.arange(len(change)) % sample_len
    chosen = np.isin(at, positions)
    for i in np.flatnonzero(chosen):
        near = [change[j] for j in (i - 2, i - 1, i + 1, i + 2)
                if 0 <= j < len(change) and not chosen[j]]  # fmt: skip
        if near:
            change[i] = np.mean(near)
    y = np.r_[x[0], x[0] + np.cumsum(change)]
    if y.std() == 0:
        return y
    return (y - y.mean()) / y.std() * x.std() + x.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("synthetic")
    parser.add_argument("out")
    parser.add_argument("--sample-len", type=int, required=True)
    parser.add_argument("--positions", type=int, nargs="+", required=True)
    args = parser.parse_args()
    table = pd.read_csv(args.synthetic).sort_values(["example_id", "step"], kind="stable")
    parts = []
    for _, series in table.groupby("example_id", sort=False):
        values = smooth_positions(series["value"].to_numpy(), args.sample_len, args.positions)
        parts.append(series.assign(value=values))
    pd.concat(parts).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
