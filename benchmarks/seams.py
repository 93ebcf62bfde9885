"""How much generated series jump where the generator's LSTM steps meet (its seams).

DoppelGANger's LSTM emits ``sample_len`` values per step, so a generated series has a seam
every ``sample_len`` steps. For each series (standardised by its own mean and spread, of
at least three LSTM steps), the mean absolute change at each position within an LSTM step
(position p: from value p to value p + 1 of a step, the last one across the seam) over
the mean absolute change everywhere, averaged over the series: 1 everywhere means the
steps' edges are invisible. Reported: the seam's (``seam``) and the largest over the
positions, with where it is (``worst``, ``worst_position``: a jump moved one value into
the step is as visible as one at the seam). The same is measured on the real series at
the same positions, which have no seams (a real daily change that falls there shows in
both). The same for the change of the change (``kinks``: the second difference, at
position p the bend at value p + 1, so the last position is the bend at a step's first
value): a seam can be smooth in its changes and still bend either side of it. And how
evenly a series moves (``change_kurtosis``): the excess kurtosis of its changes, median
over the series, over all of each step and over its middle (the values from a fifth to
four fifths of the way through it, away from the bridge's windows); near 0 for changes
of one size of noise, larger where calm stretches alternate with bursts. And where in
the step each series' largest change falls (``largest_at``: the positions most often
chosen, with the share of the series; about 1 / ``sample_len`` each for real series).
With ``--components K``, also the share of the variance of the standardized series'
LSTM steps (each ``sample_len`` values one vector) beyond their first K principal
components (``beyond_components``): a generator whose linear output head reads K
hidden units puts little there (only its activations and the decoding add any).
And how fast a series moves at each height within its own range (``change_by_level``:
the mean absolute change between values in each tenth of the range, over the series'
mean change; near 1 everywhere for real series, low at both ends where an output
activation saturates toward the range's bounds). And how alike the sizes of a series'
changes are (``change_sizes``, medians over the standardized series): the spread of the
absolute changes over their mean, the share above 0.04 (catch22's ``pnn40``) and how
consecutive changes correlate; a series that moves at nearly one speed has a small
spread and a share near 1 (measured values: docs/quality.md).

    python benchmarks/seams.py REAL.csv SYNTH.csv --sample-len 61 [--json out.json]

Both tables are LONG (``example_id``, ``step``, ``value``), read as
`independent_judge.read` reads them; only ``value`` is used. Nothing from dgan.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from independent_judge import read


def position_profile(
    series: list[np.ndarray], sample_len: int, order: int = 1
) -> tuple[np.ndarray, int]:
    """(``sample_len``,) the mean absolute change (``order`` 2: change of the change) at
    each position within an LSTM step over each series' mean, averaged over the series of
    at least three LSTM steps that vary; and how many there were.

    Example:
        >>> steps = np.r_[np.zeros(4), np.ones(4), np.zeros(4)]  # jumps only at the seams
        >>> profile, n = position_profile([steps], 4)
        >>> profile.round(2).tolist(), n
        ([0.0, 0.0, 0.0, 5.5], 1)
        >>> bends, _ = position_profile([steps], 4, order=2)  # a step's last and first values
        >>> bends.round(2).tolist()
        [0.0, 0.0, 2.5, 2.5]
    """
    sums, counts = np.zeros(sample_len), np.zeros(sample_len)
    n = 0
    for x in series:
        if len(x) < 3 * sample_len or np.std(x) == 0:
            continue
        change = np.abs(np.diff((x - x.mean()) / x.std(), n=order))
        if change.mean() == 0:
            continue
        at = np.arange(len(change)) % sample_len
        sums += np.bincount(at, change / change.mean(), minlength=sample_len)
        counts += np.bincount(at, minlength=sample_len)
        n += 1
    return sums / np.maximum(counts, 1), n


def change_kurtosis(series: list[np.ndarray], sample_len: int) -> tuple[float, float]:
    """The median over the series (as `position_profile` takes them) of the excess
    kurtosis of each one's changes: over all its changes, and over those in the middle
    three fifths of each LSTM step.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> calm = np.cumsum(rng.normal(size=400))  # changes of one size: about 0
        >>> bursts = np.cumsum(rng.normal(size=400) * np.repeat([0.2, 3.0], 200))
        >>> [round(v) for v in change_kurtosis([calm], 20)], round(change_kurtosis([bursts], 20)[0])
        ([0, 0], 2)
    """

    def excess(x: np.ndarray) -> float:
        centred = x - x.mean()
        return float((centred**4).mean() / (centred**2).mean() ** 2 - 3.0)

    whole, middle = [], []
    for x in series:
        if len(x) < 3 * sample_len or np.std(x) == 0:
            continue
        change = np.diff(x)
        if not change.any():
            continue
        at = np.arange(len(change)) % sample_len
        inside = (at >= sample_len // 5) & (at < sample_len - sample_len // 5)
        whole.append(excess(change))
        middle.append(excess(change[inside]))
    return float(np.median(whole)), float(np.median(middle))


def largest_change_positions(series: list[np.ndarray], sample_len: int) -> np.ndarray:
    """(``sample_len``,) the share of the series (as `position_profile` takes them) whose
    largest absolute change falls at each position (position p: from value p to p + 1).

    Example:
        >>> steps = np.r_[np.zeros(4), np.ones(4), np.zeros(4)] + np.arange(12) * 0.1
        >>> largest_change_positions([steps], 4).tolist()  # the seam, position 3
        [0.0, 0.0, 0.0, 1.0]
    """
    counts = np.zeros(sample_len)
    for x in series:
        if len(x) < 3 * sample_len or np.std(x) == 0:
            continue
        counts[int(np.argmax(np.abs(np.diff(x)))) % sample_len] += 1
    return counts / max(counts.sum(), 1)


def beyond_components(series: list[np.ndarray], sample_len: int, k: int) -> float:
    """The share of the variance of the ``sample_len``-value LSTM steps of the series
    (each standardized by its own mean and spread; the steps centred on their mean step)
    beyond their first ``k`` principal components.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> basis = rng.normal(size=(2, 8))
        >>> flat = [(rng.normal(size=(5, 2)) @ basis).ravel() for _ in range(20)]  # rank 2
        >>> # one more for the series' own means taken out
        >>> round(beyond_components(flat, 8, 3), 6), beyond_components(flat, 8, 2) > 0.01
        (0.0, True)
    """
    steps = [
        ((x - x.mean()) / x.std())[: len(x) // sample_len * sample_len].reshape(-1, sample_len)
        for x in series
        if len(x) >= sample_len and np.std(x) > 0
    ]
    stacked = np.concatenate(steps)
    power = np.linalg.svd(stacked - stacked.mean(0), compute_uv=False) ** 2
    return float(power[k:].sum() / power.sum())


def change_by_level(series: list[np.ndarray], bins: int = 10) -> np.ndarray:
    """(``bins``,) the mean absolute change of the series, by where in its own range (min
    to max, in ``bins`` equal parts) the change happens (the mean of the two values it
    joins), over the series' mean absolute change; averaged over the changes of all series.

    Example:
        >>> t = np.linspace(0, 20 * np.pi, 4000)
        >>> [round(float(v), 1) for v in change_by_level([np.sin(t)], 4)]  # slow at the ends
        [0.8, 1.5, 1.5, 0.8]
        >>> [round(float(v), 1) for v in change_by_level([np.abs((t % 2) - 1)], 4)]  # even
        [1.0, 1.0, 1.0, 1.0]
    """
    sums, counts = np.zeros(bins), np.zeros(bins)
    for x in series:
        change = np.abs(np.diff(x))
        span = x.max() - x.min()
        if span == 0 or not change.any():
            continue
        level = ((x[1:] + x[:-1]) / 2 - x.min()) / span
        at = np.minimum((level * bins).astype(int), bins - 1)
        sums += np.bincount(at, change / change.mean(), bins)
        counts += np.bincount(at, minlength=bins)
    return sums / np.maximum(counts, 1)


def change_sizes(series: list[np.ndarray]) -> tuple[float, float, float]:
    """Medians over the series (each standardized by its own mean and spread) of the
    coefficient of variation of its absolute changes, the share of them above 0.04, and
    the correlation of consecutive changes.

    Example:
        >>> zigzag = np.abs(np.arange(400) % 40 - 20.0)  # one speed, turning sharply
        >>> [round(v, 2) for v in change_sizes([zigzag])]
        [0.0, 1.0, 0.9]
    """
    spread, above, follow = [], [], []
    for x in series:
        if len(x) < 3 or np.std(x) == 0:
            continue
        change = np.diff((x - x.mean()) / x.std())
        size = np.abs(change)
        if size.mean() == 0 or np.std(change[:-1]) == 0 or np.std(change[1:]) == 0:
            continue
        spread.append(size.std() / size.mean())
        above.append((size > 0.04).mean())
        follow.append(np.corrcoef(change[:-1], change[1:])[0, 1])
    return float(np.median(spread)), float(np.median(above)), float(np.median(follow))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("real")
    parser.add_argument("synthetic")
    parser.add_argument("--sample-len", type=int, required=True)
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--components", type=int, help="also the variance beyond K components")
    args = parser.parse_args()
    result = {"sample_len": args.sample_len}
    for side, path in (("real", args.real), ("synthetic", args.synthetic)):
        series = read(path, None)[0]
        profile, n = position_profile(series, args.sample_len)
        kinks, _ = position_profile(series, args.sample_len, order=2)
        worst, bend = int(np.argmax(profile)), int(np.argmax(kinks))
        kurtosis, kurtosis_middle = change_kurtosis(series, args.sample_len)
        shares = largest_change_positions(series, args.sample_len)
        most = [int(p) for p in np.argsort(-shares, kind="stable")[:3]]
        by_level = change_by_level(series)
        sizes = change_sizes(series)
        result[side] = {
            "path": path,
            "n_series": n,
            "seam": float(profile[-1]),
            "worst": float(profile[worst]),
            "worst_position": worst,
            "profile": [round(float(v), 4) for v in profile],
            "worst_kink": float(kinks[bend]),
            "worst_kink_position": bend,
            "kinks": [round(float(v), 4) for v in kinks],
            "change_kurtosis": kurtosis,
            "change_kurtosis_middle": kurtosis_middle,
            "largest_at": {str(p): round(float(shares[p]), 4) for p in most},
            "change_by_level": [round(float(v), 4) for v in by_level],
            "change_sizes": {
                "spread_over_mean": sizes[0],
                "share_above_0.04": sizes[1],
                "lag1": sizes[2],
            },
        }
        print(
            f"{side:9s} change at the seam / mean change {profile[-1]:.2f}; largest "
            f"{profile[worst]:.2f} at position {worst} of {args.sample_len}; largest change "
            f"of the change {kinks[bend]:.2f} at position {bend}; kurtosis of the changes "
            f"{kurtosis:.2f} ({kurtosis_middle:.2f} mid-step); largest change at position "
            + ", ".join(f"{p} ({shares[p]:.0%})" for p in most)
            + f" of the series ({n} series)"
        )
        print(
            f"{side:9s} change by tenth of the series' range / mean change: "
            + " ".join(f"{v:.2f}" for v in by_level)
        )
        print(
            f"{side:9s} sizes of the changes: spread / mean {sizes[0]:.3f}, share above 0.04 "
            f"{sizes[1]:.3f}, consecutive ones correlate {sizes[2]:.3f}"
        )
        if args.components:
            beyond = beyond_components(series, args.sample_len, args.components)
            result[side]["beyond_components"] = {str(args.components): beyond}
            print(
                f"{side:9s} variance of the steps beyond {args.components} components: {beyond:.3%}"
            )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
