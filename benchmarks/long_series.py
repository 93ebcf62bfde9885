"""The long-series benchmark: train dgan on a long real dataset through the command line,
generate as many series as the data has, and judge them two ways.

1. An independent judge (`benchmarks/independent_judge.py`: aeon's MiniRocket and
   catch22 features with a scikit-learn forest, and train-on-synthetic/test-on-real),
   run with ``--judge-python``, an interpreter that has aeon (it is not a dgan dependency).
2. ``dgan evaluate`` (its verdict must agree with the independent judge).

Everything goes through ``dgan train`` / ``generate`` / ``evaluate`` as a user would run
them; extra ``dgan train`` flags after ``--`` are the lever being measured. One JSON per run
lands in ``--out`` (default benchmarks/results): the flags, the training time, both judges.

Usage::

    python benchmarks/long_data.py --write sensors leaves --out runs/
    OMP_NUM_THREADS=1 python benchmarks/long_series.py sensors --seed 0 --data-dir runs \\
        --judge-python /path/to/venv-with-aeon/bin/python --tag defaults
    OMP_NUM_THREADS=1 python benchmarks/long_series.py leaves --seed 0 --data-dir runs \\
        --judge-python ... --tag temporal-critic -- --config tc.toml
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_suite import lscpu  # this script's folder is on sys.path when it runs

ROOT = Path(__file__).resolve().parent.parent
ATTRIBUTES = {  # discrete attributes per dataset (long_data.py, simulations); the class first
    "sensors": ["sensor", "station"],
    "leaves": ["species"],
    "gestures": ["gesture"],
    "pig": [],
    "pig_animals": ["animal"],
    "oscillating": ["appliance"],  # benchmarks/oscillating_data.py
    "consumption": ["appliance"],  # benchmarks/consumption_data.py
}


def dgan(*args: str, log: Path) -> float:
    """Run ``python -m dgan ARGS``, its output into ``log``; the seconds it took."""
    start = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "dgan", *args], stdout=out, stderr=subprocess.STDOUT
        )
    if done.returncode != 0:
        sys.exit(f"dgan {args[0]} failed (exit {done.returncode}); see {log}")
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> dict:
    real = args.data_dir / f"{args.dataset}.csv"
    if not real.exists():
        sys.exit(f"{real} is missing: python benchmarks/long_data.py --write {args.dataset}")
    attributes = ATTRIBUTES[args.dataset]
    roles = ["--example-id", "example_id", "--time", "step"]
    if attributes:
        roles += ["--attributes", ",".join(attributes), "--discrete", ",".join(attributes)]
    n = _count_series(real)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) if args.keep is None else args.keep
        work.mkdir(parents=True, exist_ok=True)
        model, synthetic = work / "model.dgan", work / "synthetic.csv"
        train = ["train", str(real), "-o", str(model), *roles, "--seed", str(args.seed)]
        seconds = dgan(*train, *args.train_flags, log=work / "train.log")
        plan = (work / "train.log").read_text()
        gen = ["generate", str(model), "-n", str(n), "--seed", str(args.seed), "-o", str(synthetic)]
        dgan(*gen, log=work / "generate.log")
        evaluate = ["evaluate", str(real), str(synthetic), *roles, "--json", str(work / "e.json")]
        dgan(*evaluate, log=work / "evaluate.log")
        own = json.loads((work / "e.json").read_text())
        independent = None
        if args.judge_python:
            judge = [args.judge_python, str(ROOT / "benchmarks" / "independent_judge.py")]
            judge += [str(real), str(synthetic), "--json", str(work / "j.json")]
            judge += ["--class-column", attributes[0]] if attributes else []
            subprocess.run(judge, check=True, stdout=subprocess.DEVNULL)
            independent = json.loads((work / "j.json").read_text())
    return {
        "dataset": args.dataset,
        "seed": args.seed,
        "train_flags": args.train_flags,
        "train_seconds": seconds,
        "plan": [line for line in plan.splitlines() if line.startswith("  ")],
        "cpu": lscpu(),  # model name and bf16/AMX flags
        "cpu_count": os.cpu_count(),
        "independent_judge": independent,
        "dgan_evaluate": {
            name: {k: entry.get(k) for k in ("score", "std", "verdict") if k in entry}
            for name, entry in own.items()
            if isinstance(entry, dict)
        },
    }


def _count_series(path: Path) -> int:
    import pandas as pd

    return int(pd.read_csv(path, usecols=["example_id"])["example_id"].nunique())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", choices=sorted(ATTRIBUTES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=Path("."), help="where DATASET.csv is")
    parser.add_argument("--judge-python", help="a Python with aeon, for independent_judge.py")
    parser.add_argument("--tag", default="defaults", help="names the lever in the file name")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument(
        "--keep", type=Path, help="a folder to keep the model, synthetic table and logs in"
    )
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)  # after --: extra dgan train flags
    args = parser.parse_args(argv[:cut])
    args.train_flags = argv[cut + 1 :]
    args.out.mkdir(parents=True, exist_ok=True)  # now, not after an hour's run
    result = run(args)
    day = datetime.date.today().isoformat()
    path = args.out / f"long-{args.dataset}-{args.tag}-s{args.seed}-{day}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{path}: {json.dumps(result['dgan_evaluate'].get('verdict'))}")


if __name__ == "__main__":
    main()
