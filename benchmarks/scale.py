"""How preparation, training and generation grow with the number of series.

Random data, 24 steps x 4 continuous features + 1 discrete attribute (5 categories), at
10^4, 10^5 and 10^6 series (``--sizes``). Each measurement runs in a fresh process, its peak
RSS (VmHWM) reset once the data is made, on one thread:

* ``train_numpy``: one `DGAN.train_numpy` call, 50 training steps, preparation included
  (the issue-35 target: time and peak memory growth over the data's size);
* ``stages``: the table path broken into its stages, each timed with the peak RSS after
  it: read (Parquet, LONG: one row per step), check, encode, build (the networks), to
  device, first step, the
  other 49 steps, generate (as many series as trained on) and write (to a table and a
  Parquet file);
* ``cli``: ``dgan train`` on the same Parquet file (plan with its warm-up included).

Memory is the growth of the peak RSS over the RSS before the measured call (the data
already made); "data" is the user's feature array (float32) and attributes.

One command measures this checkout, and with ``--baseline REV`` the code of git revision
REV too (its ``src/`` is extracted to a temporary folder), size by size, alternately::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/scale.py --baseline fe7e006

Results go to ``benchmarks/results/scale-<label>-<date>.json``; docs/performance.md shows
them. Timings from a shared machine are a guide only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STEPS, LENGTH, FEATURES, CATEGORIES, SAMPLE_LEN = 50, 24, 4, 5, 2
KINDS = ("train_numpy", "stages", "cli")


# ----- the data -------------------------------------------------------------------------
def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(features (n, 24, 4) float32, attributes (n, 1) int64), uniform random."""
    rng = np.random.default_rng(seed)
    features = rng.random((n, LENGTH, FEATURES), dtype=np.float32)
    attributes = rng.integers(0, CATEGORIES, size=(n, 1))
    return features, attributes


def write_parquet(n: int, path: Path) -> None:
    """The same data as a LONG table: example_id, time, kind (the attribute), x0..x3."""
    import pandas as pd

    features, attributes = make_data(n)
    columns: dict[str, Any] = {
        "example_id": np.repeat(np.arange(n), LENGTH),
        "time": np.tile(np.arange(LENGTH), n),
        "kind": np.repeat(attributes[:, 0], LENGTH),
    }
    for j in range(FEATURES):
        columns[f"x{j}"] = features[:, :, j].reshape(-1)
    pd.DataFrame(columns).to_parquet(path, index=False)


# ----- measurements (each in its own process) -------------------------------------------
def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    """This process's peak RSS: VmHWM, not ru_maxrss, which a process started by another
    inherits from it (the driver's RSS at the fork would count as the measured peak)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _start_measuring() -> int:
    """The RSS now, with the peak reset to it (Linux: so that making the data, before the
    measured call, cannot set the peak)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # resets the process's peak RSS (Linux >= 4.0)
    except OSError:
        pass
    return _rss()


def _config(n: int):
    from dgan import DGANConfig

    return DGANConfig(
        max_sequence_len=LENGTH, sample_len=SAMPLE_LEN, training_steps=STEPS, cuda=False
    )


def measure_train_numpy(n: int, _: Path) -> dict[str, Any]:
    from dgan import DGAN, OutputType

    features, attributes = make_data(n)
    base = _start_measuring()
    start = time.perf_counter()
    model = DGAN(_config(n))
    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=[OutputType.DISCRETE],
        progress_bar=False,
    )
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_growth_bytes": _peak() - base, "base_rss_bytes": base}


def measure_stages(n: int, table: Path) -> dict[str, Any]:
    import torch

    from dgan import DGAN
    from dgan.cli.tables import read_table, write_table
    from dgan.prepare import FrameSource, prepare
    from dgan.tabular.columns import Columns
    from dgan.tabular.to_frame import generated_frame
    from dgan.train.batch import Batch

    stages: dict[str, dict[str, float]] = {}
    base = _start_measuring()
    clock = [time.perf_counter()]

    def done(stage: str) -> None:
        now = time.perf_counter()
        stages[stage] = {"seconds": now - clock[0], "peak_growth_bytes": _peak() - base}
        clock[0] = now

    df = read_table(table)
    done("read")
    columns = Columns(
        attribute_columns=["kind"],
        example_id_column="example_id",
        time_column="time",
        discrete_columns=["kind"],
        df_style="long",
    )
    config = _config(n)
    checked = FrameSource(df, columns).check(config.max_sequence_len)
    done("check")
    prepared = prepare(checked, config)
    del checked
    done("encode")
    model = DGAN(prepared.config)
    model.build(prepared.encoder, prepared.layout)
    encoded = prepared.encoded
    del prepared
    done("build")
    batch = Batch.from_encoded(encoded, model.device)
    done("to device")
    del batch
    first: list[float] = []

    def on_step(_info) -> None:
        if not first:
            first.append(time.perf_counter())

    model.train_encoded(encoded, on_step, progress_bar=False)
    stages["first step"] = {"seconds": first[0] - clock[0], "peak_growth_bytes": _peak() - base}
    clock[0] = first[0]
    done("other steps")
    del encoded
    with torch.no_grad():
        attributes, features = model.generate_numpy(n)
    done("generate")
    frame = generated_frame(attributes, features, model.data_frame_layout)
    del attributes, features
    with tempfile.TemporaryDirectory() as folder:
        write_table(frame, Path(folder) / "synthetic.parquet")
    done("write")
    return {"stages": stages, "base_rss_bytes": base, "table_bytes": table.stat().st_size}


def measure_cli(n: int, table: Path) -> dict[str, Any]:
    from dgan.cli.main import main

    base = _start_measuring()
    with tempfile.TemporaryDirectory() as folder:
        argv = [
            "train", str(table), "-o", str(Path(folder) / "model.dgan"),
            "--example-id", "example_id", "--time", "time", "--attributes", "kind",
            "--discrete", "kind", "--training-steps", str(STEPS),
            "--max-sequence-len", str(LENGTH), "--sample-len", str(SAMPLE_LEN),
        ]  # fmt: skip
        start = time.perf_counter()
        code = main(argv)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "exit_code": code, "peak_growth_bytes": _peak() - base}


MEASURES = {"train_numpy": measure_train_numpy, "stages": measure_stages, "cli": measure_cli}


def child(kind: str, n: int, table: Path, src: Path) -> None:
    """Run one measurement with the dgan of ``src`` and print its JSON on the last line."""
    sys.path.insert(0, str(src))
    import torch

    torch.set_num_threads(1)
    import dgan

    assert Path(dgan.__file__).resolve().is_relative_to(src.resolve()), dgan.__file__
    result = MEASURES[kind](n, table)
    print(json.dumps(result))


# ----- the driver -----------------------------------------------------------------------
def run_child(kind: str, n: int, table: Path, src: Path) -> dict[str, Any]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    command = [sys.executable, __file__, "--child", kind, "--n", str(n)]
    command += ["--table", str(table), "--src", str(src)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:], "returncode": done.returncode}
    return json.loads(done.stdout.strip().splitlines()[-1])


def extract(revision: str, into: Path) -> Path:
    """The ``src/`` of git ``revision``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--baseline", help="git revision to measure too (e.g. main)")
    parser.add_argument("--baseline-only", action="store_true", help="skip this checkout")
    parser.add_argument("--label", default="cpu", help="name part of the result file")
    parser.add_argument("--markdown", nargs="+", type=Path, help="print tables of these results")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--table", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--src", type=Path, default=REPO / "src", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.n, args.table, args.src)
        return
    if args.markdown:
        print(markdown(args.markdown))
        return

    sys.path.insert(0, str(HERE))
    from harness import machine_info, write_result

    codes = {} if args.baseline_only else {"this checkout": REPO / "src"}
    results: dict[str, Any] = {"machine": machine_info(REPO), "threads": 1, "sizes": {}}
    results["workload"] = {
        "length": LENGTH, "continuous_features": FEATURES, "discrete_attributes": 1,
        "categories": CATEGORIES, "training_steps": STEPS, "sample_len": SAMPLE_LEN,
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        if args.baseline:
            codes[f"baseline {args.baseline}"] = extract(args.baseline, Path(folder))
            results["baseline"] = args.baseline
        for n in args.sizes:
            features, attributes = make_data(n)
            data_bytes = features.nbytes + attributes.nbytes
            del features, attributes
            table = Path(folder) / f"scale-{n}.parquet"
            write_parquet(n, table)
            entry: dict[str, Any] = {"data_bytes": data_bytes}
            for name, src in codes.items():
                for kind in args.kinds:
                    result = run_child(kind, n, table, src)
                    entry.setdefault(name, {})[kind] = result
                    print(f"{n:>9,} {name:<22} {kind:<12} {_summary(result, data_bytes)}")
            table.unlink()
            results["sizes"][str(n)] = entry
    path = write_result(results, f"scale-{args.label}", "cpu", HERE / "results")
    print(f"wrote {path}")


def markdown(paths: list[Path]) -> str:
    """docs/performance.md's tables from result files: every code measured, by size."""
    header = "| code | series | data | train_numpy (50 steps) | peak growth "
    rows = [header + "| dgan train (Parquet) | peak growth |", "|---|---|---|---|---|---|---|"]
    stage_rows = []
    for path in paths:
        result = json.loads(Path(path).read_text())
        for n, entry in result["sizes"].items():
            data = entry["data_bytes"]
            for code, kinds in entry.items():
                if code == "data_bytes":
                    continue
                cells = [code, f"{int(n):,}", f"{data / 2**20:,.0f} MiB"]
                for kind in ("train_numpy", "cli"):
                    r = kinds.get(kind, {})
                    if "seconds" in r:
                        cells += [f"{r['seconds']:,.1f} s", f"{r['peak_growth_bytes'] / data:.1f}x"]
                    else:
                        cells += ["-", "-"]
                rows.append("| " + " | ".join(cells) + " |")
                stages = kinds.get("stages", {}).get("stages")
                if stages:
                    text = ", ".join(
                        f"{k} {v['seconds']:.1f} s ({v['peak_growth_bytes'] / data:.1f}x)"
                        for k, v in stages.items()
                    )
                    stage_rows.append(f"| {code} | {int(n):,} | {text} |")
    stage_table = ["| code | series | stage: time (peak growth after it) |", "|---|---|---|"]
    return "\n".join(rows) + "\n\n" + "\n".join(stage_table + stage_rows) + "\n"


def _summary(result: dict[str, Any], data_bytes: int) -> str:
    if "error" in result:
        return f"failed: {result['error']}"
    if "stages" in result:
        return ", ".join(
            f"{stage} {s['seconds']:.1f}s/{s['peak_growth_bytes'] / data_bytes:.1f}x"
            for stage, s in result["stages"].items()
        )
    growth = result["peak_growth_bytes"] / data_bytes
    return f"{result['seconds']:.1f} s, peak growth {growth:.1f}x the data"


if __name__ == "__main__":
    main()
