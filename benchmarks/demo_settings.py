"""`dgan demo`'s settings against the data-size rule's, on the bundled data, at a demo's budget.

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/demo_settings.py --seeds 0,1 \\
        --runs demo,rule-1800,rule-4000

Each run trains on the bundled weather data as `dgan demo` does and scores the samples
with `dgan.metrics.evaluate` (the demo's own report): ``demo`` is `DEMO_CONFIG` (gretel's
settings, batch 16, 600 epochs of 3 steps); ``rule-N`` is the defaults with
``training_steps=N`` (the data-size rule's settings, a demo-sized budget). One JSON line
per run is printed and all of them are written to
``benchmarks/results/demo-settings-<date>.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import time
from pathlib import Path

import torch

from dgan.cli.demo import DEMO_CONFIG, DEMO_SYNTHETIC_SERIES
from dgan.config import DfStyle, DGANConfig
from dgan.datasets import DEMO_COLUMNS, load_demo
from dgan.metrics import evaluate, frames_to_series
from dgan.model import DGAN
from dgan.tabular.columns import columns_of_layout

RESULTS = Path(__file__).resolve().parent / "results"


def config_for(run: str, seed: int) -> DGANConfig:
    """The config of ``run`` ("demo" or "rule-<steps>") with ``seed``."""
    if run == "demo":
        return dataclasses.replace(DEMO_CONFIG, seed=seed)
    if run.startswith("rule-"):
        return DGANConfig(
            max_sequence_len=DEMO_CONFIG.max_sequence_len,
            sample_len=DEMO_CONFIG.sample_len,
            seed=seed,
            training_steps=int(run.removeprefix("rule-")),
        )
    raise SystemExit(f"unknown run {run!r}: use 'demo' or 'rule-<steps>'")


def measure(run: str, seed: int) -> dict:
    """Train ``run`` with ``seed`` on the bundled data; its scores as `dgan demo` reports."""
    config = config_for(run, seed)
    real_df = load_demo()
    model = DGAN(config)
    start = time.perf_counter()
    model.train_dataframe(real_df, df_style=DfStyle.LONG, **DEMO_COLUMNS)
    seconds = time.perf_counter() - start
    synthetic_df = model.generate_dataframe(DEMO_SYNTHETIC_SERIES)
    columns = columns_of_layout(model.data_frame_layout)
    real, synthetic = frames_to_series(real_df, synthetic_df, columns, config.max_sequence_len)
    metrics = evaluate(real, synthetic)
    scores = {
        name: round(entry["score"], 4)
        for name, entry in metrics.items()
        if isinstance(entry, dict) and entry.get("score") is not None
    }
    return {
        "run": run,
        "seed": seed,
        "train_seconds": round(seconds, 1),
        "steps": sum(record.get("steps") or 0 for record in model.history),
        "batch_size": model.config.batch_size,
        "verdict": metrics["verdict"]["verdict"],
        "memorisation_verdict": metrics["memorisation"].get("verdict"),
        **scores,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1", help="comma-separated training seeds")
    parser.add_argument("--runs", default="demo,rule-1800,rule-4000")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as the demo does
    results = []
    for seed in [int(s) for s in args.seeds.split(",") if s]:
        for run in args.runs.split(","):
            results.append(measure(run, seed))
            print(json.dumps(results[-1]), flush=True)
    out = RESULTS / f"demo-settings-{datetime.date.today().isoformat()}.json"
    report = {"command": "benchmarks/demo_settings.py", "seeds": args.seeds, "runs": results}
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
