"""The epoch loop: batches from a device permutation, the progress bar, the divergence
guard's checks and one `EpochRecord` per epoch (`fit`).

The host reads the device only at sync points: every ``log_every`` steps and at the end
of each epoch (each read is marked as a deliberate sync). There the `DivergenceGuard`
checks health, rolls back and falls back a precision when it must, or stops training.

An epoch that the budget cuts short (the last one of a budget in steps, or where the time
budget ran out) ends with a `CutEpoch`: what a checkpoint keeps so that a resumed run
finishes that epoch exactly as an uncut run would, from its next batch, in the same
permutation, adding to the same sums (`fit`'s ``cut``).
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
    uses them when given. It counts the batch just done: 1.0 after the last one.
    ``losses`` (dgan's) holds the epoch's mean losses so far, by name as in
    ``DGAN.history``, at the steps where training reads them from the device anyway (every
    ``log_every`` steps and at each epoch's end); None at the others. The callback comes
    before the divergence guard's check of the step, so losses can be NaN where the guard
    then rolls back.

    Example:
        >>> ProgressInfo(epoch=1, total_epochs=4, batch=0, total_batches=2).frac_completed
        0.375
        >>> ProgressInfo(1, 2, 1, 4, step=5, total_steps=6).frac_completed
        1.0
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
        # The callback runs after a batch: batch (0-based) done means batch + 1 batches done.
        if self.step is not None and self.total_steps:
            return (self.step + 1) / self.total_steps
        done = self.epoch * self.total_batches + self.batch + 1
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


@dataclass(eq=False)  # holds tensors: compared by identity
class CutEpoch:
    """An epoch that the budget cut short after ``batches_done`` of its batches, as a
    checkpoint keeps it (`dgan.storage.resume.ResumeRecord`): a resumed run finishes it
    from the next batch of the same ``permutation``, adding to these sums, so that its
    record (and the weights) are those of a run never cut.

    Attributes:
        epoch: the epoch, 0-based, of the training call.
        batches_done: its batches trained (fewer than the epoch has).
        permutation: (examples,) int64 on the CPU: the epoch's order of the examples.
        loss_sums: (len(LOSS_NAMES),) the batch-weighted loss sums so far, over all
            processes (under torchrun rank 0 carries them on; see `fit`).
        seen: examples whose losses are in ``loss_sums``, over all processes.
        trained: examples trained in the epoch, over all processes.
        skipped_steps, wall_time_s, guard_events, peak_memory_bytes: of the epoch so far.
    """

    epoch: int
    batches_done: int
    permutation: torch.Tensor
    loss_sums: torch.Tensor
    seen: int
    trained: int
    skipped_steps: int = 0
    wall_time_s: float = 0.0
    guard_events: tuple[GuardEvent, ...] = ()
    peak_memory_bytes: int | None = None


def continued_history(history: list[dict], records: list[dict], cut: CutEpoch | None) -> list[dict]:
    """``history`` then the ``records`` of a training call (as dicts); when the call
    resumed a ``cut`` epoch, its first record (that whole epoch) replaces the partial one
    that ends ``history``.

    Example:
        >>> continued_history([{"epoch": 0}, {"epoch": 1, "steps": 2}], [{"epoch": 1}], None)
        [{'epoch': 0}, {'epoch': 1, 'steps': 2}, {'epoch': 1}]
        >>> cut = CutEpoch(1, 2, torch.arange(4), torch.zeros(5), 4, 4)
        >>> continued_history([{"epoch": 0}, {"epoch": 1, "steps": 2}], [{"epoch": 1}], cut)
        [{'epoch': 0}, {'epoch': 1}]
    """
    if cut is not None and records:
        return [*history[:-1], *records]
    return [*history, *records]


def fit(
    trainer: Trainer,
    data: Batch,
    budget: Budget,
    progress_callback: Callable[[ProgressInfo], None] | None = None,
    progress_bar: bool | None = None,
    *,
    start_epoch: int = 0,
    cut: CutEpoch | None = None,
    seconds_used: float = 0.0,
    on_epoch_end: Callable[[EpochRecord, CutEpoch | None], None] | None = None,
) -> list[EpochRecord]:
    """Train on ``data`` for ``budget``; returns one record per epoch trained.

    Stops early, keeping the last good weights, if the divergence guard finds no safer
    precision to continue in, and at the time budget. ``start_epoch`` > 0 continues a run
    restored from a checkpoint (its epochs from ``start_epoch`` on, with the guard's
    restored snapshot; ``seconds_used`` of its time budget spent before the interruption),
    from batch ``cut.batches_done`` of that epoch when it was ``cut``;
    ``on_epoch_end`` is called with each epoch's record, and its `CutEpoch` when the budget
    cut it short (it writes checkpoints).
    """
    done = start_epoch * budget.steps_per_epoch + (0 if cut is None else cut.batches_done)
    if done >= budget.steps:
        return []  # a resumed run that has trained its budget already
    if budget.seconds is not None and seconds_used >= budget.seconds:
        return []  # a resumed run whose time budget was spent: nothing left to train
    for m in trainer.modules().values():
        m.train()
    collective = trainer.collective
    show = sys.stderr.isatty() if progress_bar is None else progress_bar
    show = show and (collective is None or collective.is_main)
    bar = tqdm(total=budget.steps, initial=done, disable=not show, unit="batch", desc="training")
    if trainer.privacy is not None:  # plans the noise (first call), Poisson sampling
        trainer.privacy.begin(len(data), budget.steps)
        if trainer.privacy.exhausted:
            logger.warning("The privacy budget (dp_epsilon) is spent: nothing trained.")
            return []
    if trainer.config.divergence_guard and done == 0:
        trainer.guard.snapshot()
    deadline = None
    if budget.seconds is not None:
        deadline = time.monotonic() + budget.seconds - seconds_used
    records = []
    try:
        for epoch in range(start_epoch, budget.epochs):
            resumed = cut if epoch == start_epoch else None
            record, cut_here = _epoch(
                trainer, data, epoch, budget, progress_callback, bar, deadline, resumed
            )
            records.append(record)
            if on_epoch_end is not None:
                on_epoch_end(record, cut_here)
            if record.stopped or record.time_budget_reached or record.privacy_budget_reached:
                break
    finally:
        bar.close()
    return records


def _epoch(
    trainer, data, epoch, budget, progress_callback, bar, deadline, cut=None
) -> tuple[EpochRecord, CutEpoch | None]:
    """Train ``epoch`` (the rest of it after a ``cut``): its record, and its `CutEpoch`
    when the budget ends it before its last batch."""
    n, device, collective, privacy = len(data), trainer.device, trainer.collective, trainer.privacy
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    acc = Accumulators(device)
    # seen: examples in this process's loss sums (its shard of each batch; the whole batch
    # in one process), made global in one place, Collective.end_epoch. trained: examples of
    # the whole batches, over all processes (examples_per_s counts them all).
    seen, trained, first, events, stopped, time_up = 0, 0, 0, [], False, False
    spent = False
    if privacy is not None:  # each batch drawn as the accountant assumes (Poisson)
        perm = None
    elif cut is None:
        # Balanced batches (sizes differ by at most one) from a device permutation; a
        # partial last epoch of a budget in steps trains the first of them.
        perm = torch.randperm(n, device=device, generator=trainer.rng)
    else:  # the rest of an epoch cut short: the same order
        perm = cut.permutation.to(device)
    if cut is not None:  # the rest of an epoch cut short, adding to the same sums
        first, trained = cut.batches_done, cut.trained
        events = list(cut.guard_events)
        if collective is None or collective.is_main:  # global sums: one process carries
            acc.losses.copy_(cut.loss_sums.to(device))  # them, the epoch-end sum adds the rest
            seen = cut.seen
    batches = budget.batches(epoch)
    slices = None if perm is None else perm.tensor_split(budget.steps_per_epoch)
    steps = first
    for b in range(first, batches):
        if privacy is not None and privacy.exhausted:  # a private run stops at its epsilon
            spent = True
            break
        index = slices[b] if privacy is None else privacy.next_batch()
        if collective is None:
            shard = index
            trainer.train_step(data.take(index), acc)
        else:  # every process draws the same permutation and takes its shard
            shard = collective.shard(index)
            trainer.train_step(data.take(shard), acc, len(index))
        seen += len(shard)  # per process, like the loss sums it divides
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
    if collective is not None:  # the epoch's sums and count, per process -> global
        seen = collective.end_epoch(trainer.modules().values(), acc, seen)
    elapsed = time.perf_counter() - start + (0.0 if cut is None else cut.wall_time_s)
    means = _mean_losses(trainer, acc, seen) if seen else dict.fromkeys(LOSS_NAMES)
    policy = trainer.policy
    peak = torch.cuda.max_memory_allocated(device) if cuda else peak_rss_bytes()
    if cut is not None and cut.peak_memory_bytes is not None:
        peak = max(peak, cut.peak_memory_bytes)
    skipped = acc.skipped_steps() + (0 if cut is None else cut.skipped_steps)  # host sync
    record = EpochRecord(
        epoch=epoch,
        **means,
        examples_per_s=trained / elapsed,
        wall_time_s=elapsed,
        precision=policy.name,
        in_hardware=runs_in_hardware(policy.precision, device),
        critic_loss_scale=loss_scale(policy.critic_scaler),
        generator_loss_scale=loss_scale(policy.generator_scaler),
        skipped_steps=skipped,
        guard_events=tuple(events),
        peak_memory_bytes=peak,
        stopped=stopped,
        steps=steps,
        time_budget_reached=time_up,
        epsilon=None if privacy is None else privacy.spent(),
        delta=None if privacy is None else privacy.accountant.delta,
        privacy_budget_reached=spent,
    )
    if stopped or spent or steps == budget.steps_per_epoch:
        return record, None
    return record, CutEpoch(
        epoch,
        steps,
        torch.empty(0, dtype=torch.long) if perm is None else perm.cpu(),
        acc.losses.detach().cpu().clone(),
        seen,
        trained,
        skipped,
        elapsed,
        tuple(events),
        peak,
    )


def _mean_losses(trainer: Trainer, acc: Accumulators, seen: int) -> dict[str, float | None]:
    """Each loss's mean over the ``seen`` examples (None for a critic the model lacks).
    Deliberate host sync."""
    means: dict[str, float | None] = dict(acc.mean_losses(seen))
    if trainer.attribute_critic is None:
        means["attribute_discriminator_loss"] = None
    if trainer.temporal_critic is None:
        means["temporal_discriminator_loss"] = None
    if trainer.envelope_critic is None:
        means["envelope_discriminator_loss"] = None
    if trainer.privacy is not None:  # losses on real data would leave the run without noise
        for name in ("discriminator_loss", "attribute_discriminator_loss", "gradient_penalty"):
            means[name] = None
        means["temporal_discriminator_loss"] = None
        means["envelope_discriminator_loss"] = None
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
