"""One process of a 2-process training run, for tests/test_distributed.py.

Run as ``python distributed_worker.py RANK WORLD_SIZE PORT OUT_DIR [FAIL_RANK]`` with the
environment torchrun would set (this script sets it from its arguments). Each process
trains a model without BatchNorm ("plain": no attributes, no example scaling) and one
with attributes, a weight-averaged generator and a temporal critic ("bn"); it writes its
weights, histories, the first critic gradients after the all-reduce, and (rank 0) the
saved models and checkpoints into OUT_DIR; then it resumes the first run for a third
epoch, and a run whose step budget cut an epoch short for two more steps.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from safetensors.torch import save_file

from dgan import DGAN, OutputType
from dgan.errors import ParameterError
from dgan.train.distributed import Collective
from tiny import tiny_config

ATTRIBUTE_TYPES = [OutputType.DISCRETE, OutputType.CONTINUOUS]


def plain_config(**overrides):
    """No attributes and no example scaling: the generator has no BatchNorm."""
    length = {} if "training_steps" in overrides else {"epochs": 2}
    settings = dict(**length, batch_size=8, apply_example_scaling=False)
    return tiny_config(**{**settings, **overrides})


def bn_config(**overrides):
    """Attributes (so BatchNorm), a weight-averaged generator and a temporal critic."""
    levers = dict(generator_ema_decay=0.9, temporal_critic=True, temporal_critic_num_units=8)
    return tiny_config(**{**dict(epochs=2, batch_size=8), **levers, **overrides})


def plain_data() -> np.ndarray:
    return np.random.default_rng(5).normal(size=(24, 6, 2))


def bn_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(6)
    attributes = np.stack([rng.integers(0, 3, 24), rng.normal(size=24)], axis=1)
    return rng.normal(size=(24, 6, 2)), attributes


def weights(model: DGAN) -> dict[str, torch.Tensor]:
    """Every module's parameters and buffers, by ``module.name``."""
    return {
        f"{module}.{key}": value.detach().clone()
        for module, m in model.trainer.modules().items()
        for key, value in m.state_dict().items()
    }


def critic_grads(trainer) -> dict[str, torch.Tensor]:
    return {k: p.grad.detach().clone() for k, p in trainer.critic.named_parameters()}


def first_gradients(trainer, optimizers, store: dict[str, torch.Tensor]) -> None:
    """Keep the first critic step's and the first generator step's gradients."""
    for prefix, network, optimizer in (
        ("critic.", trainer.critic, trainer.critic_opt),
        ("generator.", trainer.generator, trainer.generator_opt),
    ):
        if optimizer in optimizers and not any(k.startswith(prefix) for k in store):
            for k, p in network.named_parameters():
                store[prefix + k] = p.grad.detach().clone()


def join_environment(rank: int, world: int, port: int) -> None:
    """What torchrun sets for each process."""
    torch.set_num_threads(1)
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )


def config_differs(rank: int, out: Path) -> None:
    """Rank 1 passes another learning rate: each process writes the error it got."""
    config = plain_config(generator_learning_rate=0.001 if rank == 0 else 0.002)
    try:
        DGAN(config).train_numpy(plain_data(), progress_bar=False)
    except ParameterError as error:
        (out / f"error-{rank}.txt").write_text(str(error))


def main(rank: int, world: int, port: int, out: Path, fail_rank: int) -> None:
    # Registered before dgan joins the group, so it runs after dgan's own exit handler
    # (atexit runs last-in first-out): it records whether the group was left in time.
    atexit.register(
        lambda: (out / f"group-alive-at-exit-{rank}.txt").write_text(str(dist.is_initialized()))
    )
    first: dict[str, torch.Tensor] = {}
    reduce = Collective.reduce_gradients

    def recording_reduce(self, optimizers):
        reduce(self, optimizers)
        first_gradients(model.trainer, optimizers, first)

    Collective.reduce_gradients = recording_reduce

    def fail(info):
        if rank == fail_rank and (info.epoch, info.batch) == (0, 1):
            if os.environ.get("WORKER_FAILS_BY") == "hanging":
                time.sleep(600)  # alive but silent: the others must time out
            os._exit(3)  # as if killed: no exception, no goodbye to the other process

    checkpoints = str(out / "ckpt")
    model = DGAN(plain_config(checkpoint_dir=checkpoints, checkpoint_every=1))
    model.train_numpy(plain_data(), progress_callback=fail, progress_bar=False)
    save_file(weights(model), str(out / f"plain-{rank}.safetensors"))
    (out / f"plain-history-{rank}.json").write_text(json.dumps(model.history))
    save_file(first, str(out / f"grads-{rank}.safetensors"))
    first.clear()
    model.save(out / "plain.dgan")

    features, attributes = bn_data()
    model = DGAN(bn_config())
    model.train_numpy(
        features, attributes=attributes, attribute_types=ATTRIBUTE_TYPES, progress_bar=False
    )
    save_file(weights(model), str(out / f"bn-{rank}.safetensors"))
    save_file(first, str(out / f"bn-grads-{rank}.safetensors"))
    model.save(out / "bn.dgan")
    (out / f"history-{rank}.txt").write_text(repr(model.history[-1]["discriminator_loss"]))

    first.clear()  # gretel's batch-wide penalty norm: over the whole batch, not each shard
    model = DGAN(bn_config(gradient_penalty_norm="batch"))
    model.train_numpy(
        features, attributes=attributes, attribute_types=ATTRIBUTE_TYPES, progress_bar=False
    )
    save_file(weights(model), str(out / f"gpbatch-{rank}.safetensors"))
    save_file(first, str(out / f"gpbatch-grads-{rank}.safetensors"))

    # A time budget spent at once: the processes must agree on where to stop.
    model = DGAN(plain_config(epochs=3, training_minutes=1e-6))
    model.train_numpy(plain_data(), progress_bar=False)
    (out / f"timed-steps-{rank}.txt").write_text(str(model.trainer.steps_done))

    model = DGAN(plain_config(epochs=3, checkpoint_dir=checkpoints))
    model.train_numpy(plain_data(), progress_bar=False, resume_from=checkpoints)
    save_file(weights(model), str(out / f"resumed-{rank}.safetensors"))

    # A budget of 4 steps (epochs of 3) cuts epoch 1 after 1 step; resumed to 6 steps, the
    # ranks finish it from the checkpoint's sums (rank 0 carries them).
    cut = str(out / "ckpt-cut")
    model = DGAN(plain_config(training_steps=4, checkpoint_dir=cut))
    model.train_numpy(plain_data(), progress_bar=False)
    dist.barrier()  # rank 0 has written the checkpoint that every rank resumes from
    model = DGAN(plain_config(training_steps=6, checkpoint_dir=cut))
    model.train_numpy(plain_data(), progress_bar=False, resume_from=cut)
    save_file(weights(model), str(out / f"cut-{rank}.safetensors"))
    (out / f"cut-history-{rank}.json").write_text(json.dumps(model.history))
    private_run(out, rank, features, attributes)


DP_PUBLIC = {
    "feature 0": [-4, 4],
    "feature 1": [-4, 4],
    "attribute 0": [0, 1, 2],
    "attribute 1": [-4, 4],
}


def private_run(out: Path, rank: int, features, attributes) -> None:
    """Differential privacy (where Opacus is installed): every process must draw the same
    Poisson batches and add the same noise, once for the whole batch."""
    try:
        import opacus  # noqa: F401
    except ImportError:
        return
    model = DGAN(bn_config(dp_epsilon=8.0, public_values=DP_PUBLIC))
    model.train_numpy(
        features, attributes=attributes, attribute_types=ATTRIBUTE_TYPES, progress_bar=False
    )
    save_file(weights(model), str(out / f"dp-{rank}.safetensors"))
    (out / f"dp-epsilon-{rank}.txt").write_text(repr(model.history[-1]["epsilon"]))


if __name__ == "__main__":
    rank, world, port = (int(a) for a in sys.argv[1:4])
    fail_rank = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    join_environment(rank, world, port)
    if os.environ.get("WORKER_CONFIG_DIFFERS"):
        config_differs(rank, Path(sys.argv[4]))
    else:
        main(rank, world, port, Path(sys.argv[4]), fail_rank)
