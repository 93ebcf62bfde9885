"""Part 4 of benchmarks/gpu_suite.py: torchrun (world size 1) trains and resumes.

Two ways, each checked and timed:

* ``cli``: ``torchrun --standalone --nproc-per-node=1 -m dgan train`` on 24 series of the
  bundled weather data for 2 epochs with a checkpoint per epoch, then ``--resume`` to 4
  epochs (as tests/test_distributed.py launches it). With one process dgan joins no
  process group (`dgan.train.distributed.launched` is False), so this checks the command
  line under torchrun on the GPU, not the collectives.
* ``collectives``: `worker` under ``torchrun --nproc-per-node=1`` makes dgan join a
  process group of one (nccl on CUDA, gloo on a CPU: `dgan.train.distributed.join`) by
  declaring the process launched, so training runs every collective of a multi-GPU run
  (config and data checks, the broadcast of the start, the gradient all-reduce,
  synchronised BatchNorm in float64, the epoch-end all-reduce); it trains 2 epochs with
  checkpoints, then resumes them to 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dgan import DGAN
from dgan.datasets import load_demo

if TYPE_CHECKING:
    from gpu_suite import PartContext

ROOT = Path(__file__).resolve().parents[1]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=1"]
LONG = ["--example-id", "example_id", "--time", "day", "--attributes", "month"]


def run(context: PartContext) -> None:
    """The command line's train and resume, then the collectives' (see the module doc)."""
    result = context.result
    checks = result["checks"] = []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])
        ),
        "OMP_NUM_THREADS": "1",
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "weather.csv"
        load_demo().head(28 * 24).to_csv(data, index=False)  # 24 series of 28 days
        ckpt = folder / "ckpt"
        base = ["-m", "dgan", "train", str(data), *LONG, "--batch-size", "8", "--seed", "0"]
        first = [*base, "-o", str(folder / "first.dgan"), "--epochs", "2"]
        first += ["--checkpoint-dir", str(ckpt), "--checkpoint-every", "1"]
        resumed = [
            *base,
            "-o",
            str(folder / "resumed.dgan"),
            "--epochs",
            "4",
            "--resume",
            str(ckpt),
        ]
        for name, arguments, model, epochs in (
            ("cli train", first, "first.dgan", 2),
            ("cli resume", resumed, "resumed.dgan", 4),
        ):
            check = _launch(name, arguments, env, context)
            if check["returncode"] == 0:
                check.update(_model_facts(folder / model, epochs))
            checks.append(check)
            context.save()
        report = folder / "collectives.json"
        check = _launch(
            "collectives", [__file__, "--worker", str(report), str(folder)], env, context
        )
        if check["returncode"] == 0:
            check.update(json.loads(report.read_text()))
            check["ok"] = check["joined"] and check["epochs"] == 2 and check["resumed_epochs"] == 3
        checks.append(check)
    result["all_ok"] = all(c.get("ok") for c in checks)


def _launch(name: str, arguments: list[str], env: dict, context: PartContext) -> dict[str, Any]:
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*TORCHRUN, *arguments],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=max(context.seconds_left(), 10),
        )
    except subprocess.TimeoutExpired:
        return {"name": name, "returncode": None, "ok": False, "error": "out of the part's time"}
    check = {"name": name, "returncode": done.returncode, "seconds": time.monotonic() - started}
    device = [line.strip() for line in done.stdout.splitlines() if line.startswith("  device ")]
    check["plan_device"] = device[0] if device else None
    if "--resume" in arguments:  # the command says which checkpoint it continues from
        said = [line.strip() for line in done.stdout.splitlines() if "resum" in line.lower()]
        check["resume_message"] = said[0] if said else None
    check["ok"] = done.returncode == 0
    if done.returncode != 0:
        check["stderr_tail"] = done.stderr[-3000:]
    print(f"  {name}: exit {done.returncode} in {check['seconds']:.0f} s", flush=True)
    return check


def _model_facts(path: Path, epochs: int) -> dict[str, Any]:
    history = DGAN.load(path).history
    return {
        "epochs": len(history),
        "ok": len(history) == epochs,
        "precision": history[-1]["precision"],
    }


def worker(report: Path, folder: Path) -> None:
    """One torchrun process: dgan trains in a process group of one, then resumes."""
    import numpy as np
    import torch
    import torch.distributed as dist

    import dgan.train.distributed as distributed
    from dgan import DGANConfig, OutputType

    # With one process dgan would join no group; declaring it launched makes it join one
    # (nccl on CUDA) and run every collective of a multi-GPU run on this GPU.
    distributed.launched = lambda: True
    rng = np.random.default_rng(0)
    features = rng.normal(size=(64, 12, 2))
    attributes = np.stack([rng.integers(0, 3, 64), rng.normal(size=64)], axis=1)
    types = [OutputType.DISCRETE, OutputType.CONTINUOUS]
    checkpoints = str(folder / "collective-ckpt")
    settings = dict(
        max_sequence_len=12, sample_len=3, batch_size=16, seed=0, cuda=torch.cuda.is_available(),
        attribute_num_units=16, feature_num_units=16, discriminator_num_units=16,
        checkpoint_dir=checkpoints, checkpoint_every=1,
    )  # fmt: skip
    model = DGAN(DGANConfig(**settings, epochs=2))
    model.train_numpy(features, attributes=attributes, attribute_types=types, progress_bar=False)
    facts = {
        "backend": dist.get_backend() if dist.is_initialized() else None,
        "world_size": dist.get_world_size() if dist.is_initialized() else None,
        "joined": model.trainer.collective is not None,
        "device": str(model.device),
        "epochs": len(model.history),
    }
    model = DGAN(DGANConfig(**settings, epochs=3))
    model.train_numpy(
        features, attributes=attributes, attribute_types=types, progress_bar=False,
        resume_from=checkpoints,
    )  # fmt: skip
    losses = [h["discriminator_loss"] for h in model.history]
    facts |= {
        "resumed_epochs": len(model.history),
        "losses_finite": bool(np.isfinite(losses).all()),
    }
    report.write_text(json.dumps(facts))
    if dist.is_initialized():  # a group of one: nothing to wait for
        dist.destroy_process_group()


def table(result: dict[str, Any]) -> str:
    """One row per check."""
    lines = [
        "| torchrun check | ok | exit | seconds | epochs | device / backend |",
        "|---|---|---:|---:|---:|---|",
    ]
    for c in result.get("checks") or []:
        seconds = "" if c.get("seconds") is None else f"{c['seconds']:.0f}"
        where = c.get("backend") or c.get("plan_device") or ""
        if c.get("device"):
            where = f"{c['device']}, {where}"
        epochs = c.get("epochs", "")
        if c.get("resumed_epochs") is not None:
            epochs = f"{epochs} then {c['resumed_epochs']}"
        lines.append(
            f"| {c['name']} | {'yes' if c.get('ok') else 'NO'} | {c.get('returncode')} | {seconds} "
            f"| {epochs} | {where} |"
        )
    if not result.get("checks"):
        lines.append("| PENDING |  |  |  |  |  |")
    if result.get("error"):
        lines += ["", f"The part failed: {result['error'].strip().splitlines()[-1]}"]
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]), Path(sys.argv[3]))
