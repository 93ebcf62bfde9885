"""The epoch loop: batches from a device permutation, the progress bar, the divergence
guard's checks and one `EpochRecord` per epoch (`fit`).

The host reads the device only at sync points: every ``log_every`` steps and at the end
of each epoch (each read is marked as a deliberate sync). There the `DivergenceGuard`
checks health, rolls back and falls back a precision when it must, or stops training.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from dgan.config import DGANConfig
from dgan.precision import loss_scale, runs_in_hardware
from dgan.records import EpochRecord, GuardEvent
from dgan.train.batch import LOSS_NAMES, Accumulators, Batch
from dgan.train.memory import peak_rss_bytes
from dgan.train.trainer import Trainer

logger = logging.getLogger(__name__)


@dataclass
class ProgressInfo:
    """Training progress handed to ``progress_callback`` after every batch (gretel API).

    ``step`` (0-based, like ``batch``) and ``total_steps`` count the optimizer steps of the
    training call (the last epoch of a budget in steps may be partial); ``frac_completed``
    uses them when given. ``losses`` (dgan's) holds the epoch's mean losses so far, by
    name as in ``DGAN.history``, at the steps where training reads them from the device
    anyway (every ``log_every`` steps and at each epoch's end); None at the others. The
    callback comes before the divergence guard's check of the step, so losses can be
    NaN where the guard then rolls back.

    Example:
        >>> ProgressInfo(epoch=1, total_epochs=4, batch=0, total_batches=2).frac_completed
        0.25
        >>> ProgressInfo(1, 2, 1, 4, step=5, total_steps=6).frac_completed
        0.8333333333333334
    """

    epoch: int
    total_epochs: int
    batch: int
    total_batches: int
    step: int | None = None
    total_steps: int | None = None
    losses: dict[str, float | None] | None = None

    @property
    def frac_completed(self) -> float:
        if self.step is not None and self.total_steps:
            return self.step / self.total_steps
        done = self.epoch * self.total_batches + self.batch
        return done / (self.total_epochs * self.total_batches)


@dataclass(frozen=True)
class Budget:
    """How long a training call trains: ``steps`` optimizer steps (batches), in epochs of
    ``steps_per_epoch`` (the last one partial when they do not divide), and at most
    ``seconds`` of wall time when set.

    Example:
        >>> budget = Budget(steps=10, steps_per_epoch=4)
        >>> budget.epochs, [budget.batches(e) for e in range(budget.epochs)]
        (3, [4, 4, 2])
    """

    steps: int
    steps_per_epoch: int
    seconds: float | None = None

    @classmethod
    def of(cls, config: DGANConfig, n_examples: int) -> Budget:
        """The budget ``config`` sets for ``n_examples`` series: ``training_steps`` or
        ``epochs`` epochs, and ``training_minutes``."""
        per_epoch = max(1, math.ceil(n_examples / config.batch_size))
        steps = config.training_steps or config.epochs * per_epoch
        minutes = config.training_minutes
        return cls(steps, per_epoch, None if minutes is None else 60.0 * minutes)

    @property
    def epochs(self) -> int:
        return math.ceil(self.steps / self.steps_per_epoch)

    def batches(self, epoch: int) -> int:
        """Batches trained in ``epoch`` (0-based, of this training call)."""
        return max(0, min(self.steps_per_epoch, self.steps - epoch * self.steps_per_epoch))


def fit(
    trainer: Trainer,
    data: Batch,
    budget: Budget,
    progress_callback: Callable[[ProgressInfo], None] | None = None,
    progress_bar: bool | None = None,
    *,
    start_epoch: int = 0,
    seconds_used: float = 0.0,
    on_epoch_end: Callable[[EpochRecord], None] | None = None,
) -> list[EpochRecord]:
    """Train on ``data`` for ``budget``; returns one record per epoch trained.

    Stops early, keeping the last good weights, if the divergence guard finds no safer
    precision to continue in, and at the time budget. ``start_epoch`` > 0 continues a run
    restored from a checkpoint (its epochs from ``start_epoch`` on, with the guard's
    restored snapshot; ``seconds_used`` of its time budget spent before the interruption);
    ``on_epoch_end`` is called with each epoch's record (it writes checkpoints).
    """
    if budget.seconds is not None and seconds_used >= budget.seconds:
        return []  # a resumed run whose time budget was spent: nothing left to train
    for m in trainer.modules().values():
        m.train()
    collective = trainer.collective
    show = sys.stderr.isatty() if progress_bar is None else progress_bar
    show = show and (collective is None or collective.is_main)
    done = min(budget.steps, start_epoch * budget.steps_per_epoch)
    bar = tqdm(total=budget.steps, initial=done, disable=not show, unit="batch", desc="training")
    if trainer.privacy is not None:  # plans the noise (first call), Poisson sampling
        trainer.privacy.begin(len(data), budget.steps)
        if trainer.privacy.exhausted:
            logger.warning("The privacy budget (dp_epsilon) is spent: nothing trained.")
            return []
    if trainer.config.divergence_guard and start_epoch == 0:
        trainer.guard.snapshot()
    deadline = None
    if budget.seconds is not None:
        deadline = time.monotonic() + budget.seconds - seconds_used
    records = []
    try:
        for epoch in range(start_epoch, budget.epochs):
            record = _epoch(trainer, data, epoch, budget, progress_callback, bar, deadline)
            records.append(record)
            if on_epoch_end is not None:
                on_epoch_end(record)
            if record.stopped or record.time_budget_reached or record.privacy_budget_reached:
                break
    finally:
        bar.close()
    return records


def _epoch(trainer, data, epoch, budget, progress_callback, bar, deadline) -> EpochRecord:
    n, device, collective, privacy = len(data), trainer.device, trainer.collective, trainer.privacy
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    acc = Accumulators(device)
    seen, trained, steps, events, stopped, time_up = 0, 0, 0, [], False, False
    batches, spent = budget.batches(epoch), False
    # Balanced batches (sizes differ by at most one) from a device permutation; a partial
    # last epoch of a budget in steps trains the first of them. A private run samples
    # each batch as its accountant assumes (Poisson) and stops at its epsilon.
    split = None
    if privacy is None:
        split = torch.randperm(n, device=device, generator=trainer.rng).tensor_split(
            budget.steps_per_epoch
        )
    for b in range(batches):
        if privacy is not None and privacy.exhausted:
            spent = True
            break
        index = split[b] if privacy is None else privacy.next_batch()
        if collective is None:
            trainer.train_step(data.take(index), acc)
        else:  # every process draws the same permutation and takes its shard
            trainer.train_step(data.take(collective.shard(index)), acc, len(index))
        seen += len(index)
        trained += len(index)
        steps += 1
        bar.update(1)
        sync_point = trainer.steps_done % trainer.config.log_every == 0 or b == batches - 1
        if progress_callback is not None:  # before the guard's check, as it always was
            step = epoch * budget.steps_per_epoch + b
            # deliberate host sync, at a sync point (NaN when the check below rolls back)
            losses = _mean_losses(trainer, acc, seen) if sync_point and seen else None
            info = ProgressInfo(
                epoch, budget.epochs, b, budget.steps_per_epoch, step, budget.steps, losses
            )
            progress_callback(info)
        time_up = deadline is not None and _out_of_time(trainer, deadline, sync_point)
        if sync_point or time_up:  # the guard checks every epoch's end, early ones too
            event, stopped = _check(trainer, epoch, acc)
            if event is not None:  # rolled back: this epoch's sums were polluted
                events.append(event)
                acc.losses.zero_()
                acc.nonfinite_losses.zero_()
                seen = 0
            elif not bar.disable:  # deliberate host sync, for the bar
                bar.set_postfix_str(bar_postfix(trainer, acc, seen), refresh=False)
        if stopped or time_up:
            break
    if collective is not None:  # sums over processes; batch indices count them all already
        seen = collective.end_epoch(trainer.modules().values(), acc, seen)
    elapsed = time.perf_counter() - start
    means = _mean_losses(trainer, acc, seen) if seen else dict.fromkeys(LOSS_NAMES)
    policy = trainer.policy
    return EpochRecord(
        epoch=epoch,
        **means,
        examples_per_s=trained / elapsed,
        wall_time_s=elapsed,
        precision=policy.name,
        in_hardware=runs_in_hardware(policy.precision, device),
        critic_loss_scale=loss_scale(policy.critic_scaler),
        generator_loss_scale=loss_scale(policy.generator_scaler),
        skipped_steps=acc.skipped_steps(),  # host sync
        guard_events=tuple(events),
        peak_memory_bytes=torch.cuda.max_memory_allocated(device) if cuda else peak_rss_bytes(),
        stopped=stopped,
        steps=steps,
        time_budget_reached=time_up,
        epsilon=None if privacy is None else privacy.spent(),
        delta=None if privacy is None else privacy.accountant.delta,
        privacy_budget_reached=spent,
    )


def _mean_losses(trainer: Trainer, acc: Accumulators, seen: int) -> dict[str, float | None]:
    """Each loss's mean over the ``seen`` examples (None for a critic the model lacks).
    Deliberate host sync."""
    means: dict[str, float | None] = dict(acc.mean_losses(seen))
    if trainer.attribute_critic is None:
        means["attribute_discriminator_loss"] = None
    if trainer.temporal_critic is None:
        means["temporal_discriminator_loss"] = None
    if trainer.privacy is not None:  # losses on real data would leave the run without noise
        for name in ("discriminator_loss", "attribute_discriminator_loss", "gradient_penalty"):
            means[name] = None
        means["temporal_discriminator_loss"] = None
    return means


def _out_of_time(trainer: Trainer, deadline: float, at_sync_point: bool) -> bool:
    """Whether the time budget is spent. Under torchrun every process must stop at the same
    step, so there it is decided at sync points only, by all of them (any one late stops
    all); one process decides after any batch."""
    late = time.monotonic() >= deadline
    collective = trainer.collective
    if collective is None:
        return late
    if not at_sync_point:
        return False
    flag = torch.tensor(int(late), device=trainer.device)
    return bool(collective.total(flag).item())  # host sync, at a sync point


def bar_postfix(trainer: Trainer, acc: Accumulators, seen: int) -> str:
    """Short loss summary for the progress bar: critic, attribute critic, generator."""
    means = acc.mean_losses(max(seen, 1))  # host sync
    if trainer.privacy is not None:  # the critics' losses on real data stay unread
        return f"G {means['generator_loss']:.3g} epsilon {trainer.privacy.spent():.3g}"
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
