"""One command for every GPU number: the tests, the precision sweep, Stocks and torchrun.

    python benchmarks/gpu_suite.py --out DIR                 # all four parts, on CUDA
    python benchmarks/gpu_suite.py --out DIR --parts 2       # one part (or 1,4 ...)
    python benchmarks/gpu_suite.py --smoke --out DIR         # every part on CPU, tiny
    python benchmarks/gpu_suite.py --tables --out DIR        # print the tables again

The parts, in this order, each within its minutes on one H100 (`PARTS`, 24 in all):

1. ``tests`` (`gpu_suite_tests`): the ``gpu``-marked tests, then the fast suite, on CUDA;
   pass or fail per test.
2. ``precision`` (`gpu_suite_precision`): docs/precision.md's sweep (small and large model,
   batch 256 to 16384; fp32, TF32, fp16 and bf16, the penalty in fp32 and in autocast):
   throughput, peak memory, host syncs in the timed window, skipped steps; and
   gretel-synthetics' DGAN (fp32 and ``mixed_precision_training``) on the same workloads
   in the same process when it is installed.
3. ``stocks`` (`gpu_suite_stocks`): Stocks at the defaults (3 seeds: discriminative and
   predictive scores, wall time), and at batch 1,024 with scaled learning rates.
4. ``torchrun`` (`gpu_suite_torchrun`): ``torchrun`` (world size 1; nccl on CUDA, gloo
   on a CPU) trains and resumes, through the command line and through dgan's collectives.

Each part writes ``DIR/partN-NAME.json`` and ``DIR/partN-NAME.md`` (its Markdown tables,
in the shapes of docs/precision.md and docs/quality.md) when it starts, after each
measurement and when it ends, so a run cut off keeps what it did. Run it again with the
same ``--out`` to go on: a finished part is skipped (``--redo`` runs it again) and a part
cut off keeps its finished measurements. Within its minutes a part starts no measurement
it expects to overrun, and lists what it left out. A part that fails is recorded
(``error``) and the next one runs; the exit code is 1 if any part failed.

``--smoke`` runs every part on the CPU at tiny sizes, one seed and few steps, with gloo
for torchrun, in about two minutes (tests/test_gpu_suite.py runs it). The set-up on a bare
GPU machine and the commands that fit its limits are in docs/precision.md ("GPU run").
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "src" / "dgan").is_dir():
    sys.path.insert(0, str(ROOT / "src"))  # measure this checkout, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from harness import json_safe, machine_info  # noqa: E402


@dataclass(frozen=True)
class Part:
    """One part of the suite: its number, name, minutes on one H100 and module."""

    number: int
    name: str
    minutes: float
    module: str

    @property
    def stem(self) -> str:
        return f"part{self.number}-{self.name}"


PARTS = (
    Part(1, "tests", 6, "gpu_suite_tests"),
    Part(2, "precision", 8, "gpu_suite_precision"),
    Part(3, "stocks", 8, "gpu_suite_stocks"),
    Part(4, "torchrun", 2, "gpu_suite_torchrun"),
)
SMOKE_MINUTES = 3.0
"""Each part's budget in ``--smoke`` (it needs well under a minute on a quiet CPU)."""


@dataclass
class PartContext:
    """What a part's ``run(context)`` gets: the options, the part's result to fill in (a
    JSON-ready dict), what an earlier, cut-off run of the part left (or None), its
    clock, and `save`, which writes the JSON and the tables."""

    args: argparse.Namespace
    part: Part
    result: dict[str, Any]
    previous: dict[str, Any] | None
    deadline: float  # time.monotonic() by which the part must be done
    table: Callable[[dict[str, Any]], str]

    @property
    def smoke(self) -> bool:
        return self.args.smoke

    @property
    def device(self) -> str:
        return self.args.device

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()

    def save(self) -> None:
        """Write ``partN-NAME.json`` and ``.md``, each whole or not at all."""
        out = self.args.out
        _write(out / f"{self.part.stem}.json", json.dumps(json_safe(self.result), indent=1))
        _write(out / f"{self.part.stem}.md", self.table(self.result))


def _write(path: Path, text: str) -> None:
    # Replacing the file in one step: a run killed mid-write leaves the previous version.
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text + "\n")
    os.replace(temporary, path)


# ----- the machine ----------------------------------------------------------------------
def machine_record() -> dict[str, Any]:
    """`harness.machine_info` (CPU bf16/fp16 hardware from /proc/cpuinfo and torch, GPUs,
    versions, commit), plus lscpu's model name and low-precision flags (AMX, AVX-512-BF16;
    the CPU beside the GPU may have them), nvidia-smi's GPU line and the load average."""
    info = machine_info(ROOT)
    info["lscpu"] = lscpu()
    info["nvidia_smi"] = _output(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm",
         "--format=csv,noheader"]
    )  # fmt: skip
    info["load_average"] = list(os.getloadavg())
    info["tf32_at_start"] = {
        "matmul": torch.backends.cuda.matmul.allow_tf32,
        "cudnn": torch.backends.cudnn.allow_tf32,
    }
    return info


def lscpu() -> dict[str, Any] | None:
    """lscpu's model name and its flags for native 16-bit maths (``amx_*``,
    ``avx512_bf16``, ``avx512_fp16``); None where lscpu is missing."""
    text = _output(["lscpu"], env={**os.environ, "LC_ALL": "C"})
    if text is None:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    flags = fields.get("Flags", "").split()
    wanted = [f for f in flags if f.startswith("amx") or f in ("avx512_bf16", "avx512_fp16")]
    return {"model_name": fields.get("Model name", "").strip(), "low_precision_flags": wanted}


def _output(command: list[str], env: dict[str, str] | None = None) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# ----- running the parts ----------------------------------------------------------------
def run_part(part: Part, args: argparse.Namespace, machine: dict[str, Any]) -> bool:
    """Run one part unless an earlier run finished it; False if it failed."""
    module = importlib.import_module(part.module)
    path = args.out / f"{part.stem}.json"
    previous = json.loads(path.read_text()) if path.exists() and not args.redo else None
    if previous and previous.get("complete"):
        print(f"part {part.number} ({part.name}): done in an earlier run, skipped (--redo)")
        return True
    minutes = SMOKE_MINUTES if args.smoke else args.minutes.get(part.number, part.minutes)
    started = time.monotonic()
    result: dict[str, Any] = {
        "part": part.number,
        "name": part.name,
        "complete": False,
        "smoke": args.smoke,
        "device": args.device,
        "budget_minutes": minutes,
        "started_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": machine,
    }
    if previous and not previous.get("complete"):
        result["resumed_from"] = previous.get("started_utc")
    context = PartContext(args, part, result, previous, started + 60 * minutes, module.table)
    print(f"part {part.number} ({part.name}): up to {minutes:g} minutes", flush=True)
    context.save()
    try:
        module.run(context)
    except Exception:  # recorded, and the next part still runs: a GPU lease is short
        result["error"] = traceback.format_exc()[-4000:]
        print(result["error"], file=sys.stderr, flush=True)
    result["wall_seconds"] = time.monotonic() - started
    result["complete"] = "error" not in result
    context.save()
    state = "done" if result["complete"] else "FAILED"
    print(f"part {part.number} ({part.name}): {state} in {result['wall_seconds']:.0f} s")
    return result["complete"]


def print_tables(args: argparse.Namespace) -> None:
    """Rewrite every part's ``.md`` from its JSON in ``--out`` and print them all."""
    for part in PARTS:
        path = args.out / f"{part.stem}.json"
        if not path.exists():
            continue
        text = importlib.import_module(part.module).table(json.loads(path.read_text()))
        _write(path.with_suffix(".md"), text)
        print(f"<!-- {path.name} -->\n{text}\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the results")
    parser.add_argument(
        "--parts", default="1,2,3,4", help="comma list of part numbers or names (default all)"
    )
    parser.add_argument("--smoke", action="store_true", help="every part on CPU, tiny sizes")
    parser.add_argument(
        "--redo", action="store_true", help="run the parts again from the start, finished or not"
    )
    parser.add_argument("--tables", action="store_true", help="only print the tables of --out")
    parser.add_argument(
        "--stocks-csv",
        type=Path,
        default=None,
        help="Stocks' stock_data.csv (default: $DGAN_STOCKS_CSV, else the shared data "
        "folder beside the checkout, as benchmarks/fidelity_data.py finds it)",
    )
    parser.add_argument(
        "--stocks-variants",
        default=None,
        help="part 3: a comma list of the variants to run (default all: 'defaults,batch 1024')",
    )
    parser.add_argument(
        "--keep-windows",
        action="store_true",
        help="part 3: keep each run's synthetic windows in --out; run the part again with "
        "the same --out (on any machine) to score the runs whose scoring was cut off",
    )
    parser.add_argument(
        "--minutes",
        default="",
        help="other budgets for some parts, as PART:MINUTES pairs (e.g. 1:3,2:3.5): to fit "
        "a lease shorter than the parts' 24 minutes; a part starts nothing it expects to "
        "overrun, so a smaller budget measures less",
    )
    parser.add_argument(
        "--test-workers",
        type=int,
        default=None,
        help="pytest-xdist processes for part 1 (default: 8 on CUDA when xdist is "
        "installed, else none)",
    )
    args = parser.parse_args(argv)
    names = {str(p.number): p for p in PARTS} | {p.name: p for p in PARTS}
    unknown = [w for w in args.parts.split(",") if w.strip() not in names]
    if unknown:
        parser.error(f"--parts: unknown {unknown}; use numbers 1-4 or {[p.name for p in PARTS]}")
    wanted = {names[w.strip()] for w in args.parts.split(",")}
    args.selected = [p for p in PARTS if p in wanted]  # always in the suite's order
    args.minutes = _minutes(parser, args.minutes, names)
    args.device = "cpu" if args.smoke or not torch.cuda.is_available() else "cuda"
    if args.stocks_csv is not None:
        if not args.stocks_csv.is_file():
            parser.error(f"--stocks-csv {args.stocks_csv}: no such file")
        # How benchmarks/fidelity_data.py is told where Stocks is; score workers inherit it.
        os.environ["DGAN_STOCKS_CSV"] = str(args.stocks_csv.resolve())
    return args


def _minutes(
    parser: argparse.ArgumentParser, text: str, names: dict[str, Part]
) -> dict[int, float]:
    """``--minutes``' PART:MINUTES pairs as {part number: minutes}, or a parser error."""
    budgets: dict[int, float] = {}
    for pair in filter(None, (w.strip() for w in text.split(","))):
        name, _, value = pair.partition(":")
        try:
            minutes = float(value)
        except ValueError:
            minutes = -1.0
        if name.strip() not in names or not minutes > 0:
            parser.error(
                f"--minutes: {pair!r} is not PART:MINUTES with a part of 1-4 and minutes > 0 "
                "(e.g. --minutes 1:3,2:3.5)"
            )
        budgets[names[name.strip()].number] = minutes
    return budgets


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.tables:
        print_tables(args)
        return 0
    if args.device == "cpu" and not args.smoke:
        print("No CUDA device: the parts run on the CPU at full size (use --smoke to try).")
    machine = machine_record()
    failed = [p.number for p in args.selected if not run_part(p, args, machine)]
    print_tables(args)
    if failed:
        print(f"parts {failed} failed: see 'error' in their JSON", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
