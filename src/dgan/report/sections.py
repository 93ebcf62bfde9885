"""The report's data sections: the verdict and metrics, distributions and autocorrelation
(sample series: `dgan.report.samples`). Each returns an HTML fragment ("" when it would
say nothing)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dgan.metrics import METRIC_DESCRIPTIONS, SeriesData, factorize_pair, mean_autocorrelation
from dgan.metrics.standard_error import shows_sampling_error
from dgan.metrics.verdict import what_to_try
from dgan.report.figures import (
    FILL_ALPHA,
    REAL_COLOR,
    SYNTHETIC_COLOR,
    asinh_width,
    figure,
    img,
    natural_order,
    side_legend,
    text,
    use_asinh,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# Caps that keep a report fast (seconds) and small whatever the data size.
MAX_VARIABLES = 12
"""Variables plotted per section; the rest are listed as left out."""
MAX_HISTOGRAM_VALUES = 20_000
"""Values per side drawn at random for a histogram."""
MAX_LAGS = 100
"""Autocorrelation lags plotted."""
MAX_CATEGORIES = 15
"""Most frequent categories shown for a discrete variable (in their natural order)."""

_VERDICT_CLASS = {
    "close to real": "good",
    "noticeably different": "fair",
    "far from real": "bad",
}


def left_out(names: Sequence[str], shown: int, what: str) -> str:
    if len(names) <= shown:
        return ""
    rest = ", ".join(html.escape(str(n)) for n in names[shown:])
    return f'<p class="note">Not plotted ({len(names) - shown} more {what}): {rest}.</p>'


# ------------------------------------------------------------------- verdict and metrics


def verdict_section(metrics: dict[str, Any]) -> str:
    """The overall verdict, first thing on the page, with what it was based on."""
    overall = metrics.get("verdict")
    if not isinstance(overall, dict) or "verdict" not in overall:
        return ""
    verdict = str(overall["verdict"])
    css = _VERDICT_CLASS.get(verdict, "none")
    counted = ", ".join(map(str, overall.get("counted", []))) or "no metric"
    left = overall.get("left_out") or []
    note = f"Based on {html.escape(counted)}"
    if seeds := int(overall.get("n_seeds") or 0):
        note += f", each over {seeds} seed{'s' if seeds != 1 else ''}"
    note += ", against real data compared with itself (two halves)"
    if left:
        note += f"; not counted: {html.escape(', '.join(map(str, left)))}"
    advice = what_to_try(verdict)
    return (
        f'<p class="verdict {css}">Verdict: <strong>{html.escape(verdict)}</strong></p>\n'
        f'<p class="note">{note}. How verdicts are decided: '
        "<code>python -m pydoc dgan.metrics.verdict</code>.</p>"
        + (f'\n<p class="advice">{html.escape(advice)}</p>' if advice else "")
    )


def metrics_section(metrics: dict[str, Any]) -> str:
    names = [n for n in METRIC_DESCRIPTIONS if isinstance(metrics.get(n), dict)]
    names += [
        n
        for n, v in metrics.items()
        if n not in names and n != "verdict" and isinstance(v, dict) and "score" in v
    ]
    if not names:
        return "<h2>Metrics</h2>\n<p>No metrics were given.</p>"
    rows, warnings = [], []
    for name in names:
        entry = metrics[name]
        score = entry.get("score")
        shown = _spread(score, entry.get("std")) if score is not None else "n/a"
        baseline = entry.get("baseline") or {}
        verdict = str(entry.get("verdict", ""))
        if score is None and entry.get("reason"):
            verdict = f"not computed: {entry['reason']}"
        if entry.get("warning"):
            warnings.append(str(entry["warning"]))
            verdict += " (too little data)"
        css = _VERDICT_CLASS.get(entry.get("verdict"), "none")
        rows.append(
            f'<tr><th>{html.escape(name)}</th><td class="num">{shown}</td>'
            f'<td class="num">{_spread(baseline.get("score"), baseline.get("std"))}</td>'
            f"<td>{html.escape(str(entry.get('better', '')))}</td>"
            f'<td class="{css}">{html.escape(verdict)}</td>'
            f"<td>{html.escape(METRIC_DESCRIPTIONS.get(name, ''))}{_details(entry)}</td></tr>"
        )
    header = (
        "<tr><th>Metric</th><th>Score</th><th>Real vs real</th><th>Better</th>"
        "<th>Verdict</th><th>Reading</th></tr>"
    )
    notes = "".join(f'<p class="warning">{html.escape(w)}</p>' for w in warnings)
    spread = (
        "the one seed's score ± its sampling standard error (one seed has no spread)"
        if shows_sampling_error(metrics)
        else "mean ± standard deviation over seeds"
    )
    return (
        "<h2>Metrics</h2>\n"
        f'<p class="note">Score: {spread}. Real vs real: the same '
        "metric between two random halves of the real data, what real data scores.</p>\n"
        f"<table>\n{header}\n" + "\n".join(rows) + f"\n</table>\n{notes}"
    )


def _spread(score: Any, std: Any) -> str:
    if score is None:
        return ""
    shown = _format(score)
    return shown + (f" ± {std:.2g}" if isinstance(std, float) and std > 0 else "")


def _details(entry: dict[str, Any], limit: int = 40) -> str:
    """The metric's other numbers (per feature, per seed...) as a folded list."""
    hidden = {"score", "better", "reason", "std", "std_from", "baseline", "verdict", "warning"}
    leaves = [(path, value) for path, value in _leaves(entry) if path[0] not in hidden]
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


# ----------------------------------------------------------------------- distributions


def distributions_section(real: SeriesData, synthetic: SeriesData, what: str) -> str:
    names = getattr(real, f"{what}_names")
    if not names:
        return ""
    shown = names[:MAX_VARIABLES]
    # A sequence-length panel only where lengths vary: for fixed-length data it is one bar.
    lengths_vary = what == "feature" and (
        len(set(real.lengths.tolist()) | set(synthetic.lengths.tolist())) > 1
    )
    fig, axes = figure(len(shown) + lengths_vary, legend=True)
    scaled = []
    for ax, name in zip(axes, shown, strict=False):
        discrete = getattr(real, f"{what}_discrete")[names.index(name)]
        real_values, synth_values = (_values(data, what, name) for data in (real, synthetic))
        if discrete:
            _bars(ax, real_values, synth_values)
        elif _histogram(ax, real_values, synth_values):
            scaled.append(name)
        ax.set_title(text(name), fontsize="medium")
    if lengths_vary:
        _histogram(axes[-1], real.lengths, synthetic.lengths, integer=True)
        axes[-1].set_title("sequence length", fontsize="medium")
    side_legend(fig, filled=True)
    heading = "Feature distributions" if what == "feature" else "Attribute distributions"
    note = "All time steps pooled. " if what == "feature" else ""
    if what == "feature" and not lengths_vary:
        note += f"Every series has {int(real.lengths[0])} steps. "
    if scaled:
        note += (
            f"{', '.join(html.escape(str(n)) for n in scaled)}: values spanning orders of "
            "magnitude, on an asinh scale (linear near zero, logarithmic beyond), each bar "
            "its share of the values. "
        )
    return (
        f"<h2>{heading}</h2>\n"
        f'<p class="note">{note}Frequencies normalised per side; categories in their natural '
        f"order.</p>\n{img(fig, heading)}\n" + left_out(names, MAX_VARIABLES, f"{what}s")
    )


def _values(data: SeriesData, what: str, name: str) -> np.ndarray:
    if what == "feature":
        return np.concatenate(data.feature_column(name))
    return data.attribute_column(name)


def _histogram(ax: Axes, real: np.ndarray, synthetic: np.ndarray, integer: bool = False) -> bool:
    """Both sides' histograms in ``ax``; True when drawn on an asinh scale (values that span
    orders of magnitude, whose linear histogram is one bar at zero)."""
    rng = np.random.default_rng(0)
    real, synthetic = (
        rng.choice(v, MAX_HISTOGRAM_VALUES, replace=False) if v.size > MAX_HISTOGRAM_VALUES else v
        for v in (np.asarray(real, float), np.asarray(synthetic, float))
    )
    pooled = np.concatenate([real, synthetic])
    # Bins cover the bulk of both sides, so one wild synthetic outlier cannot squash the plot.
    low, high = np.quantile(pooled, [0.005, 0.995])
    width = None if integer else asinh_width(pooled)
    if width is not None:  # bins of equal width on the asinh scale they are drawn on
        edges = np.linspace(np.arcsinh(low / width), np.arcsinh(high / width), 41)
        bins, value_range = width * np.sinh(edges), None
    elif integer:
        low, high = math.floor(low) - 0.5, math.ceil(high) + 0.5
        bins = np.arange(low, high + 1) if high - low <= 60 else 40
    else:
        bins = 40
    if width is None:
        value_range = (low, high) if high > low else (low - 0.5, high + 0.5)
    for values, color in ((real, REAL_COLOR), (synthetic, SYNTHETIC_COLOR)):
        ax.hist(
            values,
            bins=bins,
            range=value_range,
            # On the asinh scale each bar is its share of the values (a density would
            # shrink the wide bins of large values to nothing).
            density=width is None,
            weights=None if width is None else np.full(values.size, 1 / max(values.size, 1)),
            histtype="stepfilled",
            alpha=FILL_ALPHA,
            color=color,
            edgecolor="none",
        )
    if width is not None:
        use_asinh(ax, "x", width, pooled)
        ax.set_ylabel("share of values", fontsize="small")
    return width is not None


def _bars(ax: Axes, real: np.ndarray, synthetic: np.ndarray) -> None:
    real_codes, synth_codes, labels = factorize_pair(real, synthetic)
    p = np.bincount(real_codes, minlength=len(labels)) / real_codes.size
    q = np.bincount(synth_codes, minlength=len(labels)) / synth_codes.size
    common = np.argsort(-(p + q), kind="stable")[:MAX_CATEGORIES]
    top = np.array([c for c in natural_order(labels) if c in set(common.tolist())], dtype=int)
    x = np.arange(top.size)
    # Same colour and transparency as the histograms, so one legend fits every panel.
    ax.bar(x - 0.2, p[top], width=0.4, color=REAL_COLOR, alpha=FILL_ALPHA)
    ax.bar(x + 0.2, q[top], width=0.4, color=SYNTHETIC_COLOR, alpha=FILL_ALPHA)
    ax.set_xticks(x, [text(labels[c], 12) for c in top], rotation=45, ha="right", fontsize="small")
    ax.set_ylabel("frequency", fontsize="small")


# --------------------------------------------------------------------- autocorrelation


def autocorrelation_section(real: SeriesData, synthetic: SeriesData) -> str:
    names = [n for n, d in zip(real.feature_names, real.feature_discrete, strict=True) if not d]
    longest = int(max(real.lengths.max(), synthetic.lengths.max()))
    if not names or longest < 2:
        return ""
    lags = min(MAX_LAGS, longest - 1)
    shown = names[:MAX_VARIABLES]
    fig, axes = figure(len(shown), legend=True)
    for ax, name in zip(axes, shown, strict=True):
        for data, color in ((real, REAL_COLOR), (synthetic, SYNTHETIC_COLOR)):
            curve = mean_autocorrelation(data.feature_column(name), max_lag=lags)
            ax.plot(np.arange(1, lags + 1), curve, color=color, lw=2, marker=".")
        ax.axhline(0.0, color="#999", lw=0.8)
        ax.set_title(text(name), fontsize="medium")
        ax.set_xlabel("lag", fontsize="small")
    side_legend(fig, filled=False)
    return (
        "<h2>Autocorrelation</h2>\n"
        '<p class="note">Mean over series of each series\' autocorrelation, per continuous '
        f"feature (first {lags} lags).</p>\n{img(fig, 'mean autocorrelation curves')}\n"
        + left_out(names, MAX_VARIABLES, "continuous features")
    )
