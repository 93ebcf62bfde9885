"""The report's sample series: a few real and synthetic series per feature, and per class
of an attribute, side by side. Each section returns an HTML fragment ("" when it would
say nothing).

Real and synthetic series of one feature (and class) share a y-scale, so a synthetic
peak twice the real one shows; classes do not share one, so a class of small values is
not a flat line beside a class a thousand times larger. Where the drawn values span
orders of magnitude the overview is drawn on an asinh scale (`figures.asinh_width`).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np

from dgan.metrics import SeriesData, factorize_pair
from dgan.report.figures import (
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
from dgan.report.sections import MAX_CATEGORIES, MAX_VARIABLES, left_out

if TYPE_CHECKING:
    from matplotlib.axes import Axes

MAX_SERIES_PLOTTED = 5
"""Sample series drawn per side and feature."""
MAX_CLASSES = 12
"""Categories (the most frequent) given a row of samples by class."""
MAX_CLASS_FEATURES = 2
"""Features plotted in the samples by class (each a real and a synthetic panel)."""
MAX_SERIES_PER_CLASS = 3
"""Series per side and category in the samples by class."""
CLASS_ROW_WIDTH = 12.0
"""Inches of a row of the samples by class (about a page: 1,150 CSS pixels)."""
CLASS_PANEL = (5.0, 2.1)
"""Inches of a panel of the samples by class at most (narrower with two features)."""


def _pick(n: int, k: int) -> np.ndarray:
    """Up to k row indices, spread at random but the same for every report of this data."""
    return np.sort(np.random.default_rng(0).permutation(n)[:k])


def samples_section(real: SeriesData, synthetic: SeriesData) -> str:
    """`MAX_SERIES_PLOTTED` series per side and feature, real beside synthetic.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> data = SeriesData.from_arrays(rng.normal(size=(6, 4, 1)))
        >>> "<h2>Sample series</h2>" in samples_section(data, data)
        True
    """
    names = real.feature_names[:MAX_VARIABLES]
    fig, axes = figure(2 * len(names), n_columns=2)
    scaled = []
    for row, name in enumerate(names):
        j = real.feature_names.index(name)
        sides = ((real, "real", REAL_COLOR), (synthetic, "synthetic", SYNTHETIC_COLOR))
        series = [
            [data.features[i][:, j] for i in _pick(data.n_examples, MAX_SERIES_PLOTTED)]
            for data, _, _ in sides
        ]
        series, labels = _as_numbers(series, real.feature_discrete[j])
        pair = axes[2 * row : 2 * row + 2]
        pair[1].sharey(pair[0])  # one scale: a synthetic peak twice the real one shows
        for ax, values, (_, side, color) in zip(pair, series, sides, strict=True):
            _draw_series(ax, values, color, labels)
            ax.set_title(text(f"{name} ({side})"), fontsize="medium")
            ax.set_xlabel("time step", fontsize="small")
        drawn = np.concatenate([*series[0], *series[1], [0.0]])
        width = None if labels else asinh_width(drawn)
        if width is not None:
            use_asinh(pair[0], "y", width, drawn)  # the shared axis: both panels
            scaled.append(name)
    image = img(fig, "sample real and synthetic series per feature")
    return (
        "<h2>Sample series</h2>\n"
        f'<p class="note">{MAX_SERIES_PLOTTED} series per side drawn at random; real (blue) on '
        "the left, synthetic (orange) on the right, on the same scale"
        + _asinh_note(scaled)
        + f".</p>\n{image}\n"
        + left_out(real.feature_names, MAX_VARIABLES, "features")
    )


def _asinh_note(names: list[str]) -> str:
    if not names:
        return ""
    listed = ", ".join(html.escape(str(n)) for n in names)
    return (
        f" ({listed}: values spanning orders of magnitude, on an asinh scale, linear near "
        "zero and logarithmic beyond)"
    )


def _as_numbers(
    series: list[list[np.ndarray]], discrete: bool
) -> tuple[list[list[np.ndarray]], list | None]:
    """Each side's series as numbers to plot: a discrete feature's categories become codes
    in their natural order (bottom to top), returned as the labels of the codes."""
    if not discrete:
        return [[np.asarray(x, dtype=float) for x in side] for side in series], None
    pooled = [np.concatenate(side) if side else np.empty(0, object) for side in series]
    real_codes, synth_codes, labels = factorize_pair(*pooled)
    rank = np.empty(len(labels), dtype=np.int64)
    order = natural_order(labels)
    rank[order] = np.arange(len(labels))
    codes = (real_codes, synth_codes)
    numbers = [_split_like(rank[c], s) for c, s in zip(codes, series, strict=True)]
    return numbers, [labels[i] for i in order]


def _draw_series(ax: Axes, values: list[np.ndarray], color: str, labels: list | None) -> None:
    for x in values:
        ax.plot(
            np.arange(len(x)),
            np.asarray(x, dtype=float),
            color=color,
            alpha=0.7,
            lw=1,
            drawstyle="steps-post" if labels else "default",
        )
    if labels:
        ticks = range(min(len(labels), MAX_CATEGORIES))
        ax.set_yticks(list(ticks), [text(labels[t], 12) for t in ticks])


def _split_like(codes: np.ndarray, series: list[np.ndarray]) -> list[np.ndarray]:
    if not series:
        return []
    return np.split(codes, np.cumsum([len(x) for x in series])[:-1])


def grouping_attribute(real: SeriesData, metrics: dict[str, Any]) -> str | None:
    """The attribute whose categories `samples_by_class_section` groups the samples by:
    the one the TSTR metric predicts, else the first discrete attribute with 2 or more
    categories (None without one).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> data = SeriesData.from_arrays(rng.normal(size=(6, 4, 1)),
        ...                               np.array([["a"], ["b"]] * 3, dtype=object))
        >>> grouping_attribute(data, {})
        'attribute_0'
    """
    target = (metrics.get("tstr") or {}).get("target")
    if target in real.attribute_names:
        return target
    for name, discrete in zip(real.attribute_names, real.attribute_discrete, strict=True):
        if discrete and len(set(map(str, real.attribute_column(name)))) > 1:
            return name
    return None


def samples_by_class_section(
    real: SeriesData, synthetic: SeriesData, metrics: dict[str, Any]
) -> str:
    """Sample series per category of the grouping attribute (`grouping_attribute`): a row
    per category; per feature, its real series beside its synthetic ones on one scale,
    each category on its own. A per-class metric that failed shows here as a class whose
    series differ.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> data = SeriesData.from_arrays(rng.normal(size=(6, 4, 1)),
        ...                               np.array([["a"], ["b"]] * 3, dtype=object))
        >>> "<h2>Sample series by attribute_0</h2>" in samples_by_class_section(data, data, {})
        True
    """
    name = grouping_attribute(real, metrics)
    if name is None:
        return ""
    real_labels = real.attribute_column(name)
    synth_labels = synthetic.attribute_column(name)
    counts: dict[str, int] = {}
    for label in map(str, real_labels):
        counts[label] = counts.get(label, 0) + 1
    common = sorted(counts, key=lambda c: -counts[c])[:MAX_CLASSES]
    classes = [common[i] for i in natural_order(common)]
    features = real.feature_names[:MAX_CLASS_FEATURES]
    columns = 2 * len(features)  # per feature: real, then synthetic
    panel = (min(CLASS_PANEL[0], CLASS_ROW_WIDTH / columns), CLASS_PANEL[1])
    fig, axes = figure(len(classes) * columns, n_columns=columns, legend=True, panel=panel)
    grid = np.array(axes, dtype=object).reshape(len(classes), columns)
    for f, feature in enumerate(features):
        j = real.feature_names.index(feature)
        for row, label in enumerate(classes):
            pair = grid[row, 2 * f : 2 * f + 2]
            pair[1].sharey(pair[0])  # real and synthetic of a class: one scale
            pair[1].sharex(pair[0])
            series = [
                [data.features[i][:, j] for i in _pick_where(labels, label)]
                for data, labels in ((real, real_labels), (synthetic, synth_labels))
            ]
            series, ticks = _as_numbers(series, real.feature_discrete[j])
            for ax, values, side, color in zip(
                pair, series, ("real", "synthetic"), (REAL_COLOR, SYNTHETIC_COLOR), strict=True
            ):
                _draw_series(ax, values, color, ticks)
                what = f"{text(label, 24)}, {side}"
                ax.set_title(what if len(features) == 1 else f"{text(feature, 16)}: {what}",
                             fontsize="medium")  # fmt: skip
            if not series[1]:
                pair[1].text(0.5, 0.5, "no synthetic series", transform=pair[1].transAxes,
                             ha="center", va="center", fontsize="small")  # fmt: skip
    side_legend(fig, filled=False)
    left = [c for c in counts if c not in classes]
    return (
        f"<h2>Sample series by {html.escape(str(name))}</h2>\n"
        f'<p class="note">Up to {MAX_SERIES_PER_CLASS} series per side of each '
        f"{html.escape(str(name))}, a row each: real (blue) beside synthetic (orange) on one "
        "scale; each row has its own scale, so classes of small values show too.</p>\n"
        f"{img(fig, f'sample series by {name}')}\n"
        + left_out([*classes, *left], len(classes), f"values of {name}")
        + left_out(real.feature_names, MAX_CLASS_FEATURES, "features")
    )


def _pick_where(labels: np.ndarray, label: str) -> np.ndarray:
    """Up to `MAX_SERIES_PER_CLASS` rows whose label is ``label`` (as `_pick` draws)."""
    rows = np.flatnonzero(np.array([str(v) == label for v in labels], dtype=bool))
    return rows[_pick(len(rows), MAX_SERIES_PER_CLASS)]
