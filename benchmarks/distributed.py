"""Training throughput of one model trained by 1 and by 2 processes (dgan.train.distributed).

Each process runs on ONE torch thread; the 2-process run rendezvous over TCP on this
machine with the gloo backend, as ``torchrun --nproc-per-node=2`` would set it up. The
workload is 2,048 series x 28 steps x 2 continuous features with one discrete and one
continuous attribute (sample_len 2, batch 256, networks at a quarter of the default
width so a run takes a minute on a laptop-class CPU). Throughput is the history's
``examples_per_s`` (all processes' examples per second of wall time) of rank 0, median
over the epochs after the first. On a shared machine the absolute numbers are noise; 2
processes can only gain when 2 cores are free. GPUs (nccl, one process per GPU) are not
measured here.

Usage, from the repository root::

    python benchmarks/distributed.py [--epochs 4] [--out benchmarks/results/...json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

N_SERIES, STEPS, BATCH = 2048, 28, 256


def workload(epochs: int):
    import numpy as np

    from dgan import DGANConfig

    rng = np.random.default_rng(0)
    t = np.arange(STEPS)
    phase = rng.uniform(0, 6, (N_SERIES, 1))
    level = np.sin(t * 0.4 + phase) + 0.1 * rng.normal(size=(N_SERIES, STEPS))
    features = np.stack([level, 0.5 * level + 0.1 * rng.normal(size=level.shape)], axis=2)
    attributes = np.stack([rng.integers(0, 4, N_SERIES), rng.normal(size=N_SERIES)], axis=1)
    config = DGANConfig(
        max_sequence_len=STEPS,
        sample_len=2,
        batch_size=BATCH,
        epochs=epochs,
        attribute_num_units=25,
        feature_num_units=25,
        discriminator_num_units=50,
        cuda=False,
        seed=0,
        large_data=False,  # the settings above, whatever the data's size
    )
    return config, features, attributes


def worker(epochs: int, out: str) -> None:
    """One process (of 1 or 2): train, and rank 0 writes the history to ``out``."""
    import torch

    from dgan import DGAN, OutputType
    from dgan.train.distributed import is_main_process

    torch.set_num_threads(1)
    config, features, attributes = workload(epochs)
    model = DGAN(config)
    types = [OutputType.DISCRETE, OutputType.CONTINUOUS]
    model.train_numpy(features, attributes=attributes, attribute_types=types, progress_bar=False)
    if is_main_process():
        Path(out).write_text(json.dumps(model.history))


def run(processes: int, epochs: int) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "history.json")
        launched = []
        for rank in range(processes):
            env = {**os.environ, "OMP_NUM_THREADS": "1"}
            if processes > 1:
                env |= dict(
                    RANK=str(rank),
                    LOCAL_RANK=str(rank),
                    WORLD_SIZE=str(processes),
                    MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=str(port),
                )
            command = [sys.executable, __file__, "--worker", "--epochs", str(epochs), "--to", out]
            launched.append(subprocess.Popen(command, env=env))
        codes = [p.wait() for p in launched]
        if any(codes):
            raise SystemExit(f"a {processes}-process run failed: exit codes {codes}")
        history = json.loads(Path(out).read_text())
    rates = [h["examples_per_s"] for h in history[1:]]
    return {
        "processes": processes,
        "threads_per_process": 1,
        "examples_per_s_median": statistics.median(rates),
        "examples_per_s_per_epoch": rates,
        "final_discriminator_loss": history[-1]["discriminator_loss"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--to", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.epochs, args.to)
        return
    from harness import machine_info

    results = [run(p, args.epochs) for p in (1, 2)]
    speedup = results[1]["examples_per_s_median"] / results[0]["examples_per_s_median"]
    report = {
        "benchmark": "distributed",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "workload": {"series": N_SERIES, "steps": STEPS, "batch_size": BATCH},
        "machine": machine_info(ROOT),
        "results": results,
        "speedup_2_over_1": speedup,
        "gpu": "pending: not measured (needs one process per GPU with nccl)",
    }
    for r in results:
        print(f"{r['processes']} process(es): {r['examples_per_s_median']:.0f} examples/s")
    print(f"2 over 1: {speedup:.2f}x (noisy on a shared machine)")
    out = args.out or ROOT / "benchmarks" / "results" / f"distributed-cpu-{dt.date.today()}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
