"""Plain-text summaries for people: of a training run, and of a metrics result.

Example:
    >>> history = [{"epoch": 0, "examples_per_s": 100.0, "wall_time_s": 0.5,
    ...             "precision": "fp32", "guard_events": []}]
    >>> print(training_summary(history, seconds=0.6))
    trained 1 epochs on 50 series in 0.6 s (100 examples/s)
    precision: fp32
    guard events: none
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dgan.metrics import METRIC_DESCRIPTIONS
from dgan.records import EpochRecord

MAX_EVENTS_SHOWN = 5
"""`training_summary` lists at most this many guard events (the report lists all)."""


def training_summary(history: Sequence[dict[str, Any]], seconds: float) -> str:
    """Time, throughput, precision in effect and guard events of a training run.

    ``history`` is ``DGAN.history`` (one dict per epoch) of that run; ``seconds`` its
    wall time. Throughput leaves out the first epoch, which pays for one-off setup.
    """
    records = [EpochRecord.from_dict(h) for h in history]
    if not records:
        return f"trained 0 epochs in {seconds:.1f} s"
    steady = records[1:] or records
    epoch_seconds = sum(r.wall_time_s or 0.0 for r in steady)
    examples = sum((r.examples_per_s or 0.0) * (r.wall_time_s or 0.0) for r in steady)
    last = records[-1]
    n_series = round((last.examples_per_s or 0.0) * (last.wall_time_s or 0.0))
    lines = [
        f"trained {len(records)} epochs on {n_series} series in {seconds:.1f} s "
        f"({examples / max(epoch_seconds, 1e-9):,.0f} examples/s"
        + (" after the first epoch)" if len(records) > 1 else ")"),
        f"precision: {_precision_in_effect(records)}",
    ]
    events = [(r.epoch, event) for r in records for event in r.guard_events]
    lines.append(f"guard events: {len(events) or 'none'}")
    for epoch, event in events[:MAX_EVENTS_SHOWN]:
        lines.append(f"  epoch {epoch}: step {event.step}: {event.reason} -> {event.action}")
    if len(events) > MAX_EVENTS_SHOWN:
        lines.append(f"  ... and {len(events) - MAX_EVENTS_SHOWN} more (see the report)")
    return "\n".join(lines)


def _precision_in_effect(records: list[EpochRecord]) -> str:
    """ "fp16 (epochs 0-3), fp32 (epochs 4-9)", or one precision when it never changed."""
    runs: list[list[Any]] = []  # [precision, first epoch, last epoch]
    for r in records:
        if runs and runs[-1][0] == r.precision:
            runs[-1][2] = r.epoch
        else:
            runs.append([r.precision, r.epoch, r.epoch])
    if len(runs) == 1:
        return str(runs[0][0])
    return ", ".join(f"{p} (epochs {a}-{b})" for p, a, b in runs)


def metrics_table(metrics: dict[str, Any]) -> str:
    """One line per metric: name, headline score, which way is better (or why skipped).

    Example:
        >>> print(metrics_table({"marginals": {"score": 0.1234, "better": "lower"},
        ...                      "tstr": {"score": None, "reason": "No attributes."}}))
        metric         score  better
        tstr             n/a  No attributes.
        marginals      0.123  lower
    """
    names = [n for n in METRIC_DESCRIPTIONS if n in metrics]
    width = max(len("metric"), *(len(n) for n in names)) if names else len("metric")
    lines = [f"{'metric':<{width}}  {'score':>9}  better"]  # .3g needs 9: -0.000123
    for name in names:
        entry = metrics[name]
        score = entry.get("score")
        if score is None:
            lines.append(f"{name:<{width}}  {'n/a':>9}  {entry.get('reason', '')}")
        else:
            lines.append(f"{name:<{width}}  {score:>9.3g}  {entry.get('better', '')}")
    return "\n".join(lines)
