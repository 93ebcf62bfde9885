"""Side-by-side training and generation speed: dgan vs gretel-synthetics' timeseries_dgan.

Workloads (from the performance issue; ``--workload``): W1 (default), 10,000 series x 100
steps x 3 continuous features, one discrete and one continuous attribute, sample_len 10,
batch 1000; W2, gretel's defaults on small data, 1,000 series x 24 steps x 1 feature, one
discrete attribute, sample_len 4, batch 100. Every other setting is gretel's default.
Both libraries are driven through the same public calls
(``DGAN(DGANConfig(...)).train_numpy(...)`` and ``generate_numpy(n)``) in ONE process, with
the same torch and the same thread count; absolute examples/s on a shared machine are
noise, the ratio is the result.

Protocol (docs/design.md, "Measuring"): each side trains a fresh model for ``warmup + epochs``
epochs in its own thread, and the two take turns: a ``progress_callback`` stamps the end of
the side's turn (every batch on CPU; every epoch on CUDA, after ``torch.cuda.synchronize()``)
and hands the turn to the other side. So only one side computes at a time, both see the
same background load within a second or so, and an epoch's time is the side's own work.
Training throughput is n_series / median epoch time over the ``epochs`` epochs after the
warm-up; the paired ratio is the median of per-epoch ratios. Generation throughput is
``generate_numpy(n)`` (noise -> numpy in the user's space, as a user sees it) after one
warm-up batch, sides alternating, median over repeats. Peak memory, from a separate
warm-up training + generate per side, is ``torch.cuda.max_memory_allocated`` on CUDA and
peak RSS on CPU (VmHWM, reset per side through /proc/self/clear_refs; process-wide
``getrusage`` where that is unavailable). The timed window is a few epochs, not the 400 of
a real run: the default run must finish in ~10 minutes on a 2-core CPU, so the window
shrinks, never the workload. Benchmarks report; they assert nothing about speed.

gretel-synthetics is never a dependency of dgan. To compare against it, build a scratch
environment outside the repository (its pins - numpy<1.24, pandas<2, sdv, ... - are
ignored with --no-deps; only what ``gretel_synthetics.timeseries_dgan`` imports is added)::

    python3 -m venv /work/scratch/gretel-venv
    /work/scratch/gretel-venv/bin/pip install torch==2.13.0 numpy pandas  # CPU wheel here
    /work/scratch/gretel-venv/bin/pip install --no-deps gretel-synthetics category_encoders
    /work/scratch/gretel-venv/bin/pip install scipy scikit-learn  # category_encoders' imports
    /work/scratch/gretel-venv/bin/pip install safetensors tqdm    # dgan's remaining deps

(Pin torch to the build already in use: an unpinned torch may pull gigabytes of CUDA
wheels.) Then, from the repository root::

    /work/scratch/gretel-venv/bin/python benchmarks/speed.py

The script imports dgan from this checkout's ``src/`` (so the recorded git commit is the
code measured). Without gretel-synthetics, or with ``--skip-gretel``, only dgan is timed.
``--profile`` adds a torch.profiler table (top ops by self time) of one training epoch of
each side to the JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import importlib.metadata
import json
import os
import re
import resource
import statistics
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
N_CLASSES = 4  # categories of the discrete attribute


# --------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class Workload:
    """A benchmark workload from the performance issue: data shape and gretel-style config.

    W1 is the large-data workload (per-step arithmetic dominates); W2 is gretel's defaults
    on small data (per-step overhead dominates).
    """

    name: str
    n_series: int
    seq_len: int
    n_features: int
    sample_len: int
    batch_size: int
    with_level: bool  # a continuous attribute beside the discrete class

    @property
    def attribute_count(self) -> int:
        return 2 if self.with_level else 1


WORKLOADS = {
    "w1": Workload("w1", 10_000, 100, 3, 10, 1000, with_level=True),
    "w2": Workload("w2", 1_000, 24, 1, 4, 100, with_level=False),
}


def make_workload(w: Workload, n_series: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, T, F) float32 and attributes (n, 1 or 2) float32 with real structure.

    Attribute 0 is a class 0..3 stored as floats (gretel-style discrete); attribute 1 (W1
    only) is a positive level. Feature 0 is a noisy sinusoid whose frequency is set by the
    class and whose offset is the level; feature 1 a random walk drifting with the level;
    feature 2 a damped, phase-shifted copy of feature 0's cycle. W2 keeps feature 0 only.
    """
    rng = np.random.default_rng(seed)
    cls = rng.integers(0, N_CLASSES, size=n_series)
    level = rng.gamma(shape=2.0, scale=1.0, size=n_series)
    t = np.arange(w.seq_len)[None, :]  # (1, T)
    freq = ((cls + 1) / 25.0)[:, None]  # cycles per step, (n, 1)
    phase = rng.uniform(0, 2 * np.pi, size=(n_series, 1))
    cycle = 2 * np.pi * freq * t + phase  # (n, T)
    noise = rng.normal(size=(n_series, w.seq_len, 3))
    f0 = level[:, None] + np.sin(cycle) + 0.1 * noise[..., 0]
    f1 = np.cumsum(0.1 * noise[..., 1] + 0.01 * level[:, None], axis=1)
    f2 = 0.5 * np.exp(-t / 60.0) * np.cos(cycle - 0.5) + 0.05 * noise[..., 2]
    features = np.stack([f0, f1, f2][: w.n_features], axis=2).astype(np.float32)
    attributes = np.stack([cls.astype(np.float32), level.astype(np.float32)], axis=1)
    return features, attributes[:, : w.attribute_count].copy()


# ------------------------------------------------------------------------------ sides


@dataclass
class Side:
    """One library under test: its DGAN class, config class and OutputType enum."""

    name: str
    dgan_cls: Any
    config_cls: Any
    output_type: Any
    version: str
    path: str


def load_sides(skip_gretel: bool) -> tuple[list[Side], dict[str, str]]:
    """Import dgan (from this checkout) and, unless skipped or absent, gretel-synthetics."""
    src = REPO / "src"
    if (src / "dgan").is_dir():
        sys.path.insert(0, str(src))  # measure this checkout, not an installed copy
    sides, skipped = [], {}
    try:
        import dgan

        sides.append(
            Side(
                "dgan", dgan.DGAN, dgan.DGANConfig, dgan.OutputType, dgan.__version__, dgan.__file__
            )
        )
    except (ImportError, AttributeError) as exc:  # e.g. a checkout from before dgan.DGAN
        skipped["dgan"] = f"not importable: {exc}"
    if skip_gretel:
        skipped["gretel"] = "--skip-gretel"
        return sides, skipped
    # gretel uses deprecated torch.cuda.amp and sklearn APIs, autocast and pinned memory on
    # CPU; their warnings repeat every round and say nothing about speed.
    warnings.filterwarnings("ignore", category=FutureWarning, module="gretel_synthetics")
    warnings.filterwarnings("ignore", message="CUDA is not available or torch_xla")
    warnings.filterwarnings("ignore", message="'pin_memory' argument is set as true")
    try:
        from gretel_synthetics.timeseries_dgan import config as gconfig
        from gretel_synthetics.timeseries_dgan import dgan as gdgan
    except ImportError as exc:
        skipped["gretel"] = f"not importable: {exc}"
        return sides, skipped
    version = importlib.metadata.version("gretel-synthetics")
    sides.append(
        Side("gretel", gdgan.DGAN, gconfig.DGANConfig, gconfig.OutputType, version, gdgan.__file__)
    )
    return sides, skipped


def config_kwargs(args: argparse.Namespace, use_cuda: bool, epochs: int) -> dict[str, Any]:
    """The config both sides get: the workload's shape, everything else gretel's default."""
    return {
        "max_sequence_len": args.workload.seq_len,
        "sample_len": args.workload.sample_len,
        "batch_size": args.batch_size,
        "epochs": epochs,
        "cuda": use_cuda,
    }


def make_config(side: Side, args: argparse.Namespace, use_cuda: bool, epochs: int) -> Any:
    """The side's config of `config_kwargs`; dgan's at the workload's settings whatever the
    data's size (``large_data=False``: this compares speed at equal settings)."""
    kwargs = config_kwargs(args, use_cuda, epochs)
    if side.name == "dgan":  # --dgan fields (e.g. precision=bf16) on top; gretel's defaults
        kwargs.update({"large_data": False, **args.dgan})
    return side.config_cls(**kwargs)


def train_call(side: Side, features: np.ndarray, attributes: np.ndarray) -> dict[str, Any]:
    """Keyword arguments of train_numpy: the same data and types for both sides."""
    ot = side.output_type
    kwargs = {
        "features": features,
        "feature_types": [ot.CONTINUOUS] * features.shape[2],
        "attributes": attributes,
        "attribute_types": [ot.DISCRETE, ot.CONTINUOUS][: attributes.shape[1]],
    }
    if side.name == "dgan":
        kwargs["progress_bar"] = False  # gretel has none; keep a terminal run equal
    return kwargs


# ---------------------------------------------------------------------------- timing


class Turns:
    """Lets trainings running in threads take turns, so only one of them computes at a time.

    Alternating the sides every batch (or epoch) means both see the same background load on
    a shared machine, which is what makes their ratio trustworthy.
    """

    def __init__(self, names: list[str]):
        self._cond = threading.Condition()
        self._names = list(names)
        self._active = set(names)
        self._current = self._names[0]

    def wait(self, name: str) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._current == name)

    def pass_on(self, name: str, finished: bool = False) -> None:
        with self._cond:
            if finished:
                self._active.discard(name)
            i = self._names.index(name)
            following = self._names[i + 1 :] + self._names[: i + 1]
            self._current = next((n for n in following if n in self._active), "")
            self._cond.notify_all()


class SegmentClock:
    """progress_callback that times each of a side's turns and then hands the turn on.

    A segment is the side's own work between two boundaries (every batch, or every epoch's
    last batch); time spent waiting for the other side is excluded. On CUDA it synchronizes
    at each boundary (a deliberate host sync, outside the step) so that a stamp means the
    kernels have finished, not merely been queued.
    """

    def __init__(self, name: str, turns: Turns, per_batch: bool, cuda: bool):
        self.name, self.turns, self.per_batch, self.cuda = name, turns, per_batch, cuda
        self.segments: list[tuple[int, float]] = []  # (epoch, seconds)
        self.resumed = time.perf_counter()

    def __call__(self, info) -> None:
        if not self.per_batch and info.batch != info.total_batches - 1:
            return
        if self.cuda:
            torch.cuda.synchronize()
        self.segments.append((info.epoch, time.perf_counter() - self.resumed))
        self.turns.pass_on(self.name)
        self.turns.wait(self.name)
        self.resumed = time.perf_counter()

    def epoch_seconds(self, warmup: int) -> list[float]:
        """Seconds of own work per epoch, warm-up epochs dropped."""
        epochs = sorted({e for e, _ in self.segments if e >= warmup})
        return [sum(s for e, s in self.segments if e == epoch) for epoch in epochs]


def train_interleaved(sides: list[Side], args, use_cuda: bool, data) -> dict[str, Any]:
    """Train one fresh model per side, in threads that take turns; return models and clocks."""
    turns = Turns([s.name for s in sides])
    per_batch = args.interleave == "batch"
    clocks = {s.name: SegmentClock(s.name, turns, per_batch, use_cuda) for s in sides}
    models: dict[str, Any] = {}
    errors: dict[str, BaseException] = {}

    def run(side: Side) -> None:
        turns.wait(side.name)
        try:
            config = make_config(side, args, use_cuda, args.warmup + args.epochs)
            models[side.name] = side.dgan_cls(config)
            clocks[side.name].resumed = time.perf_counter()
            models[side.name].train_numpy(
                **train_call(side, *data), progress_callback=clocks[side.name]
            )
        except BaseException as exc:  # re-raised in the main thread
            errors[side.name] = exc
        finally:
            turns.pass_on(side.name, finished=True)

    torch.manual_seed(args.seed)
    threads = [threading.Thread(target=run, args=(s,), name=s.name) for s in sides]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        name, exc = next(iter(errors.items()))
        raise RuntimeError(f"{name} training failed") from exc
    return {"models": models, "clocks": clocks}


def time_generation(models: dict[str, Any], args) -> dict[str, list[float]]:
    """Seconds per generate_numpy(args.generate), sides alternating, after a warm-up batch."""
    for model in models.values():
        model.generate_numpy(args.batch_size)
    seconds: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(args.generate_repeats):
        for name, model in models.items():
            start = time.perf_counter()
            model.generate_numpy(args.generate)  # returns numpy: ends with a device sync
            seconds[name].append(time.perf_counter() - start)
    return seconds


def reset_peak_memory(cuda: bool) -> None:
    gc.collect()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        return
    with contextlib.suppress(OSError):  # "5" resets this process's VmHWM (Linux >= 4.0)
        Path("/proc/self/clear_refs").write_text("5")


def peak_memory_mib(cuda: bool) -> tuple[float, str]:
    """(peak MiB since the last reset, how it was measured)."""
    if cuda:
        return torch.cuda.max_memory_allocated() / 2**20, "torch.cuda.max_memory_allocated"
    try:
        status = Path("/proc/self/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024, "peak RSS (VmHWM)"
    except (OSError, AttributeError):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        return rss / 1024, "getrusage ru_maxrss (process-wide, not per side)"


def measure_memory(side: Side, args, use_cuda: bool, data) -> tuple[float, str]:
    """Peak memory of one side alone: train the warm-up epochs, then generate."""
    reset_peak_memory(use_cuda)
    torch.manual_seed(args.seed)
    model = side.dgan_cls(make_config(side, args, use_cuda, args.warmup))
    model.train_numpy(**train_call(side, *data))
    model.generate_numpy(args.generate)
    peak = peak_memory_mib(use_cuda)
    del model
    return peak


def summarize(clock: SegmentClock, generate_s: list[float], args) -> dict[str, Any]:
    epoch_s = clock.epoch_seconds(args.warmup)
    return {
        "train_examples_per_s": args.n_series / statistics.median(epoch_s),
        "train_examples_per_s_best_epoch": args.n_series / min(epoch_s),
        "generate_examples_per_s": args.generate / statistics.median(generate_s),
        "epoch_s": epoch_s,
        "generate_s": generate_s,
        # validation + encoding + building + the warm-up epochs, all before the window
        "setup_and_warmup_s": sum(s for e, s in clock.segments if e < args.warmup),
    }


def ratios(results: dict[str, dict[str, Any]]) -> dict[str, float] | None:
    """dgan / gretel: of the medians, and (train) the median of per-epoch paired ratios."""
    if "gretel" not in results or "dgan" not in results:
        return None
    ours, theirs = results["dgan"], results["gretel"]
    paired = [b / a for a, b in zip(ours["epoch_s"], theirs["epoch_s"], strict=False)]
    return {
        "train": ours["train_examples_per_s"] / theirs["train_examples_per_s"],
        "train_paired_epochs_median": statistics.median(paired),
        "generate": ours["generate_examples_per_s"] / theirs["generate_examples_per_s"],
        "peak_memory": ours["peak_memory_mib"] / theirs["peak_memory_mib"],
    }


# --------------------------------------------------------------------------- profiling


def profile_epoch(side: Side, args, use_cuda: bool, data, top: int = 10) -> dict[str, Any]:
    """torch.profiler over one training epoch after one warm-up epoch: top ops by self time."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if use_cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    prof = torch.profiler.profile(activities=activities)

    def at_batch_end(info) -> None:
        if info.batch != info.total_batches - 1:
            return
        if use_cuda:
            torch.cuda.synchronize()
        if info.epoch == 0:
            prof.start()
        elif info.epoch == 1:
            prof.stop()

    torch.manual_seed(args.seed)
    model = side.dgan_cls(make_config(side, args, use_cuda, 2))
    model.train_numpy(**train_call(side, *data), progress_callback=at_batch_end)
    sort_by = "self_device_time_total" if use_cuda else "self_cpu_time_total"
    events = sorted(prof.key_averages(), key=lambda e: getattr(e, sort_by), reverse=True)
    total_cpu_us = sum(e.self_cpu_time_total for e in events)
    rows = [
        {
            "op": e.key,
            "calls": e.count,
            "self_cpu_ms": e.self_cpu_time_total / 1e3,
            "self_cpu_pct": 100 * e.self_cpu_time_total / total_cpu_us,
            **({"self_device_ms": e.self_device_time_total / 1e3} if use_cuda else {}),
        }
        for e in events[:top]
    ]
    return {"sorted_by": sort_by, "epoch_self_cpu_ms": total_cpu_us / 1e3, "top": rows}


def print_profile(name: str, profile: dict[str, Any]) -> None:
    print(
        f"\n{name}: top ops by {profile['sorted_by']} over one epoch "
        f"(total self CPU {profile['epoch_self_cpu_ms']:.0f} ms)"
    )
    print(f"{'op':42s} {'calls':>7s} {'self CPU ms':>12s} {'%':>6s}")
    for row in profile["top"]:
        print(
            f"{row['op'][:42]:42s} {row['calls']:7d} {row['self_cpu_ms']:12.1f} "
            f"{row['self_cpu_pct']:6.1f}"
        )


# ---------------------------------------------------------------------------- context


def bench_machine_info() -> dict[str, Any]:
    """The shared harness's machine record (dgan is importable once load_sides ran)."""
    from harness import machine_info

    return machine_info(REPO)


# ------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=8, help="timed epochs (default 8)")
    p.add_argument("--warmup", type=int, default=1, help="untimed epochs first (default 1)")
    p.add_argument(
        "--interleave",
        choices=["auto", "batch", "epoch"],
        default="auto",
        help="how often the sides take turns (auto: batch on CPU, epoch on CUDA, where "
        "each turn ends with a synchronize)",
    )
    p.add_argument(
        "--workload",
        choices=sorted(WORKLOADS),
        default="w1",
        help="w1: 10,000 x 100 x 3, two attributes, sample_len 10, batch 1000; w2 (gretel's "
        "defaults on small data): 1,000 x 24 x 1, one discrete attribute, sample_len 4, "
        "batch 100",
    )
    p.add_argument("--n-series", type=int, help="training series (default: the workload's)")
    p.add_argument("--batch-size", type=int, help="batch size (default: the workload's)")
    p.add_argument("--generate", type=int, default=10_000, help="examples per generate call")
    p.add_argument("--generate-repeats", type=int, default=3, help="timed generate calls")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads (CPU runs only)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-gretel", action="store_true", help="time dgan alone")
    p.add_argument("--profile", action="store_true", help="add a torch.profiler top-10 per side")
    p.add_argument(
        "--dgan",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="dgan config fields on top of the workload's, e.g. precision=bf16 (gretel's "
        "side keeps its defaults)",
    )
    p.add_argument("--out", type=Path, help="JSON path (default benchmarks/results/speed-...)")
    args = p.parse_args(argv)
    from fidelity import parse_override  # one parser for key=value across the benchmarks

    args.dgan = dict(map(parse_override, args.dgan))
    args.workload = WORKLOADS[args.workload]
    args.n_series = args.n_series or args.workload.n_series
    args.batch_size = args.batch_size or args.workload.batch_size
    if args.warmup < 1 or args.epochs < 1:
        p.error("--warmup and --epochs must be >= 1")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device is available; use --device cpu.")
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    if not use_cuda:
        torch.set_num_threads(args.threads)
    if args.interleave == "auto":
        args.interleave = "epoch" if use_cuda else "batch"
    sides, skipped = load_sides(args.skip_gretel)
    data = make_workload(args.workload, args.n_series, args.seed)
    print(
        f"device={'cuda' if use_cuda else 'cpu'} threads={torch.get_num_threads()} "
        f"sides={[s.name for s in sides]} skipped={skipped}",
        flush=True,
    )

    # The first optimizer built in a process imports torch._dynamo (seconds); pay that
    # here so that neither side's setup time includes it.
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    load_before = os.getloadavg()
    trained = train_interleaved(sides, args, use_cuda, data)
    generate_s = time_generation(trained["models"], args)
    del trained["models"]
    results = {
        s.name: summarize(trained["clocks"][s.name], generate_s[s.name], args) for s in sides
    }
    for side in sides:
        peak, method = measure_memory(side, args, use_cuda, data)
        results[side.name].update(
            peak_memory_mib=peak, memory_method=method, version=side.version, path=side.path
        )
        if args.profile:
            results[side.name]["profile"] = profile_epoch(side, args, use_cuda, data)
            print_profile(side.name, results[side.name]["profile"])

    report = {
        "benchmark": "speed",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv[1:] if argv is None else argv,
        "machine": bench_machine_info(),
        # Other processes' load. It inflates absolute times several-fold on this shared
        # machine; the interleaved ratio moved far less (1.44 at load 1.5, 1.33 at load 8).
        "load_average_1_5_15min": {"before": load_before, "after": os.getloadavg()},
        "workload": {
            "name": args.workload.name,
            "n_series": args.n_series,
            "seq_len": args.workload.seq_len,
            "features": f"{args.workload.n_features} continuous, from: class-frequency "
            "sinusoid, random walk, damped cosine",
            "attributes": f"1 discrete (0..{N_CLASSES - 1} as floats)"
            + (", 1 continuous (gamma level)" if args.workload.with_level else ""),
            "seed": args.seed,
        },
        "config": config_kwargs(args, use_cuda, args.warmup + args.epochs),
        "dgan_overrides": args.dgan,
        "protocol": {
            "warmup_epochs": args.warmup,
            "timed_epochs": args.epochs,
            "interleave": args.interleave,
            "generate_examples": args.generate,
            "generate_repeats": args.generate_repeats,
            "note": "timed window reduced to a few epochs (a real run is 400) to keep the "
            "default run ~10 min on 2 CPU cores; workload shape unchanged. The sides train in "
            "one process, taking turns every batch/epoch; an epoch's time is its own work only. "
            "Train throughput = n_series / median epoch time. Peak memory from a separate "
            "warm-up training + generate per side.",
        },
        "skipped": skipped,
        "results": results,
        "ratio_dgan_over_gretel": ratios(results),
    }
    device = "cuda" if use_cuda else "cpu"
    out = args.out or REPO / "benchmarks" / "results" / (
        f"speed-{device}-{args.workload.name}-{dt.date.today().isoformat()}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print_summary(report, out)
    return report


def print_summary(report: dict[str, Any], out: Path) -> None:
    print()
    for name, r in report["results"].items():
        print(
            f"{name:6s} train {r['train_examples_per_s']:9.0f} ex/s   generate "
            f"{r['generate_examples_per_s']:9.0f} ex/s   peak {r['peak_memory_mib']:7.0f} MiB"
        )
    if report["ratio_dgan_over_gretel"]:
        rt = report["ratio_dgan_over_gretel"]
        print(
            f"dgan/gretel: train x{rt['train']:.2f} (paired epochs x"
            f"{rt['train_paired_epochs_median']:.2f}), generate x{rt['generate']:.2f}, "
            f"peak memory x{rt['peak_memory']:.2f}"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
