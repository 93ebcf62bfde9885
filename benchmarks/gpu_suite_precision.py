"""Part 2 of benchmarks/gpu_suite.py: docs/precision.md's sweep, gretel-synthetics beside it.

Every dgan measurement is `precision.measure`: a fresh model of a `precision.MODELS`
workload timed by `harness.time_training` (build, burn-in, windows of timed steps,
synchronized on CUDA) in each variant: fp32 (exact: no TF32 anywhere), tf32 (fp32 with
TF32 products and cuDNN LSTM), fp16 and bf16 with the gradient penalty in fp32 and in
autocast. Each row has examples/s, ``torch.cuda.max_memory_allocated``, the host syncs
``torch.cuda.set_sync_debug_mode`` saw in the timed window, dgan's own reads of tensor
values there (any device), and the loss scaler's skipped steps. Rows are summarised by
`precision.summarize` and tabled by `plot_precision.speed_table`, as in docs/precision.md.

gretel-synthetics' DGAN, where importable, trains in the same process on the same
workload at each batch size, in fp32 and with ``mixed_precision_training``: the same
series, repeated so its data loader yields ``warmup + steps`` batches of them, timed from
the end of its ``warmup``-th batch to the end of the last through its
``progress_callback`` (synchronized at both ends), with the peak memory and host syncs of
that window. Its critic loss runs under CUDA's fp16 autocast even in its fp32 mode
(``torch.cuda.amp.autocast(enabled=True)`` in its training loop).

The work is ordered small model first (cheap, and gretel's default network), batch by
batch; a measurement the part's minutes would not cover is recorded as
``skipped_time_budget``, a variant that ran out of memory is not tried at larger batches.
"""

from __future__ import annotations

import gc
import importlib.metadata
import statistics
import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fidelity import make_config
from harness import _is_oom, _SyncCheck, synthetic_workload
from plot_precision import DEFAULT_PRICE_PER_HOUR, speed_table, target_check
from precision import GP_PRECISIONS, MODELS, TF32, measure, summarize, variant_name

if TYPE_CHECKING:
    from gpu_suite import PartContext

VARIANTS = [("fp32", "fp32"), (TF32, "fp32")] + [
    (p, gp) for p in ("fp16", "bf16") for gp in GP_PRECISIONS
]
GRETEL_MODES = {"gretel fp32": False, "gretel mixed": True}
# Tiny stand-ins for the two workloads: --smoke checks the plumbing, not the numbers.
SMOKE_MODELS = {
    "small": dict(max_sequence_len=20, sample_len=5, n_features=2, attribute_num_units=8,
                  feature_num_units=8, discriminator_num_units=8, discriminator_num_layers=2),
    "large": dict(max_sequence_len=40, sample_len=10, n_features=3, feature_num_units=16,
                  discriminator_num_units=16, discriminator_num_layers=2),
}  # fmt: skip
SETTINGS = {
    False: dict(batch_sizes=[256, 1024, 4096, 16384], warmup=3, steps=10, windows=2,
                gretel_warmup=2, gretel_steps=5),
    True: dict(batch_sizes=[8], warmup=0, steps=1, windows=1, gretel_warmup=1, gretel_steps=1),
}  # fmt: skip
GRETEL_DEFAULT = ("small", 1024)  # gretel's default networks and about its default batch
TARGET_GRETEL_RATIO = 3.0


def run(context: PartContext) -> None:
    """Measure every (model, batch, variant), then gretel's modes at that batch."""
    settings = {**SETTINGS[context.smoke], "device": context.device, "rounds": 1}
    models = SMOKE_MODELS if context.smoke else MODELS
    result = context.result
    result["settings"] = settings
    result["models"] = models
    gretel, result["gretel"] = load_gretel()
    earlier = _finished((context.previous or {}).get("measurements", []))
    earlier |= _finished((context.previous or {}).get("gretel_measurements", []))
    rows, gretel_rows = result["measurements"], result["gretel_measurements"] = [], []
    estimates = _Estimates()
    for model_name, spec in models.items():
        out_of_memory: set[str] = set()
        for batch in settings["batch_sizes"]:
            workload = None
            jobs = [(variant_name(p, gp), p, gp) for p, gp in VARIANTS]
            jobs += [(mode, None, None) for mode in GRETEL_MODES] if gretel else []
            for name, precision, gp in jobs:
                into = rows if precision else gretel_rows
                head = dict(model=model_name, batch_size=batch, round=0, variant=name)
                if (model_name, batch, name) in earlier:
                    into.append(earlier[model_name, batch, name])
                    continue
                estimate = estimates.guess(model_name, name, batch)
                if name in out_of_memory:
                    into.append({**head, "status": "skipped_after_oom"})
                    continue
                if estimate > context.seconds_left():
                    into.append({**head, "status": "skipped_time_budget", "estimate_s": estimate})
                    continue
                started = time.monotonic()
                if workload is None:
                    n = spec["n_features"]
                    workload = synthetic_workload(batch, spec["max_sequence_len"], n)
                if precision:
                    row = measure(settings, model_name, spec, batch, 0, precision, gp, workload)
                else:
                    row = {**head, **time_gretel(gretel, spec, GRETEL_MODES[name], workload,
                                                 settings)}  # fmt: skip
                estimates.record(model_name, name, batch, time.monotonic() - started)
                into.append(row)
                if row["status"] == "oom":
                    out_of_memory.add(name)
                result["summary"] = summarize(rows)
                result["gretel_summary"] = gretel_summary(rows, gretel_rows)
                context.save()
                _print(row)
    result["summary"] = summarize(rows)
    result["gretel_summary"] = gretel_summary(rows, gretel_rows)


def _finished(rows: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """An earlier run's measurements that need no second try, by (model, batch, variant)."""
    final = ("ok", "oom", "skipped_after_oom")
    return {(r["model"], r["batch_size"], r["variant"]): r for r in rows if r["status"] in final}


class _Estimates:
    """How long a measurement will take: the last one of the same variant scaled by the
    batch (conservative: small batches are launch-bound), else the slowest at this batch."""

    def __init__(self):
        self.seconds: dict[tuple[str, str], tuple[int, float]] = {}
        self.at_batch: dict[tuple[str, int], float] = {}

    def guess(self, model: str, variant: str, batch: int) -> float:
        if (model, variant) in self.seconds:
            last_batch, seconds = self.seconds[model, variant]
            return seconds * batch / last_batch
        return self.at_batch.get((model, batch), 0.0)

    def record(self, model: str, variant: str, batch: int, seconds: float) -> None:
        self.seconds[model, variant] = (batch, seconds)
        self.at_batch[model, batch] = max(seconds, self.at_batch.get((model, batch), 0.0))


def _print(row: dict[str, Any]) -> None:
    head = f"  {row['model']:5} b={row['batch_size']:<6} {row['variant']:17}"
    if row["status"] != "ok":
        print(f"{head} {row['status']}", flush=True)
        return
    peak = row["peak_memory_bytes"]
    print(
        f"{head} {row['seconds_per_batch'] * 1e3:9.1f} ms/batch {row['examples_per_s']:10.0f} "
        f"ex/s {'-' if peak is None else f'{peak / 2**20:.0f}':>8} MiB "
        f"syncs {row['host_syncs_in_window']}",
        flush=True,
    )


# ----- gretel-synthetics ----------------------------------------------------------------
def load_gretel() -> tuple[tuple | None, dict[str, Any]]:
    """(DGAN class, config class, OutputType) of gretel-synthetics, or None; and a note."""
    try:
        from gretel_synthetics.timeseries_dgan import config as gconfig
        from gretel_synthetics.timeseries_dgan import dgan as gdgan
    except ImportError as error:
        return None, {"skipped": f"not importable: {error}"}
    version = importlib.metadata.version("gretel-synthetics")
    return (gdgan.DGAN, gconfig.DGANConfig, gconfig.OutputType), {"version": version}


class _GretelWindow:
    """gretel's ``progress_callback``: opens the timed window after ``warmup`` batches and
    closes it ``steps`` batches later (synchronized on CUDA), with memory and syncs."""

    def __init__(self, warmup: int, steps: int, cuda: bool):
        self.warmup, self.steps, self.cuda = warmup, steps, cuda
        self.seconds: float | None = None
        self.peak: int | None = None
        self.syncs: list[str] = []

    def __call__(self, info) -> None:
        done = info.batch + 1
        if done == self.warmup:
            if self.cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            self._check = _SyncCheck(self.cuda)
            self.syncs = self._check.__enter__()
            self.started = time.perf_counter()
        elif done == self.warmup + self.steps:
            self._check.__exit__(None, None, None)  # before our own synchronize
            if self.cuda:
                torch.cuda.synchronize()
                self.peak = torch.cuda.max_memory_allocated()
            self.seconds = time.perf_counter() - self.started


def time_gretel(gretel: tuple, spec: dict, mixed: bool, workload: tuple, settings: dict) -> dict:
    """gretel's training step on ``workload`` (one batch of series), per the module doc."""
    dgan_cls, config_cls, output_type = gretel
    attributes, features, types = workload
    warmup, steps = settings["gretel_warmup"], settings["gretel_steps"]
    batch, cuda = len(features), settings["device"] == "cuda"
    networks = {k: v for k, v in spec.items() if k != "n_features"}
    settings = dict(batch_size=batch, epochs=1, cuda=cuda, mixed_precision_training=mixed)
    # gretel's critics are fixed (5 x 200 units): dgan's critic sizes are not applied to it.
    config, not_applied = make_config(config_cls, {**networks, **settings}, {})
    window = _GretelWindow(max(warmup, 1), steps, cuda)
    repeats = window.warmup + steps
    try:
        with warnings.catch_warnings():
            # deprecated torch.cuda.amp calls, pinned memory without CUDA: said every batch
            warnings.simplefilter("ignore", FutureWarning)
            warnings.filterwarnings("ignore", message=".*pin_memory.*")
            warnings.filterwarnings("ignore", message=".*CUDA is not available.*")
            model = dgan_cls(config)
            model.train_numpy(
                features=np.concatenate([features] * repeats),
                feature_types=[output_type.CONTINUOUS] * features.shape[2],
                attributes=np.concatenate([attributes] * repeats),
                attribute_types=[output_type[t.name] for t in types],
                progress_callback=window,
            )
    except (torch.OutOfMemoryError, RuntimeError) as error:
        if not _is_oom(error):
            raise
        message = str(error).splitlines()[0]
    else:
        per_batch = window.seconds / steps
        return {
            "status": "ok",
            "mixed_precision_training": mixed,
            "not_applied_to_gretel": not_applied,
            "burn_in_steps": window.warmup,
            "timed_steps": steps,
            "seconds_per_batch": per_batch,
            "examples_per_s": batch / per_batch,
            "peak_memory_bytes": window.peak,
            "memory_kind": "cuda_max_memory_allocated" if cuda else None,
            "host_syncs_in_window": len(window.syncs) if cuda else None,
            "host_sync_sites": sorted(set(window.syncs))[:5],
        }
    gc.collect()  # outside the except block, so the traceback's tensors are freed
    if cuda:
        torch.cuda.empty_cache()
    return {"status": "oom", "error": message[:300], "mixed_precision_training": mixed}


def gretel_summary(rows: list[dict], gretel_rows: list[dict]) -> list[dict[str, Any]]:
    """Each gretel measurement beside dgan's fp32 at the same model and batch."""
    fp32 = {(r["model"], r["batch_size"]): r for r in rows if r["variant"] == "fp32"}
    out = []
    for g in gretel_rows:
        base = fp32.get((g["model"], g["batch_size"]))
        both = g["status"] == "ok" and base is not None and base["status"] == "ok"
        entry = {k: g.get(k) for k in ("model", "batch_size", "variant", "status")}
        entry["not_applied_to_gretel"] = g.get("not_applied_to_gretel") or []
        if g["status"] == "ok":
            entry |= {k: g[k] for k in ("seconds_per_batch", "examples_per_s",
                                        "peak_memory_bytes", "host_syncs_in_window")}  # fmt: skip
        entry["dgan_fp32_speed_ratio"] = (
            base["examples_per_s"] / g["examples_per_s"] if both else None
        )
        peaks = both and g["peak_memory_bytes"] and base["peak_memory_bytes"]
        entry["dgan_fp32_memory_ratio"] = (
            base["peak_memory_bytes"] / g["peak_memory_bytes"] if peaks else None
        )
        out.append(entry)
    return out


# ----- tables ---------------------------------------------------------------------------
def table(result: dict[str, Any]) -> str:
    """docs/precision.md's speed table, then syncs and reads, gretel, and the targets."""
    device = result.get("device", "cuda")
    summary = result.get("summary") or []
    price = DEFAULT_PRICE_PER_HOUR[device]
    lines = [f"Assumed machine price: ${price:.2f} per hour.", ""]
    lines.append(speed_table({"summary": summary}, price))
    if not summary:
        lines.append("| PENDING |  |  |  |  |  |  |  |  |  |")
    lines += ["", _syncs_table(summary, result.get("measurements") or []), ""]
    lines.append(_gretel_table(result))
    lines += ["", "Targets:", target_check({"device": device, "summary": summary})]
    lines.append(_gretel_target(result.get("gretel_summary") or []))
    syncs = [r.get("host_syncs_in_window") for r in result.get("measurements") or []]
    syncs = [s for s in syncs if s is not None]
    lines.append(
        f"- zero host syncs per step: {'MET' if not any(syncs) else 'NOT MET'} "
        f"(most in a window: {max(syncs)})"
        if syncs
        else "- zero host syncs per step: no CUDA measurement (host syncs are read on CUDA)"
    )
    if result.get("error"):
        lines += ["", f"The part failed: {result['error'].strip().splitlines()[-1]}"]
    return "\n".join(lines)


def _syncs_table(summary: list[dict], rows: list[dict]) -> str:
    tf32 = {(r["model"], r["batch_size"]): r for r in summary if r["variant"] == TF32}
    lines = [
        "| model | batch | variant | speed vs tf32 | host syncs in window | dgan tensor reads "
        "in window | LSTM in fp32 | skipped steps (burn-in) |",
        "|---|---:|---|---:|---:|---:|---|---:|",
    ]
    for r in summary:
        if r.get("status") != "ok":
            continue
        base = tf32.get((r["model"], r["batch_size"]))
        ratio = base["seconds_per_batch"] / r["seconds_per_batch"] if base else None
        measured = [m for m in rows if m["status"] == "ok" and _same(m, r)]
        syncs = [m["host_syncs_in_window"] for m in measured]
        reads = [m.get("tensor_reads_in_window") for m in measured]
        lines.append(
            f"| {r['model']} | {r['batch_size']} | {r['variant']} "
            f"| {'' if ratio is None else f'{ratio:.2f}x'} | {_total(syncs)} | {_total(reads)} "
            f"| {r['lstm_in_fp32']} | {r['skipped_steps_burn_in']} |"
        )
    if len(lines) == 2:
        lines.append("| PENDING |  |  |  |  |  |  |  |")
    return "\n".join(lines)


def _same(row: dict, entry: dict) -> bool:
    return all(row[k] == entry[k] for k in ("model", "batch_size", "variant"))


def _total(values: list) -> str:
    known = [v for v in values if v is not None]
    return str(sum(known)) if known else "n/a"


def _gretel_table(result: dict[str, Any]) -> str:
    note = result.get("gretel") or {}
    if "skipped" in note:
        return f"gretel-synthetics: not measured ({note['skipped']})."
    lines = [
        f"gretel-synthetics {note.get('version', '(version)')} on the same workloads (its fp32 "
        "mode runs the critic loss under fp16 autocast on CUDA):",
        "",
        "| model | batch | gretel mode | ms / batch | examples/s | peak MiB | host syncs in "
        "window | dgan fp32 speed / gretel | dgan fp32 memory / gretel |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for g in result.get("gretel_summary") or []:
        head = f"| {g['model']} | {g['batch_size']} | {g['variant']} "
        if g["status"] != "ok":
            lines.append(head + f"| {g['status']} |  |  |  |  |  |")
            continue
        peak = g["peak_memory_bytes"]
        lines.append(
            head + f"| {g['seconds_per_batch'] * 1e3:.1f} | {g['examples_per_s']:.0f} "
            f"| {'n/a' if peak is None else f'{peak / 2**20:.0f}'} "
            f"| {_total([g['host_syncs_in_window']])} | {_ratio(g['dgan_fp32_speed_ratio'])} "
            f"| {_ratio(g['dgan_fp32_memory_ratio'])} |"
        )
    if len(lines) == 4:
        lines.append("| PENDING |  |  |  |  |  |  |  |  |")
    missing = sorted(
        {f for g in result.get("gretel_summary") or [] for f in g["not_applied_to_gretel"]}
    )
    if missing:
        lines += ["", f"Not applied to gretel (it has no such settings): {', '.join(missing)}."]
    return "\n".join(lines)


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def _gretel_target(gretel: list[dict]) -> str:
    model, batch = GRETEL_DEFAULT
    ratios = [
        g["dgan_fp32_speed_ratio"]
        for g in gretel
        if (g["model"], g["batch_size"], g["variant"]) == (model, batch, "gretel fp32")
        and g["dgan_fp32_speed_ratio"] is not None
    ]
    head = f"- dgan fp32 >= {TARGET_GRETEL_RATIO:g}x gretel fp32 ({model} model, batch {batch})"
    if not ratios:
        return f"{head}: no measurement"
    ratio = statistics.median(ratios)
    return f"{head}: {ratio:.2f}x: {'MET' if ratio >= TARGET_GRETEL_RATIO else 'NOT MET'}"
