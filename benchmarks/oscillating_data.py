"""A simulated, appliance-like LONG table to check how dgan's defaults treat oscillating series.

Not real data, and not a quality benchmark: a mechanism check. Real long sets
(`long_data.py`) hold few fast, steady oscillations. The kept-back appliance recordings
oscillate after each switch-on, which a real set here cannot stand in for. Each series:

* off (exactly 0) for its first 5-30% of steps;
* a switch-on, then a transient that decays from twice to once the steady amplitude
  (time constant 40 steps);
* a steady oscillation ``A * sin(2 pi t / P + phase)`` with noise of 1% of ``A``.

Three classes (``appliance``), each with its own period P and amplitude A, four orders of
magnitude apart: ``fan`` (12 steps, 0.01), ``fridge`` (24, 1), ``heater`` (48, 100). Each
series draws its amplitude within 0.8-1.25 times, its period within 0.95-1.05 times, and
its length within 300-1,000 steps.

    python benchmarks/oscillating_data.py --out runs/oscillating.csv
    dgan train runs/oscillating.csv -o osc.dgan --example-id example_id --time step \\
        --attributes appliance --discrete appliance
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

CLASSES = {"fan": (12, 0.01), "fridge": (24, 1.0), "heater": (48, 100.0)}
"""Each class's steady period (steps) and amplitude."""


def oscillating_table(
    per_class: int = 80,
    seed: int = 0,
    *,
    transient: float = 1.0,
    noise: float = 0.01,
    wobble: float = 0.0,
    swell: float = 0.0,
    period_jitter: float = 0.05,
    distortion: float = 0.0,
) -> pd.DataFrame:
    """The LONG table: ``example_id``, ``step``, ``value``, ``appliance``.

    The keywords make variants to measure what a judge reads
    (`oscillating_checks.py variants`): ``transient``, the overshoot at the switch-on in
    units of the steady amplitude (1: twice it); ``noise``, its share of the amplitude;
    ``wobble``, a slow swing of the period by that share (a 200-step cycle); ``swell``, a
    slow swing of the amplitude by that share (the same cycle); ``period_jitter``, how far
    each series' period may lie from its class's (0: every series of a class at one
    period); ``distortion``, a waveform that is not a sine, as a non-linear load draws:
    the 3rd, 5th and 7th harmonics at that share, half and a quarter of it of the
    fundamental, at phases fixed per class (no random draw). The defaults draw the
    simulated set itself.

    Example:
        >>> t = oscillating_table(per_class=2)
        >>> t["example_id"].nunique(), sorted(t["appliance"].unique())
        (6, ['fan', 'fridge', 'heater'])
        >>> bool((t.groupby("example_id")["value"].first() == 0).all())  # every one starts off
        True
    """
    rng = np.random.default_rng(seed)
    series = []
    for k, (name, (period, amplitude)) in enumerate(CLASSES.items()):

        def wave(angle: np.ndarray, k: int = k) -> np.ndarray:
            shares = {3: distortion, 5: distortion / 2, 7: distortion / 4} if distortion else {}
            return np.sin(angle) + sum(a * np.sin(h * angle + k + h) for h, a in shares.items())

        for _ in range(per_class):
            n = int(rng.integers(300, 1001))
            off = int(n * rng.uniform(0.05, 0.3))
            t = np.arange(n - off)
            envelope = amplitude * rng.uniform(0.8, 1.25) * (1 + transient * np.exp(-t / 40.0))
            # (u - 1) and back are exact: the defaults draw the same periods as before
            stretch = 1 + (rng.uniform(0.95, 1.05) - 1) * (period_jitter / 0.05)
            phase = 2 * np.pi * t / (period * stretch) + rng.uniform(0, 2 * np.pi)
            on = envelope * wave(phase) + noise * amplitude * rng.standard_normal(len(t))
            if wobble:  # drawn last, so that the defaults draw the set as before
                swing = np.sin(2 * np.pi * t / 200 + rng.uniform(0, 2 * np.pi))
                speed = (phase[1] - phase[0]) * (1 + wobble * swing[:-1])  # this series' period
                bent = phase[0] + np.r_[0.0, np.cumsum(speed)]
                on = envelope * wave(bent) + (on - envelope * wave(phase))
            if swell:  # drawn last too
                on = on * (1 + swell * np.sin(2 * np.pi * t / 200 + rng.uniform(0, 2 * np.pi)))
            series.append((np.r_[np.zeros(off), on], name))
    return pd.concat(
        [
            pd.DataFrame({"example_id": i, "step": np.arange(len(v)), "value": v, "appliance": c})
            for i, (v, c) in enumerate(series)
        ],
        ignore_index=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the CSV to write")
    parser.add_argument("--per-class", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--period-jitter", type=float, default=0.05,
        help="how far each series' period may lie from its class's (0: one period a class)",
    )  # fmt: skip
    parser.add_argument(
        "--distortion", type=float, default=0.0,
        help="the 3rd harmonic's share of the fundamental (5th: half, 7th: a quarter; 0: sines)",
    )  # fmt: skip
    args = parser.parse_args()
    table = oscillating_table(
        args.per_class, args.seed, period_jitter=args.period_jitter, distortion=args.distortion
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"{args.out}: {table['example_id'].nunique()} series, {len(table):,} rows")


if __name__ == "__main__":
    main()
