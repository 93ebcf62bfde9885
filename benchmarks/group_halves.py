"""Split a LONG table's series into two halves by a group, each group wholly in one half.

Judged against each other (`independent_judge.py A.csv B.csv`), the halves say how far
real series of groups the judge has not seen stand from those of groups it has: the
detection a generator of new groups (new animals, new patients) would get even if every
series it made were real. A random split of the same series, judged the same way, is the
chance baseline. The group column is dropped from both halves, so a judge reads the series
only.

    python benchmarks/group_halves.py runs/pig_animals.csv animal --out runs/animals
    python benchmarks/independent_judge.py runs/animals/groups-a.csv runs/animals/groups-b.csv

Writes ``groups-a.csv`` / ``groups-b.csv`` (split by group) and ``random-a.csv`` /
``random-b.csv`` (the same series split at random) into ``--out``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def halves(table: pd.DataFrame, group: str, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The four halves, each with its series renumbered from 0 and without ``group``.

    Example:
        >>> t = pd.DataFrame({"example_id": [0, 0, 1, 1, 2, 2, 3, 3], "step": [0, 1] * 4,
        ...                   "value": range(8), "g": ["x", "x", "x", "x", "y", "y", "y", "y"]})
        >>> parts = halves(t, "g")
        >>> sorted(len(p) // 2 for p in parts.values())  # two series in each half
        [2, 2, 2, 2]
        >>> list(parts["groups-a"].columns)
        ['example_id', 'step', 'value']
    """
    by_series = table.groupby("example_id", sort=False)[group].first()
    rng = np.random.default_rng(seed)
    groups = rng.permutation(by_series.unique())
    first = set(groups[: len(groups) // 2])
    in_first = by_series.isin(first)
    shuffled = rng.permutation(by_series.index.to_numpy())
    split = {
        "groups-a": by_series.index[in_first],
        "groups-b": by_series.index[~in_first],
        "random-a": shuffled[: len(shuffled) // 2],
        "random-b": shuffled[len(shuffled) // 2 :],
    }
    parts = {}
    for name, ids in split.items():
        part = table[table["example_id"].isin(ids)].drop(columns=group)
        renumber = {old: new for new, old in enumerate(pd.unique(part["example_id"]))}
        parts[name] = part.assign(example_id=part["example_id"].map(renumber))
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table", type=Path, help="a LONG CSV with example_id, step, value")
    parser.add_argument("group", help="the column naming each series' group")
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = pd.read_csv(args.table)
    if args.group not in table.columns:
        raise SystemExit(f"{args.table} has no column {args.group!r}: {list(table.columns)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, part in halves(table, args.group, args.seed).items():
        part.to_csv(args.out / f"{name}.csv", index=False)
        print(f"{name}: {part['example_id'].nunique()} series")


if __name__ == "__main__":
    main()
