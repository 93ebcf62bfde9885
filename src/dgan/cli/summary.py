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
from dgan.metrics.standard_error import shows_sampling_error
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
    if last.time_budget_reached:  # which clock: the run's training time, not this process's
        lines.append(
            "stopped at the time budget (--training-minutes), which counts the training time "
            "of the whole run" + (", the epochs before the resume included" if first_epoch else "")
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
    """The overall verdict, then one line per metric: score with its spread over seeds (with
    one seed, its sampling standard error where known, and the verdict line says so), the
    real-vs-real baseline, which way is better and the verdict; then what the scores rest
    on (what tells synthetic series from real ones, TSTR's accuracies, classes generated too
    rarely or below half their share in counts too small to score), why a metric has no
    score or measured nothing, and warnings.

    Example:
        >>> print(metrics_table({
        ...     "marginals": {"score": 0.1234, "std": 0.01, "better": "lower",
        ...                   "baseline": {"score": 0.1, "std": 0.02}, "verdict": "close to real"},
        ...     "tstr": {"score": None, "better": "higher", "reason": "No attributes."},
        ...     "verdict": {"verdict": "close to real", "counted": ["marginals"], "n_seeds": 1}}))
        verdict: close to real (from marginals; 1 seed; rules: pydoc dgan.metrics.verdict)
        metric            score  real vs real  better  verdict
        tstr                n/a                        no score (below)
        marginals  0.123 ± 0.01  0.1 ± 0.02    lower   close to real
        tstr: no score: No attributes.
    """
    # Memorisation last, with its own verdict words (it is not part of the fidelity verdict).
    names = [n for n in [*METRIC_DESCRIPTIONS, "memorisation"] if n in metrics]
    lines = []
    overall = metrics.get("verdict")
    if overall:
        counted = ", ".join(overall.get("counted", [])) or "no metric"
        seeds = overall.get("n_seeds")
        # One seed has no spread: a ± shown then is a sampling error, not a spread over seeds.
        sampled = ", so ± is a sampling standard error" if shows_sampling_error(metrics) else ""
        lines.append(
            f"verdict: {overall['verdict']} (from {counted}"
            + (f"; {seeds} seed{'s' if seeds != 1 else ''}{sampled}" if seeds else "")
            + "; rules: pydoc dgan.metrics.verdict)"
        )
        if advice := what_to_try(overall["verdict"]):
            lines.append(advice)
    rows, notes = [], []
    for name in names:
        entry = metrics[name]
        score = entry.get("score")
        if score is None:  # every cell a string, whatever the entry holds (None included)
            rows.append((name, "n/a", "", "", "no score (below)"))
            notes.append(f"{name}: no score: {entry.get('reason') or 'not computed'}")
            continue
        baseline = entry.get("baseline") or {}
        verdict = str(entry.get("verdict") or "")
        if entry.get("warning"):
            notes.append(f"warning: {entry['warning']}")
            verdict += " (too little data)"
        if entry.get("not_measured"):
            notes.append(f"{name}: not measured: {entry['not_measured']}")
        notes += _details(name, entry)
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
    return "\n".join(lines + notes)


def _details(name: str, entry: dict[str, Any]) -> list[str]:
    """The lines under the table that say what a metric's score rests on."""
    if name == "detection" and entry.get("verdict") not in ("close to real", None):
        telling = [
            f"{t['feature']} (real {_short(t['real_median'])}, "
            f"synthetic {_short(t['synthetic_median'])})"
            for t in (entry.get("telling_features") or [])[:3]
        ]
        lines = [f"detection: what tells them apart most (medians): {'; '.join(telling)}"]
        per_class = (entry.get("per_class") or {}).get("classes") or []
        if per_class:
            worst = ", ".join(f"{c['class']} {c['auc']:.2f}" for c in per_class[:3])
            lines.append(f"detection: hardest hit {entry['per_class']['attribute']}: {worst}")
        return lines
    if name == "class_shapes":
        return _shape_lines(entry)
    if name == "tstr" and entry.get("task") == "classification":
        return [
            f"tstr: accuracy predicting {entry.get('target')!r} of real series: trained on "
            f"synthetic {_short(entry.get('synthetic_accuracy'))}, on real "
            f"{_short(entry.get('real_accuracy'))}, always the most common class "
            f"{_short(entry.get('majority_class_accuracy'))}"
        ]
    if name == "memorisation":
        return _memorisation_lines(entry)
    if name == "classes":
        return _class_lines(entry)
    return []


def _shape_lines(entry: dict[str, Any]) -> list[str]:
    """The class-shape classifier's accuracies, and the classes whose synthetic series it
    names wrong most often: when the metric is not close to real, or a class is named right
    less than half as often as its real series (humidity drawn like irradiance hides in a
    skill that is close overall)."""
    if entry.get("synthetic_accuracy") is None:
        return []
    lines = [
        f"class_shapes: a forest trained on real series' shapes names {entry.get('target')!r} "
        f"right for {_short(entry['synthetic_accuracy'])} of the synthetic series, "
        f"{_short(entry.get('real_accuracy'))} of held-out real ones (always the most common "
        f"class {_short(entry.get('majority_class_accuracy'))})"
    ]
    per_class = (entry.get("per_class") or {}).get("classes") or []
    halved = [
        c for c in per_class
        if c.get("real_accuracy") and c["synthetic_accuracy"] < c["real_accuracy"] / 2
    ]  # fmt: skip
    if halved or (per_class and entry.get("verdict") not in ("close to real", None)):
        worst = "; ".join(
            f"{c['class']} {c['synthetic_accuracy']:.2f}"
            + (f" (real {c['real_accuracy']:.2f})" if c.get("real_accuracy") is not None else "")
            for c in per_class[:3]
        )
        lines.append(f"class_shapes: the classes named right least often against real: {worst}")
    return lines


def _class_lines(entry: dict[str, Any]) -> list[str]:
    """Classes generated below half their real share: measurably, and too few to tell."""

    def shares(rows: list[dict[str, Any]]) -> str:
        return "; ".join(
            f"{c['attribute']}={c['category']} {c['synthetic_share']:.1%} of the synthetic "
            f"series (real {c['real_share']:.1%})"
            for c in rows[:5]
        )

    lines = []
    if entry.get("short"):
        lines.append(f"classes: generated too rarely: {shares(entry['short'])}")
    if entry.get("unsure"):
        lines.append(
            f"classes: below half their real share, but too few series to tell from chance "
            f"(not scored): {shares(entry['unsure'])}; generate more series to tell"
        )
    return lines


def _memorisation_lines(entry: dict[str, Any]) -> list[str]:
    """The copy check in words: what fraction, against what baseline, and what it means."""
    share, n_train = entry.get("score"), entry.get("n_train")
    base = (entry.get("baseline") or {}).get("score")
    if share is None:
        return []
    line = (
        f"memorisation: {share:.1%} of the synthetic series are near-copies of one of the "
        f"{n_train} real series given"
    )
    if base is not None:
        spread = (entry.get("baseline") or {}).get("std") or 0.0
        line += f"; between two halves of the real data {base:.1%} ± {spread:.1%} are"
    verdict = entry.get("verdict")
    if verdict == "some near-copies":
        line += (
            ". A few more than real series are of each other: a generator that learned few "
            "series' shapes well makes some close to one of them. It matters where the "
            "training data is private (share the synthetic data only after looking at them); "
            "more series or a shorter training budget lower it"
        )
    elif verdict == "copies its training data":
        line += (
            ". Far more than real series are of each other: the generator reproduces "
            "training series; do not share this data where the training data is private. "
            "Train on more series or for fewer steps"
        )
    return [
        line + ". It compares with the real table given, not with the series the model "
        "trained on (a model file keeps nothing that identifies them): pass the training "
        "data as REAL."
    ]


def _short(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _spread(score: float | None, std: float | None) -> str:
    if score is None:
        return ""
    # A spread below the score's shown precision is rounding, not spread (was "± 2.8e-17").
    shown = std is not None and std > 1e-6 * max(abs(score), 1e-12)
    return f"{score:.3g}" + (f" ± {std:.2g}" if shown else "")
