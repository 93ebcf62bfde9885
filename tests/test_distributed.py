"""Several processes training one model (dgan.train.distributed), on CPU with gloo.

The 2-process runs are real: two Python processes that rendezvous over TCP as torchrun's
would, each on one thread (tests/distributed_worker.py).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

import distributed_worker as worker
from dgan import DGAN
from dgan.errors import ParameterError
from dgan.storage.checkpoint import find_resume_point
from dgan.train.distributed import Collective, is_main_process, launched, training_device
from dgan.train.trainer import Trainer

TESTS = Path(__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_env() -> dict[str, str]:
    """Two processes on the CPU (gloo), on a machine with one GPU too: there dgan would
    take cuda:0 and cuda:1."""
    src = str(TESTS.parent / "src")
    return {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


def _launch(out: Path, fail_rank: int = -1, **environment: str) -> list[subprocess.Popen]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),
        "OMP_NUM_THREADS": "1",
        "DGAN_DISTRIBUTED_TIMEOUT_S": "60",
        **environment,
    }
    port = str(_free_port())
    script = str(TESTS / "distributed_worker.py")
    return [
        subprocess.Popen(
            [sys.executable, script, str(rank), "2", port, str(out), str(fail_rank)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in (0, 1)
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """The output folder of one 2-process run of distributed_worker.py."""
    out = tmp_path_factory.mktemp("distributed")
    # A second try with a fresh port: the free port found by _free_port() can be taken by
    # another process before rank 0 binds it (seen once in ~10 runs on a busy machine).
    for _attempt in range(2):
        failures = []
        for rank, p in enumerate(_launch(out)):
            _, stderr = p.communicate(timeout=240)
            if p.returncode != 0:
                failures.append(f"rank {rank} failed:\n{stderr[-3000:]}")
        if not failures:
            return out
    raise AssertionError("\n".join(failures))


def _ranks(out: Path, kind: str) -> tuple[dict, dict]:
    return load_file(str(out / f"{kind}-0.safetensors")), load_file(
        str(out / f"{kind}-1.safetensors")
    )


def _one_process(config, kind: str = "plain") -> tuple[DGAN, dict]:
    """Train ``config`` on the worker's data in this process; also returns the first
    critic step's and generator step's gradients."""
    first: dict[str, torch.Tensor] = {}

    def recorder(trainer):
        return lambda optimizers: worker.first_gradients(trainer, optimizers, first)

    original = Trainer.gradient_hook
    Trainer.gradient_hook = property(recorder)  # the hook after each backward
    try:
        model = DGAN(config)
        if kind == "plain":
            model.train_numpy(worker.plain_data(), progress_bar=False)
        else:
            features, attributes = worker.bn_data()
            model.train_numpy(
                features,
                attributes=attributes,
                attribute_types=worker.ATTRIBUTE_TYPES,
                progress_bar=False,
            )
    finally:
        Trainer.gradient_hook = original
    return model, first


@pytest.mark.parametrize("kind", ["plain", "bn"])
def test_both_ranks_end_with_identical_weights(run, kind):
    rank0, rank1 = _ranks(run, kind)
    assert rank0.keys() == rank1.keys()
    if kind == "bn":  # BatchNorm running statistics are averaged at epoch ends
        assert any("running_mean" in k for k in rank0)
        assert any(k.startswith("generator_ema.") for k in rank0)
        assert any(k.startswith("temporal_critic.") for k in rank0)
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key


def test_private_training_draws_and_adds_noise_alike_on_every_rank(run):
    pytest.importorskip("opacus")
    rank0, rank1 = _ranks(run, "dp")
    assert any(k.startswith("temporal_critic.") for k in rank0)
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key
    spent = [float((run / f"dp-epsilon-{rank}.txt").read_text()) for rank in (0, 1)]
    assert spent[0] == spent[1] and 0 < spent[0] <= 8.0


@pytest.mark.parametrize("kind", ["plain", "bn", "gpbatch"])
def test_first_gradients_equal_one_process_on_the_whole_batch(run, kind):
    """Each rank computed its half of the batch, gradient penalty included
    (autograd.grad with create_graph, then one backward), BatchNorm statistics over both
    halves, then all-reduced: the one-process gradients of the whole batch, critic's and
    generator's, up to float32 summation order."""
    config = {
        "plain": worker.plain_config(),
        "bn": worker.bn_config(),
        "gpbatch": worker.bn_config(gradient_penalty_norm="batch"),
    }[kind]
    _, expected = _one_process(config, kind)
    assert any(k.startswith("generator.") for k in expected)
    assert any(k.startswith("critic.") for k in expected)
    prefix = "" if kind == "plain" else f"{kind}-"
    for grads in _ranks(run, f"{prefix}grads"):
        assert grads.keys() == expected.keys()
        for key, value in expected.items():
            torch.testing.assert_close(grads[key], value, rtol=1e-5, atol=1e-6, msg=key)


def test_two_processes_train_like_one_without_batchnorm(run):
    """Stated tolerance: 1e-6 absolute on every weight after 6 steps (measured: ~1e-8)."""
    model, _ = _one_process(worker.plain_config())
    rank0, _ = _ranks(run, "plain")
    for key, value in worker.weights(model).items():
        torch.testing.assert_close(rank0[key], value, rtol=0, atol=1e-6)


@pytest.mark.parametrize("kind", ["bn", "gpbatch"])
def test_two_processes_train_like_one_with_synchronised_batchnorm(run, kind):
    """Stated tolerances after 6 steps: BatchNorm running statistics within 1e-4
    (measured ~1e-5; per-process statistics were 2e-2 off), weights within 1e-3 (Adam
    divides tiny gradients by their own size, so last-bit differences grow to ~2e-4).
    "gpbatch": the same with gretel's batch-wide penalty norm, taken over both shards."""
    penalty_norm = "batch" if kind == "gpbatch" else "example"
    model, _ = _one_process(worker.bn_config(gradient_penalty_norm=penalty_norm), "bn")
    rank0, _ = _ranks(run, kind)
    for key, value in worker.weights(model).items():
        atol = 1e-4 if "running_" in key else 1e-3
        torch.testing.assert_close(rank0[key], value, rtol=0, atol=atol, msg=key)


def test_a_time_budget_stops_every_rank_at_the_same_step(run):
    """Each process reads its own clock; they decide together at the first sync point (the
    end of the first 3-step epoch here), or one would wait forever in an all-reduce."""
    steps = [(run / f"timed-steps-{rank}.txt").read_text() for rank in (0, 1)]
    assert steps == ["3", "3"]


def test_history_losses_are_the_same_on_every_rank(run):
    assert (run / "history-0.txt").read_text() == (run / "history-1.txt").read_text()


LOSSES = ("discriminator_loss", "gradient_penalty", "generator_loss")


def _losses(history: list[dict]) -> list[list[float]]:
    return [[entry[name] for name in LOSSES] for entry in history]


def test_history_losses_are_those_of_one_process(run):
    """Before: every epoch's mean losses were divided by the number of processes (each
    rank counted the whole batch's examples, and the counts were summed again)."""
    model, _ = _one_process(worker.plain_config())
    for rank in (0, 1):
        history = json.loads((run / f"plain-history-{rank}.json").read_text())
        assert [h["steps"] for h in history] == [h["steps"] for h in model.history]
        np.testing.assert_allclose(_losses(history), _losses(model.history), rtol=1e-4)


def test_resuming_an_epoch_cut_short_continues_its_sums_on_every_rank(run):
    """The budget of 4 steps cut epoch 1 after 1 of 3 batches; resumed to 6 steps, both
    ranks finish it with rank 0's carried sums: the history and weights of one process
    training 6 steps."""
    model, _ = _one_process(worker.plain_config(training_steps=6))
    rank0, rank1 = _ranks(run, "cut")
    for key, value in worker.weights(model).items():
        assert torch.equal(rank0[key], rank1[key]), key
        torch.testing.assert_close(rank0[key], value, rtol=0, atol=1e-5)
    for rank in (0, 1):
        history = json.loads((run / f"cut-history-{rank}.json").read_text())
        assert [h["steps"] for h in history] == [3, 3]
        np.testing.assert_allclose(_losses(history), _losses(model.history), rtol=1e-4)


def test_the_saved_models_load_in_one_process(run):
    rank0, _ = _ranks(run, "bn")
    model = DGAN.load(run / "bn.dgan")
    for key, value in worker.weights(model).items():
        assert torch.equal(value, rank0[key]), key
    assert len(model.history) == 2 and model.history[-1]["examples_per_s"] > 0
    attributes, features = model.generate_numpy(4)
    assert attributes.shape == (4, 2) and len(features) == 4
    assert DGAN.load(run / "plain.dgan").generate_numpy(2)[1][0].shape == (6, 2)


def test_resume_with_the_same_number_of_processes(run):
    """Ranks resumed the 2-epoch run's checkpoint for a third epoch, identically, and
    close to one process training 3 epochs."""
    rank0, rank1 = _ranks(run, "resumed")
    for key in rank0:
        assert torch.equal(rank0[key], rank1[key]), key
    model, _ = _one_process(worker.plain_config(epochs=3))
    for key, value in worker.weights(model).items():
        torch.testing.assert_close(rank0[key], value, rtol=0, atol=1e-5)


def test_resume_with_another_number_of_processes_is_an_error(run):
    point = find_resume_point(run / "ckpt")
    assert point.record.world_size == 2
    model = DGAN(worker.plain_config(epochs=3))
    with pytest.raises(ParameterError, match="2 process\\(es\\), this one has 1"):
        model.train_numpy(worker.plain_data(), progress_bar=False, resume_from=run / "ckpt")


def test_each_rank_leaves_the_process_group_before_the_interpreter_ends(run):
    # A gloo group alive at interpreter teardown can abort the process (dgan.train.distributed).
    for rank in (0, 1):
        assert (run / f"group-alive-at-exit-{rank}.txt").read_text() == "False"


def test_a_killed_rank_ends_the_job_with_a_clear_error(tmp_path):
    rank0, rank1 = _launch(tmp_path, fail_rank=1)
    rank1.communicate(timeout=240)
    _, stderr0 = rank0.communicate(timeout=240)  # no hang: gloo sees the peer gone
    assert rank1.returncode == 3
    assert rank0.returncode != 0
    assert "DistributedError" in stderr0 and "another process of this job failed" in stderr0


def test_a_hanging_rank_ends_the_job_after_the_timeout(tmp_path):
    rank0, rank1 = _launch(
        tmp_path, fail_rank=1, WORKER_FAILS_BY="hanging", DGAN_DISTRIBUTED_TIMEOUT_S="5"
    )
    try:
        _, stderr0 = rank0.communicate(timeout=240)
    finally:
        rank1.kill()
        rank1.communicate()
    assert rank0.returncode != 0
    assert "DistributedError" in stderr0 and "did not answer within 5 s" in stderr0


def test_processes_with_different_configs_are_refused(tmp_path):
    """Before: rank 1 with another learning rate trained, exited 0, and the ranks ended
    with different weights (different data was caught, a different config was not)."""
    processes = _launch(tmp_path, WORKER_CONFIG_DIFFERS="1")
    for p in processes:
        _, stderr = p.communicate(timeout=240)
        assert p.returncode == 0, stderr[-3000:]
    for rank in (0, 1):
        error = (tmp_path / f"error-{rank}.txt").read_text()
        assert "Processes [1] of this distributed run have another config" in error
        assert "generator_learning_rate" in error and "batch_size" not in error


def test_one_process_is_not_distributed():
    assert not launched() and is_main_process()


def test_shards_split_each_batch_and_remember_their_share():
    index = torch.arange(7)
    first, second = Collective(0, 2, torch.device("cpu")), Collective(1, 2, torch.device("cpu"))
    assert first.shard(index).tolist() == [0, 1, 2, 3] and first.share == 4 / 7
    assert second.shard(index).tolist() == [4, 5, 6] and second.share == 3 / 7


def test_torchrun_runs_the_command_line_and_rank_0_alone_prints(tmp_path):
    from dgan.datasets import load_demo

    data = tmp_path / "weather.csv"
    load_demo().head(28 * 24).to_csv(data, index=False)  # 24 series of 28 days
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
        "-m", "dgan", "train", str(data), "-o", str(tmp_path / "m.dgan"),
        "--example-id", "example_id", "--time", "day", "--attributes", "month",
        "--epochs", "2", "--batch-size", "8", "--seed", "0",
    ]  # fmt: skip
    done = subprocess.run(command, env=_cpu_env(), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("model: ") == 1
    assert len(DGAN.load(tmp_path / "m.dgan").history) == 2
    # The plan names the processes, and its estimate times steps they took together.
    lines = done.stdout.splitlines()
    assert "  device cpu, 2 processes (torchrun) of 1 CPU thread each" in lines, done.stdout
    estimate = next(line for line in lines if line.startswith("  estimated time"))
    assert estimate.endswith("ms per step in a warm-up of the 2 processes)"), estimate


def test_torchrun_reports_an_error_of_every_process_once(tmp_path):
    data = tmp_path / "data.csv"
    pd.DataFrame({"t0": np.arange(24.0), "t1": np.arange(24.0) % 5}).to_csv(data, index=False)
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
        "-m", "dgan", "train", str(data), "--dry-run", "--batch-size", "3", "--epochs", "1",
    ]  # fmt: skip
    done = subprocess.run(command, env=_cpu_env(), capture_output=True, text=True, timeout=240)
    assert done.returncode != 0
    ours = [line for line in done.stderr.splitlines() if re.match(r"dgan( \(rank \d\))?:", line)]
    assert len(ours) == 1, done.stderr  # not once per process
    assert ours[0].startswith("dgan: error: --batch-size 3 with 24 examples gives batches of 3 ")
    assert "read as WIDE" not in ours[0]  # a setting's error, not the table's layout


def test_more_processes_than_gpus_is_an_error_naming_the_fix(monkeypatch):
    # As torchrun --nproc-per-node=2 on a machine with one GPU leaves the second process
    # (seen on an H100 machine: CUDA's "invalid device ordinal" from deep in the model).
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ParameterError, match="LOCAL_RANK 1, but this machine shows 1 GPU:") as e:
        training_device(True)
    assert "--nproc-per-node=1" in str(e.value) and "cuda = false in --config" in str(e.value)
    assert training_device(False) == torch.device("cpu")
