"""What the judges read on the oscillating simulation (`oscillating_data.py`), and how
generated series differ from it in shape.

``variants`` (run with an interpreter that has aeon, as `independent_judge.py` is): the
independent judge on the simulated set against variants of itself drawn from another
seed: the same recipe, no or half the transient, more or less noise, a wobbling period.
It says which defects the judges can see at all, and how surely.

``shape`` (any interpreter with numpy and pandas): per class, for each CSV given (LONG:
``example_id``, ``step``, ``value``, ``appliance``):

* the transient: the envelope (largest |x| in each 12-step block after the switch-on, the
  first step whose |x| passes 2% of the series' largest) over the steady one (the
  median block from block 17 on), at blocks 0-16;
* the centre: the series' midpoint (max + min) / 2 over its half-range, median and
  10%-90% over the series (real waves sit at 0);
* bends by place: |second difference| over each series' mean, by place within the
  generator's LSTM steps counted from the switch-on (where they start with the onsets
  taken off), at the seam and at its largest (real: about 1 everywhere);
* the steadiness of the amplitude: the coefficient of variation of the largest |x| in
  each period-long block (the class's period, `CLASSES`) from value 200 after the
  switch-on on, median over the series (real: the noise's 1%); and the share of that
  variance which lies between whole LSTM steps (the variance of each step's mean
  envelope over the blocks' variance, median over the series): near 1 where each step
  holds an amplitude of its own, about one over the blocks per step for noise;
* the peak over the steady amplitude: each series' largest |x| over the median of its
  period-long blocks' largest from value 200 on, 5%-50%-95% over the series (real: the
  transient's overshoot, 1.6-2.0 from 5% to 95%);
* the phase across seams: the correlation of the period before a place with the period
  after it, at the LSTM steps' seams and at their middles from value 200 on, median over
  the series (real: 0.98-0.99 at both, each series' period up to 5% off its class's;
  lower at the seam where a step does not go on with the step before's oscillation).

``corrected`` (numpy and pandas): a synthetic CSV with one thing put right after the
switch-on, to judge (`independent_judge.py`) whether the judges read it: ``noise`` adds
the simulation's white noise (1% of the class's amplitude), ``offset`` takes off each
series' mean from value 120 on (real waves sit at 0), ``period`` stretches each series in
time so that its period takes the same quantile among the real class's periods as it
had among the synthetic class's.

Usage::

    /path/to/aeon-venv/bin/python benchmarks/oscillating_checks.py variants --json out.json
    python benchmarks/oscillating_checks.py shape runs/osc.csv DIR/synthetic.csv --sample-len 100
    python benchmarks/oscillating_checks.py corrected runs/osc.csv DIR/synthetic.csv \\
        --fix period --out DIR/period-corrected.csv
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd

from oscillating_data import CLASSES, oscillating_table  # this script's folder is on sys.path

VARIANTS = {
    "the same recipe, another seed": {},
    "no transient": {"transient": 0.0},
    "half the transient": {"transient": 0.5},
    "noise 3% (real 1%)": {"noise": 0.03},
    "noise 0.3%": {"noise": 0.003},
    "period wobbling by 5%": {"wobble": 0.05},
    "amplitude swelling by 25%": {"swell": 0.25},
}
BLOCK = 12
BLOCKS_SHOWN = (0, 1, 2, 3, 4, 6, 8, 12, 16)
STEADY_FROM = 200
"""Values after the switch-on from which the amplitude is steady (5 time constants)."""
SETTLED = 120
"""Values after the switch-on from which ``corrected`` reads a series' period and offset."""


def _series(table: pd.DataFrame) -> list[tuple[np.ndarray, str]]:
    table = table.sort_values(["example_id", "step"])
    return [
        (g["value"].to_numpy(np.float64), str(g["appliance"].iloc[0]))
        for _, g in table.groupby("example_id", sort=True)
    ]


def variants(args: argparse.Namespace) -> None:
    import independent_judge as judge  # this folder; aeon is imported when it judges

    real = [x for x, _ in _series(oscillating_table(seed=args.seed))]
    out = {}
    for name, keywords in VARIANTS.items():
        other = [x for x, _ in _series(oscillating_table(seed=args.seed + 1, **keywords))]
        scores = judge.detection(real, other, seeds=1)
        out[name] = {k: round(scores[k], 3) for k in ("catch22_forest_auc", "minirocket_auc")}
        print(f"{name:32s} catch22 {out[name]['catch22_forest_auc']:.3f}  "
              f"MiniRocket {out[name]['minirocket_auc']:.3f}", flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def _switch_on(x: np.ndarray) -> int:
    return int(np.argmax(np.abs(x) > 0.02 * np.abs(x).max()))


def shape_of(series: list[tuple[np.ndarray, str]], sample_len: int) -> dict:
    """The transient, the centre per class, and the bends by place (see the module doc)."""
    envelopes, centres, swings, between, overshoots = {}, {}, {}, {}, {}
    phases = {"at_the_seam": {}, "mid_step": {}}
    bends, counts = np.zeros(sample_len), np.zeros(sample_len)
    for x, cls in series:
        if not np.abs(x).max():
            continue
        y = x[_switch_on(x) :]
        blocks = _peaks(y, BLOCK)
        if len(blocks) > 20:
            envelopes.setdefault(cls, []).append(
                blocks[list(BLOCKS_SHOWN)] / np.median(blocks[17:])
            )
        centres.setdefault(cls, []).append((y.max() + y.min()) / (y.max() - y.min()))
        period = CLASSES[cls][0] if cls in CLASSES else BLOCK
        peaks = _peaks(y[STEADY_FROM:], period)
        if len(peaks) >= 4:
            swings.setdefault(cls, []).append(peaks.std() / peaks.mean())
            overshoots.setdefault(cls, []).append(np.abs(y).max() / np.median(peaks))
        share = _between_steps(np.abs(y), period, sample_len)
        if share is not None:
            between.setdefault(cls, []).append(share)
        zero = int(np.argmax(x != 0))  # where the generator's first LSTM step starts
        for where, offset in (("at_the_seam", 0), ("mid_step", sample_len // 2)):
            phases[where].setdefault(cls, []).extend(
                _period_correlations(x[zero:], period, sample_len, offset)
            )
        bend = np.abs(np.diff(x[zero:], 2))
        places = (np.arange(len(bend)) + 1) % sample_len  # bend i is at value i + 1
        past = slice(5, None)  # the switch-on's own jump aside
        np.add.at(bends, places[past], bend[past] / bend[past].mean())
        np.add.at(counts, places[past], 1)
    by_place = bends / np.maximum(counts, 1)
    return {
        "envelope_over_steady_at_blocks": {
            "blocks": list(BLOCKS_SHOWN),
            **{c: np.median(v, axis=0).round(3).tolist() for c, v in sorted(envelopes.items())},
        },
        "midpoint_over_half_range": {
            c: [round(float(q), 3) for q in np.quantile(v, [0.1, 0.5, 0.9])]
            for c, v in sorted(centres.items())
        },
        "bend_by_place": {
            "at_the_seam": round(float(by_place[0]), 2),
            "largest": round(float(by_place.max()), 2),
            "largest_at": int(by_place.argmax()),
            "mid_step": round(float(by_place[sample_len * 2 // 5 : sample_len * 3 // 5].mean()), 2),
        },
        "amplitude_variation": {
            c: round(float(np.median(v)), 3) for c, v in sorted(swings.items())
        },
        "peak_over_steady": {
            c: [round(float(q), 2) for q in np.quantile(v, [0.05, 0.5, 0.95])]
            for c, v in sorted(overshoots.items())
        },
        "amplitude_variance_between_steps": {
            c: round(float(np.median(v)), 2) for c, v in sorted(between.items())
        },
        "period_correlation_across": {
            where: {c: round(float(np.median(v)), 3) for c, v in sorted(by.items()) if v}
            for where, by in phases.items()
        },
    }


def _period_correlations(y: np.ndarray, period: int, sample_len: int, offset: int) -> list:
    """The correlation of the ``period`` values before each place with the ``period``
    after it, at the places ``offset`` into each LSTM step of ``sample_len`` from
    `STEADY_FROM` on (place 0 of a step: its seam with the step before)."""
    out = []
    first = -(-STEADY_FROM // sample_len) * sample_len + offset
    for place in range(max(first, period), len(y) - period + 1, sample_len):
        before, after = y[place - period : place], y[place : place + period]
        if before.std() > 0 and after.std() > 0:
            out.append(float(np.corrcoef(before, after)[0, 1]))
    return out


def _peaks(y: np.ndarray, block: int) -> np.ndarray:
    """The largest |y| in each whole block of ``block`` values."""
    return np.abs(y[: len(y) // block * block]).reshape(-1, block).max(axis=1)


def _between_steps(y: np.ndarray, period: int, sample_len: int) -> float | None:
    """The share of the envelope's variance (blocks of ``period``) between whole LSTM steps
    of ``sample_len`` from `STEADY_FROM` on; None with under 3 steps or 2 blocks a step."""
    first = -(-STEADY_FROM // sample_len) * sample_len  # the first whole step after it
    steps, per = (len(y) - first) // sample_len, sample_len // period
    if steps < 3 or per < 2:
        return None
    cut = y[first : first + steps * sample_len].reshape(steps, sample_len)[:, : per * period]
    envelope = cut.reshape(steps, per, period).max(axis=2)  # (steps, blocks)
    total = envelope.var()
    return float(envelope.mean(axis=1).var() / total) if total > 0 else None


def shape(args: argparse.Namespace) -> None:
    out = {}
    for path in args.csv:
        out[path] = shape_of(_series(pd.read_csv(path)), args.sample_len)
        print(path, json.dumps(out[path]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def corrected_values(
    real: list[tuple[np.ndarray, str]], synthetic: list[tuple[np.ndarray, str]], fix: str, seed: int
) -> list[np.ndarray]:
    """Each synthetic series with ``fix`` (``noise``, ``offset`` or ``period``) put right
    after its switch-on (the module doc).

    Example:
        >>> t = np.arange(400.0)
        >>> real = [(np.r_[np.zeros(20), np.sin(2 * np.pi * t / 12)], "fan")]
        >>> slow = [(np.r_[np.zeros(20), 0.5 + np.sin(2 * np.pi * t / 13)], "fan")]
        >>> [round(_period(x), 1) for x in corrected_values(real, slow, "period", 0)]
        [12.0]
        >>> offset_off = corrected_values(real, slow, "offset", 0)[0]
        >>> round(float(offset_off[20 + SETTLED :].mean()), 2)
        0.0
    """
    rng = np.random.default_rng(seed)
    noise = inspect.signature(oscillating_table).parameters["noise"].default
    target = {}  # each synthetic series' period after `period`
    if fix == "period":
        for cls in {c for _, c in synthetic}:
            mine = [i for i, (x, c) in enumerate(synthetic) if c == cls and _settled(x)]
            periods = np.array([_period(synthetic[i][0]) for i in mine])
            ranks = (np.argsort(np.argsort(periods)) + 0.5) / len(periods)
            real_periods = [_period(x) for x, c in real if c == cls and _settled(x)]
            target.update(zip(mine, np.quantile(real_periods, ranks), strict=True))
    out = []
    for i, (x, cls) in enumerate(synthetic):
        x = x.copy()
        if _settled(x):
            y = x[_switch_on(x) :]
            if fix == "noise":
                y += noise * CLASSES[cls][1] * rng.standard_normal(len(y))
            elif fix == "offset":
                y -= y[SETTLED:].mean()
            else:  # beyond its end the stretched series holds its last value
                step = np.arange(len(y)) * _period(x) / target[i]
                y[:] = np.interp(step, np.arange(len(y)), y.copy())
        out.append(x)
    return out


def _settled(x: np.ndarray) -> bool:
    """Whether ``x`` switches on and runs for twice `SETTLED` values after it."""
    return bool(np.abs(x).max()) and len(x) - _switch_on(x) > 2 * SETTLED


def _period(x: np.ndarray) -> float:
    """The steps of ``x``'s strongest period from `SETTLED` values after its switch-on on
    (the transform padded 16 times)."""
    y = x[_switch_on(x) :][SETTLED:]
    power = np.abs(np.fft.rfft(y - y.mean(), 16 * len(y))) ** 2
    return float(16 * len(y) / (1 + np.argmax(power[1:])))


def corrected(args: argparse.Namespace) -> None:
    table = pd.read_csv(args.synthetic).sort_values(["example_id", "step"], kind="stable")
    values = corrected_values(_series(pd.read_csv(args.real)), _series(table), args.fix, args.seed)
    table["value"] = np.concatenate(values)  # _series keeps the sorted table's order
    table.to_csv(args.out, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    v = commands.add_parser("variants", help="the judge on the set against its variants")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--json")
    s = commands.add_parser("shape", help="transient, centre and bends of each CSV")
    s.add_argument("csv", nargs="+")
    s.add_argument("--sample-len", type=int, required=True, help="the model's, from its plan")
    s.add_argument("--json")
    c = commands.add_parser("corrected", help="a synthetic CSV with one thing put right")
    c.add_argument("real")
    c.add_argument("synthetic")
    c.add_argument("--fix", choices=("noise", "offset", "period"), required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    {"variants": variants, "shape": shape, "corrected": corrected}[args.command](args)


if __name__ == "__main__":
    main()
