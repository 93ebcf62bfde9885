"""The `dgan` command keeps OpenMP from spinning on shared machines and takes --threads."""

from __future__ import annotations

import subprocess
import sys

import torch

from dgan.cli.threads import choose_threads, prepare_openmp, usable_cores


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
    assert choose_threads() == usable_cores() and choose_threads(1) == 1
