"""How small a difference the independent judge sees: real series against slightly altered copies.

Each alteration is applied to every real series and the altered set is judged against the
real one by `independent_judge.py` (run in the same environment, with aeon):

* ``jitter S``: Gaussian noise of S times each series' own standard deviation at every step;
* ``knots K``: the series redrawn as straight lines through every K-th step;
* ``mean K``: a centred moving average over K steps.

    ../venv-judge/bin/python benchmarks/judge_resolution.py runs/leaves.csv \\
        --class-column species --json results.json

A detection AUC near 1 for an alteration a person cannot see says what the judge's
"far from real" is made of; a synthetic set scored by the same judge is compared with
these rows in docs/quality.md ("Long real series"). It imports nothing from dgan.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ALTERATIONS = (
    ("jitter", 0.005),
    ("jitter", 0.01),
    ("jitter", 0.02),
    ("jitter", 0.05),
    ("knots", 2),
    ("knots", 4),
    ("mean", 3),
    ("mean", 5),
)


def altered(values: np.ndarray, kind: str, size: float, rng: np.random.Generator) -> np.ndarray:
    """One series altered as ``kind`` with ``size`` (see the module's docstring)."""
    if kind == "jitter":
        return values + rng.normal(0.0, size * values.std(), len(values))
    if kind == "knots":
        knots = np.unique(np.r_[np.arange(0, len(values), int(size)), len(values) - 1])
        return np.interp(np.arange(len(values)), knots, values[knots])
    width = int(size)
    padded = np.pad(values, width // 2, mode="edge")
    return np.convolve(padded, np.ones(width) / width, "valid")[: len(values)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("real", help="LONG table: example_id, step, value, attributes")
    parser.add_argument("--class-column")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    table = pd.read_csv(args.real).sort_values(["example_id", "step"])
    judge = Path(__file__).with_name("independent_judge.py")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for kind, size in ALTERATIONS:
            rng = np.random.default_rng(args.seed)
            copy = table.copy()
            copy["value"] = copy.groupby("example_id")["value"].transform(
                lambda v, k=kind, s=size, r=rng: altered(v.to_numpy(np.float64), k, s, r)
            )
            path, out = Path(folder) / "altered.csv", Path(folder) / "judged.json"
            copy.to_csv(path, index=False)
            command = [sys.executable, str(judge), args.real, str(path), "--json", str(out)]
            command += ["--class-column", args.class_column] if args.class_column else []
            subprocess.run(command, check=True, capture_output=True)
            detection = json.loads(out.read_text())["detection"]
            rows.append({"alteration": kind, "size": size, **detection})
            print(
                f"{kind} {size:g}: catch22 forest AUC {detection['catch22_forest_auc']:.3f}, "
                f"MiniRocket AUC {detection['minirocket_auc']:.3f}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"real": args.real, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
