"""The epoch loop: batches from a device permutation, the progress bar, the divergence
guard's checks and one `EpochRecord` per epoch (`fit`).

The host reads the device only at sync points: every ``log_every`` steps and at the end
of each epoch (each read is marked as a deliberate sync). There the `DivergenceGuard`
checks health, rolls back and falls back a precision when it must, or stops training.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from dgan.precision import loss_scale, runs_in_hardware
from dgan.records import EpochRecord, GuardEvent
from dgan.train.batch import LOSS_NAMES, Accumulators, Batch
from dgan.train.memory import peak_rss_bytes
from dgan.train.trainer import Trainer


@dataclass
class ProgressInfo:
    """Training progress handed to ``progress_callback`` after every batch (gretel API).

    Example:
        >>> ProgressInfo(epoch=1, total_epochs=4, batch=0, total_batches=2).frac_completed
        0.25
    """

    epoch: int
    total_epochs: int
    batch: int
    total_batches: int

    @property
    def frac_completed(self) -> float:
        done = self.epoch * self.total_batches + self.batch
        return done / (self.total_epochs * self.total_batches)


def fit(
    trainer: Trainer,
    data: Batch,
    epochs: int,
    progress_callback: Callable[[ProgressInfo], None] | None = None,
    progress_bar: bool | None = None,
    *,
    start_epoch: int = 0,
    on_epoch_end: Callable[[EpochRecord], None] | None = None,
) -> list[EpochRecord]:
    """Train for ``epochs`` passes over ``data``; returns one record per epoch.

    Stops early, keeping the last good weights, only if the divergence guard finds no
    safer precision to continue in. ``start_epoch`` > 0 continues a run restored from a
    checkpoint (epochs ``start_epoch`` to ``epochs - 1``, with the guard's restored
    snapshot); ``on_epoch_end`` is called with each epoch's record (it writes checkpoints).
    """
    n_batches = max(1, math.ceil(len(data) / trainer.config.batch_size))
    for m in trainer.modules().values():
        m.train()
    collective = trainer.collective
    show = sys.stderr.isatty() if progress_bar is None else progress_bar
    show = show and (collective is None or collective.is_main)
    bar = tqdm(
        total=epochs * n_batches,
        initial=start_epoch * n_batches,
        disable=not show,
        unit="batch",
        desc="training",
    )
    if trainer.config.divergence_guard and start_epoch == 0:
        trainer.guard.snapshot()
    records = []
    try:
        for epoch in range(start_epoch, epochs):
            record = _epoch(trainer, data, epoch, epochs, n_batches, progress_callback, bar)
            records.append(record)
            if on_epoch_end is not None:
                on_epoch_end(record)
            if record.stopped:
                break
    finally:
        bar.close()
    return records


def _epoch(trainer, data, epoch, epochs, n_batches, progress_callback, bar) -> EpochRecord:
    n, device, collective = len(data), trainer.device, trainer.collective
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    acc = Accumulators(device)
    seen, events, stopped = 0, [], False
    # Balanced batches (sizes differ by at most one) from a device permutation.
    perm = torch.randperm(n, device=device, generator=trainer.rng)
    for b, index in enumerate(perm.tensor_split(n_batches)):
        if collective is None:
            trainer.train_step(data.take(index), acc)
        else:  # every process draws the same permutation and takes its shard
            trainer.train_step(data.take(collective.shard(index)), acc, len(index))
        seen += len(index)
        bar.update(1)
        if progress_callback is not None:
            progress_callback(ProgressInfo(epoch, epochs, b, n_batches))
        if trainer.steps_done % trainer.config.log_every == 0 or b == n_batches - 1:
            event, stopped = _check(trainer, epoch, acc)
            if event is not None:  # rolled back: this epoch's sums were polluted
                events.append(event)
                acc.losses.zero_()
                acc.nonfinite_losses.zero_()
                seen = 0
                if stopped:
                    break
            elif not bar.disable:  # deliberate host sync, for the bar
                bar.set_postfix_str(bar_postfix(trainer, acc, seen), refresh=False)
    if collective is not None:  # sums over processes; `n` counts them all already
        seen = collective.end_epoch(trainer.modules().values(), acc, seen)
    elapsed = time.perf_counter() - start
    means = acc.mean_losses(seen) if seen else dict.fromkeys(LOSS_NAMES)  # host sync
    if trainer.attribute_critic is None:
        means["attribute_discriminator_loss"] = None
    if trainer.temporal_critic is None:
        means["temporal_discriminator_loss"] = None
    policy = trainer.policy
    return EpochRecord(
        epoch=epoch,
        **means,
        examples_per_s=n / elapsed,
        wall_time_s=elapsed,
        precision=policy.name,
        in_hardware=runs_in_hardware(policy.precision, device),
        critic_loss_scale=loss_scale(policy.critic_scaler),
        generator_loss_scale=loss_scale(policy.generator_scaler),
        skipped_steps=acc.skipped_steps(),  # host sync
        guard_events=tuple(events),
        peak_memory_bytes=torch.cuda.max_memory_allocated(device) if cuda else peak_rss_bytes(),
        stopped=stopped,
    )


def bar_postfix(trainer: Trainer, acc: Accumulators, seen: int) -> str:
    """Short loss summary for the progress bar: critic, attribute critic, generator."""
    means = acc.mean_losses(max(seen, 1))  # host sync
    text = f"D {means['discriminator_loss']:.3g}"
    if trainer.attribute_critic is not None:
        text += f" A {means['attribute_discriminator_loss']:.3g}"
    return text + f" G {means['generator_loss']:.3g}"


def _check(trainer: Trainer, epoch: int, acc: Accumulators) -> tuple[GuardEvent | None, bool]:
    """Guard check at a sync point: (None, False) when healthy (a new snapshot is taken),
    else the rollback's event and whether training must stop."""
    if not trainer.config.divergence_guard:
        return None, False
    collective = trainer.collective
    nonfinite = acc.nonfinite_losses
    if collective is not None:  # a divergence anywhere rolls back everywhere
        nonfinite = collective.total(nonfinite)
    every_step_skipped = acc.every_step_skipped()
    if collective is not None:  # skipped on one rank is skipped on all (reduced grads)
        every_step_skipped = collective.total(every_step_skipped.long()).bool()
    problem = trainer.guard.problem(nonfinite, every_step_skipped)  # host sync
    acc.new_window()
    if problem is None:
        trainer.guard.snapshot()
        return None, False
    return trainer.guard.recover(problem, epoch)
