"""The report in a real browser (headless Chromium): it renders something, and every image
decodes. Skipped where no Chromium is installed (Debian: ``apt-get install chromium``)."""

from __future__ import annotations

import io

import matplotlib.image
import numpy as np
import pytest

from browser import find_chromium, images_decoded, page_layout, screenshot
from dgan.metrics import SeriesData
from dgan.report import write_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium)"
)


def test_report_renders_in_chromium_with_every_image_decoded(metrics_toy_evaluation, tmp_path):
    real, synthetic, metrics = metrics_toy_evaluation
    metrics = {**metrics, "tstr": {"score": None, "better": "higher", "reason": "x" * 400}}
    page = write_report(tmp_path / "report.html", real, synthetic, metrics)
    decoded, total, overflowing = images_decoded(CHROMIUM, page)
    assert total >= 4 and decoded == total
    assert not overflowing  # nothing wider than the window: every table and note wraps
    shot = screenshot(CHROMIUM, page, tmp_path / "shot.png", width=1200, height=1600)
    pixels = matplotlib.image.imread(io.BytesIO(shot.read_bytes()), format="png")[..., :3]
    assert pixels.shape[:2] == (1600, 1200)
    assert pixels.std() > 0.05  # not a blank page
    not_white = (pixels < 0.9).any(axis=2)
    assert not_white.mean() > 0.02  # text and plots cover part of the page


def test_a_broken_image_is_caught(metrics_toy_evaluation, tmp_path):
    """The check can fail: a report with a corrupt PNG reads as not fully decoded."""
    real, synthetic, metrics = metrics_toy_evaluation
    page = write_report(tmp_path / "report.html", real, synthetic, metrics)
    text = page.read_text()
    start = text.index("data:image/png;base64,") + len("data:image/png;base64,")
    page.write_text(text[:start] + "AAAA" + text[start + 4 :])
    decoded, total, _ = images_decoded(CHROMIUM, page)
    assert total >= 4 and decoded == total - 1


def _classes(n: int, scale: float) -> SeriesData:
    """Series whose level follows their class ('a' about 0, 'b' 10, 'c' 20), times scale."""
    rng = np.random.default_rng(2)
    kinds = np.array(["a", "b", "c"], dtype=object)[np.arange(n) % 3]
    level = {"a": 0.0, "b": 10.0, "c": 20.0}
    features = np.stack([scale * level[k] + rng.normal(size=(8, 1)) for k in kinds])
    return SeriesData.from_arrays(
        features, kinds[:, None], feature_names=["level"], attribute_names=["kind"]
    )


def _lines(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the pixels of real (blue) and synthetic (orange) lines, as drawn."""
    r, g, b = (pixels[..., k] * 255 for k in range(3))
    return (b > r + 40) & (b > 150) & (g > 100), (r > 200) & (r > b + 80) & (g > 100)


def _tops(pixels: np.ndarray) -> tuple[int, int]:
    """The highest row (smallest y) with real-blue pixels in the left half of a sample
    figure, and with synthetic-orange ones in the right half."""
    blue, orange = _lines(pixels)
    half = pixels.shape[1] // 2
    return int(np.argmax(blue[:, :half].any(axis=1))), int(np.argmax(orange[:, half:].any(axis=1)))


def test_the_rendered_report_shows_shared_scales_and_samples_per_class(tmp_path):
    # Synthetic series peak at 2.5 times the real ones: on one scale the real lines stay low.
    real, synthetic = _classes(30, 1.0), _classes(30, 2.5)
    metrics = {"tstr": {"score": 0.9, "better": "higher", "target": "kind"}}
    page = write_report(tmp_path / "report.html", real, synthetic, metrics)
    layout = page_layout(CHROMIUM, page)
    assert "Sample series by kind" in layout["headings"]
    boxes = {box["alt"]: box for box in layout["boxes"]}
    assert all(box["decoded"] for box in boxes.values())
    height = int(min(layout["height"], 12000))
    shot = screenshot(CHROMIUM, page, tmp_path / "shot.png", width=1200, height=height)
    pixels = matplotlib.image.imread(io.BytesIO(shot.read_bytes()), format="png")[..., :3]

    def crop(alt: str) -> np.ndarray:
        box = boxes[alt]
        x, y, w, h = (round(box[k]) for k in ("x", "y", "w", "h"))
        return pixels[y : y + h, x : x + w]

    samples = crop("sample real and synthetic series per feature")
    real_top, synthetic_top = _tops(samples)
    assert real_top - synthetic_top > 0.2 * samples.shape[0], (real_top, synthetic_top)
    by_class = crop("sample series by kind")
    # Three rows, one per class, each with real and synthetic lines drawn.
    for row in np.array_split(by_class, 3, axis=0):
        blue, orange = _lines(row)
        assert blue.any() and orange.any()
