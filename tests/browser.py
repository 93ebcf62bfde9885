"""Render an HTML file in headless Chromium: a screenshot, and whether every image decoded.

Used by tests/test_report_browser.py, and runnable to refresh the screenshot in docs/:

    PYTHONPATH=src python tests/browser.py report.html docs/report.png

The report has no scripts; `images_decoded` checks a copy of it with a small script
added that writes, once the page has loaded, how many images the browser decoded into
the page title, which ``--dump-dom`` then prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio"]
_CHECK = """<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const ok = images.filter((i) => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0);
  const wide = document.documentElement.scrollWidth > window.innerWidth ? " overflowing" : "";
  document.title = "decoded " + ok.length + " of " + images.length + wide;
});
</script>"""


_BOXES = """<script>
window.addEventListener("load", () => {
  const boxes = Array.from(document.images).map((i) => {
    const r = i.getBoundingClientRect();
    return {alt: i.alt, decoded: i.complete && i.naturalWidth > 0,
            x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
  });
  const headings = Array.from(document.querySelectorAll("h2")).map((h) => h.textContent);
  document.title = "boxes " + JSON.stringify({boxes: boxes, headings: headings,
                                               height: document.documentElement.scrollHeight});
});
</script>"""


def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) binary, or None."""
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


def _run(binary: str, *args: str, size: tuple[int, int] = (1200, 1600)):
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                binary,
                *_FLAGS,
                f"--window-size={size[0]},{size[1]}",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def screenshot(binary: str, page: Path, out: Path, width: int = 1280, height: int = 2400) -> Path:
    """A PNG of ``page`` as a ``width`` x ``height`` window shows it."""
    _run(binary, f"--screenshot={out}", page.resolve().as_uri(), size=(width, height))
    if not out.exists():
        raise RuntimeError(f"chromium wrote no screenshot of {page}")
    return out


def images_decoded(binary: str, page: Path) -> tuple[int, int, bool]:
    """``(decoded, total, overflowing)``: images of ``page`` once Chromium has loaded it,
    and whether the page is wider than the window (something does not wrap)."""
    with tempfile.TemporaryDirectory() as folder:
        checked = Path(folder) / "checked.html"
        checked.write_text(page.read_text(encoding="utf-8").replace("</body>", _CHECK + "</body>"))
        dom = _run(binary, "--virtual-time-budget=10000", "--dump-dom", checked.as_uri()).stdout
    found = re.search(r"<title>decoded (\d+) of (\d+)( overflowing)?</title>", dom)
    if found is None:
        raise RuntimeError(f"the check script did not run; chromium printed: {dom[:300]!r}")
    return int(found.group(1)), int(found.group(2)), found.group(3) is not None


def page_layout(binary: str, page: Path, width: int = 1200) -> dict:
    """Where Chromium lays out ``page`` in a ``width``-pixel window: ``boxes`` (each image's
    alt text, whether it decoded, and its x, y, w, h in page pixels), the ``headings``
    (h2) and the page's ``height``."""
    with tempfile.TemporaryDirectory() as folder:
        checked = Path(folder) / "checked.html"
        checked.write_text(page.read_text(encoding="utf-8").replace("</body>", _BOXES + "</body>"))
        args = ("--virtual-time-budget=10000", "--dump-dom", checked.as_uri())
        dom = _run(binary, *args, size=(width, 1600)).stdout
    found = re.search(r"<title>boxes (.*?)</title>", dom, re.S)
    if found is None:
        raise RuntimeError(f"the layout script did not run; chromium printed: {dom[:300]!r}")
    return json.loads(html.unescape(found.group(1)))


if __name__ == "__main__":
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no chromium binary found (Debian: apt-get install chromium)")
    print(screenshot(chromium, Path(sys.argv[1]), Path(sys.argv[2])))
