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

MAX_EVENTS_SHOWN = 5
"""`training_summary` lists at most this many guard events (the report lists all)."""


def training_summary(history: Sequence[dict[str, Any]], seconds: float) -> str:
    """Time, throughput, precision in effect and guard events of a training run.

    ``history`` is ``DGAN.history`` (one dict per epoch) of that run; ``seconds`` its
    wall time. Throughput leaves out the first epoch, which pays for one-off setup.
    """
    history = list(history)
    if not history:
        return f"trained 0 epochs in {seconds:.1f} s"
    steady = history[1:] or history
    epoch_seconds = sum(h["wall_time_s"] for h in steady)
    examples = sum(h["examples_per_s"] * h["wall_time_s"] for h in steady)
    n_series = round(history[-1]["examples_per_s"] * history[-1]["wall_time_s"])
    lines = [
        f"trained {len(history)} epochs on {n_series} series in {seconds:.1f} s "
        f"({examples / max(epoch_seconds, 1e-9):,.0f} examples/s"
        + (" after the first epoch)" if len(history) > 1 else ")"),
        f"precision: {_precision_in_effect(history)}",
    ]
    events = [(h["epoch"], e) for h in history for e in h.get("guard_events") or []]
    lines.append(f"guard events: {len(events) or 'none'}")
    for epoch, event in events[:MAX_EVENTS_SHOWN]:
        lines.append(f"  epoch {epoch}: {_describe_event(event)}")
    if len(events) > MAX_EVENTS_SHOWN:
        lines.append(f"  ... and {len(events) - MAX_EVENTS_SHOWN} more (see the report)")
    return "\n".join(lines)


def _precision_in_effect(history: list[dict[str, Any]]) -> str:
    """ "fp16 (epochs 0-3), fp32 (epochs 4-9)", or one precision when it never changed.

    Histories written without a precision (by a gretel-style caller) count as fp32.
    """
    runs: list[list[Any]] = []  # [precision, first epoch, last epoch]
    for h in history:
        precision = h.get("precision") or "fp32"
        if runs and runs[-1][0] == precision:
            runs[-1][2] = h["epoch"]
        else:
            runs.append([precision, h["epoch"], h["epoch"]])
    if len(runs) == 1:
        return str(runs[0][0])
    return ", ".join(f"{p} (epochs {a}-{b})" for p, a, b in runs)


def _describe_event(event: dict[str, Any]) -> str:
    """``step 120: <reason> -> <action>`` for a guard event."""
    text = str(event.get("reason") or event)
    if "step" in event:
        text = f"step {event['step']}: {text}"
    if event.get("action"):
        text += f" -> {event['action']}"
    return text


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
