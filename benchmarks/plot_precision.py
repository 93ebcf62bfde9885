"""Plot and tabulate a benchmarks/precision.py result for docs/precision.md.

    python benchmarks/plot_precision.py benchmarks/results/precision-cpu-2024-05-17.json \
        --price-per-hour 0.10 --out docs/precision-cpu.png > /tmp/tables.md

Several result files (e.g. a speed run and a quality run) may be given; their summaries
and quality runs are pooled. It draws time per batch and peak memory against batch size,
one line per precision variant and one row of panels per model, and prints Markdown
tables: speed, memory and cost per 1M training examples at ``--price-per-hour``, and
quality. Cost per 1M examples = price per hour / 3600 * 1e6 / (examples per second).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

# The assumed prices when --price-per-hour is not given, stated in every table.
DEFAULT_PRICE_PER_HOUR = {"cuda": 2.50, "cpu": 0.10}
# Targets for the best mixed mode on the large model at batch >= 4096 (GPU).
TARGET_SPEEDUP, TARGET_MEMORY, TARGET_MIN_BATCH = 1.5, 0.6, 4096


def load(paths: list[str]) -> dict[str, Any]:
    results = [json.loads(Path(p).read_text()) for p in paths]
    devices = {r["settings"]["device"] for r in results}
    if len(devices) != 1:
        raise SystemExit(f"Give results from one device at a time, got {sorted(devices)}.")
    return {
        "device": devices.pop(),
        "machine": results[0]["machine"],
        "summary": [row for r in results for row in r["summary"]],
        "quality": [run for r in results for run in (r.get("quality") or [])],
    }


def cost_per_million(examples_per_s: float, price_per_hour: float) -> float:
    """Dollars to push 1M examples through one training step (critic + generator round).

    Example:
        >>> round(cost_per_million(1000.0, 3.6), 2)
        1.0
    """
    return price_per_hour / 3600 * 1e6 / examples_per_s


def plot(data: dict[str, Any], out: Path) -> None:
    rows = [r for r in data["summary"] if r.get("status") == "ok"]
    models = sorted({r["model"] for r in rows}, key=["small", "large"].index)
    if not models:
        return
    fig, axes = plt.subplots(len(models), 2, figsize=(11, 4 * len(models)), squeeze=False)
    memory_label = (
        "peak allocated (MiB)" if data["device"] == "cuda" else "peak RSS (MiB, whole process)"
    )
    for axis_row, model in zip(axes, models, strict=True):
        variants = list(dict.fromkeys(r["variant"] for r in rows if r["model"] == model))
        for variant in variants:
            points = sorted(
                (r for r in rows if r["model"] == model and r["variant"] == variant),
                key=lambda r: r["batch_size"],
            )
            batches = [r["batch_size"] for r in points]
            style = dict(marker="o", label=variant, linestyle="--" if "gp_" in variant else "-")
            axis_row[0].plot(batches, [r["seconds_per_batch"] * 1e3 for r in points], **style)
            axis_row[1].plot(batches, [r["peak_memory_bytes"] / 2**20 for r in points], **style)
        for ax, label in zip(axis_row, ("time per batch (ms)", memory_label), strict=True):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.set_xlabel("batch size")
            ax.set_ylabel(label)
            ax.set_title(f"{model} model")
            ax.grid(True, which="both", alpha=0.3)
        # Time spans orders of magnitude; memory is on a linear axis from 0, so a flat
        # line (CPU: the process's RSS barely moves with precision) reads as flat.
        axis_row[0].set_yscale("log")
        axis_row[0].yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        axis_row[0].yaxis.set_major_formatter(ScalarFormatter())
        axis_row[0].yaxis.set_minor_formatter(NullFormatter())
        axis_row[1].set_ylim(bottom=0)
        axis_row[0].legend(fontsize=8)
    machine = data["machine"]
    where = ", ".join(g["name"] for g in machine["gpus"]) or (
        f"{machine['cpu_model']}, {machine['torch_threads']} thread(s)"
    )
    fig.suptitle(f"dgan training step by precision: {where}, torch {machine['torch']}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def speed_table(data: dict[str, Any], price: float) -> str:
    lines = [
        f"| model | batch | variant | ms / batch | examples/s | speed vs fp32 | peak MiB "
        f"| memory vs fp32 | skipped steps | $ per 1M examples at ${price:.2f}/h |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in data["summary"]:
        head = f"| {r['model']} | {r['batch_size']} | {r['variant']} "
        if r.get("status") != "ok":
            lines.append(head + f"| {r.get('status')} |  |  |  |  |  |  |  |")
            continue
        lines.append(
            head + f"| {r['seconds_per_batch'] * 1e3:.1f} | {r['examples_per_s']:.0f} "
            f"| {_ratio(r['speedup_vs_fp32'])} | {r['peak_memory_bytes'] / 2**20:.0f} "
            f"| {_ratio(r['memory_vs_fp32'])} | {r['skipped_steps']} "
            f"| {cost_per_million(r['examples_per_s'], price):.3f} |"
        )
    return "\n".join(lines)


def quality_table(data: dict[str, Any]) -> str:
    runs = data["quality"]
    if not runs:
        return "(no quality runs in these results)"
    lines = [
        "| variant | seed | epochs | frequency match (higher better) | autocorrelation "
        "(lower better) | marginals (lower better) | class share error | precision at end "
        "| skipped steps | guard events |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for q in runs:
        lines.append(
            f"| {q['variant']} | {q['seed']} | {q['epochs']} | {q['frequency_match']:.2f} "
            f"| {q['autocorrelation']:.4f} | {q['marginals']:.3f} "
            f"| {q['class_share_error']:.3f} | {q['precision_at_end']} "
            f"| {q['skipped_steps']} | {len(q['guard_events'])} |"
        )
    fp32 = [q["frequency_match"] for q in runs if q["variant"] == "fp32"]
    if len(fp32) > 1:
        lines.append(
            f"\nfp32 run-to-run spread of frequency match over {len(fp32)} seeds: "
            f"{min(fp32):.2f} to {max(fp32):.2f} (median {statistics.median(fp32):.2f})."
        )
    return "\n".join(lines)


def target_check(data: dict[str, Any]) -> str:
    """Does the best mixed mode meet the GPU targets on the large model at batch >= 4096?"""
    if data["device"] != "cuda":
        return "GPU targets: not applicable to a CPU result (pending a GPU run)."
    lines = []
    rows = [
        r
        for r in data["summary"]
        if r.get("status") == "ok"
        and r["model"] == "large"
        and r["batch_size"] >= TARGET_MIN_BATCH
        and r["variant"] != "fp32"
        and r["speedup_vs_fp32"] is not None
    ]

    def meets(r: dict[str, Any]) -> bool:
        return r["speedup_vs_fp32"] >= TARGET_SPEEDUP and r["memory_vs_fp32"] <= TARGET_MEMORY

    for batch in sorted({r["batch_size"] for r in rows}):
        # The best mixed mode: the fastest one that meets both targets, else the fastest.
        best = max(
            (r for r in rows if r["batch_size"] == batch),
            key=lambda r: (meets(r), r["speedup_vs_fp32"]),
        )
        lines.append(
            f"- large, batch {batch}: best mixed mode {best['variant']}: "
            f"{best['speedup_vs_fp32']:.2f}x fp32 speed (target >= {TARGET_SPEEDUP}x), "
            f"{best['memory_vs_fp32']:.2f}x fp32 memory (target <= {TARGET_MEMORY}x): "
            f"{'MET' if meets(best) else 'NOT MET'}"
        )
    return "\n".join(lines) or "GPU targets: no large-model result at batch >= 4096."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="JSON files written by precision.py")
    parser.add_argument(
        "--out", default=None, help="PNG path (default docs/precision-<device>.png)"
    )
    parser.add_argument(
        "--price-per-hour",
        type=float,
        default=None,
        help="machine price in $/h (default: 2.50 for cuda, 0.10 for cpu)",
    )
    args = parser.parse_args()
    data = load(args.results)
    price = args.price_per_hour or DEFAULT_PRICE_PER_HOUR[data["device"]]
    root = Path(__file__).resolve().parents[1]
    out = Path(args.out) if args.out else root / "docs" / f"precision-{data['device']}.png"
    plot(data, out)
    print(f"<!-- generated by benchmarks/plot_precision.py from {', '.join(args.results)} -->\n")
    print(f"Assumed machine price: ${price:.2f} per hour.\n")
    print(speed_table(data, price), end="\n\n")
    print(quality_table(data), end="\n\n")
    print(target_check(data))
    print(f"\nplot: {out}")


if __name__ == "__main__":
    main()
