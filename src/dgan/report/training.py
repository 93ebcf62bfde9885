"""The report's training section: loss curves with spikes and guard events marked and
explained, throughput, and for mixed precision the loss scale and skipped steps."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dgan.records import EpochRecord, precision_runs, privacy_guarantee, privacy_text
from dgan.report.figures import figure, figure_legend, img

if TYPE_CHECKING:
    from matplotlib.axes import Axes

MAX_GUARD_EVENTS = 50
"""Rows of the precision guard event table."""
SPIKE_WINDOW = 21
"""Epochs around each epoch that set its typical loss (a running median)."""
SPIKE_THRESHOLD = 8.0
"""A loss this many robust standard deviations (1.4826 * MAD) from the running median,
in an epoch of a run of at least `MIN_SPIKE_EPOCHS`, is a spike."""
MIN_SPIKE_EPOCHS = 10
SETTLING_EPOCHS = 5
"""Epochs at the start (at least; 5% of a long run) where no spikes are looked for."""
MAX_SPIKES_LISTED = 10

_LOSSES = (  # field, label, colour (each its own, and none the throughput's)
    ("discriminator_loss", "discriminator", "#1f77b4"),
    ("attribute_discriminator_loss", "attribute discriminator", "#ff7f0e"),
    ("generator_loss", "generator", "#2ca02c"),
    ("gradient_penalty", "gradient penalty", "#9467bd"),
)
_GUARD_COLOR, _SPIKE_COLOR, _THROUGHPUT_COLOR = "#d62728", "#000000", "#7f7f7f"


def series(records: list[EpochRecord], field: str) -> np.ndarray:
    """One record field per epoch as floats; None entries are NaN gaps."""
    values = [getattr(r, field) for r in records]
    return np.array([math.nan if v is None else float(v) for v in values])


def find_spikes(values: np.ndarray) -> list[tuple[int, float, float]]:
    """``(index, value, typical value)`` of each spike in a per-epoch loss series.

    Example:
        >>> losses = np.r_[9.0, 4.0, np.linspace(1.0, 0.8, 30), 5.0, np.linspace(0.8, 0.7, 10)]
        >>> [(i, v) for i, v, _ in find_spikes(losses)]
        [(32, 5.0)]
    """
    n = len(values)
    if n < MIN_SPIKE_EPOCHS:
        return []
    half = SPIKE_WINDOW // 2
    spikes = []
    # The first epochs fall steeply from the initial losses: a start, not a spike.
    for i in range(max(SETTLING_EPOCHS, n // 20), n):
        if not np.isfinite(values[i]):
            continue
        window = values[max(0, i - half) : i + half + 1]
        window = window[np.isfinite(window)]
        median = float(np.median(window))
        spread = 1.4826 * float(np.median(np.abs(window - median)))
        scale = max(spread, 1e-3 * max(abs(median), 1e-6))
        if abs(values[i] - median) > SPIKE_THRESHOLD * scale:
            spikes.append((i, float(values[i]), median))
    return spikes


def training_section(history: list[dict[str, Any]]) -> str:
    records = [EpochRecord.from_dict(entry) for entry in history]
    epochs = series(records, "epoch")
    panels = [plot_losses, plot_throughput]
    scales = ("critic_loss_scale", "generator_loss_scale")
    if any(np.isfinite(series(records, f)).any() for f in scales):
        panels.append(plot_loss_scale)
    if any(r.skipped_steps for r in records):  # an all-zero panel says nothing
        panels.append(plot_skipped)
    fig, axes = figure(len(panels), n_columns=2, legend=True)
    for ax, plot in zip(axes, panels, strict=True):
        plot(ax, epochs, records)
        mark_precision_events(ax, epochs, records)
        ax.set_xlabel("epoch", fontsize="small")
    figure_legend(fig, axes[:2])  # the losses and the throughput, each in its colour
    guarantee = privacy_guarantee(history)
    privacy = "" if guarantee is None else f"<p>{html.escape(privacy_text(guarantee))}</p>\n"
    return (
        "<h2>Training</h2>\n"
        + privacy
        + precision_summary(records)
        + img(fig, "training curves")
        + "\n"
        + _spike_note(records)
        + guard_event_table(records)
    )


def _all_spikes(records: list[EpochRecord]) -> list[tuple[str, int, float, float]]:
    found = []
    for field, label, _ in _LOSSES:
        for i, value, typical in find_spikes(series(records, field)):
            found.append((label, records[i].epoch, value, typical))
    return sorted(found, key=lambda s: s[1])


def plot_losses(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    for field, label, color in _LOSSES:
        values = series(records, field)
        if np.isfinite(values).any():
            ax.plot(epochs, values, label=label, color=color)
            spikes = find_spikes(values)
            if spikes:
                index = [i for i, _, _ in spikes]
                ax.plot(epochs[index], values[index], "x", color=_SPIKE_COLOR, ms=7, mew=2)
    if _all_spikes(records):
        ax.plot([], [], "x", color=_SPIKE_COLOR, ms=7, mew=2, label="loss spike")
    if any(r.guard_events for r in records):
        ax.plot([], [], ls=":", color=_GUARD_COLOR, label="guard event")
    ax.set_title("losses", fontsize="medium")


def plot_throughput(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    ax.plot(epochs, series(records, "examples_per_s"), color=_THROUGHPUT_COLOR, label="throughput")
    ax.set_title("throughput (examples/s)", fontsize="medium")
    ax.set_ylim(bottom=0)


def plot_loss_scale(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    positive = True
    for field, label, color in (
        ("critic_loss_scale", "critics", "#9467bd"),
        ("generator_loss_scale", "generator", "#8c564b"),
    ):
        scale = series(records, field)
        ax.plot(epochs, scale, color=color, marker=".", label=f"{label} loss scale")
        positive &= bool((scale[np.isfinite(scale)] > 0).all())
    if positive:
        ax.set_yscale("log", base=2)
    ax.set_title("loss scale (fp16)", fontsize="medium")
    ax.legend(fontsize="small", frameon=False, loc="best")


def plot_skipped(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    ax.bar(epochs, series(records, "skipped_steps"), color=_GUARD_COLOR)
    ax.set_title("skipped optimizer steps", fontsize="medium")


def mark_precision_events(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    """Dotted red lines at epochs with guard events; dashed grey where precision changes."""
    for epoch, record in zip(epochs, records, strict=True):
        if record.guard_events:
            ax.axvline(epoch, color=_GUARD_COLOR, ls=":", lw=1.2)
    for k in range(1, len(records)):
        if records[k].precision != records[k - 1].precision:
            ax.axvline(epochs[k], color="#555", ls="--", lw=1)


def precision_summary(records: list[EpochRecord]) -> str:
    runs = precision_runs(records)
    text = "; ".join(
        f"{html.escape(str(p))} (epochs {html.escape(str(a))}–{html.escape(str(b))})"
        for p, a, b in runs
    )
    return (
        f'<p class="note">Precision: {text}. Dashed lines mark precision changes, dotted red '
        "lines epochs with guard events, black crosses loss spikes.</p>\n"
    )


def _spike_note(records: list[EpochRecord]) -> str:
    spikes = _all_spikes(records)
    if not spikes:
        return ""
    items = "".join(
        f"<li>epoch {html.escape(str(epoch))}: {html.escape(label)} loss {value:.4g} "
        f"(typical {typical:.4g})</li>"
        for label, epoch, value, typical in spikes[:MAX_SPIKES_LISTED]
    )
    if len(spikes) > MAX_SPIKES_LISTED:
        items += f"<li>... and {len(spikes) - MAX_SPIKES_LISTED} more</li>"
    last = max(r.epoch for r in records)
    late = any(epoch >= last - max(2, len(records) // 20) for _, epoch, _, _ in spikes)
    advice = (
        " One is near the end of training, so the saved model may come from an unsettled "
        "moment: compare the sample series above with the real ones, train a few more "
        "epochs, or lower the learning rates."
        if late
        else ""
    )
    return (
        '<p class="warning">Loss spikes: a loss jumped far from its running median (more '
        f"than {SPIKE_THRESHOLD:g} robust standard deviations over {SPIKE_WINDOW} epochs). "
        "In a GAN this means the critic or the generator briefly won; training usually "
        f"recovers.{advice}</p>\n<ul>{items}</ul>\n"
    )


def guard_event_table(records: list[EpochRecord]) -> str:
    events = [event for record in records for event in record.guard_events]
    if not events:
        return ""
    rows = [
        "<tr>"
        + "".join(
            f"<td>{html.escape(str(v))}</td>"
            for v in (event.epoch, event.step, event.reason, event.action)
        )
        + "</tr>"
        for event in events[:MAX_GUARD_EVENTS]
    ]
    more = len(events) - MAX_GUARD_EVENTS
    note = f'<p class="note">... and {more} more events.</p>' if more > 0 else ""
    return (
        "<h3>Precision guard events</h3>\n"
        '<p class="note">The divergence guard found NaN or infinite losses or weights, '
        "rolled the model back to its last good state and continued (in a safer precision "
        "where one was left). The epochs are marked with dotted red lines above.</p>\n"
        "<table>\n<tr><th>Epoch</th><th>Step</th><th>Reason</th><th>Action</th></tr>\n"
        + "\n".join(rows)
        + f"\n</table>\n{note}"
    )
