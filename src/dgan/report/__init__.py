"""A self-contained HTML report comparing real and synthetic data.

One file, no scripts and no external resources: plots are PNGs embedded as base64, and
every user-provided string (column names, categories, history text) is HTML-escaped.
Plotting uses matplotlib's object API (`Figure` + the Agg canvas) and never pyplot, so
the report neither needs a display nor changes the backend a user has chosen.
matplotlib is an optional dependency: ``pip install "dgan[report]"``.

The page reads top down: the verdict first, then the metrics beside their real-vs-real
baselines, sample series, distributions, autocorrelation and training curves. Modules:
`dgan.report.figures` (figures, legends, scales, natural category order),
`dgan.report.samples` (sample series, per feature and per class), `dgan.report.sections`
(verdict, metrics, distributions, autocorrelation) and `dgan.report.training` (the training
section: losses with spikes and guard events marked and explained).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dgan.errors import ParameterError
from dgan.metrics import SeriesData, check_same_columns
from dgan.report.samples import samples_by_class_section, samples_section
from dgan.report.sections import (
    autocorrelation_section,
    distributions_section,
    metrics_section,
    verdict_section,
)
from dgan.report.training import training_section

__all__ = ["render_report", "write_report"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222;
       padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { font-family: monospace; white-space: nowrap; }
td { overflow-wrap: anywhere; }
.note { color: #555; font-size: 0.9em; }
.warning { color: #8a4b00; background: #fff4e0; padding: 0.4em 0.6em; }
.verdict { font-size: 1.4em; padding: 0.5em 0.8em; border-radius: 0.3em; }
.good { background: #e3f4e1; } .fair { background: #fff4d6; } .bad { background: #fbe0de; }
.none { background: #eee; }
.advice { background: #f3f3f3; padding: 0.4em 0.6em; }
td.none { background: none; }
img { max-width: 100%; height: auto; }
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

    The report holds: the overall verdict (and what to try when it is not "close to
    real"); the metrics table (score and spread, the real-vs-real baseline, verdict and a
    plain-language reading of each metric); sample real and synthetic series per feature,
    on one scale, and by category of an attribute (the one TSTR predicts, else the first
    discrete one), real beside synthetic on a scale of each category's own; feature
    distributions (on an asinh scale where values span orders of magnitude, and sequence
    lengths, where they vary); mean
    autocorrelation curves; attribute distributions; and, when
    ``history`` (one dict per epoch, as training returns it) is given, training curves:
    losses with spikes and guard events marked, throughput, and for mixed precision the
    loss scale and skipped steps.

    Example:
        >>> import numpy as np, tempfile, pathlib
        >>> from dgan.metrics import SeriesData, evaluate
        >>> rng = np.random.default_rng(0)
        >>> real = SeriesData.from_arrays(rng.normal(size=(20, 8, 1)))
        >>> synthetic = SeriesData.from_arrays(rng.normal(size=(20, 8, 1)))
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
        >>> write_report(out, real, synthetic, evaluate(real, synthetic, n_seeds=1)).name
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
        verdict_section(metrics),
        f'<p class="note">{_counted(real.n_examples, "real series")} and '
        f"{_counted(synthetic.n_examples, 'synthetic series')}; "
        f"{_counted(len(real.feature_names), 'feature')}, "
        f"{_counted(len(real.attribute_names), 'attribute')}.</p>",
        metrics_section(metrics),
        samples_section(real, synthetic),
        samples_by_class_section(real, synthetic, metrics),
        distributions_section(real, synthetic, "feature"),
        autocorrelation_section(real, synthetic),
        distributions_section(real, synthetic, "attribute"),
    ]
    if history:
        parts.append(training_section(history))
    body = "\n".join(p for p in parts if p)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _counted(n: int, noun: str) -> str:
    """ "1 attribute", "2 attributes"; nouns ending in "series" stay as they are."""
    plural = noun if noun.endswith("series") or n == 1 else noun + "s"
    return f"{n} {plural}"


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
