"""Training one model with several processes: torchrun and torch.distributed.

Under ``torchrun`` (the environment has ``RANK`` and ``WORLD_SIZE`` > 1), `DGAN`'s
training calls join the process group (gloo on CPU, nccl on CUDA, chosen from the
model's device; multi-node rendezvous is torchrun's) and train ONE model together:

- Every process passes the same data and config and fits the same encoders on all of it
  (the config's fields, and a digest of the encoded data, are compared across
  processes). Rank 0's initial weights and RNG states are broadcast, so all processes
  start alike even without a seed.
- Every process draws the same epoch permutation, batch noise and penalty mixing
  weights (the same RNG stream) and computes on its shard of each batch: rows
  ``tensor_split(world_size)[rank]``. After each backward one all-reduce of the
  flattened gradients, weighted by each shard's share of the batch, gives every process
  the gradient of the whole batch; they step identically and stay identical.
- The gradient penalty is computed locally with ``autograd.grad(create_graph=True)`` and
  added to the loss before the one ordinary backward, so its parameter gradients are
  all-reduced like the rest (DDP would not reduce gradients made by ``autograd.grad``:
  pytorch issues 47562 and 63812; dgan reduces explicitly instead of wrapping in DDP).
- fp16 loss scalers see the all-reduced gradients, so an overflow skips the step on all
  processes alike. The divergence guard's non-finite-loss count is summed over processes
  at its existing sync points (every ``log_every`` steps): a divergence anywhere rolls
  back everywhere. Epoch losses are summed over processes (history shows the mean over
  the whole batch); ``examples_per_s`` counts all processes.
- BatchNorm (the generator's attribute networks) normalises over the whole batch: its
  layers become `SyncedBatchNorm`, which all-reduces the per-feature sums (forward and
  backward; torch's SyncBatchNorm needs a GPU, this works on gloo too). These small
  all-reduces are the only ones inside a step besides the gradients'. Running statistics
  are also averaged at each epoch end (a no-op when they agree). So P processes train
  like one process on the same global batch, up to float summation order.
- Only rank 0 shows the progress bar and writes checkpoints and model files.
- A collective that fails (another process raised or was killed) or waits longer than
  ``DGAN_DISTRIBUTED_TIMEOUT_S`` seconds (default 300) raises `DistributedError`; torchrun
  then ends the job.
- A gloo process group that dgan joined, dgan also leaves, at interpreter exit (`atexit`):
  if gloo's worker threads outlive the interpreter, the process aborts with "terminate
  called without an active exception" (pytorch issue 190489; seen in ~15% of 2-process CLI
  runs here). Gloo's teardown is local, so it cannot wait on a failed peer. An NCCL group
  is left to process exit as before: destroying one is collective and can hang when a
  peer has failed (pytorch PR 122358 documents this). A group the caller created is the
  caller's to destroy.

Example (a script ``train.py`` run as ``torchrun --nproc-per-node=2 train.py``):

    model = DGAN(DGANConfig(max_sequence_len=20, sample_len=5, seed=0))
    model.train_numpy(features)   # both processes train the same model
    model.save("model.dgan")      # rank 0 writes; on the others it writes nothing
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from dgan.errors import DataError, DistributedError, ParameterError
from dgan.train.batch import Accumulators

TIMEOUT_VARIABLE = "DGAN_DISTRIBUTED_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 300.0


def launched() -> bool:
    """True when this process is one of several started by torchrun (or set up alike).

    Example:
        >>> import os
        >>> launched() == (int(os.environ.get("WORLD_SIZE", "1")) > 1)
        True
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size() > 1
    return "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1


def is_main_process() -> bool:
    """False only on the processes other than rank 0 of a distributed run.

    Example:
        >>> is_main_process()
        True
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank() == 0
    return not launched() or int(os.environ["RANK"]) == 0


def world_size() -> int:
    """The number of processes that train together: 1 unless launched by torchrun.

    Example:
        >>> world_size() == (int(os.environ.get("WORLD_SIZE", "1")) if launched() else 1)
        True
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.environ["WORLD_SIZE"]) if launched() else 1


def training_device(cuda: bool) -> torch.device:
    """The device a model trains on: under torchrun with CUDA, the GPU ``LOCAL_RANK``.

    Example:
        >>> training_device(False)
        device(type='cpu')
    """
    if not (cuda and torch.cuda.is_available()):
        return torch.device("cpu")
    if launched():
        local = int(os.environ.get("LOCAL_RANK", "0"))
        visible = torch.cuda.device_count()
        if local >= visible:  # else CUDA's bare "invalid device ordinal" in this process
            raise ParameterError(
                f"this process is torchrun's LOCAL_RANK {local}, but this machine shows "
                f"{visible} GPU{'s' if visible != 1 else ''}: dgan trains one process per "
                f"GPU. Start torchrun with --nproc-per-node={visible} (at most), or train "
                "on the CPU (cuda=False; on the command line, cuda = false in --config)"
            )
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cuda")


def timeout_s() -> float:
    """Seconds a collective may wait for the other processes (``DGAN_DISTRIBUTED_TIMEOUT_S``)."""
    text = os.environ.get(TIMEOUT_VARIABLE)
    try:
        value = DEFAULT_TIMEOUT_S if text is None else float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ParameterError(f"{TIMEOUT_VARIABLE}={text!r}: give a positive number of seconds.")
    return value


@contextlib.contextmanager
def collective_errors(what: str) -> Iterator[None]:
    """Turn a failed collective into a `DistributedError` that says what to look at."""
    try:
        yield
    except (RuntimeError, dist.DistError) as e:
        if isinstance(e, DistributedError):
            raise
        detail = " ".join(str(e).split())[:300]
        raise DistributedError(
            f"{what} failed on rank {dist.get_rank()}: another process of this job failed, "
            f"was killed, or did not answer within {timeout_s():g} s ({detail}). See the "
            f"other processes' errors; raise {TIMEOUT_VARIABLE} if a process is just slow."
        ) from e


class Collective:
    """This process's part in a distributed run: sharding and the all-reduces.

    Attributes:
        rank, world_size: this process's rank and the number of processes.
        share: this process's share of the current batch (set by `shard`).
    """

    def __init__(self, rank: int, world_size: int, device: torch.device):
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self.share = 1.0 / world_size

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    # ----- sharding -------------------------------------------------------------------
    def rows(self, t: torch.Tensor) -> torch.Tensor:
        """This process's rows of a tensor drawn for the whole batch."""
        return t.tensor_split(self.world_size)[self.rank]

    def shard(self, index: torch.Tensor) -> torch.Tensor:
        """This process's rows of a batch's example index; remembers its share."""
        local = self.rows(index)
        self.share = len(local) / len(index)
        return local

    # ----- all-reduces ----------------------------------------------------------------
    def reduce_gradients(self, optimizers: Sequence[torch.optim.Optimizer]) -> None:
        """Replace each gradient by the whole batch's: one all-reduce of all of them."""
        grads = [p.grad for o in optimizers for g in o.param_groups for p in g["params"]]
        grads = [g for g in grads if g is not None]
        if not grads:
            return
        flat = torch.cat([g.reshape(-1) for g in grads]) * self.share
        with collective_errors("The gradient all-reduce"):
            dist.all_reduce(flat)
        for g, reduced in zip(grads, flat.split([g.numel() for g in grads]), strict=True):
            g.copy_(reduced.view_as(g))

    def differentiable_sum(self, t: torch.Tensor) -> torch.Tensor:
        """The sum of ``t`` over processes, whose backward gives every process its part of
        the whole batch's gradient (`_SumOverProcesses`): for statistics of the whole batch
        inside the loss (synchronised BatchNorm, the batch-wide penalty norm)."""
        with collective_errors("An all-reduce inside the loss"):
            return _SumOverProcesses.apply(t, self.share)

    def total(self, t: torch.Tensor) -> torch.Tensor:
        """The sum of ``t`` over processes (a new tensor)."""
        out = t.clone()
        with collective_errors("An all-reduce"):
            dist.all_reduce(out)
        return out

    def end_epoch(self, modules: Iterable[torch.nn.Module], acc: Accumulators, seen: int) -> int:
        """Sum the epoch's loss sums over processes and average the modules' BatchNorm
        running statistics; returns the examples seen by all processes. ``seen`` is this
        process's count (its shards' examples, whose losses ``acc`` holds): the one place
        the count becomes global, so the means are over the whole batches."""
        buffers = [
            b
            for m in modules
            for name, b in m.named_buffers()
            if name.endswith(("running_mean", "running_var"))
        ]
        flat = torch.cat(
            [acc.losses, torch.tensor([float(seen)], device=acc.losses.device)]
            + [b.reshape(-1).float() / self.world_size for b in buffers]
        )
        with collective_errors("The epoch-end all-reduce"):
            dist.all_reduce(flat)
        n = len(acc.losses)
        acc.losses.copy_(flat[:n])
        sizes = [b.numel() for b in buffers]
        for b, reduced in zip(buffers, flat[n + 1 :].split(sizes), strict=True):
            b.copy_(reduced.view_as(b))
        return int(flat[n].item())

    def broadcast_start(
        self, modules: Iterable[torch.nn.Module], rngs: Iterable[torch.Generator]
    ) -> None:
        """Give every process rank 0's weights and random generator states."""
        tensors = [t for m in modules for t in m.state_dict().values()]
        with collective_errors("Broadcasting the initial weights"):
            for t in tensors:
                dist.broadcast(t, 0)
            for rng in rngs:
                state = rng.get_state().to(self.device)
                dist.broadcast(state, 0)
                rng.set_state(state.cpu())

    def check_same_config(self, settings: dict[str, Any]) -> None:
        """ParameterError, on every process, unless all processes train with the same
        settings (``config.to_json_dict()``); it names the ranks and the fields that differ.

        Each field's value is hashed to 8 bytes and the ``(fields, 8)`` table gathered, so
        nothing but bytes travels (never pickles).
        """
        names = sorted(settings)
        rows = [
            hashlib.sha256(json.dumps(settings[n], sort_keys=True, default=str).encode()).digest()[
                :8
            ]
            for n in names
        ]
        mine = torch.tensor([list(r) for r in rows], dtype=torch.uint8, device=self.device)
        gathered = [torch.empty_like(mine) for _ in range(self.world_size)]
        with collective_errors("Comparing the configs of the processes"):
            dist.all_gather(gathered, mine)
        differ = [(g != gathered[0]).any(dim=1).cpu() for g in gathered]
        ranks = [r for r, d in enumerate(differ) if bool(d.any())]
        if ranks:
            fields = [n for i, n in enumerate(names) if any(bool(d[i]) for d in differ)]
            raise ParameterError(
                f"Processes {ranks} of this distributed run have another config than rank 0 "
                f"(in {', '.join(fields)}); every process must train with the same config, "
                "as all train one model."
            )

    def check_same_data(self, digest: str) -> None:
        """DataError unless every process passed the same (encoded) data."""
        mine = torch.tensor(list(bytes.fromhex(digest)), dtype=torch.uint8, device=self.device)
        gathered = [torch.empty_like(mine) for _ in range(self.world_size)]
        with collective_errors("Comparing the data of the processes"):
            dist.all_gather(gathered, mine)
        differ = [r for r, g in enumerate(gathered) if not torch.equal(g, gathered[0])]
        if differ:
            raise DataError(
                f"Processes {differ} of this distributed run got other training data than "
                "rank 0; every process must pass the same data (each trains on its shard)."
            )


class _SumOverProcesses(torch.autograd.Function):
    """All-reduce (sum) of ``x`` whose backward gives each process the gradient of the
    whole batch's loss: the processes' gradients weighted by their batch shares, divided
    by this process's share (`Collective.reduce_gradients` multiplies by it again)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, share: float) -> torch.Tensor:
        ctx.share = share
        out = x.clone()
        dist.all_reduce(out)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        out = grad.contiguous() * ctx.share
        with collective_errors("The BatchNorm backward all-reduce"):
            dist.all_reduce(out)
        return out / ctx.share, None


class SyncedBatchNorm(torch.nn.BatchNorm1d):
    """BatchNorm1d whose training statistics cover the whole batch of all processes.

    The per-feature sums of x and x**2 (in float64) and the example count are summed over
    processes by a differentiable all-reduce, so the backward also flows through the
    other processes' examples, as in one process. It
    works on gloo and nccl alike (torch's SyncBatchNorm needs a GPU). Outside a
    distributed run, or in eval mode, it is BatchNorm1d; it has BatchNorm1d's state.

    Example:
        >>> bn = torch.nn.BatchNorm1d(3)
        >>> bn.__class__ = SyncedBatchNorm  # as `sync_batchnorm` converts the generator's
        >>> bn(torch.ones(4, 3)).shape  # one process: plain BatchNorm1d
        torch.Size([4, 3])
    """

    collective: Collective | None = None  # set by `sync_batchnorm`

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (self.training and self.collective is not None and dist.is_initialized()):
            return super().forward(x)
        local = x.double()
        count = local.new_full((1,), float(x.shape[0]))
        stats = torch.cat([local.sum(0), (local * local).sum(0), count])
        stats = self.collective.differentiable_sum(stats)
        c, n = x.shape[1], stats[-1]
        mean = stats[:c] / n
        var = (stats[c : 2 * c] / n - mean * mean).clamp_min(0.0)  # biased, as BN's
        if self.track_running_stats:
            self._update_running_stats(mean.detach(), (var * n / (n - 1)).detach())
        y = (x - mean.to(x.dtype)) * torch.rsqrt(var + self.eps).to(x.dtype)
        return y * self.weight + self.bias if self.affine else y

    @torch.no_grad()
    def _update_running_stats(self, mean: torch.Tensor, unbiased_var: torch.Tensor) -> None:
        self.num_batches_tracked.add_(1)
        # momentum None: a cumulative average, as in BatchNorm1d
        factor = self.momentum or 1.0 / float(self.num_batches_tracked)
        self.running_mean.lerp_(mean.to(self.running_mean.dtype), factor)
        self.running_var.lerp_(unbiased_var.to(self.running_var.dtype), factor)


def sync_batchnorm(module: torch.nn.Module, collective: Collective) -> None:
    """Make ``module``'s BatchNorm1d layers `SyncedBatchNorm` in place (same parameter
    objects, so optimizers keep working), synchronised through ``collective``."""
    for m in module.modules():
        if type(m) is torch.nn.BatchNorm1d:
            m.__class__ = SyncedBatchNorm
        if isinstance(m, SyncedBatchNorm):
            m.collective = collective


def join(device: torch.device) -> Collective | None:
    """Join (or reuse) the default process group when launched by torchrun; else None.

    `dgan.train.trainer.Trainer.join_processes` calls it and sets up the rest.
    """
    if not launched():
        return None
    if not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s()))
        if backend == "gloo":
            atexit.register(leave)
    return Collective(dist.get_rank(), dist.get_world_size(), device)


def leave() -> None:
    """Destroy the default process group if it still exists (registered by `join` for
    the gloo groups it creates).

    Runs while the interpreter is still whole: a gloo group torn down later, during
    interpreter teardown, can abort the process (see the module docstring).
    """
    if dist.is_initialized():
        dist.destroy_process_group()
