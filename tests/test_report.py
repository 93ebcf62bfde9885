"""Tests of dgan.report: one self-contained, escaped HTML file with valid embedded PNGs."""

from __future__ import annotations

import base64
import copy
import io
from html.parser import HTMLParser

import matplotlib
import matplotlib.image
import numpy as np
import pytest

from dgan.errors import ParameterError
from dgan.metrics import METRIC_DESCRIPTIONS, SeriesData, marginal_distances
from dgan.report import render_report, write_report

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


def _history(epochs: int = 6, mixed: bool = True) -> list[dict]:
    history = []
    for epoch in range(epochs):
        entry = {
            "epoch": epoch,
            "discriminator_loss": -1.0 / (epoch + 1),
            "attribute_discriminator_loss": None,
            "generator_loss": 0.5,
            "gradient_penalty": 0.1,
            "examples_per_s": 1000.0 + epoch,
            "wall_time_s": float(epoch),
        }
        if mixed:
            entry |= {
                "precision": "fp16" if epoch < 4 else "fp32",
                "loss_scale": 2.0 ** (14 - epoch) if epoch < 4 else None,
                "skipped_steps": epoch % 2,
                "guard_events": (
                    [{"step": 40, "reason": "loss <inf>", "action": "fall back to fp32"}]
                    if epoch == 3
                    else []
                ),
            }
        history.append(entry)
    return history


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
    # samples, feature distributions, autocorrelation, attributes, training
    assert len(page.images) == 5
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
        _, score, better, text = rows[name]
        assert float(score) == pytest.approx(metrics[name]["score"], rel=1e-3)
        assert better == metrics[name]["better"]
        assert text.startswith(reading)


def test_a_metric_that_did_not_apply_shows_why(metrics_toy_evaluation):
    real, synthetic, metrics = metrics_toy_evaluation
    metrics = copy.deepcopy(metrics)
    metrics["feature_correlation"] = {"score": None, "better": "lower", "reason": "Needs two."}
    rows = {row[0]: row for row in _Page(render_report(real, synthetic, metrics)).rows if row}
    assert rows["feature_correlation"][1] == "n/aNeeds two."


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
    mixed = _Page(render_report(real, synthetic, metrics, _history(mixed=True)))
    text = "".join(mixed.text)
    assert "Precision: fp16 (epochs 0–3); fp32 (epochs 4–5)" in text
    assert ["3", "40", "loss <inf>", "fall back to fp32"] in mixed.rows
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
