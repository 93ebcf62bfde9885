"""Precision benchmark: what fp16 and bf16 buy over fp32 in speed, memory and quality.

For each model size and batch size it times every precision variant (fp32; fp16 and
bf16, each with the gradient penalty in fp32 and in autocast) with `harness`, in
rounds that interleave the variants so that load on a shared machine hits them alike,
and reports each variant's median time per batch, throughput, peak memory and skipped
steps, with its ratios to fp32 measured in the same round. A quality section trains
the gretel-default model on `tests/synthetic.sine_dataset` in each precision (fp32 with
several seeds for the run-to-run spread) and scores the generated data.

Run from the repository root:

    # full sweep on a GPU (see docs/precision.md)
    python benchmarks/precision.py --device cuda
    # CPU: reduced sizes, a few minutes
    PYTHONPATH=src python benchmarks/precision.py --device cpu --threads 1

The result goes to benchmarks/results/<name>-<device>-<date>.json;
benchmarks/plot_precision.py turns it into the plot and tables of docs/precision.md.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # synthetic.py: the structured quality dataset

from dgan import DGAN, DGANConfig, OutputType  # noqa: E402
from dgan.metrics import SeriesData, autocorrelation_distance, marginal_distances  # noqa: E402
from harness import machine_info, synthetic_workload, time_training, write_result  # noqa: E402
from synthetic import CLASS_CYCLES, dominant_cycles, sine_dataset  # noqa: E402

# The two workloads: gretel's defaults on 100 steps x 3 features, and a large model.
MODELS: dict[str, dict[str, Any]] = {
    "small": dict(max_sequence_len=100, sample_len=10, n_features=3),
    "large": dict(
        max_sequence_len=1000,
        sample_len=10,
        n_features=8,
        feature_num_units=256,
        discriminator_num_units=512,
    ),
}
GP_PRECISIONS = ("fp32", "autocast")
# fp32 training with TensorFloat-32 matrix products (cuBLAS) and LSTM (cuDNN): a variant of
# the sweep, not a dgan precision. Every other variant runs with both off, so "fp32" is the
# exact fp32 baseline (PyTorch's default leaves cuDNN's TF32 on, so its LSTM would be TF32).
TF32 = "tf32"


def variant_name(precision: str, gp: str) -> str:
    """'fp32', 'tf32', 'fp16', 'fp16+gp_autocast', ...: the default penalty precision is implied.

    Example:
        >>> [variant_name(p, "autocast") for p in ("bf16", "tf32")], variant_name("bf16", "fp32")
        (['bf16+gp_autocast', 'tf32'], 'bf16')
    """
    return precision if precision in ("fp32", TF32) or gp == "fp32" else f"{precision}+gp_{gp}"


@contextlib.contextmanager
def tf32_mode(enabled: bool) -> Iterator[None]:
    """fp32 matrix products and cuDNN (its LSTM) in TF32 or not, restored afterwards.

    Through the legacy flags only: PyTorch refuses to read them once the newer
    ``fp32_precision`` settings have been mixed in. No effect on a CPU.
    """
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


# What each device runs unless flags say otherwise. The CPU settings are reduced so the
# default finishes in minutes; the JSON records them under "reduced".
DEFAULTS = {
    "cuda": dict(
        batch_sizes={"small": [256, 1024, 4096, 16384], "large": [256, 1024, 4096, 16384]},
        warmup=3,
        steps=10,
        windows=3,
        rounds=1,
        quality_examples=1000,
        quality_epochs=100,
        quality_seeds=3,
        quality_gp=list(GP_PRECISIONS),
    ),
    "cpu": dict(
        batch_sizes={"small": [64, 256], "large": [32]},
        warmup=1,
        steps=2,
        windows=1,
        rounds=3,
        quality_examples=500,
        quality_epochs=20,
        quality_seeds=2,
        quality_gp=["fp32"],
    ),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--device", choices=["cpu", "cuda"], default=None, help="default: cuda when available"
    )
    parser.add_argument(
        "--batch-sizes",
        default=None,
        help="comma list, for every model (default: per device and model)",
    )
    parser.add_argument(
        "--models",
        default="small,large",
        help="comma list of small,large; 'none': only the quality part",
    )
    parser.add_argument(
        "--precisions",
        default="fp32,fp16,bf16",
        help="fp32 is always measured, as the baseline; tf32 adds fp32 with TF32 maths",
    )
    parser.add_argument(
        "--gp",
        default=",".join(GP_PRECISIONS),
        help="gradient_penalty_precision values for fp16/bf16",
    )
    parser.add_argument("--steps", type=int, default=None, help="timed steps per window")
    parser.add_argument("--warmup", type=int, default=None, help="burn-in steps before timing")
    parser.add_argument("--windows", type=int, default=None, help="timed windows per round")
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="rounds over all variants (fresh model each); ratios are medians of per-round ratios",
    )
    parser.add_argument("--quality", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--quality-epochs", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--name", default="precision", help="result file name prefix")
    parser.add_argument(
        "--out", default=str(ROOT / "benchmarks" / "results"), help="folder for the JSON result"
    )
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> dict[str, Any]:
    """The effective settings, and which of them are the device's reduced defaults."""
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda was asked for, but torch sees no CUDA device.")
    defaults = DEFAULTS[device]
    models = [] if args.models == "none" else args.models.split(",")
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        sys.exit(f"Unknown model(s) {unknown}; choose from {list(MODELS)} or 'none'.")
    precisions = ["fp32"] + [p for p in args.precisions.split(",") if p != "fp32"]
    gps = args.gp.split(",")
    variants = [("fp32", "fp32")] + [
        (p, gp) for p in precisions[1:] for gp in (["fp32"] if p == TF32 else gps)
    ]
    batch_sizes = {
        m: [int(b) for b in args.batch_sizes.split(",")]
        if args.batch_sizes
        else defaults["batch_sizes"][m]
        for m in models
    }
    settings = dict(
        device=device,
        models=models,
        variants=[variant_name(*v) for v in variants],
        batch_sizes=batch_sizes,
        warmup=args.warmup if args.warmup is not None else defaults["warmup"],
        steps=args.steps or defaults["steps"],
        windows=args.windows or defaults["windows"],
        rounds=args.rounds or defaults["rounds"],
        quality=args.quality,
        quality_examples=defaults["quality_examples"],
        quality_epochs=args.quality_epochs or defaults["quality_epochs"],
        quality_seeds=defaults["quality_seeds"],
        quality_variants=[
            variant_name(p, gp) for p, gp in variants if gp in defaults["quality_gp"]
        ],
    )
    settings["_variants"] = variants
    reduced = None
    if device == "cpu":
        full = DEFAULTS["cuda"]
        reduced = {
            key: {"used": settings[key], "full_sweep": full[key]}
            for key in ("batch_sizes", "steps", "windows", "quality_epochs", "quality_seeds")
        }
        reduced["quality_examples"] = {"used": settings["quality_examples"], "full_sweep": 1000}
        reduced["quality_variants"] = "fp32 gradient penalty only (the default)"
        reduced["why"] = "CPU run: sizes and steps cut so the default finishes in minutes."
    settings["reduced"] = reduced
    return settings


# ----- throughput and memory ------------------------------------------------------------
def sweep(settings: dict[str, Any]) -> list[dict[str, Any]]:
    """Every measurement, one row per (model, batch, round, variant)."""
    rows = []
    for model_name in settings["models"]:
        spec = MODELS[model_name]
        out_of_memory: set[str] = set()  # variants that ran out at a smaller batch
        for batch in settings["batch_sizes"][model_name]:
            workload = synthetic_workload(batch, spec["max_sequence_len"], spec["n_features"])
            for round_ in range(settings["rounds"]):
                for precision, gp in settings["_variants"]:
                    name = variant_name(precision, gp)
                    if name in out_of_memory:
                        row = dict(model=model_name, batch_size=batch, round=round_, variant=name)
                        rows.append({**row, "status": "skipped_after_oom"})
                        continue
                    rows.append(
                        measure(settings, model_name, spec, batch, round_, precision, gp, workload)
                    )
                    if rows[-1]["status"] == "oom":
                        out_of_memory.add(name)
                    _print_row(rows[-1])
            del workload
    return rows


def measure(
    settings: dict[str, Any],
    model_name: str,
    spec: dict[str, Any],
    batch: int,
    round_: int,
    precision: str,
    gp: str,
    workload: tuple,
) -> dict[str, Any]:
    """One row of the sweep: a fresh ``spec`` model (a `MODELS` entry) timed by
    `harness.time_training` on ``workload`` (`synthetic_workload` of ``batch`` series)."""
    networks = {k: v for k, v in spec.items() if k != "n_features"}
    config = DGANConfig(
        **networks,
        batch_size=batch,
        large_data=False,  # the batch asked for, at any data size
        precision="fp32" if precision == TF32 else precision,
        gradient_penalty_precision=gp,
        seed=round_,
    )
    with tf32_mode(precision == TF32):
        result = time_training(
            config,
            workload[1],
            workload[0],
            workload[2],
            warmup_steps=settings["warmup"],
            timed_steps=settings["steps"],
            windows=settings["windows"],
            device=settings["device"],
        )
        tf32 = {
            "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
            "tf32_cudnn": torch.backends.cudnn.allow_tf32,
        }
    name = variant_name(precision, gp)
    return dict(model=model_name, batch_size=batch, round=round_, variant=name, **result, **tf32)


def _print_row(row: dict[str, Any]) -> None:
    head = f"{row['model']:5} b={row['batch_size']:<6} r{row['round']} {row['variant']:17}"
    if row["status"] != "ok":
        print(f"{head} {row['status']}", flush=True)
        return
    print(
        f"{head} {row['seconds_per_batch'] * 1e3:9.1f} ms/batch "
        f"{row['examples_per_s']:10.0f} ex/s {row['peak_memory_bytes'] / 2**20:8.0f} MiB "
        f"skipped {row['skipped_steps']}",
        flush=True,
    )


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median per (model, batch, variant), and the median of per-round ratios to fp32."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["model"], row["batch_size"], row["variant"]), []).append(row)
    baseline = {
        (r["model"], r["batch_size"], r["round"]): r
        for r in rows
        if r["variant"] == "fp32" and r["status"] == "ok"
    }
    summary = []
    for (model, batch, variant), group in groups.items():
        ok = [r for r in group if r["status"] == "ok"]
        entry: dict[str, Any] = dict(model=model, batch_size=batch, variant=variant)
        if not ok:
            entry["status"] = group[0]["status"]
            summary.append(entry)
            continue
        speedups, cpu_speedups, memory_ratios = [], [], []
        for r in ok:
            base = baseline.get((model, batch, r["round"]))
            if base is not None:
                speedups.append(base["seconds_per_batch"] / r["seconds_per_batch"])
                memory_ratios.append(r["peak_memory_bytes"] / base["peak_memory_bytes"])
                if r.get("cpu_seconds_per_batch"):  # CPU runs: the steadier clock
                    cpu_speedups.append(base["cpu_seconds_per_batch"] / r["cpu_seconds_per_batch"])
        seconds = statistics.median(r["seconds_per_batch"] for r in ok)
        entry.update(
            status="ok",
            precision=ok[0]["precision"],  # in effect
            gradient_penalty_precision=ok[0]["gradient_penalty_precision"],
            lstm_in_fp32=ok[0]["lstm_in_fp32"],
            rounds=len(ok),
            seconds_per_batch=seconds,
            examples_per_s=batch / seconds,
            peak_memory_bytes=statistics.median(r["peak_memory_bytes"] for r in ok),
            memory_kind=ok[0]["memory_kind"],
            skipped_steps=sum(r["skipped_steps"] for r in ok),
            skipped_steps_burn_in=sum(r["skipped_steps_burn_in"] for r in ok),
            nonfinite_losses=sum(r["nonfinite_losses"] for r in ok),
            speedup_vs_fp32=statistics.median(speedups) if speedups else None,
            cpu_time_speedup_vs_fp32=statistics.median(cpu_speedups) if cpu_speedups else None,
            speedup_vs_fp32_per_round=speedups,
            memory_vs_fp32=statistics.median(memory_ratios) if memory_ratios else None,
        )
        summary.append(entry)
    return summary


# ----- quality --------------------------------------------------------------------------
def quality(settings: dict[str, Any]) -> list[dict[str, Any]]:
    """Train the gretel-default model on sine_dataset per precision; score the output."""
    attributes, features = sine_dataset(settings["quality_examples"], length=20, seed=1)
    runs = []
    for precision, gp in settings["_variants"]:
        name = variant_name(precision, gp)
        if name not in settings["quality_variants"]:
            continue
        seeds = range(settings["quality_seeds"] if name == "fp32" else 1)
        for seed in seeds:
            config = DGANConfig(
                max_sequence_len=20,
                sample_len=5,
                batch_size=100,
                epochs=settings["quality_epochs"],
                cuda=settings["device"] == "cuda",
                seed=seed,
                precision="fp32" if precision == TF32 else precision,
                gradient_penalty_precision=gp,
            )
            model = DGAN(config)
            start = time.perf_counter()
            types = [OutputType.DISCRETE, OutputType.CONTINUOUS]
            with tf32_mode(precision == TF32):
                model.train_numpy(
                    features, attributes=attributes, attribute_types=types, progress_bar=False
                )
            seconds = time.perf_counter() - start
            generated_attributes, generated = model.generate_numpy(1000)
            scores = fidelity(attributes, features, generated_attributes, np.stack(generated))
            history = model.history
            run = dict(
                variant=name,
                seed=seed,
                epochs=settings["quality_epochs"],
                train_seconds=seconds,
                precision_at_end=history[-1]["precision"],
                skipped_steps=sum(h["skipped_steps"] for h in history),
                guard_events=[e for h in history for e in h["guard_events"]],
                **scores,
            )
            runs.append(run)
            print(
                f"quality {name:17} seed {seed}: frequency match {run['frequency_match']:.2f} "
                f"autocorrelation {run['autocorrelation']:.4f} marginals {run['marginals']:.3f} "
                f"({seconds:.0f} s)",
                flush=True,
            )
    return runs


def fidelity(real_attrs, real_feats, synth_attrs, synth_feats) -> dict[str, float]:
    """How well generated data keeps sine_dataset's structure (see tests/test_quality.py).

    frequency_match: per class, the share of generated series whose dominant frequency is
    the class's (mean over classes; higher is better, real data scores about 1);
    autocorrelation and marginals: `dgan.metrics` scores (lower is better).
    """
    labels = np.rint(synth_attrs[:, 0].astype(float)).astype(int)
    matches = []
    for k, cycles in enumerate(CLASS_CYCLES):
        of_class = synth_feats[labels == k, :, 0]
        matches.append(float(np.mean(dominant_cycles(of_class) == cycles)) if len(of_class) else 0)
    real, synth = _series_data(real_attrs, real_feats), _series_data(synth_attrs, synth_feats)
    shares = np.array([np.mean(labels == k) for k in range(len(CLASS_CYCLES))])
    real_shares = np.bincount(real_attrs[:, 0].astype(int), minlength=3) / len(real_attrs)
    return dict(
        frequency_match=float(np.mean(matches)),
        frequency_match_per_class=matches,
        class_share_error=float(np.abs(shares - real_shares).max()),
        autocorrelation=autocorrelation_distance(real, synth)["score"],
        marginals=marginal_distances(real, synth)["score"],
    )


def _series_data(attributes: np.ndarray, features: np.ndarray) -> SeriesData:
    labels = np.rint(attributes[:, 0].astype(float)).astype(int).astype(str)
    attrs = np.column_stack([labels, attributes[:, 1].astype(float)]).astype(object)
    attrs[:, 1] = attrs[:, 1].astype(float)
    return SeriesData.from_arrays(
        features.astype(float),
        attrs,
        feature_names=["value"],
        attribute_names=["class", "amplitude"],
        attribute_discrete=[True, False],
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    settings = settings_from(args)
    started = time.perf_counter()
    rows = sweep(settings)
    result = {
        "benchmark": "precision",
        "command": " ".join(sys.argv),
        "machine": machine_info(ROOT),
        "settings": {k: v for k, v in settings.items() if not k.startswith("_")},
        "models": MODELS,
        "summary": summarize(rows),
        "measurements": rows,
        "quality": quality(settings) if settings["quality"] else None,
    }
    result["wall_seconds"] = time.perf_counter() - started
    path = write_result(result, args.name, settings["device"], args.out)
    print(f"wrote {path} ({result['wall_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
