"""A simulated table of appliance power readings, to check dgan's defaults on on/off series.

Not real data, and not a quality benchmark: a mechanism check, as `oscillating_data.py` is
for current waveforms. The kept-back appliance sets include power consumption signatures:
few series (10 a class), all long (1,460 readings), classes two to three orders of
magnitude apart, and series that sit at a standby level and switch between states with
sharp edges. No real set here has that mix: the sensors' irradiance switches once a day
and the gestures are short. Each series is 1,460 readings of one appliance (``appliance``,
10 classes, ``per_class`` series each) in watts:

* ``charger``: standby ~0.3; plugged in at a random time, 4-6 decaying to ~0.5;
* ``coffee``: standby ~1.5; 1-4 brews of 1,000-1,300 for 5-15 readings, each followed by
  keep-warm pulses (3 readings every 30-50) for a while;
* ``computer``: 60-120 wandering (a slow random walk) with short spikes; off (~2) at one
  or both ends;
* ``fridge``: compressor cycles, 80-120 for 150-250 readings then ~1 for 300-500, a
  start-up spike of twice the level at each start;
* ``hifi``: a steady 15-30 with slow swings of a tenth of it;
* ``lamp``: 0 or a steady 10-20, switched 1-3 times;
* ``laptop``: 20-60, noisy, drifting down as its battery fills;
* ``microwave``: standby ~2.5; 1-3 sessions of 30-180 readings that pulse at ~1,200 on
  a 10-15 reading cycle;
* ``printer``: standby ~5; a few warm-ups of 400-600 for 2-5 readings;
* ``tv``: standby ~0.5, on for a stretch at 80-150 with a picture-dependent wander.

Noise of 1-2% of the level everywhere; values never below 0.

    python benchmarks/consumption_data.py --out runs/consumption.csv
    dgan train runs/consumption.csv -o c.dgan --example-id example_id --time step \\
        --attributes appliance --discrete appliance
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

LENGTH = 1460


def _noisy(level: np.ndarray, rng: np.random.Generator, share: float = 0.015) -> np.ndarray:
    return np.maximum(level * (1 + share * rng.standard_normal(len(level))), 0.0)


def _wander(rng: np.random.Generator, n: int, spread: float, memory: float = 0.98) -> np.ndarray:
    """A slow AR(1) wander of standard deviation ``spread`` around 0."""
    steps = rng.standard_normal(n) * spread * np.sqrt(1 - memory**2)
    out = np.empty(n)
    out[0] = rng.standard_normal() * spread
    for i in range(1, n):
        out[i] = memory * out[i - 1] + steps[i]
    return out


def _span(rng: np.random.Generator, low: int, high: int) -> tuple[int, int]:
    """A stretch of ``low``..``high`` readings at a random place."""
    width = int(rng.integers(low, high + 1))
    start = int(rng.integers(0, LENGTH - width))
    return start, start + width


def charger(rng: np.random.Generator) -> np.ndarray:
    level = np.full(LENGTH, 0.3)
    start = int(rng.integers(0, LENGTH // 2))
    t = np.arange(LENGTH - start)
    level[start:] = 0.5 + rng.uniform(3.5, 5.5) * np.exp(-t / rng.uniform(300, 600))
    return _noisy(level, rng, 0.02)


def coffee(rng: np.random.Generator) -> np.ndarray:
    level = np.full(LENGTH, 1.5)
    for _ in range(int(rng.integers(1, 5))):
        start, end = _span(rng, 5, 15)
        level[start:end] = rng.uniform(1000, 1300)
        gap = int(rng.integers(30, 51))
        for pulse in range(end + gap, min(LENGTH, end + gap * int(rng.integers(2, 8))), gap):
            level[pulse : pulse + 3] = level[start]
    return _noisy(level, rng)


def computer(rng: np.random.Generator) -> np.ndarray:
    base = rng.uniform(60, 120)
    level = base * (1 + _wander(rng, LENGTH, 0.15))
    spikes = rng.random(LENGTH) < 0.01
    level[spikes] *= rng.uniform(1.3, 1.8, spikes.sum())
    if rng.random() < 0.7:
        level[: int(rng.integers(20, 300))] = 2.0
    if rng.random() < 0.5:
        level[LENGTH - int(rng.integers(20, 300)) :] = 2.0
    return _noisy(level, rng)


def fridge(rng: np.random.Generator) -> np.ndarray:
    level, on_level = np.empty(LENGTH), rng.uniform(80, 120)
    i, on = 0, rng.random() < 0.4
    i -= int(rng.integers(0, 300))  # a random phase of the cycle
    while i < LENGTH:
        width = int(rng.integers(150, 251) if on else rng.integers(300, 501))
        lo, hi = max(i, 0), max(min(i + width, LENGTH), 0)
        level[lo:hi] = on_level if on else 1.0
        if on and i >= 0:
            level[i : i + 2] = 2 * on_level
        i, on = i + width, not on
    return _noisy(level, rng)


def hifi(rng: np.random.Generator) -> np.ndarray:
    base = rng.uniform(15, 30)
    return _noisy(base * (1 + _wander(rng, LENGTH, 0.1, 0.995)), rng)


def lamp(rng: np.random.Generator) -> np.ndarray:
    level, on = np.zeros(LENGTH), rng.uniform(10, 20)
    edges = np.sort(rng.choice(np.arange(50, LENGTH - 50), int(rng.integers(1, 4)), replace=False))
    lit = rng.random() < 0.5
    for start, end in zip(np.r_[0, edges], np.r_[edges, LENGTH], strict=True):
        level[start:end] = on if lit else 0.0
        lit = not lit
    return _noisy(level, rng)


def laptop(rng: np.random.Generator) -> np.ndarray:
    base = rng.uniform(20, 60)
    fill = 1 - 0.4 * np.arange(LENGTH) / LENGTH * rng.uniform(0.5, 1.5)
    return _noisy(base * fill * (1 + _wander(rng, LENGTH, 0.08, 0.9)), rng, 0.05)


def microwave(rng: np.random.Generator) -> np.ndarray:
    level = np.full(LENGTH, 2.5)
    for _ in range(int(rng.integers(1, 4))):
        start, end = _span(rng, 30, 180)
        cycle = int(rng.integers(10, 16))
        duty = rng.uniform(0.4, 1.0)
        t = np.arange(end - start)
        level[start:end] = np.where((t % cycle) < duty * cycle, rng.uniform(1100, 1300), 60.0)
    return _noisy(level, rng)


def printer(rng: np.random.Generator) -> np.ndarray:
    level = np.full(LENGTH, 5.0)
    for _ in range(int(rng.integers(1, 6))):
        start, end = _span(rng, 2, 5)
        level[start:end] = rng.uniform(400, 600)
    return _noisy(level, rng)


def tv(rng: np.random.Generator) -> np.ndarray:
    level = np.full(LENGTH, 0.5)
    start, end = _span(rng, 400, 1400)
    level[start:end] = rng.uniform(80, 150) * (1 + _wander(rng, end - start, 0.05, 0.9))
    return _noisy(level, rng)


APPLIANCES: dict[str, Callable[[np.random.Generator], np.ndarray]] = {
    f.__name__: f
    for f in (charger, coffee, computer, fridge, hifi, lamp, laptop, microwave, printer, tv)
}


def consumption_table(per_class: int = 10, seed: int = 0) -> pd.DataFrame:
    """The LONG table: ``example_id``, ``step``, ``value`` (watts), ``appliance``.

    Example:
        >>> t = consumption_table(per_class=1)
        >>> t["example_id"].nunique(), len(t) // t["example_id"].nunique()
        (10, 1460)
        >>> bool((t["value"] >= 0).all())
        True
    """
    rng = np.random.default_rng(seed)
    frames = [
        pd.DataFrame({"step": np.arange(LENGTH), "value": draw(rng), "appliance": name})
        for name, draw in APPLIANCES.items()
        for _ in range(per_class)
    ]
    table = pd.concat(frames, keys=range(len(frames)), names=["example_id", None])
    return table.reset_index(level=0).reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the CSV to write")
    parser.add_argument("--per-class", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = consumption_table(args.per_class, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"{args.out}: {table['example_id'].nunique()} series, {len(table):,} rows")


if __name__ == "__main__":
    main()
