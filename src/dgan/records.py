"""Typed training records: what one epoch of training did.

The trainer produces one `EpochRecord` per epoch; the report, the CLI summary and the
benchmarks read its fields, so a renamed field is an error at the reader, not a panel
that silently never appears. `DGAN.history` keeps plain dicts (`EpochRecord.as_dict`) for
gretel-style users and for the model file's JSON; `EpochRecord.from_dict` reads them back.

Example:
    >>> record = EpochRecord(epoch=0, generator_loss=-0.5, examples_per_s=100.0)
    >>> record.as_dict()["generator_loss"]
    -0.5
    >>> EpochRecord.from_dict(record.as_dict()) == record
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GuardEvent:
    """One intervention of the divergence guard.

    Attributes:
        epoch: the epoch in which the problem was found.
        step: training steps (batches) done when it was found.
        reason: what was wrong, e.g. "non-finite loss".
        precision: the precision training was running in.
        action: what the guard did, e.g. "rolled back and continued in fp32".
    """

    epoch: int
    step: int
    reason: str
    precision: str
    action: str

    def as_dict(self) -> dict[str, Any]:
        """The event as a JSON-ready dict (the ``guard_events`` entries of `DGAN.history`)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GuardEvent:
        """Read an event written by `as_dict` (e.g. from a saved model's history)."""
        return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class EpochRecord:
    """What one training epoch did. Losses are batch-weighted means over the epoch.

    Attributes:
        epoch: 0-based epoch number, counted over every training call of the model.
        discriminator_loss: the critic's loss (Wasserstein estimate plus penalty).
        attribute_discriminator_loss: the attribute critic's loss; None without one.
        gradient_penalty: the critic's gradient penalty (before its coefficient).
        generator_loss: the generator's loss.
        temporal_discriminator_loss: the temporal critic's loss; None without one.
        envelope_discriminator_loss: the envelope critic's loss; None without one.
        examples_per_s: training examples per second of wall time.
        wall_time_s: the epoch's wall time in seconds.
        precision: the precision in effect at the end of the epoch ("fp32", ...).
        in_hardware: for fp16/bf16, whether the device ran that precision's matrix products
            in hardware (False: emulated, usually slower than fp32); None in fp32.
        critic_loss_scale, generator_loss_scale: fp16 loss scales; None without scaling.
        skipped_steps: optimizer steps skipped for inf/NaN gradients (fp16 overflow).
        guard_events: the divergence guard's interventions in this epoch.
        peak_memory_bytes: peak CUDA memory allocated, or the process's peak RSS on CPU.
        stopped: True when the guard stopped training in this epoch.
        steps: optimizer steps (batches) trained in the epoch; fewer than the others in
            the last epoch of a budget in steps, or at the time budget. None in histories
            written before budgets existed.
        time_budget_reached: True when training stopped in this epoch because its time
            budget (``training_minutes``) was spent.
        epsilon, delta: differential privacy: the run is (epsilon, delta)-differentially
            private after this epoch (delta is the config's ``dp_delta``); None without
            privacy. A private run records no loss of the critics (they read real data),
            only the generator's.
        privacy_budget_reached: True when training stopped in this epoch because another
            step would have spent more than ``dp_epsilon``.
    """

    epoch: int
    discriminator_loss: float | None = None
    attribute_discriminator_loss: float | None = None
    gradient_penalty: float | None = None
    generator_loss: float | None = None
    temporal_discriminator_loss: float | None = None
    envelope_discriminator_loss: float | None = None
    examples_per_s: float | None = None
    wall_time_s: float | None = None
    precision: str = "fp32"
    in_hardware: bool | None = None
    critic_loss_scale: float | None = None
    generator_loss_scale: float | None = None
    skipped_steps: int = 0
    guard_events: tuple[GuardEvent, ...] = field(default_factory=tuple)
    peak_memory_bytes: int | None = None
    stopped: bool = False
    steps: int | None = None
    time_budget_reached: bool = False
    epsilon: float | None = None
    delta: float | None = None
    privacy_budget_reached: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The record as a plain, JSON-ready dict: one entry of `DGAN.history`.

        ``stopped``, ``time_budget_reached`` and ``privacy_budget_reached`` appear only
        when True, ``epsilon`` and ``delta`` only in a private run.
        """
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["guard_events"] = [e.as_dict() for e in self.guard_events]
        for flag in ("stopped", "time_budget_reached", "privacy_budget_reached"):
            if not out[flag]:
                del out[flag]
        for name in ("epsilon", "delta"):
            if out[name] is None:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpochRecord:
        """Read a `DGAN.history` entry (missing keys take their defaults).

        Unknown keys are ignored, so histories of older or newer versions still read.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["guard_events"] = tuple(
            GuardEvent.from_dict(e) for e in data.get("guard_events") or ()
        )
        values["stopped"] = bool(data.get("stopped", False))
        values["time_budget_reached"] = bool(data.get("time_budget_reached", False))
        values["privacy_budget_reached"] = bool(data.get("privacy_budget_reached", False))
        return cls(**values)

    def renumbered(self, offset: int) -> EpochRecord:
        """The same record with ``offset`` added to the epoch numbers (of events too)."""
        events = tuple(dataclasses.replace(e, epoch=e.epoch + offset) for e in self.guard_events)
        return dataclasses.replace(self, epoch=self.epoch + offset, guard_events=events)


def precision_runs(records: list[EpochRecord]) -> list[tuple[str, int, int]]:
    """Consecutive epochs trained in one precision: ``(precision, first, last)`` each.

    Example:
        >>> precision_runs([EpochRecord(0, precision="fp16"), EpochRecord(1, precision="fp16"),
        ...                 EpochRecord(2, precision="fp32")])
        [('fp16', 0, 1), ('fp32', 2, 2)]
    """
    runs: list[list] = []  # [precision, first epoch, last epoch]
    for record in records:
        if runs and runs[-1][0] == record.precision:
            runs[-1][2] = record.epoch
        else:
            runs.append([record.precision, record.epoch, record.epoch])
    return [tuple(run) for run in runs]


def privacy_guarantee(history: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The differential privacy of a trained model from its history: ``epsilon`` and
    ``delta`` after its last private epoch, its ``steps`` and whether training stopped at
    the target (``budget_reached``); None for a model trained without privacy.

    Example:
        >>> privacy_guarantee([{"epoch": 0, "epsilon": 3.9, "delta": 1e-5, "steps": 40}])
        {'epsilon': 3.9, 'delta': 1e-05, 'steps': 40, 'budget_reached': False}
        >>> privacy_guarantee([{"epoch": 0}]) is None
        True
    """
    private = [EpochRecord.from_dict(h) for h in history if h.get("epsilon") is not None]
    if not private:
        return None
    last = private[-1]
    return {
        "epsilon": last.epsilon,
        "delta": last.delta,
        "steps": sum(r.steps or 0 for r in private),
        "budget_reached": any(r.privacy_budget_reached for r in private),
    }


def privacy_text(guarantee: dict[str, Any]) -> str:
    """`privacy_guarantee` in words.

    Example:
        >>> privacy_text({"epsilon": 3.9, "delta": 1e-5, "steps": 40, "budget_reached": False})
        'differential privacy: (epsilon 3.9, delta 1e-05) over 40 steps'
    """
    text = (
        f"differential privacy: (epsilon {guarantee['epsilon']:.3g}, delta "
        f"{guarantee['delta']:.3g}) over {guarantee['steps']:,} steps"
    )
    return text + ("; stopped at the target epsilon" if guarantee["budget_reached"] else "")
