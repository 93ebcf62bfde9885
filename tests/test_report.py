"""Tests of dgan.report: one self-contained, escaped HTML file with valid embedded PNGs."""

from __future__ import annotations

import base64
import copy
import functools
import importlib
import io
from html.parser import HTMLParser

import matplotlib
import matplotlib.image
import numpy as np
import pytest
import torch

from dgan import DGAN, ProgressInfo
from dgan.errors import ParameterError
from dgan.metrics import METRIC_DESCRIPTIONS, SeriesData, marginal_distances
from dgan.precision import Precision, fallback_precision
from dgan.report import render_report, write_report
from tiny import tiny_config

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DATA_PNG = "data:image/png;base64,"


class _Page(HTMLParser):
    """Collects image sources, table rows (cell texts) and all visible text."""

    def __init__(self, document: str):
        super().__init__(convert_charrefs=True)
        self.images: list[str] = []
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self.tags: set[str] = set()
        self._cell: list[str] | None = None
        self.feed(document)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


@functools.cache
def _trained_history(mixed: bool) -> list[dict]:
    """The history of a real tiny training: fp32, or fp16 with a divergence at epoch 3.

    In the mixed run a callback poisons a generator weight with NaN in epoch 3; the
    guard rolls back and continues in the next safer precision.
    """
    rng = np.random.default_rng(0)
    model = DGAN(tiny_config(epochs=6, log_every=1, precision="fp16" if mixed else "fp32"))

    def poison(info: ProgressInfo) -> None:
        if mixed and info.epoch == 3 and info.batch == 0:
            with torch.no_grad():
                next(model.generator.parameters()).fill_(float("nan"))

    model.train_numpy(rng.normal(size=(16, 6, 1)), progress_callback=poison, progress_bar=False)
    return model.history


def _history(mixed: bool = True) -> list[dict]:
    return copy.deepcopy(_trained_history(mixed))


def _decode_png(src: str) -> np.ndarray:
    assert src.startswith(DATA_PNG)
    raw = base64.b64decode(src[len(DATA_PNG) :], validate=True)
    assert raw.startswith(PNG_SIGNATURE)
    return matplotlib.image.imread(io.BytesIO(raw), format="png")


def test_report_is_one_file_of_valid_embedded_pngs(metrics_toy_evaluation, tmp_path):
    real, synthetic, metrics = metrics_toy_evaluation
    path = write_report(tmp_path / "out" / "report.html", real, synthetic, metrics, _history())
    assert path == tmp_path / "out" / "report.html" and path.is_file()
    page = _Page(path.read_text(encoding="utf-8"))
    # samples, samples by 'kind', feature distributions, autocorrelation, attributes, training
    assert len(page.images) == 6
    for src in page.images:
        image = _decode_png(src)
        assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50
    assert not page.tags & {"script", "link", "iframe"}  # self-contained, nothing to fetch


def test_metrics_table_has_every_metric_with_its_reading(metrics_toy_evaluation):
    real, synthetic, metrics = metrics_toy_evaluation
    page = _Page(render_report(real, synthetic, metrics))
    rows = {row[0]: row for row in page.rows if row}
    for name, reading in METRIC_DESCRIPTIONS.items():
        assert name in rows, name
        _, score, baseline, better, verdict, text = rows[name]
        assert float(score.split(" ± ")[0]) == pytest.approx(metrics[name]["score"], rel=1e-3)
        if (metrics[name]["baseline"] or {}).get("score") is not None:
            expected = metrics[name]["baseline"]["score"]
            assert float(baseline.split(" ± ")[0]) == pytest.approx(expected, rel=1e-3)
        assert verdict.startswith(metrics[name]["verdict"])
        assert better == metrics[name]["better"]
        assert text.startswith(reading)


def test_a_metric_that_did_not_apply_shows_why(metrics_toy_evaluation):
    real, synthetic, metrics = metrics_toy_evaluation
    metrics = copy.deepcopy(metrics)
    metrics["feature_correlation"] = {"score": None, "better": "lower", "reason": "Needs two."}
    rows = {row[0]: row for row in _Page(render_report(real, synthetic, metrics)).rows if row}
    assert rows["feature_correlation"][1] == "n/a"
    assert rows["feature_correlation"][4] == "not computed: Needs two."


def test_user_strings_are_escaped():
    rng = np.random.default_rng(0)
    features = np.empty((12, 6, 2), dtype=object)
    features[..., 0] = rng.normal(size=(12, 6))
    features[..., 1] = rng.choice(np.array(["<b>bold</b>", "$x$"], dtype=object), (12, 6))
    data = SeriesData(
        features=list(features),
        feature_names=["<script>alert(1)</script>", "mode & $"],
        feature_discrete=[False, True],
        attributes=np.array([["<i>"], ["a"]] * 6, dtype=object),
        attribute_names=['kind"<'],
        attribute_discrete=[True],
    )
    metrics = {"marginals": marginal_distances(data, data)}  # per-column details
    history = _history()
    history[3]["guard_events"][0]["reason"] = "<script>x</script>"
    document = render_report(data, data, metrics, history, title="<h1>Mine</h1>")
    assert "<script" not in document.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document  # the column name, escaped
    assert "mode &amp; $" in document and "&lt;h1&gt;Mine&lt;/h1&gt;" in document
    page = _Page(document)
    assert "<script>x</script>" in "".join(page.text)  # shown as text, never as markup
    for src in page.images:  # matplotlib rendered "$x$" and friends without failing
        _decode_png(src)


def _tiny() -> SeriesData:
    return SeriesData.from_arrays(np.random.default_rng(0).normal(size=(6, 5, 1)))


def test_training_section_shows_precision_events_and_tolerates_plain_history():
    real = synthetic = _tiny()
    metrics = {}
    history = _history(mixed=True)
    mixed = _Page(render_report(real, synthetic, metrics, history))
    text = "".join(mixed.text)
    after = fallback_precision(Precision.FP16, torch.device("cpu")).value
    # The divergence happened in epoch 3, which ends in the safer precision.
    assert f"Precision: fp16 (epochs 0–2); {after} (epochs 3–5)" in text
    step = history[3]["guard_events"][0]["step"]
    action = f"rolled back and continued in {after}"
    assert ["3", str(step), "non-finite weights", action] in mixed.rows
    plain = _Page(render_report(real, synthetic, metrics, _history(mixed=False)))
    assert "Training" in plain.text
    assert "Precision guard events" not in plain.text
    assert len(plain.images) == len(mixed.images)  # one training figure either way
    without = _Page(render_report(real, synthetic, metrics))
    assert "Training" not in without.text and len(without.images) == len(mixed.images) - 1


def test_report_leaves_backend_and_inputs_alone(metrics_toy_evaluation):
    _, _, metrics = metrics_toy_evaluation
    real = synthetic = _tiny()
    backend = matplotlib.get_backend()
    before = copy.deepcopy((metrics, real.attributes, [x.copy() for x in real.features]))
    history = _history()
    history_before = copy.deepcopy(history)
    render_report(real, synthetic, metrics, history)
    assert matplotlib.get_backend() == backend
    assert history == history_before and metrics == before[0]
    np.testing.assert_array_equal(real.attributes, before[1])
    for x, y in zip(real.features, before[2], strict=True):
        np.testing.assert_array_equal(x, y)


def test_report_without_attributes_or_continuous_features():
    features = np.array([["on", "off", "on"]] * 8, dtype=object)[..., None]  # (8, 3, 1)
    data = SeriesData.from_arrays(features, feature_names=["switch"])
    page = _Page(render_report(data, data, {}))
    assert len(page.images) == 2  # samples and distributions; no autocorrelation, attributes
    assert "No metrics were given." in page.text


def test_bad_history_is_rejected_with_the_fix(metrics_toy_evaluation):
    real, synthetic, metrics = metrics_toy_evaluation
    with pytest.raises(ParameterError, match="history\\[1\\] is not a dict with an 'epoch'"):
        render_report(real, synthetic, metrics, [{"epoch": 0}, {"loss": 1.0}])
    with pytest.raises(ParameterError, match="metrics must be the dict"):
        render_report(real, synthetic, [metrics])


def test_real_fp16_training_gets_a_loss_scale_panel(metrics_toy_evaluation, monkeypatch):
    """The panel reads the fields training writes (it once looked for a key nobody wrote)."""
    import dgan.report.training as report

    drawn = []
    for name in ("plot_loss_scale", "plot_skipped", "plot_losses"):
        original = getattr(report, name)
        monkeypatch.setattr(
            report, name, lambda ax, e, r, _f=original, _n=name: (drawn.append(_n), _f(ax, e, r))
        )
    real, synthetic, metrics = metrics_toy_evaluation
    render_report(real, synthetic, metrics, _history(mixed=True))
    assert "plot_loss_scale" in drawn
    drawn.clear()
    render_report(real, synthetic, metrics, _history(mixed=False))
    assert drawn == ["plot_losses"]  # fp32: no loss-scale and no all-zero skipped panel


# ------------------------------------------------------------- what a reader compares


def _figures(monkeypatch) -> dict:
    """Every figure the report embeds, by its alt text (filled as the report renders)."""
    import dgan.report.samples as samples
    import dgan.report.sections as sections
    import dgan.report.training as training

    figures = {}
    for module in (samples, sections, training):
        original = module.img
        monkeypatch.setattr(
            module,
            "img",
            lambda fig, alt, _o=original: (figures.__setitem__(alt, fig), _o(fig, alt))[1],
        )
    return figures


def _classes(n: int = 30, scale: float = 1.0) -> SeriesData:
    """Series whose level is set by their class: 'low' about 0, 'mid' 10, 'high' 20."""
    rng = np.random.default_rng(1)
    kinds = np.array(["low", "mid", "high"], dtype=object)[np.arange(n) % 3]
    level = {"low": 0.0, "mid": 10.0, "high": 20.0}
    features = np.stack([scale * level[k] + rng.normal(size=(8, 1)) for k in kinds])
    return SeriesData.from_arrays(
        features, kinds[:, None], feature_names=["level"], attribute_names=["kind"]
    )


def test_real_and_synthetic_sample_panels_share_their_scale(monkeypatch):
    figures = _figures(monkeypatch)
    real, synthetic = _classes(), _classes(scale=2.5)  # synthetic peaks far above real
    render_report(real, synthetic, {})
    left, right = figures["sample real and synthetic series per feature"].axes[:2]
    assert left.get_ylim() == right.get_ylim()
    assert left.get_ylim()[1] > 45  # the synthetic peak (50) is on the real panel's scale


def test_samples_are_grouped_by_the_attribute_tstr_predicts(monkeypatch):
    figures = _figures(monkeypatch)
    real = _classes()
    page = render_report(real, real, {"tstr": {"score": 0.9, "target": "kind"}})
    assert "<h2>Sample series by kind</h2>" in page
    axes = [ax for ax in figures["sample series by kind"].axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [  # a row per class: real beside synthetic
        f"{kind}, {side}" for kind in ("high", "low", "mid") for side in ("real", "synthetic")
    ]
    for k, level in enumerate((20.0, 0.0, 10.0)):
        pair = axes[2 * k : 2 * k + 2]
        for ax in pair:
            lines = [line.get_ydata() for line in ax.get_lines()]
            assert len(lines) == 3  # 3 series of that class, per side
            assert all(abs(np.mean(y) - level) < 3 for y in lines)
        assert pair[0].get_ylim() == pair[1].get_ylim()  # real and synthetic: one scale
    assert axes[2].get_ylim()[1] < 10 < axes[0].get_ylim()[0]  # each class its own scale


def test_the_throughput_curve_has_its_own_colour_in_the_legend(monkeypatch):
    figures = _figures(monkeypatch)
    render_report(_tiny(), _tiny(), {}, _history(mixed=False))
    fig = figures["training curves"]
    entries = {
        t.get_text(): h.get_color()
        for t, h in zip(fig.legends[0].texts, fig.legends[0].legend_handles, strict=True)
    }
    assert "throughput" in entries and "generator" in entries
    assert len(set(map(matplotlib.colors.to_hex, entries.values()))) == len(entries)
    drawn = fig.axes[1].get_lines()[0].get_color()
    assert matplotlib.colors.to_hex(drawn) == matplotlib.colors.to_hex(entries["throughput"])


@pytest.mark.parametrize("width", [1, 2])  # the training figure, and a single panel
def test_every_legend_entry_lies_inside_its_figure(monkeypatch, width):
    """Issue 31: a one-row legend wider than its figure was cut at both ends
    ("...scriminator"). Seven entries: the four losses, a loss spike, a guard event, the
    throughput; measured where matplotlib draws them."""
    from dgan.report.figures import figure, figure_legend

    history = [
        {"epoch": e, "generator_loss": 1.0, "discriminator_loss": -0.5,
         "attribute_discriminator_loss": -0.2, "gradient_penalty": 0.05,
         "examples_per_s": 900.0}
        for e in range(40)
    ]  # fmt: skip
    history[30]["generator_loss"] = 9.0
    history[20]["guard_events"] = [
        {"epoch": 20, "step": 5, "reason": "x", "precision": "fp16", "action": "y"}
    ]
    figures = _figures(monkeypatch)
    render_report(_tiny(), _tiny(), {}, history)
    fig = figures["training curves"]
    if width == 1:  # the same entries over one narrow panel: more rows
        fig, (ax,) = figure(1, legend=True)
        for label in [t.get_text() for t in figures["training curves"].legends[0].texts]:
            ax.plot([0, 1], [0, 1], label=label)
        figure_legend(fig, ax)
    fig.canvas.draw()
    legend = fig.legends[0]
    assert len(legend.texts) == 7
    canvas = fig.bbox
    for text_box in [t.get_window_extent() for t in legend.texts]:
        assert canvas.x0 <= text_box.x0 and text_box.x1 <= canvas.x1, text_box
        assert text_box.y1 <= canvas.y1
    panels_top = max(ax.get_window_extent().y1 for ax in fig.axes if ax.get_visible())
    assert legend.get_window_extent().y0 > panels_top  # above the panels, not over them


def test_a_metric_without_a_score_in_some_seeds_says_how_many(monkeypatch):
    from dgan.metrics import evaluate

    evaluate_module = importlib.import_module("dgan.metrics.evaluate")  # not the function

    def discriminative(real, synthetic, *, seed, n_seeds, max_examples):
        if seed == 1:
            return {"score": None, "better": "lower", "reason": "None right."}
        return {"score": 0.1, "better": "lower", "accuracy": 0.6}

    monkeypatch.setattr(evaluate_module, "discriminative_score", discriminative)
    data = _classes()
    metrics = evaluate(data, data, n_seeds=3, baseline=False)
    reason = metrics["discriminative"]["reason"]
    assert reason == (
        "1 of 3 seeds gave no score (see per_seed), so there is no mean over the seeds. "
        "That seed: None right."
    )
    rows = {row[0]: row for row in _Page(render_report(data, data, metrics)).rows if row}
    assert rows["discriminative"][4] == f"not computed: {reason}"


@pytest.mark.parametrize("verdict", ["noticeably different", "far from real", "close to real"])
def test_a_verdict_short_of_close_to_real_says_what_to_try(verdict):
    from dgan.cli.summary import metrics_table

    metrics = {"verdict": {"verdict": verdict, "counted": ["marginals"], "n_seeds": 3}}
    page, table = render_report(_tiny(), _tiny(), metrics), metrics_table(metrics)
    advice = "What to try: a longer training budget (--training-steps or --training-minutes"
    for text in (page, table):
        assert (advice in text) == (verdict != "close to real"), text
