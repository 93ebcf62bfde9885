"""Part 3 of benchmarks/gpu_suite.py: Stocks at the defaults, and at batch 1,024.

Trains with benchmarks/fidelity.py's `fidelity.train_and_generate` on Stocks (3,661
windows of 24 days x 6 prices, `fidelity_data.stocks`, found through ``DGAN_STOCKS_CSV``
or the shared data folder), three seeds of each variant, the variants interleaved:

* ``defaults``: nothing set but the device and the seed, so dgan picks its settings for
  3,661 series: batch 128, learning rates 1e-4, weight average, feature feedback, 11,600
  steps (docs/quality.md, "Settings by data size");
* ``batch 1024``: those settings at batch 1,024 with the three learning rates scaled by
  sqrt(1024 / 128) (Adam's square-root rule), for the same 400 epochs (1,600 steps): does
  the GPU reach the same quality sooner?

Each run's synthetic windows are scored while the next run trains, in processes of their
own (`score_worker`; the protocol runs on one CPU thread) by `fidelity.score`: the TimeGAN
discriminative score (10 classifiers) and predictive score, and memorisation; the
train-on-real predictive reference once. Times: ``train_seconds`` is what
``train_numpy`` took (validation, encoding, building and training), ``generate_seconds``
generating as many series as the data has. A run the part's minutes would not cover,
scoring included, is recorded as ``skipped_time_budget``.

``--stocks-variants`` picks some variants; with ``--keep-windows`` each run's windows stay
in the output folder (``part3-VARIANT-seedN.npy``), and a later run of the part with the
same ``--out`` scores the kept windows of a run it finds unscored instead of training it
again: a GPU lease ends before ten classifiers per run finish on its host, so a run
trained there is scored afterwards on any CPU.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

import fidelity
import fidelity_data
from fidelity_data import load
from harness import json_safe

if TYPE_CHECKING:
    from gpu_suite import PartContext

LEARNING_RATES = (
    "generator_learning_rate",
    "discriminator_learning_rate",
    "attribute_discriminator_learning_rate",
)
DEFAULT_BATCH, DEFAULT_LEARNING_RATE = 128, 1e-4  # the defaults' picks for Stocks


def _large_batch(batch: int, default_batch: int, length: dict[str, int]) -> dict[str, Any]:
    """The defaults' settings at ``batch``, learning rates scaled by the square root."""
    rate = DEFAULT_LEARNING_RATE * math.sqrt(batch / default_batch)
    return {"large_data": True, "batch_size": batch, **dict.fromkeys(LEARNING_RATES, rate)} | length


SETTINGS = {
    False: dict(
        dataset="stocks",
        seeds=[0, 1, 2],
        disc_runs=10,
        disc_iterations=2000,  # the protocol's
        predictive_iterations=5000,
        train_on_real=True,
        variants={"defaults": {}, "batch 1024": _large_batch(1024, 128, {"epochs": 400})},
    ),
    True: dict(  # stocks-64 trains on 64 windows (batch 16 at the defaults)
        dataset="stocks-64",
        seeds=[0],
        disc_runs=1,
        disc_iterations=50,
        predictive_iterations=50,
        train_on_real=False,
        variants={
            "defaults": {"training_steps": 4},
            "batch 32": _large_batch(32, 16, {"training_steps": 4}),
        },
    ),
}
TARGET_SECONDS = 60.0  # Stocks at the defaults, per run
WARM_UP_STEPS = 20  # timed steps behind the estimate of a run not made yet


def run(context: PartContext) -> None:
    """Train the runs in turn, scoring each in a worker process while the next trains."""
    settings = SETTINGS[context.smoke]
    result = context.result
    result["settings"] = settings
    result["stocks_csv"] = os.environ.get("DGAN_STOCKS_CSV") or str(fidelity_data.STOCKS_CSV)
    variants = _variants(settings["variants"], context.args.stocks_variants)
    keep = context.args.out if context.args.keep_windows else None
    data = load(settings["dataset"])
    result["n_series"] = len(data.features)
    system = fidelity.load_systems(["dgan"])[0]["dgan"]
    earlier = {  # what a run before this one finished: scored, or trained with windows kept
        (r["variant"], r["seed"]): r
        for r in (context.previous or {}).get("runs", [])
        if r["status"] == "scored" or (keep and _kept(keep, r).is_file())
    }
    runs = result["runs"] = []
    workers = Workers(1 if context.smoke else max(1, min(6, (os.cpu_count() or 2) - 2)))
    with tempfile.TemporaryDirectory() as tmp:
        reference = (context.previous or {}).get("train_on_real") or {}
        if reference.get("status") == "scored":
            result["train_on_real"] = reference
        elif settings["train_on_real"]:
            job = {"variant": "train on real", "seed": 0, "status": "scoring"}
            result["train_on_real"] = job
            workers.start(job, settings, None, Path(tmp) / "real.json")
        for seed in settings["seeds"]:
            for variant, overrides in variants.items():
                entry = earlier.get((variant, seed)) or {"variant": variant, "seed": seed}
                runs.append(entry)
                if entry.get("status") == "scored":
                    continue
                windows = _kept(keep or Path(tmp), entry)
                if windows.is_file():  # trained by an earlier run of the part: score only
                    if max(workers.scoring_seconds, default=0.0) > context.seconds_left():
                        entry["status"] = "skipped_time_budget"
                        continue
                    workers.start(entry, settings, windows, Path(tmp) / f"{windows.stem}.json")
                    continue
                config = _config(system, data, overrides, seed, context.device)
                plan = functools.partial(planned_seconds, system, config, data)
                estimate = workers.estimate(runs, variant, plan)
                if estimate > context.seconds_left():
                    entry |= {"status": "skipped_time_budget", "estimate_s": estimate}
                    continue
                np.save(windows, train(entry, system, data, config, overrides))
                workers.start(entry, settings, windows, Path(tmp) / f"{windows.stem}.json")
                _finish(result, context)
        workers.wait(context.deadline - 5, lambda: _finish(result, context))
    _finish(result, context)


def _variants(known: dict[str, dict], wanted: str | None) -> dict[str, dict]:
    """The variants ``--stocks-variants`` names (comma list), all of them without it."""
    if not wanted:
        return known
    names = [w.strip() for w in wanted.split(",")]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"--stocks-variants: unknown {unknown}; this part has {list(known)}")
    return {n: known[n] for n in names}


def _kept(folder: Path, entry: dict) -> Path:
    """Where one run's synthetic windows are saved in ``folder``."""
    return folder / f"part3-{entry['variant'].replace(' ', '-')}-seed{entry['seed']}.npy"


def _config(system: tuple, data, overrides: dict[str, Any], seed: int, device: str):
    """The config of one run: the defaults (or ``overrides``) on ``device``."""
    return system[1](
        max_sequence_len=data.max_sequence_len,
        sample_len=fidelity.DEFAULT_SAMPLE_LEN["stocks"],
        cuda=device == "cuda",
        seed=seed,
        **overrides,
    )


def planned_seconds(system: tuple, config, data) -> float:
    """The training seconds dgan's plan expects of ``config``: its steps at the speed of
    `WARM_UP_STEPS` timed steps of a throwaway copy. The estimate of a variant that has not
    trained yet (without it the first run of a part counted as free, and on 2026-11-27
    the defaults' 341 s overran a part of 300)."""
    model = system[0](config)
    columns = fidelity.column_types(system, data)
    plan = model.plan(data.features, warm_up_steps=WARM_UP_STEPS, **columns)
    return plan.estimated_seconds or 0.0


def train(entry: dict, system: tuple, data, config, overrides: dict[str, Any]) -> np.ndarray:
    """Train and generate one run (`fidelity.train_and_generate`), recorded in ``entry``;
    returns the synthetic windows."""
    seed = entry["seed"]
    started = time.perf_counter()
    (_, features), seconds, model = fidelity.train_and_generate(system, config, data, seed)
    used = model.config
    entry.update(
        status="scoring",
        train_seconds=seconds,
        generate_seconds=time.perf_counter() - started - seconds,
        train_steps=model.trainer.steps_done,
        batch_size=used.batch_size,
        learning_rate=used.generator_learning_rate,
        precision=model.history[-1]["precision"],
        overrides=overrides,
    )
    print(
        f"  {entry['variant']} seed {seed}: {seconds:.1f} s, {entry['train_steps']} steps "
        f"at batch {entry['batch_size']}",
        flush=True,
    )
    return np.stack([np.asarray(f, dtype=np.float32) for f in features])


def _finish(result: dict[str, Any], context: PartContext) -> None:
    """Summarise the scored runs and save."""
    by_variant: dict[str, list[dict]] = {}
    for r in result["runs"]:
        if r.get("status") == "scored":
            by_variant.setdefault(r["variant"], []).append(r)
    result["summary"] = {v: fidelity.aggregate(runs) for v, runs in by_variant.items()}
    context.save()


class Workers:
    """Score workers running beside training, at most ``size`` at a time."""

    def __init__(self, size: int):
        self.size = size
        self.running: list[tuple[subprocess.Popen, dict, Path, float]] = []
        self.scoring_seconds: list[float] = []

    def start(self, entry: dict, settings: dict, windows: Path | None, out: Path) -> None:
        while len(self.running) >= self.size:
            time.sleep(0.5)
            self.collect()  # what it finishes is saved with this run's entry
        command = [sys.executable, __file__, "--score", settings["dataset"], str(out)]
        command += ["--seed", str(entry["seed"])]
        for option in ("disc_runs", "disc_iterations", "predictive_iterations"):
            command += [f"--{option.replace('_', '-')}", str(settings[option])]
        if windows is not None:
            command += ["--windows", str(windows)]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        process = subprocess.Popen(command, env=env)
        self.running.append((process, entry, out, time.monotonic()))

    def collect(self) -> bool:
        """Record the finished workers' scores in their entries; True if any finished."""
        still = []
        for process, entry, out, started in self.running:
            if process.poll() is None:
                still.append((process, entry, out, started))
                continue
            self.scoring_seconds.append(time.monotonic() - started)
            if process.returncode == 0:
                scored = json.loads(out.read_text())
                entry.update(status="scored", **scored)
            else:
                entry["status"] = f"scoring failed (exit {process.returncode})"
        finished = len(still) < len(self.running)
        self.running = still
        return finished

    def wait(self, deadline: float, on_finished: Callable[[], None]) -> None:
        """Wait for every worker until ``deadline`` (monotonic), calling ``on_finished``
        as they finish; stop those still running then."""
        while self.running and time.monotonic() < deadline:
            time.sleep(1)
            if self.collect():
                on_finished()
        for process, entry, _, _ in self.running:
            process.kill()
            process.wait()
            entry["status"] = "scoring not finished in the part's time"
        self.running = []

    def estimate(self, runs: list[dict], variant: str, planned: Callable[[], float]) -> float:
        """Seconds the next run of ``variant`` needs: its last training and generation
        (``planned()`` before it has trained), and the longest scoring so far (it must
        finish inside the part too)."""
        done = [r for r in runs if r["variant"] == variant and "train_seconds" in r]
        last = done[-1]["train_seconds"] + done[-1]["generate_seconds"] if done else planned()
        return last + max(self.scoring_seconds, default=0.0)


# ----- the score worker -----------------------------------------------------------------
def score_worker(argv: list[str]) -> None:
    """Score one run's windows (or, without ``--windows``, the train-on-real reference)
    and write the metrics as JSON; run by `Workers` as its own process."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--score", nargs=2, metavar=("DATASET", "OUT"))
    parser.add_argument("--windows", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--disc-runs", type=int, default=10)
    parser.add_argument("--disc-iterations", type=int, default=2000)
    parser.add_argument("--predictive-iterations", type=int, default=5000)
    args = parser.parse_args(argv)
    dataset, out = args.score
    data = load(dataset)
    real = data.scaled(data.real)
    if args.windows is None:
        found = {
            "predictive": fidelity.timegan_predictive_score(
                real, None, iterations=args.predictive_iterations, seed=args.seed
            )
        }
    else:
        features = np.load(args.windows, allow_pickle=False)
        synthetic = fidelity.protocol_windows(data, features)
        options = SimpleNamespace(**vars(args), predictive=True, own_metrics=False)
        metrics, runs = fidelity.score(data, (None, features), synthetic, options, args.seed)
        found = {"metrics": metrics, "discriminative_runs": runs}
    Path(out).write_text(json.dumps(json_safe(found)))


# ----- tables ---------------------------------------------------------------------------
def table(result: dict[str, Any]) -> str:
    """docs/quality.md's ladder shape: one row per variant, per-seed values and means."""
    n = result.get("n_series")
    lines = [
        "| variant | series (batch, steps) | seeds | discriminative | predictive | memorisation "
        "| train s | generate s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    runs = result.get("runs") or []
    for variant in dict.fromkeys(r["variant"] for r in runs):
        scored = [r for r in runs if r["variant"] == variant and r.get("status") == "scored"]
        others = [r for r in runs if r["variant"] == variant and r.get("status") != "scored"]
        if not scored:
            lines.append(f"| {variant} | | | {others[0].get('status')} | | | | |")
            continue
        first = scored[0]
        metric = [r["metrics"] for r in scored]
        seeds = ",".join(str(r["seed"]) for r in scored)
        copies = " / ".join(f"{m['memorisation']:.3f}" for m in metric)
        trained = ", ".join(f"{r['train_seconds']:.0f}" for r in scored)
        generated = ", ".join(f"{r['generate_seconds']:.1f}" for r in scored)
        lines.append(
            f"| {variant} | {n:,} ({first['batch_size']}, {first['train_steps']:,}) | {seeds} "
            f"| {_spread([m['discriminative'] for m in metric], 3)} "
            f"| {_spread([m.get('predictive') for m in metric], 4)} "
            f"| {copies} | {trained} | {generated} |"
        )
        lines += [f"| {variant} | | {r['seed']} | {r.get('status')} | | | | |" for r in others]
    if not runs:
        lines.append("| PENDING |  |  |  |  |  |  |  |")
    reference = (result.get("train_on_real") or {}).get("predictive")
    if reference is not None:
        lines += ["", f"Train-on-real predictive: {reference:.4f}."]
    defaults = [
        r["train_seconds"] for r in runs if r["variant"] == "defaults" and "train_seconds" in r
    ]
    if defaults:
        median = statistics.median(defaults)
        met = "MET" if median < TARGET_SECONDS else "NOT MET"
        lines += ["", f"Target, Stocks at the defaults in under a minute: {median:.0f} s: {met}"]
    if result.get("error"):
        lines += ["", f"The part failed: {result['error'].strip().splitlines()[-1]}"]
    return "\n".join(lines)


def _spread(values: list[float | None], digits: int) -> str:
    """'a / b / c = mean ± sd' over seeds, as docs/quality.md writes them; one value alone."""
    known = [v for v in values if v is not None]
    if not known:
        return ""
    shown = " / ".join(f"{v:.{digits}f}" for v in known)
    if len(known) == 1:
        return shown
    return f"{shown} = {statistics.fmean(known):.{digits}f} ± {statistics.stdev(known):.{digits}f}"


if __name__ == "__main__":
    score_worker(sys.argv[1:])
