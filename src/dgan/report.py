"""A self-contained HTML report comparing real and synthetic data.

One file, no scripts and no external resources: plots are PNGs embedded as base64, and
every user-provided string (column names, categories, history text) is HTML-escaped.
Plotting uses matplotlib's object API (`Figure` + the Agg canvas) and never pyplot, so
the report neither needs a display nor changes the backend a user has chosen.
matplotlib is an optional dependency: ``pip install "dgan[report]"``.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dgan.errors import ParameterError
from dgan.metrics import (
    METRIC_DESCRIPTIONS,
    SeriesData,
    check_same_columns,
    factorize_pair,
    mean_autocorrelation,
)
from dgan.records import EpochRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Caps that keep a report fast (seconds) and small whatever the data size.
MAX_SERIES_PLOTTED = 5
"""Sample series drawn per side and feature."""
MAX_VARIABLES = 12
"""Variables plotted per section; the rest are listed as left out."""
MAX_HISTOGRAM_VALUES = 20_000
"""Values per side drawn at random for a histogram."""
MAX_LAGS = 100
"""Autocorrelation lags plotted."""
MAX_CATEGORIES = 15
"""Most frequent categories shown for a discrete variable."""
MAX_GUARD_EVENTS = 50
"""Rows of the precision guard event table."""

REAL_COLOR, SYNTHETIC_COLOR = "#1f77b4", "#ff7f0e"
_PANEL_SIZE = (3.6, 2.5)  # inches per subplot
_DPI = 80

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { font-family: monospace; white-space: nowrap; }
.note { color: #666; font-size: 0.9em; }
img { max-width: 100%; }
details { font-size: 0.85em; }
"""


def write_report(
    path: str | Path,
    real: SeriesData,
    synthetic: SeriesData,
    metrics: dict[str, Any],
    history: list[dict[str, Any]] | None = None,
    title: str = "dgan synthetic data report",
) -> Path:
    """Write the HTML report to ``path`` (parent folders are created); return the path.

    The report holds: the metrics table with a plain-language reading of each metric;
    sample real and synthetic series per feature; feature distributions (and sequence
    lengths); mean autocorrelation curves; attribute distributions; and, when ``history``
    (one dict per epoch, as training returns it) is given, training curves: losses,
    throughput, and for mixed precision the loss scale, skipped steps and guard events.

    Example:
        >>> import numpy as np, tempfile, pathlib
        >>> from dgan.metrics import SeriesData, evaluate
        >>> rng = np.random.default_rng(0)
        >>> real = SeriesData.from_arrays(rng.normal(size=(20, 8, 1)))
        >>> synthetic = SeriesData.from_arrays(rng.normal(size=(20, 8, 1)))
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
        >>> write_report(out, real, synthetic, evaluate(real, synthetic)).name
        'report.html'
    """
    document = render_report(real, synthetic, metrics, history, title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document, encoding="utf-8")
    return path


def render_report(
    real: SeriesData,
    synthetic: SeriesData,
    metrics: dict[str, Any],
    history: list[dict[str, Any]] | None = None,
    title: str = "dgan synthetic data report",
) -> str:
    """The HTML document `write_report` writes, as a string (e.g. for a notebook).

    Example:
        >>> import numpy as np
        >>> from dgan.metrics import SeriesData
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(5, 6, 1)))
        >>> render_report(data, data, metrics={}).startswith("<!DOCTYPE html>")
        True
    """
    check_same_columns(real, synthetic)
    if not isinstance(metrics, dict):
        raise ParameterError(
            f"metrics must be the dict dgan.metrics.evaluate returns, got {type(metrics)}."
        )
    _check_history(history)
    _require_matplotlib()
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="note">{real.n_examples} real and {synthetic.n_examples} synthetic series; '
        f"{len(real.feature_names)} features, {len(real.attribute_names)} attributes.</p>",
        _metrics_section(metrics),
        _samples_section(real, synthetic),
        _distributions_section(real, synthetic, "feature"),
        _autocorrelation_section(real, synthetic),
        _distributions_section(real, synthetic, "attribute"),
    ]
    if history:
        parts.append(_training_section(history))
    body = "\n".join(p for p in parts if p)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


def _check_history(history: Any) -> None:
    if history is None:
        return
    if not isinstance(history, Sequence) or isinstance(history, str):
        raise ParameterError(
            f"history must be a list of per-epoch dicts, got {type(history).__name__}; pass "
            "the history training returns, or None."
        )
    for i, entry in enumerate(history):
        if not isinstance(entry, dict) or "epoch" not in entry:
            raise ParameterError(
                f"history[{i}] is not a dict with an 'epoch' key ({entry!r:.80}); pass the "
                "history training returns (one dict per epoch), or None."
            )


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:  # an optional dependency: say how to get it
        raise ImportError(
            'The HTML report needs matplotlib; install it with pip install "dgan[report]".'
        ) from error


# --------------------------------------------------------------------------------------
# Figures: the object API only, never pyplot's global state
# --------------------------------------------------------------------------------------


def _figure(n_panels: int, n_columns: int = 3) -> tuple[Figure, list[Axes]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n_columns = min(n_columns, n_panels)
    n_rows = math.ceil(n_panels / n_columns)
    width, height = _PANEL_SIZE[0] * n_columns, _PANEL_SIZE[1] * n_rows
    figure = Figure(figsize=(width, height), dpi=_DPI)
    FigureCanvasAgg(figure)  # attaches itself to the figure
    # Fixed margins in inches rather than a layout engine, which would cost a second draw
    # (half the report's time); they fit titles, tick labels and rotated category names.
    figure.subplots_adjust(
        left=0.55 / width,
        right=1 - 0.15 / width,
        bottom=0.75 / height,
        top=1 - 0.3 / height,
        wspace=0.3,
        hspace=0.5,
    )
    axes = figure.subplots(n_rows, n_columns, squeeze=False).ravel().tolist()
    for unused in axes[n_panels:]:
        unused.set_visible(False)
    return figure, axes[:n_panels]


def _img(figure: Figure, alt: str) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(alt)}">'


def _text(value: Any, limit: int = 40) -> str:
    """A user string made safe for matplotlib: '$' would start mathtext (and can fail)."""
    text = str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("$", r"\$")


def _legend(ax: Axes) -> None:
    ax.legend(fontsize="small", frameon=False)


def _left_out(names: Sequence[str], shown: int, what: str) -> str:
    if len(names) <= shown:
        return ""
    rest = ", ".join(html.escape(str(n)) for n in names[shown:])
    return f'<p class="note">Not plotted ({len(names) - shown} more {what}): {rest}.</p>'


# --------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------


def _metrics_section(metrics: dict[str, Any]) -> str:
    names = [n for n in METRIC_DESCRIPTIONS if isinstance(metrics.get(n), dict)]
    names += [
        n for n, v in metrics.items() if n not in names and isinstance(v, dict) and "score" in v
    ]
    if not names:
        return "<h2>Metrics</h2>\n<p>No metrics were given.</p>"
    rows = []
    for name in names:
        entry = metrics[name]
        score = entry.get("score")
        shown = _format(score) if score is not None else "n/a"
        if score is None and entry.get("reason"):
            shown += f'<br><span class="note">{html.escape(str(entry["reason"]))}</span>'
        details = _details(entry)
        rows.append(
            f'<tr><th>{html.escape(name)}</th><td class="num">{shown}</td>'
            f"<td>{html.escape(str(entry.get('better', '')))}</td>"
            f"<td>{html.escape(METRIC_DESCRIPTIONS.get(name, ''))}{details}</td></tr>"
        )
    header = "<tr><th>Metric</th><th>Score</th><th>Better</th><th>Reading</th></tr>"
    return f"<h2>Metrics</h2>\n<table>\n{header}\n" + "\n".join(rows) + "\n</table>"


def _details(entry: dict[str, Any], limit: int = 40) -> str:
    """The metric's other numbers (per feature, baselines...) as a folded list."""
    leaves = [
        (path, value)
        for path, value in _leaves(entry)
        if path not in (("score",), ("better",), ("reason",))
    ]
    if not leaves:
        return ""
    items = [
        f"<li>{html.escape(' / '.join(map(str, path)))}: {_format(value)}</li>"
        for path, value in leaves[:limit]
    ]
    if len(leaves) > limit:
        items.append(f"<li>... {len(leaves) - limit} more</li>")
    return "<details><summary>details</summary><ul>" + "".join(items) + "</ul></details>"


def _leaves(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value):
        return []  # matrices (correlations) are too big for a list; plots show structure
    return [(path, value)]


def _format(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return html.escape(str(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return html.escape(", ".join(_format(v) if isinstance(v, float) else str(v) for v in value))
    return html.escape(str(value))


def _pick(n: int, k: int) -> np.ndarray:
    """Up to k row indices, spread at random but the same for every report of this data."""
    return np.sort(np.random.default_rng(0).permutation(n)[:k])


def _samples_section(real: SeriesData, synthetic: SeriesData) -> str:
    names = real.feature_names[:MAX_VARIABLES]
    figure, axes = _figure(2 * len(names), n_columns=2)
    for row, name in enumerate(names):
        j = real.feature_names.index(name)
        sides = ((real, "real", REAL_COLOR), (synthetic, "synthetic", SYNTHETIC_COLOR))
        series = [
            [data.features[i][:, j] for i in _pick(data.n_examples, MAX_SERIES_PLOTTED)]
            for data, _, _ in sides
        ]
        labels = None
        if real.feature_discrete[j]:
            codes = factorize_pair(np.concatenate(series[0]), np.concatenate(series[1]))
            labels = codes[2]
            series = [_split_like(codes[k], series[k]) for k in range(2)]
        for ax, values, (_, side, color) in zip(
            axes[2 * row : 2 * row + 2], series, sides, strict=True
        ):
            for x in values:
                ax.plot(
                    np.arange(len(x)),
                    np.asarray(x, dtype=float),
                    color=color,
                    alpha=0.7,
                    lw=1,
                    drawstyle="steps-post" if labels else "default",
                )
            ax.set_title(_text(f"{name} ({side})"), fontsize="medium")
            ax.set_xlabel("time step", fontsize="small")
            if labels:
                ticks = range(min(len(labels), MAX_CATEGORIES))
                ax.set_yticks(list(ticks), [_text(labels[t], 12) for t in ticks])
    image = _img(figure, "sample real and synthetic series per feature")
    return (
        "<h2>Sample series</h2>\n"
        f'<p class="note">{MAX_SERIES_PLOTTED} series per side drawn at random; real on the '
        f"left, synthetic on the right.</p>\n{image}\n"
        + _left_out(real.feature_names, MAX_VARIABLES, "features")
    )


def _split_like(codes: np.ndarray, series: list[np.ndarray]) -> list[np.ndarray]:
    return np.split(codes, np.cumsum([len(x) for x in series])[:-1])


def _distributions_section(real: SeriesData, synthetic: SeriesData, what: str) -> str:
    names = getattr(real, f"{what}_names")
    if not names:
        return ""
    shown = names[:MAX_VARIABLES]
    panels = len(shown) + (what == "feature")  # features also show the sequence lengths
    figure, axes = _figure(panels)
    for ax, name in zip(axes, shown, strict=False):
        discrete = getattr(real, f"{what}_discrete")[names.index(name)]
        real_values, synth_values = (_values(data, what, name) for data in (real, synthetic))
        if discrete:
            _bars(ax, real_values, synth_values)
        else:
            _histogram(ax, real_values, synth_values)
        ax.set_title(_text(name), fontsize="medium")
    if what == "feature":
        _histogram(axes[-1], real.lengths, synthetic.lengths, integer=True)
        axes[-1].set_title("sequence length", fontsize="medium")
    heading = "Feature distributions" if what == "feature" else "Attribute distributions"
    note = "All time steps pooled. " if what == "feature" else ""
    return (
        f"<h2>{heading}</h2>\n"
        f'<p class="note">{note}Frequencies normalised per side: real in blue, synthetic '
        f"in orange.</p>\n{_img(figure, heading)}\n" + _left_out(names, MAX_VARIABLES, f"{what}s")
    )


def _values(data: SeriesData, what: str, name: str) -> np.ndarray:
    if what == "feature":
        return np.concatenate(data.feature_column(name))
    return data.attribute_column(name)


def _histogram(ax: Axes, real: np.ndarray, synthetic: np.ndarray, integer: bool = False) -> None:
    rng = np.random.default_rng(0)
    real, synthetic = (
        rng.choice(v, MAX_HISTOGRAM_VALUES, replace=False) if v.size > MAX_HISTOGRAM_VALUES else v
        for v in (np.asarray(real, float), np.asarray(synthetic, float))
    )
    # Bins cover the bulk of both sides, so one wild synthetic outlier cannot squash the plot.
    low, high = np.quantile(np.concatenate([real, synthetic]), [0.005, 0.995])
    if integer:
        low, high = math.floor(low) - 0.5, math.ceil(high) + 0.5
        bins = np.arange(low, high + 1) if high - low <= 60 else 40
    else:
        bins = 40
    value_range = (low, high) if high > low else (low - 0.5, high + 0.5)
    for values, label, color in (
        (real, "real", REAL_COLOR),
        (synthetic, "synthetic", SYNTHETIC_COLOR),
    ):
        ax.hist(
            values,
            bins=bins,
            range=value_range,
            density=True,
            histtype="stepfilled",
            alpha=0.45,
            color=color,
            label=label,
        )
    _legend(ax)


def _bars(ax: Axes, real: np.ndarray, synthetic: np.ndarray) -> None:
    real_codes, synth_codes, labels = factorize_pair(real, synthetic)
    p = np.bincount(real_codes, minlength=len(labels)) / real_codes.size
    q = np.bincount(synth_codes, minlength=len(labels)) / synth_codes.size
    top = np.argsort(-(p + q), kind="stable")[:MAX_CATEGORIES]
    x = np.arange(top.size)
    ax.bar(x - 0.2, p[top], width=0.4, color=REAL_COLOR, label="real")
    ax.bar(x + 0.2, q[top], width=0.4, color=SYNTHETIC_COLOR, label="synthetic")
    ax.set_xticks(x, [_text(labels[c], 12) for c in top], rotation=45, ha="right", fontsize="small")
    ax.set_ylabel("frequency", fontsize="small")
    _legend(ax)


def _autocorrelation_section(real: SeriesData, synthetic: SeriesData) -> str:
    names = [n for n, d in zip(real.feature_names, real.feature_discrete, strict=True) if not d]
    longest = int(max(real.lengths.max(), synthetic.lengths.max()))
    if not names or longest < 2:
        return ""
    lags = min(MAX_LAGS, longest - 1)
    shown = names[:MAX_VARIABLES]
    figure, axes = _figure(len(shown))
    for ax, name in zip(axes, shown, strict=True):
        for data, label, color in (
            (real, "real", REAL_COLOR),
            (synthetic, "synthetic", SYNTHETIC_COLOR),
        ):
            curve = mean_autocorrelation(data.feature_column(name), max_lag=lags)
            ax.plot(np.arange(1, lags + 1), curve, color=color, label=label, marker=".")
        ax.axhline(0.0, color="#999", lw=0.8)
        ax.set_title(_text(name), fontsize="medium")
        ax.set_xlabel("lag", fontsize="small")
        _legend(ax)
    return (
        "<h2>Autocorrelation</h2>\n"
        '<p class="note">Mean over series of each series\' autocorrelation, per continuous '
        f"feature (first {lags} lags).</p>\n{_img(figure, 'mean autocorrelation curves')}\n"
        + _left_out(names, MAX_VARIABLES, "continuous features")
    )


# --------------------------------------------------------------------------------------
# Training history
# --------------------------------------------------------------------------------------

_LOSSES = (
    ("discriminator_loss", "discriminator"),
    ("attribute_discriminator_loss", "attribute discriminator"),
    ("generator_loss", "generator"),
    ("gradient_penalty", "gradient penalty"),
)


def _series(records: list[EpochRecord], field: str) -> np.ndarray:
    """One record field per epoch as floats; None entries are NaN gaps."""
    values = [getattr(r, field) for r in records]
    return np.array([math.nan if v is None else float(v) for v in values])


def _training_section(history: list[dict[str, Any]]) -> str:
    records = [EpochRecord.from_dict(entry) for entry in history]
    epochs = _series(records, "epoch")
    panels = [_plot_losses, _plot_throughput]
    scales = ("critic_loss_scale", "generator_loss_scale")
    if any(np.isfinite(_series(records, f)).any() for f in scales):
        panels.append(_plot_loss_scale)
    if any(r.skipped_steps for r in records):  # an all-zero panel says nothing
        panels.append(_plot_skipped)
    figure, axes = _figure(len(panels), n_columns=2)
    for ax, plot in zip(axes, panels, strict=True):
        plot(ax, epochs, records)
        _mark_precision_events(ax, epochs, records)
        ax.set_xlabel("epoch", fontsize="small")
    return (
        "<h2>Training</h2>\n"
        + _precision_summary(records)
        + _img(figure, "training curves")
        + "\n"
        + _guard_event_table(records)
    )


def _plot_losses(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    for field, label in _LOSSES:
        values = _series(records, field)
        if np.isfinite(values).any():
            ax.plot(epochs, values, label=label)
    ax.set_title("losses", fontsize="medium")
    _legend(ax)


def _plot_throughput(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    ax.plot(epochs, _series(records, "examples_per_s"), color="#2ca02c")
    ax.set_title("throughput (examples/s)", fontsize="medium")
    ax.set_ylim(bottom=0)


def _plot_loss_scale(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    positive = True
    for field, label, color in (
        ("critic_loss_scale", "critics", "#9467bd"),
        ("generator_loss_scale", "generator", "#8c564b"),
    ):
        scale = _series(records, field)
        ax.plot(epochs, scale, color=color, marker=".", label=label)
        positive &= bool((scale[np.isfinite(scale)] > 0).all())
    if positive:
        ax.set_yscale("log", base=2)
    ax.set_title("loss scale (fp16)", fontsize="medium")
    _legend(ax)


def _plot_skipped(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    ax.bar(epochs, _series(records, "skipped_steps"), color="#d62728")
    ax.set_title("skipped optimizer steps", fontsize="medium")


def _mark_precision_events(ax: Axes, epochs: np.ndarray, records: list[EpochRecord]) -> None:
    """Dotted red lines at epochs with guard events; dashed grey where precision changes."""
    for epoch, record in zip(epochs, records, strict=True):
        if record.guard_events:
            ax.axvline(epoch, color="#d62728", ls=":", lw=1)
    for k in range(1, len(records)):
        if records[k].precision != records[k - 1].precision:
            ax.axvline(epochs[k], color="#555", ls="--", lw=1)


def _precision_summary(records: list[EpochRecord]) -> str:
    runs: list[list[Any]] = []  # [precision, first epoch, last epoch]
    for record in records:
        if runs and runs[-1][0] == record.precision:
            runs[-1][2] = record.epoch
        else:
            runs.append([record.precision, record.epoch, record.epoch])
    text = "; ".join(
        f"{html.escape(str(p))} (epochs {html.escape(str(a))}–{html.escape(str(b))})"
        for p, a, b in runs
    )
    return (
        f'<p class="note">Precision: {text}. Dashed lines mark precision changes, dotted red '
        "lines epochs with guard events.</p>\n"
    )


def _guard_event_table(records: list[EpochRecord]) -> str:
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
        "<h3>Precision guard events</h3>\n<table>\n"
        "<tr><th>Epoch</th><th>Step</th><th>Reason</th><th>Action</th></tr>\n"
        + "\n".join(rows)
        + f"\n</table>\n{note}"
    )
