"""Figures for the report: the object API only, never pyplot's global state.

Every figure is a matplotlib `Figure` on the Agg canvas, embedded as a base64 PNG at
`DPI` dots per inch (sharp when the page shows it at full width). Legends sit above the
panels, outside the data, in as many rows as fit the figure's width, built from patches
in exactly the colours and transparency of what they label. Values spanning orders of
magnitude go on an asinh scale (`asinh_width`). `natural_order` sorts category labels as
people expect them.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

REAL_COLOR, SYNTHETIC_COLOR = "#1f77b4", "#ff7f0e"
FILL_ALPHA = 0.45
"""Transparency of filled histograms; their legend swatches use the same."""
PANEL_SIZE = (5.6, 3.4)  # inches per subplot: two a row fill a page (1,075 CSS pixels)
DPI = 150
DECADES = 3
"""Values whose magnitudes span this many powers of ten are drawn on an asinh scale."""
_LEGEND_HEIGHT = 0.35  # inches reserved above the panels for a figure legend's first row
_LEGEND_ROW = 0.25  # inches each further row of a legend takes
_LEGEND_FONT = 10.0  # points ("medium")


def figure(
    n_panels: int,
    n_columns: int = 2,
    legend: bool = False,
    panel: tuple[float, float] = PANEL_SIZE,
) -> tuple[Figure, list[Axes]]:
    """A figure of ``n_panels`` subplots, ``n_columns`` a row, each ``panel`` inches, with
    room for a legend on top."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n_columns = min(n_columns, n_panels)
    n_rows = math.ceil(n_panels / n_columns)
    top_room = 0.35 + (_LEGEND_HEIGHT if legend else 0.0)
    width, height = panel[0] * n_columns, panel[1] * n_rows + top_room
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)  # attaches itself to the figure
    # Fixed margins in inches rather than a layout engine, which would cost a second draw
    # (half the report's time); they fit titles, tick labels and rotated category names.
    fig.subplots_adjust(
        left=0.6 / width,
        right=1 - 0.15 / width,
        bottom=0.8 / height,
        top=1 - top_room / height,
        wspace=0.3,
        hspace=0.55,
    )
    axes = fig.subplots(n_rows, n_columns, squeeze=False).ravel().tolist()
    for unused in axes[n_panels:]:
        unused.set_visible(False)
    return fig, axes[:n_panels]


def side_legend(fig: Figure, filled: bool) -> None:
    """One legend for the whole figure, above the panels: real and synthetic swatches."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if filled:
        handles = [
            Patch(facecolor=color, alpha=FILL_ALPHA, edgecolor="none", label=label)
            for color, label in ((REAL_COLOR, "real"), (SYNTHETIC_COLOR, "synthetic"))
        ]
    else:
        handles = [
            Line2D([], [], color=color, lw=2, label=label)
            for color, label in ((REAL_COLOR, "real"), (SYNTHETIC_COLOR, "synthetic"))
        ]
    _legend(fig, handles, [h.get_label() for h in handles])


def figure_legend(fig: Figure, axes: Axes | Sequence[Axes]) -> None:
    """The figure's legend above the panels, from the labelled artists of ``axes``."""
    handles, labels = [], []
    for ax in [axes] if not isinstance(axes, Sequence) else axes:
        more = ax.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    if handles:
        _legend(fig, handles, labels)


def _legend(fig: Figure, handles: list, labels: list[str]) -> None:
    """A legend above the panels in as many rows as it needs to fit the figure's width
    (one would be cut at both ends: "...scriminator"); the figure grows to hold them."""
    ncols = legend_columns(labels, fig.get_size_inches()[0])
    rows = math.ceil(len(labels) / ncols)
    if rows > 1:
        _grow_top(fig, (rows - 1) * _LEGEND_ROW)
    fig.legend(handles, labels, loc="upper center", ncols=ncols, frameon=False,
               fontsize=_LEGEND_FONT)  # fmt: skip


def legend_columns(labels: Sequence[str], width: float) -> int:
    """The most columns a legend of ``labels`` can have within ``width`` inches.

    An estimate, as measuring text needs a draw: a character is 0.6 em at most, an entry
    adds 4.8 em (its line, the padding and the space between columns); matplotlib fills
    the columns in order, splitting the entries as evenly as it can.

    Example:
        >>> labels = ["discriminator", "attribute discriminator", "generator",
        ...           "gradient penalty", "throughput", "loss spike", "guard event"]
        >>> legend_columns(labels, 8.4), legend_columns(labels, 30), legend_columns(["a"], 1)
        (4, 7, 1)
    """
    em = _LEGEND_FONT / 72  # inches
    for ncols in range(len(labels), 1, -1):
        chunks = [c for c in _split(list(labels), ncols) if c]
        needed = sum((0.6 * max(len(label) for label in c) + 4.8) * em for c in chunks)
        if needed <= 0.95 * width:
            return ncols
    return 1


def _split(items: list, parts: int) -> list[list]:
    """``items`` in ``parts`` runs whose lengths differ by at most one, longer ones first
    (as `numpy.array_split` splits, and so matplotlib fills a legend's columns)."""
    size, extra = divmod(len(items), parts)
    bounds = np.cumsum([0] + [size + (k < extra) for k in range(parts)])
    return [items[a:b] for a, b in itertools.pairwise(bounds)]


def _grow_top(fig: Figure, inches: float) -> None:
    """Make ``fig`` ``inches`` taller at the top, its panels the same size and place."""
    width, height = fig.get_size_inches()
    boxes = [(ax, ax.get_position()) for ax in fig.axes]
    fig.set_size_inches(width, height + inches)
    scale = height / (height + inches)
    for ax, box in boxes:
        ax.set_position([box.x0, box.y0 * scale, box.width, box.height * scale])


def asinh_width(values: np.ndarray) -> float | None:
    """The linear width of an asinh scale for ``values`` when their magnitudes span
    `DECADES` powers of ten or more (the 5th percentile of the nonzero magnitudes: below
    it the scale is linear, above it logarithmic); None when a linear scale shows them.

    On a linear scale such values are a few tall lines over flat ones (an appliance that
    draws 2 W beside one that draws 3 kW).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> asinh_width(rng.normal(size=1000)) is None
        True
        >>> power = np.concatenate([rng.uniform(1, 2, 500), rng.uniform(1000, 3000, 500)])
        >>> round(asinh_width(np.r_[power, np.zeros(100)]), 1)
        1.1
    """
    magnitudes = np.abs(np.asarray(values, dtype=np.float64))
    magnitudes = magnitudes[np.isfinite(magnitudes) & (magnitudes > 0)]
    if magnitudes.size < 2:
        return None
    low, high = np.quantile(magnitudes, [0.05, 0.995])
    return float(low) if high >= 10**DECADES * low else None


def use_asinh(ax: Axes, axis: str, width: float, values: np.ndarray) -> None:
    """Put ``ax``'s ``axis`` ("x" or "y") on an asinh scale of linear width ``width``, its
    ticks at 0 and the powers of ten from ``width`` to the largest of ``values`` (the
    scale's own ticks crowd zero: "0" and "10^-1" print over each other)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    powers = []
    for sign, largest in ((1, finite.max(initial=0.0)), (-1, -finite.min(initial=0.0))):
        if largest > width:
            exponents = range(math.ceil(math.log10(width)), math.floor(math.log10(largest)) + 1)
            powers += [sign * 10.0**k for k in exponents]
    ticks = sorted([0.0, *powers])
    set_scale, target = (ax.set_xscale, ax.xaxis) if axis == "x" else (ax.set_yscale, ax.yaxis)
    set_scale("asinh", linear_width=width)
    target.set_major_locator(FixedLocator(ticks))
    target.set_minor_locator(NullLocator())
    target.set_major_formatter(lambda tick, _: f"{tick:g}")


def img(fig: Figure, alt: str) -> str:
    """An ``<img>`` holding ``fig`` as an embedded PNG."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    # Shown at its size in inches (96 CSS pixels each), shrunk to the page where wider: a
    # row of three panels fills a wide page, a single panel is not blown up.
    width = round(fig.get_size_inches()[0] * 96)
    return f'<img src="data:image/png;base64,{encoded}" width="{width}" alt="{html.escape(alt)}">'


def text(value: Any, limit: int = 40) -> str:
    """A user string made safe for matplotlib: '$' would start mathtext (and can fail)."""
    shown = str(value)
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return shown.replace("$", r"\$")


_MONTHS = "january february march april may june july august september october november december"
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
_CALENDARS = [_MONTHS.split(), _WEEKDAYS.split()]


def natural_order(labels: Sequence[Any]) -> list[int]:
    """Indices that put category ``labels`` in their natural order.

    Numbers by value; month and weekday names (full or three-letter) in calendar order;
    other text by its words and numbers ("day2" before "day10"); missing values last.

    Example:
        >>> labels = ["Sep", "Apr", "May", "Jan"]
        >>> [labels[i] for i in natural_order(labels)]
        ['Jan', 'Apr', 'May', 'Sep']
        >>> labels = ["day10", "day2", "<missing>", "day1"]
        >>> [labels[i] for i in natural_order(labels)]
        ['day1', 'day2', 'day10', '<missing>']
    """
    keys = [_natural_key(label) for label in labels]
    return sorted(range(len(labels)), key=lambda i: keys[i])


def _natural_key(label: Any) -> tuple:
    if label is None or (isinstance(label, float) and math.isnan(label)):
        return (3,)
    if isinstance(label, (int, float)) and not isinstance(label, bool):
        return (0, float(label))
    word = str(label).strip().lower()
    if word.startswith("<missing"):
        return (3,)
    try:
        return (0, float(word))
    except ValueError:
        pass
    for calendar in _CALENDARS:
        for position, name in enumerate(calendar):
            if word in (name, name[:3]):
                return (1, position)
    parts = re.split(r"(\d+)", word)
    return (2, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p))
