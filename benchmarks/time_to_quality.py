"""Time to quality: how soon each run of a fidelity curve reached a discriminative score.

Reads result files of `benchmarks/fidelity.py --curve-every N` (one per variant, e.g. fp32
and bf16, the same dataset and seeds) and prints, per run, the training time (CPU seconds
of the process, which other jobs on a shared machine stretch least, and wall seconds) at
which the curve first reached ``--threshold`` and from which it stayed there to the end,
beside the final score (the protocol's classifiers on the finished model). The last line
compares each file with the first: the median over seeds of the first's time to stay at
the threshold over the other's. A variant whose seeds ran as separate files (to
interleave the variants on a shared machine) is those files joined by commas::

    python benchmarks/time_to_quality.py benchmarks/results/fidelity-ttq-stocks-fp32-*.json \\
        benchmarks/results/fidelity-ttq-stocks-bf16gpa-*.json --threshold 0.05
    python benchmarks/time_to_quality.py fp32-s0.json,fp32-s1.json bf16-s0.json,bf16-s1.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def reached(curve: list[dict], threshold: float) -> tuple[dict | None, dict | None]:
    """The first curve point at or below ``threshold``, and the first from which every
    later point stays there (None where there is no such point).

    Example:
        >>> points = [{"discriminative": d} for d in (0.3, 0.04, 0.2, 0.03, 0.01)]
        >>> [p and p["discriminative"] for p in reached(points, 0.05)]
        [0.04, 0.03]
    """
    first = next((p for p in curve if p["discriminative"] <= threshold), None)
    stays = None
    for point in reversed(curve):
        if point["discriminative"] > threshold:
            break
        stays = point
    return first, stays


def runs(path: Path) -> tuple[str, list[dict]]:
    """The dataset's name and the dgan runs (with their curves) of one result file."""
    report = json.loads(path.read_text())
    (name, dataset), *more = report["datasets"].items()
    if more:
        raise SystemExit(f"{path}: one dataset per file, found {len(more) + 1}")
    found = dataset["systems"]["dgan"]["runs"]
    if not all(r.get("curve") for r in found):
        raise SystemExit(f"{path}: no curve; run fidelity.py with --curve-every")
    return name, found


def _seconds(point: dict | None, key: str) -> str:
    return "-" if point is None or point.get(key) is None else f"{point[key]:.0f}"


def table(variants: list[list[Path]], threshold: float) -> str:
    """The markdown table of every run of each variant's files and the comparison of each
    variant with the first."""
    lines = [
        f"| file | seed | first <= {threshold} (steps, CPU s, wall s) | stays <= {threshold} "
        "(steps, CPU s, wall s) | final discriminative | train CPU s |",
        "| --- | ---: | --- | --- | ---: | ---: |",
    ]
    stay_cpu: list[dict[int, float]] = []
    for variant in variants:
        by_seed = {}
        for path, run in [(f, r) for f in variant for r in runs(f)[1]]:
            first, stays = reached(run["curve"], threshold)
            cells = [
                "-"
                if p is None
                else f"{p['steps']}, {_seconds(p, 'train_cpu_seconds')}, "
                f"{_seconds(p, 'train_seconds')}"
                for p in (first, stays)
            ]
            final = run["metrics"]["discriminative"]
            cpu = run.get("train_cpu_seconds")
            lines.append(
                f"| {path.name} | {run['seed']} | {cells[0]} | {cells[1]} | {final:.3f} | "
                f"{'-' if cpu is None else f'{cpu:.0f}'} |"
            )
            if stays is not None and stays.get("train_cpu_seconds") is not None:
                by_seed[run["seed"]] = stays["train_cpu_seconds"]
        stay_cpu.append(by_seed)
    names = [",".join(path.name for path in variant) for variant in variants]
    for name, by_seed in zip(names[1:], stay_cpu[1:], strict=True):
        seeds = sorted(set(stay_cpu[0]) & set(by_seed))
        if seeds:
            ratio = statistics.median(stay_cpu[0][s] / by_seed[s] for s in seeds)
            lines.append(
                f"\n{names[0]} over {name}, CPU time to stay <= {threshold}, "
                f"median of {len(seeds)} seed(s): {ratio:.2f}x"
            )
        else:
            lines.append(f"\n{name}: no seed stayed <= {threshold} in both variants")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "variants",
        nargs="+",
        help="fidelity.py result files with curves, one a variant (several joined by commas)",
    )
    p.add_argument("--threshold", type=float, default=0.05, help="discriminative score (0.05)")
    args = p.parse_args(argv)
    variants = [[Path(f) for f in variant.split(",") if f] for variant in args.variants]
    names = {runs(path)[0] for variant in variants for path in variant}
    if len(names) > 1:
        raise SystemExit(f"the files hold different datasets: {sorted(names)}")
    text = table(variants, args.threshold)
    print(text)
    return text


if __name__ == "__main__":
    main()
