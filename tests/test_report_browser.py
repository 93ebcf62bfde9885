"""The report in a real browser (headless Chromium): it renders something, and every image
decodes. Skipped where no Chromium is installed (Debian: ``apt-get install chromium``)."""

from __future__ import annotations

import io

import matplotlib.image
import pytest

from browser import find_chromium, images_decoded, screenshot
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
