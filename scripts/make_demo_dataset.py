"""Rebuild ``src/dgan/data/seattle_weather_monthly.csv.gz`` from the vega_datasets wheel.

The demo dataset is real daily weather observed in Seattle, 2012-2015 (NOAA data,
public domain), as shipped by the ``vega_datasets`` package. This script is the whole
derivation: it reads ``seattle-weather.csv`` out of the wheel, cuts the four years into
one example per calendar month, keeps the first 28 days of each month so every example
has the same length, and writes a long-format gzipped CSV. It never edits a value.

Usage (no install needed, only the wheel file)::

    pip download --no-deps -d /tmp/dl vega_datasets==0.9.0
    python scripts/make_demo_dataset.py /tmp/dl/vega_datasets-0.9.0-py3-none-any.whl
    python scripts/make_demo_dataset.py /tmp/dl/vega_datasets-0.9.0-py3-none-any.whl --check

``--check`` rebuilds in memory and fails if the bundled file differs, so a reviewer can
confirm the shipped bytes come from the stated source.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import pandas as pd

# Where the source lives inside the wheel, and its digest in vega_datasets 0.9.0: a
# different file (another version, a re-cut upstream) must be reviewed, not silently used.
SOURCE_MEMBER = "vega_datasets/_data/seattle-weather.csv"
SOURCE_SHA256 = "62f0609f787158128aa2bd102967173a4953122dd4f872bf1d502cae1037df0b"

OUTPUT = (
    Path(__file__).resolve().parents[1] / "src" / "dgan" / "data" / "seattle_weather_monthly.csv.gz"
)

DAYS = 28  # the shortest month: every example gets the same length without padding
FEATURES = ["precipitation", "temp_max", "temp_min", "wind"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def read_source(wheel: Path) -> bytes:
    """Return the raw ``seattle-weather.csv`` bytes from the wheel, checked by digest."""
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read(SOURCE_MEMBER)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SOURCE_SHA256:
        sys.exit(
            f"{SOURCE_MEMBER} in {wheel} has sha256 {digest}, expected {SOURCE_SHA256} "
            "(vega_datasets 0.9.0); review the new source before updating SOURCE_SHA256."
        )
    return raw


def build_frame(daily: pd.DataFrame) -> pd.DataFrame:
    """Cut daily rows into one 28-day example per calendar month, in long format.

    Months with fewer than 28 observed days are dropped (none are in the 0.9.0 source).
    """
    daily = daily.assign(date=pd.to_datetime(daily["date"])).sort_values("date")
    daily = daily[daily["date"].dt.day <= DAYS]
    out = pd.DataFrame(
        {
            "example_id": daily["date"].dt.strftime("%Y-%m"),
            "month": daily["date"].dt.month.map(lambda m: MONTHS[m - 1]),
            "day": daily["date"].dt.day,
            **{name: daily[name] for name in FEATURES},
        }
    )
    complete = out.groupby("example_id")["day"].transform("size") == DAYS
    return out[complete].reset_index(drop=True)


def encode(frame: pd.DataFrame) -> bytes:
    """Gzipped CSV bytes; mtime 0 so the same input always gives the same bytes."""
    text = frame.to_csv(index=False, lineterminator="\n").encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(text)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="path to vega_datasets-0.9.0-py3-none-any.whl")
    parser.add_argument("--check", action="store_true", help="compare with the bundled file")
    args = parser.parse_args(argv)

    daily = pd.read_csv(io.BytesIO(read_source(args.wheel)))
    frame = build_frame(daily)
    data = encode(frame)
    n_examples = frame["example_id"].nunique()
    summary = f"{n_examples} examples x {DAYS} days x {len(FEATURES)} features, {len(data)} bytes"

    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_bytes() != data:
            print(f"{OUTPUT} differs from a fresh build ({summary}); rerun without --check.")
            return 1
        print(f"{OUTPUT} matches a fresh build ({summary}).")
        return 0
    OUTPUT.write_bytes(data)
    print(f"wrote {OUTPUT} ({summary})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
