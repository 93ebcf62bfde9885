"""Real series with their finest detail changed: how fine a texture the judges read.

Each series of a LONG table (``example_id``, ``step``, ``value``, a class column) is
split into its first K harmonics over its own length (its Fourier series up to K
cycles, as a closed outline is periodic over its length) and the rest, its *residual*.
The output table keeps the first part and puts back, per ``--residual``:

* ``none``: nothing (the series smoothed above K cycles);
* ``white``: white noise of the residual's own standard deviation;
* ``other``: the residual of another series of the same class (a real texture, not
  this series' own).

`independent_judge.py` on the table against the real one then says whether the judges
tell a series from itself with only that detail changed: if they do, a generator must
draw that detail, not only the shape.

    python benchmarks/harmonics_probe.py runs/leaves.csv runs/leaves-k40-other.csv \\
        --harmonics 40 --residual other --class-column species
    <aeon venv>/bin/python benchmarks/independent_judge.py runs/leaves.csv \\
        runs/leaves-k40-other.csv --class-column species

It imports nothing from dgan.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def split_harmonics(values: np.ndarray, harmonics: int) -> tuple[np.ndarray, np.ndarray]:
    """A series' first ``harmonics`` harmonics over its length, and the rest.

    Example:
        >>> t = np.arange(64)
        >>> x = np.sin(2 * np.pi * t / 64) + 0.1 * np.sin(2 * np.pi * 20 * t / 64)
        >>> smooth, rest = split_harmonics(x, 5)
        >>> bool(np.allclose(smooth, np.sin(2 * np.pi * t / 64))), round(float(rest.std()), 3)
        (True, 0.071)
    """
    spectrum = np.fft.rfft(values)
    spectrum[harmonics + 1 :] = 0
    smooth = np.fft.irfft(spectrum, len(values))
    return smooth, values - smooth


def probe_table(
    table: pd.DataFrame, harmonics: int, residual: str, class_column: str, seed: int = 0
) -> pd.DataFrame:
    """``table`` with each series' residual replaced as ``residual`` says (see above)."""
    rng = np.random.default_rng(seed)
    parts = {}
    for key, series in table.groupby("example_id", sort=False):
        smooth, rest = split_harmonics(series["value"].to_numpy(np.float64), harmonics)
        parts[key] = (series, smooth, rest, series[class_column].iloc[0])
    out = []
    for key, (series, smooth, rest, label) in parts.items():
        if residual == "white":
            smooth = smooth + rng.normal(0.0, rest.std(), len(rest))
        elif residual == "other":
            others = [k for k, p in parts.items() if p[3] == label and k != key]
            if others:
                smooth = smooth + np.resize(
                    parts[others[rng.integers(len(others))]][2], len(smooth)
                )
        changed = series.copy()
        changed["value"] = smooth
        out.append(changed)
    return pd.concat(out, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--harmonics", type=int, required=True)
    parser.add_argument("--residual", choices=("none", "white", "other"), default="none")
    parser.add_argument("--class-column", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = pd.read_csv(args.data)
    probe_table(table, args.harmonics, args.residual, args.class_column, args.seed).to_csv(
        args.out, index=False
    )
    spectra = [np.fft.rfft(s.to_numpy(np.float64)) for _, s in table.groupby("example_id")["value"]]
    beyond = [(abs(z[args.harmonics + 1 :]) ** 2).sum() / (abs(z[1:]) ** 2).sum() for z in spectra]
    print(f"median share of the variance above {args.harmonics} harmonics: {np.median(beyond):.4f}")


if __name__ == "__main__":
    main()
