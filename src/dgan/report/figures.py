"""Figures for the report: the object API only, never pyplot's global state.

Every figure is a matplotlib `Figure` on the Agg canvas, embedded as a base64 PNG at
`DPI` dots per inch (sharp when the page shows it at full width). Legends sit above the
panels, outside the data, built from patches in exactly the colours and transparency of
what they label. `natural_order` sorts category labels as people expect them.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

REAL_COLOR, SYNTHETIC_COLOR = "#1f77b4", "#ff7f0e"
FILL_ALPHA = 0.45
"""Transparency of filled histograms; their legend swatches use the same."""
PANEL_SIZE = (4.2, 2.8)  # inches per subplot
DPI = 150
_LEGEND_HEIGHT = 0.35  # inches reserved above the panels for a figure legend


def figure(
    n_panels: int,
    n_columns: int = 3,
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
    fig.legend(handles=handles, loc="upper center", ncols=2, frameon=False, fontsize="medium")


def figure_legend(fig: Figure, axes: Axes | Sequence[Axes]) -> None:
    """The figure's legend above the panels, from the labelled artists of ``axes``."""
    handles, labels = [], []
    for ax in [axes] if not isinstance(axes, Sequence) else axes:
        more = ax.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    if handles:
        fig.legend(handles, labels, loc="upper center", ncols=len(handles), frameon=False)


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
