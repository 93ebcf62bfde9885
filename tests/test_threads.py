"""The `dgan` command keeps OpenMP from spinning on shared machines and takes --threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from dgan.cli.threads import choose_threads, prepare_openmp, usable_cores

SRC = Path(__file__).resolve().parents[1] / "src"


def test_prepare_openmp_respects_the_users_choice():
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert prepare_openmp(env) is None and env == {"OMP_WAIT_POLICY": "ACTIVE"}


def test_the_command_sets_the_passive_policy_before_torch_loads():
    code = (
        "import os, sys\n"
        "import dgan.cli.launch\n"
        "assert 'torch' not in sys.modules, 'importing the entry point loaded torch'\n"
        "from dgan.cli.threads import prepare_openmp\n"
        "prepare_openmp()\n"
        "import torch\n"
        "print(os.environ['OMP_WAIT_POLICY'])\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "PASSIVE"


def test_threads_flag_reaches_torch(tmp_path):
    from dgan.cli.main import main

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        status = main(
            [
                "--threads",
                "2",
                "generate",
                str(tmp_path / "missing.dgan"),
                "-n",
                "1",
                "-o",
                str(tmp_path / "out.csv"),
            ]
        )
        assert status == 1  # the model file does not exist: the flag was still applied
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_default_threads_are_the_usable_cores():
    assert choose_threads(environ={}) == usable_cores() and choose_threads(1) == 1
    assert choose_threads(environ={"OMP_NUM_THREADS": ""}) == usable_cores()  # set, empty


def test_the_command_honours_omp_num_threads(tmp_path):
    # More threads than cores, so that the answer cannot come from counting the cores.
    wanted = usable_cores() + 1
    pd.DataFrame({"t0": np.arange(40.0), "t1": np.arange(40.0) % 7}).to_csv(
        tmp_path / "data.csv", index=False
    )
    # No GPU: the plan's device line is the CPU's, which is the one with threads.
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": str(wanted)}
    env["CUDA_VISIBLE_DEVICES"] = ""
    out = subprocess.run(
        [sys.executable, "-m", "dgan", "train", "data.csv", "--dry-run", "--epochs", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"  device cpu, {wanted} CPU threads" in out.splitlines(), out


def test_the_plan_counts_one_thread_in_the_singular():
    from dgan import DGAN, DGANConfig

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        config = DGANConfig(max_sequence_len=2, sample_len=1, batch_size=8, cuda=False)
        plan = DGAN(config).plan(np.zeros((16, 2, 1)), warm_up_steps=0)
    finally:
        torch.set_num_threads(before)
    assert "  device cpu, 1 CPU thread" in str(plan).splitlines()
