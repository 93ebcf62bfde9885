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


def _appliances(n: int, seed: int, gain: float = 1.0) -> SeriesData:
    """Series of three classes 1,000 times apart in scale ('small' about 1, 'medium' 30,
    'large' 1,000), switched on and off, of 40 to 60 steps."""
    rng = np.random.default_rng(seed)
    scale = {"small": 1.0, "medium": 30.0, "large": 1000.0}
    kinds = np.array(list(scale), dtype=object)[np.arange(n) % 3]
    features = []
    for kind in kinds:
        length = int(rng.integers(40, 61))
        on = np.sin(np.arange(length) / rng.uniform(3, 6)) > 0
        features.append((gain * scale[kind] * on * rng.uniform(0.8, 1.2, length))[:, None])
    return SeriesData.from_arrays(
        features, kinds[:, None], feature_names=["power"], attribute_names=["kind"]
    )


def test_classes_1000_times_apart_each_get_a_readable_scale(tmp_path):
    """Issue 31: with one y-scale for all classes, the small classes were flat lines, and
    the pooled histogram was one bar at zero. Checked where the user looks: the page."""
    real, synthetic = _appliances(60, seed=0), _appliances(60, seed=1, gain=1.2)
    metrics = {"tstr": {"score": 0.9, "better": "higher", "target": "kind"}}
    page = write_report(tmp_path / "report.html", real, synthetic, metrics)
    layout = page_layout(CHROMIUM, page)
    boxes = {box["alt"]: box for box in layout["boxes"]}
    assert all(box["decoded"] for box in boxes.values())
    shot = screenshot(CHROMIUM, page, tmp_path / "shot.png", width=1200,
                      height=int(min(layout["height"], 12000)))  # fmt: skip
    pixels = matplotlib.image.imread(io.BytesIO(shot.read_bytes()), format="png")[..., :3]

    def crop(alt: str) -> np.ndarray:
        box = boxes[alt]
        x, y, w, h = (round(box[k]) for k in ("x", "y", "w", "h"))
        return pixels[y : y + h, x : x + w]

    by_class = crop("sample series by kind")
    assert by_class.shape[1] >= 900  # a readable size: most of the page's width
    rows = np.array_split(by_class, 3, axis=0)  # large, medium, small (natural order)
    for row in rows:
        blue, orange = _lines(row)
        half = row.shape[1] // 2  # real on the left, synthetic on the right
        for mask in (blue[:, :half], orange[:, half:]):
            drawn = np.flatnonzero(mask.any(axis=1))
            # on and off: the lines span much of the panel's height, in every class
            assert drawn.size and drawn[-1] - drawn[0] > 0.4 * row.shape[0], drawn
    histogram = crop("Feature distributions")
    power = histogram[round(0.2 * len(histogram)) :, : histogram.shape[1] // 2]  # no legend
    red, blue = power[..., 0], power[..., 2]
    tinted = ((blue > red + 0.1) | (red > blue + 0.1)).any(axis=0)  # a bar in this column
    starts = np.flatnonzero(tinted[1:] & ~tinted[:-1])
    # Off (0), small, medium and large values each a bar of their own, not all in one bin
    # at zero beside the large class's.
    assert len(starts) >= 4, np.flatnonzero(tinted)
    assert "on an asinh scale" in page.read_text()
