"""Datasets of the fidelity benchmark (benchmarks/fidelity.py): loaders, not package code.

Each loader returns a `Dataset`: training arrays for DGAN (features in original units,
optional attributes) plus the per-feature [min, max] the TimeGAN protocol metrics use to
scale real and synthetic windows to [0, 1]: the real data's ranges for weather, [0, 1]
(no change) for sines and stocks, which are already in [0, 1] and are scored as they are
in the papers.

* ``sines``: TimeGAN's synthetic sines, 10,000 x 24 x 5; each feature is
  ``sin(f * t + p)`` with f, p ~ U[0, 0.1) drawn per series and feature, t = 0..23, then
  ``(x + 1) / 2`` (so values are already in [0, 1]). Seeded.
* ``stocks``: GOOG daily prices as used by TimeGAN and Diffusion-TS (path below, or
  ``$DGAN_STOCKS_CSV``): rows reversed to chronological order, each column min-max scaled,
  sliding windows of 24 days with stride 1 (3,661 x 24 x 6), shuffled.
* ``weather``: the bundled demo (`dgan.datasets.load_demo`): 48 months x 28 days x 4
  features, the month name as a discrete attribute.
* ``weather-var``: whole months (28-31 days) of the same Seattle weather, the month as a
  discrete attribute; built from vega_datasets' ``seattle-weather.csv`` (the demo's source),
  found through the ``vega_datasets`` package or ``$DGAN_SEATTLE_WEATHER_CSV``. Unavailable
  offline without it.
* ``stocks-N`` (e.g. ``stocks-256``) and ``sines-N``: the first N of the shuffled Stocks
  windows (of the Sines series) to train on, scored against all of them (the
  ``reference``): the same data at a smaller size, to see how a setting's effect depends
  on the number of training series.

The data stays outside the package: nothing here is imported by ``dgan``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

STOCKS_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "stocks" / "stock_data.csv"
WINDOW = 24


@dataclass
class Dataset:
    """Training data of one benchmark dataset, plus what the protocol metrics need."""

    name: str
    features: np.ndarray | list[np.ndarray]  # (n, T, dim) or list of (T_i, dim)
    attributes: np.ndarray | None = None  # (n, n_attributes) or None
    discrete_attributes: bool = False
    feature_min: np.ndarray = field(default_factory=lambda: np.zeros(0))
    feature_max: np.ndarray = field(default_factory=lambda: np.zeros(0))
    max_sequence_len: int = WINDOW
    note: str = ""
    # The real series the protocol scores synthetic ones against (and as many are
    # generated); None: the training series themselves, as in the TimeGAN protocol.
    reference: np.ndarray | None = None

    @property
    def real(self) -> np.ndarray | list[np.ndarray]:
        """The real series the metrics compare with."""
        return self.features if self.reference is None else self.reference

    def scaled(self, features: np.ndarray | list[np.ndarray]) -> np.ndarray | list[np.ndarray]:
        """Min-max scale windows with the real data's per-feature ranges (protocol input)."""
        span = np.where(self.feature_max > self.feature_min, self.feature_max - self.feature_min, 1)
        if isinstance(features, np.ndarray) and features.dtype != object:
            return ((features - self.feature_min) / span).astype(np.float32)
        return [
            ((np.asarray(f, float) - self.feature_min) / span).astype(np.float32) for f in features
        ]


def _ranges(features: np.ndarray | list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    pooled = np.concatenate([np.asarray(f).reshape(-1, np.shape(f)[-1]) for f in features])
    return pooled.min(axis=0), pooled.max(axis=0)


def sines(n: int = 10_000, seq_len: int = WINDOW, dim: int = 5, seed: int = 0) -> Dataset:
    """TimeGAN's sine data: n x seq_len x dim, values in [0, 1]."""
    rng = np.random.default_rng(seed)
    freq = rng.uniform(0, 0.1, size=(n, 1, dim))
    phase = rng.uniform(0, 0.1, size=(n, 1, dim))
    t = np.arange(seq_len)[None, :, None]
    x = ((np.sin(freq * t + phase) + 1) / 2).astype(np.float32)
    ones = np.ones(dim)  # already in [0, 1]: the protocol scores it as it is, as TimeGAN does
    return Dataset("sines", x, feature_min=0 * ones, feature_max=ones, max_sequence_len=seq_len)


def stocks(seed: int = 0, path: str | os.PathLike | None = None) -> Dataset:
    """TimeGAN's Stocks windows: 3,661 x 24 x 6, scaled to [0, 1] per column, shuffled."""
    csv = Path(path or os.environ.get("DGAN_STOCKS_CSV", STOCKS_CSV))
    raw = pd.read_csv(csv).to_numpy(dtype=np.float64)[::-1]  # newest first -> chronological
    lo, hi = raw.min(axis=0), raw.max(axis=0)
    scaled = (raw - lo) / (hi - lo + 1e-7)
    # range(len - WINDOW), as in the TimeGAN code: 3,661 windows (the newest day only ends one)
    windows = np.stack([scaled[i : i + WINDOW] for i in range(len(scaled) - WINDOW)])
    windows = windows[np.random.default_rng(seed).permutation(len(windows))].astype(np.float32)
    ones = np.ones(windows.shape[2])  # already scaled: the protocol scores it as it is
    return Dataset("stocks", windows, feature_min=0 * ones, feature_max=ones)


def weather() -> Dataset:
    """The bundled demo: 48 x 28 x 4 daily weather, month name as a discrete attribute."""
    from dgan.datasets import DEMO_COLUMNS, DEMO_MAX_SEQUENCE_LEN, load_demo

    df = load_demo()
    names = DEMO_COLUMNS["feature_columns"]
    n = df["example_id"].nunique()
    x = df[names].to_numpy(np.float64).reshape(n, DEMO_MAX_SEQUENCE_LEN, len(names))
    months = df.groupby("example_id", sort=True)["month"].first().to_numpy(object)[:, None]
    lo, hi = _ranges(x)
    return Dataset(
        "weather",
        x,
        attributes=months,
        discrete_attributes=True,
        feature_min=lo,
        feature_max=hi,
        max_sequence_len=DEMO_MAX_SEQUENCE_LEN,
    )


def _seattle_csv() -> Path:
    env = os.environ.get("DGAN_SEATTLE_WEATHER_CSV")
    if env:
        return Path(env)
    try:
        import vega_datasets  # optional: only to find its data file
    except ImportError as exc:
        raise FileNotFoundError(
            "weather-var needs vega_datasets' seattle-weather.csv: pip install "
            "vega_datasets==0.9.0, or set DGAN_SEATTLE_WEATHER_CSV to the file."
        ) from exc
    return Path(vega_datasets.__file__).parent / "_data" / "seattle-weather.csv"


def weather_variable_length() -> Dataset:
    """Whole months (28-31 days) of Seattle weather; the month name is the attribute."""
    daily = pd.read_csv(_seattle_csv(), parse_dates=["date"])
    names = ["precipitation", "temp_max", "temp_min", "wind"]
    series, months = [], []
    for _, month in daily.groupby(daily["date"].dt.to_period("M"), sort=True):
        series.append(month[names].to_numpy(np.float64))
        months.append(month["date"].dt.strftime("%b").iloc[0])
    lo, hi = _ranges(series)
    return Dataset(
        "weather-var",
        series,
        attributes=np.array(months, dtype=object)[:, None],
        discrete_attributes=True,
        feature_min=lo,
        feature_max=hi,
        max_sequence_len=max(len(s) for s in series),
    )


def subset(family: str, n: int) -> Dataset:
    """The first ``n`` windows of ``family`` ("stocks" or "sines") to train on; all of them
    as the reference the protocol scores against."""
    full = LOADERS[family]()
    if not 2 <= n <= len(full.features):
        raise ValueError(f"{family}-N takes N from 2 to {len(full.features)}, got {n}")
    return Dataset(
        f"{family}-{n}",
        full.features[:n],
        feature_min=full.feature_min,
        feature_max=full.feature_max,
        reference=full.features,
    )


LOADERS = {
    "sines": sines,
    "stocks": stocks,
    "weather": weather,
    "weather-var": weather_variable_length,
}
SUBSETS = ("stocks", "sines")  # datasets that can be cut to their first N windows


def parse_name(name: str) -> tuple[str, int | None]:
    """(the key of `LOADERS` a dataset name belongs to, its training windows or None).

    Example:
        >>> parse_name("weather-var"), parse_name("stocks-256")
        (('weather-var', None), ('stocks', 256))
    """
    if name in LOADERS:
        return name, None
    prefix, _, size = name.partition("-")
    if prefix in SUBSETS and size.isdigit():
        return prefix, int(size)
    raise ValueError(f"unknown dataset {name!r}: use one of {sorted(LOADERS)}, stocks-N or sines-N")


def load(name: str) -> Dataset:
    """The dataset called ``name``: a key of `LOADERS`, or ``stocks-N`` / ``sines-N``."""
    family, size = parse_name(name)
    return LOADERS[family]() if size is None else subset(family, size)
