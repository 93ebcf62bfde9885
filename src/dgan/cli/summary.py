"""Plain-text summaries for people: of a training run, and of a metrics result.

Example:
    >>> history = [{"epoch": 0, "examples_per_s": 100.0, "wall_time_s": 0.5,
    ...             "precision": "fp32", "guard_events": []}]
    >>> print(training_summary(history, seconds=0.6, n_series=50))
    trained 1 epoch on 50 series in 0.6 s (100 examples/s)
    precision: fp32
    guard events: none
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dgan.metrics import METRIC_DESCRIPTIONS
from dgan.metrics.verdict import what_to_try
from dgan.records import EpochRecord, precision_runs

MAX_EVENTS_SHOWN = 5
"""`training_summary` lists at most this many guard events (the report lists all)."""


def training_summary(
    history: Sequence[dict[str, Any]],
    seconds: float,
    n_series: int,
    first_epoch: int = 0,
    nothing_left: str | None = None,
) -> str:
    """Time, throughput, precision in effect and guard events of a training run.

    ``history`` is ``DGAN.history`` (one dict per epoch) of a model trained on
    ``n_series`` series; this run trained the epochs from ``first_epoch`` on (a resumed
    run: the whole epochs its checkpoint held come before), in ``seconds`` of wall time,
    or nothing, for the reason ``nothing_left`` gives. Throughput leaves out the run's first
    epoch, which pays for one-off setup. Precision and guard events cover the whole history.

    Example (resumed after 1 epoch):
        >>> history = [{"epoch": k, "examples_per_s": 100.0, "wall_time_s": 0.5}
        ...            for k in range(3)]
        >>> print(training_summary(history, 1.1, 50, first_epoch=1).splitlines()[0])
        trained epochs 1-2 (2 epochs) on 50 series in 1.1 s (100 examples/s after the first epoch)
        >>> print(training_summary(history, 0.1, 50, 3, "the budget is trained"))
        nothing left to train: the model had trained 3 epochs (1.5 s of training); the budget is trained
    """  # noqa: E501
    everything = [EpochRecord.from_dict(h) for h in history]
    records = everything[first_epoch:]
    if nothing_left is not None or (not records and first_epoch):
        return (
            f"nothing left to train: the model had trained {_epochs(len(everything))} "
            f"({_epoch_seconds(everything):.1f} s of training); "
            f"{nothing_left or 'a larger --epochs or --training-steps trains further'}"
        )
    if not records:
        return f"trained 0 epochs in {seconds:.1f} s"
    steady = records[1:] or records
    epoch_seconds = _epoch_seconds(steady)
    examples = sum((r.examples_per_s or 0.0) * (r.wall_time_s or 0.0) for r in steady)
    last = records[-1]
    trained = _epochs(len(records))
    if first_epoch:  # resumed: which epochs this run trained
        first, final = records[0].epoch, last.epoch
        which = f"epoch {final}" if first == final else f"epochs {first}-{final}"
        trained = f"{which} ({trained})"
    lines = [
        f"trained {trained} on {n_series} series in {seconds:.1f} s "
        f"({examples / max(epoch_seconds, 1e-9):,.0f} examples/s"
        + (" after the first epoch)" if len(records) > 1 else ")"),
    ]
    if first_epoch:
        lines.append(
            f"resumed after {_epochs(first_epoch)}: {_epochs(len(everything))} in all, "
            f"{_epoch_seconds(everything):.1f} s of training"
        )
    lines.append(f"precision: {_precision_in_effect(everything)}")
    records = everything
    events = [(r.epoch, event) for r in records for event in r.guard_events]
    lines.append(f"guard events: {len(events) or 'none'}")
    for epoch, event in events[:MAX_EVENTS_SHOWN]:
        lines.append(f"  epoch {epoch}: step {event.step}: {event.reason} -> {event.action}")
    if len(events) > MAX_EVENTS_SHOWN:
        lines.append(f"  ... and {len(events) - MAX_EVENTS_SHOWN} more (see the report)")
    return "\n".join(lines)


def _epochs(n: int) -> str:
    return f"{n} epoch" + ("" if n == 1 else "s")


def _epoch_seconds(records: list[EpochRecord]) -> float:
    return sum(r.wall_time_s or 0.0 for r in records)


def _precision_in_effect(records: list[EpochRecord]) -> str:
    """ "fp16 (epochs 0-3), fp32 (epochs 4-9)", or one precision when it never changed."""
    runs = precision_runs(records)
    if len(runs) == 1:
        return str(runs[0][0])
    return ", ".join(f"{p} (epochs {a}-{b})" for p, a, b in runs)


def metrics_table(metrics: dict[str, Any]) -> str:
    """The overall verdict, then one line per metric: score with its spread over seeds, the
    real-vs-real baseline, which way is better and the verdict (or why it was skipped),
    then warnings.

    Example:
        >>> print(metrics_table({
        ...     "marginals": {"score": 0.1234, "std": 0.01, "better": "lower",
        ...                   "baseline": {"score": 0.1, "std": 0.02}, "verdict": "close to real"},
        ...     "tstr": {"score": None, "better": "higher", "reason": "No attributes."},
        ...     "verdict": {"verdict": "close to real", "counted": ["marginals"], "n_seeds": 3}}))
        verdict: close to real (from marginals; 3 seeds; rules: pydoc dgan.metrics.verdict)
        metric            score  real vs real  better  verdict
        tstr                n/a                        No attributes.
        marginals  0.123 ± 0.01  0.1 ± 0.02    lower   close to real
    """
    # Memorisation last, with its own verdict words (it is not part of the fidelity verdict).
    names = [n for n in [*METRIC_DESCRIPTIONS, "memorisation"] if n in metrics]
    lines = []
    overall = metrics.get("verdict")
    if overall:
        counted = ", ".join(overall.get("counted", [])) or "no metric"
        seeds = overall.get("n_seeds")
        lines.append(
            f"verdict: {overall['verdict']} (from {counted}"
            + (f"; {seeds} seeds" if seeds else "")
            + "; rules: pydoc dgan.metrics.verdict)"
        )
        if advice := what_to_try(overall["verdict"]):
            lines.append(advice)
    rows, warnings = [], []
    for name in names:
        entry = metrics[name]
        score = entry.get("score")
        if score is None:  # every cell a string, whatever the entry holds (None included)
            rows.append((name, "n/a", "", "", str(entry.get("reason") or "")))
            continue
        baseline = entry.get("baseline") or {}
        verdict = str(entry.get("verdict") or "")
        if entry.get("warning"):
            warnings.append(entry["warning"])
            verdict += " (too little data)"
        rows.append(
            (
                name,
                _spread(score, entry.get("std")),
                _spread(baseline.get("score"), baseline.get("std")),
                str(entry.get("better") or ""),
                verdict,
            )
        )
    header = ("metric", "score", "real vs real", "better", "verdict")
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(4)]
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1]), row[2].ljust(widths[2])]
        lines.append("  ".join([*cells, row[3].ljust(widths[3]), row[4]]).rstrip())
    lines += [f"warning: {w}" for w in warnings]
    return "\n".join(lines)


def _spread(score: float | None, std: float | None) -> str:
    if score is None:
        return ""
    return f"{score:.3g}" + (f" ± {std:.2g}" if std else "")
