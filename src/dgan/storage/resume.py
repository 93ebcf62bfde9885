"""The resume record: where a training call stopped, as its checkpoint holds it.

A checkpoint is a model file whose JSON header also holds ``"checkpoint"``: this record,
versioned so that it can grow and older checkpoints still read. `ResumeRecord.read` is the
one place that reads it (after `dgan.storage.schema` checked its fields); its tensors (the
permutation and loss sums of an epoch cut short) lie beside the model's in the same file.

Versions:

- 1 (format-2 files): ``run_epochs_done`` counted an epoch cut short by the budget as
  whole. Such checkpoints still resume as they did, from the next epoch (with a warning
  when the last epoch was cut short, whose rest is then not trained).
- 2: the whole epochs and the optimizer steps of the training call, and the epoch cut
  short (`dgan.train.loop.CutEpoch`), which a resumed run finishes: a budget of 10 steps
  resumed with 20 ends as a run of 20 never interrupted.

Example:
    >>> record = ResumeRecord(epochs_done=2, steps_done=8, history_offset=0,
    ...                       data_sha256="0" * 64, examples=40)
    >>> header, tensors = record.to_header()
    >>> header["version"], header["steps_done"], tensors
    (2, 8, {})
    >>> ResumeRecord.read(header, tensors, "ck.dgan") == record
    True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

from dgan.errors import SerializationError
from dgan.records import GuardEvent
from dgan.storage.schema import RESUME_VERSION
from dgan.train.batch import LOSS_NAMES
from dgan.train.loop import CutEpoch

LOSS_COUNT_BEFORE = 5
"""Loss sums a cut epoch's record held before the envelope critic's loss was added."""

_CUT_TENSORS = ("permutation", "loss_sums")  # stored as "cut.permutation", "cut.loss_sums"
_CUT_NUMBERS = ("batches_done", "seen", "trained", "skipped_steps", "wall_time_s")


@dataclass(frozen=True)
class ResumeRecord:
    """Where a training call stopped (all counts are of that call, not of the model).

    Attributes:
        epochs_done: whole epochs trained (an epoch cut short is not counted; one the
            divergence guard stopped in is).
        steps_done: optimizer steps trained, the cut epoch's batches included; None in
            version-1 records (`steps_at` then counts whole epochs).
        history_offset: the history length when the training call began.
        data_sha256: the digest of the encoded training data.
        examples: the number of training series.
        world_size: the number of processes that trained together.
        stopped: the divergence guard stopped the run (nothing is left to train).
        run_id: the training run's id (`dgan.storage.folder`); None before run ids.
        guard: the divergence guard's last healthy state as `Checkpointer` writes it
            (read by `ResumePoint`), or None.
        cut: the epoch the budget cut short, which a resumed run finishes; None when the
            call stopped at an epoch's end.
        version: the record's version (`RESUME_VERSION` when written by this dgan).
    """

    epochs_done: int
    steps_done: int | None
    history_offset: int
    data_sha256: str
    examples: int
    world_size: int = 1
    stopped: bool = False
    run_id: str | None = None
    guard: dict[str, Any] | None = None
    cut: CutEpoch | None = None
    version: int = RESUME_VERSION

    def steps_at(self, steps_per_epoch: int) -> int:
        """Optimizer steps of the training call trained (where a resumed run goes on)."""
        if self.steps_done is None:  # version 1: it resumes at the next epoch's start
            return self.epochs_done * steps_per_epoch
        return self.steps_done

    def epochs_in_history(self) -> int:
        """The history entries of the training call: whole epochs, and the cut one."""
        return self.epochs_done + (self.cut is not None)

    def to_header(self) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        """``(JSON, tensors)`` for a checkpoint file (always the current version)."""
        header: dict[str, Any] = {
            "version": RESUME_VERSION,
            "epochs_done": self.epochs_done,
            "steps_done": self.steps_done,
            "history_offset": self.history_offset,
            "data_sha256": self.data_sha256,
            "examples": self.examples,
            "world_size": self.world_size,
            "stopped": self.stopped,
            "guard": self.guard,
            "run_id": self.run_id,
            "cut": None,
        }
        tensors: dict[str, torch.Tensor] = {}
        cut = self.cut
        if cut is not None:
            header["cut"] = {
                **{name: getattr(cut, name) for name in _CUT_NUMBERS},
                "peak_memory_bytes": cut.peak_memory_bytes,
                "guard_events": [e.as_dict() for e in cut.guard_events],
            }
            tensors = {f"cut.{name}": getattr(cut, name) for name in _CUT_TENSORS}
        return header, tensors

    @classmethod
    def read(
        cls, data: dict[str, Any], tensors: dict[str, torch.Tensor], path: str | os.PathLike
    ) -> ResumeRecord:
        """The record of a checkpoint's header ``data`` (checked by the schema) and its
        ``tensors``; SerializationError when the cut epoch's tensors do not fit it."""
        version = data.get("version", 1)
        common = {
            "history_offset": data["history_offset"],
            "data_sha256": data["data_sha256"],
            "examples": data["examples"],
            "world_size": data.get("world_size", 1),
            "stopped": bool(data.get("stopped", False)),
            "run_id": data.get("run_id"),
            "guard": data.get("guard"),
            "version": version,
        }
        if version == 1:
            return cls(epochs_done=data["run_epochs_done"], steps_done=None, **common)
        cut = data.get("cut")
        return cls(
            epochs_done=data["epochs_done"],
            steps_done=data["steps_done"],
            cut=None if cut is None else _cut(cut, data, tensors, path),
            **common,
        )


def _cut(
    cut: dict[str, Any], data: dict[str, Any], tensors: dict[str, torch.Tensor], path: Any
) -> CutEpoch:
    permutation, sums = (tensors.get(f"cut.{name}") for name in _CUT_TENSORS)
    examples = data["examples"]
    if sums is not None and sums.dim() == 1 and LOSS_COUNT_BEFORE <= len(sums) < len(LOSS_NAMES):
        # written before a loss was added (the envelope critic's, last): it summed nothing
        sums = torch.cat([sums, sums.new_zeros(len(LOSS_NAMES) - len(sums))])
    fits = (
        permutation is not None
        and sums is not None
        and permutation.dtype == torch.int64
        and tuple(permutation.shape) == (examples,)
        and torch.equal(permutation.sort().values, torch.arange(examples))
        and sums.dtype == torch.float32
        and tuple(sums.shape) == (len(LOSS_NAMES),)
    )
    if not fits:
        raise SerializationError(
            f"{str(path)!r} is an inconsistent checkpoint: the epoch it cut short has no "
            f"valid order of its {examples} examples or loss sums ('cut.permutation', "
            "'cut.loss_sums'). Resume from an earlier checkpoint, or train from the start."
        )
    events = tuple(GuardEvent.from_dict(e) for e in cut["guard_events"])
    numbers = {name: cut[name] for name in _CUT_NUMBERS}
    return CutEpoch(
        epoch=data["epochs_done"],
        permutation=permutation.cpu(),
        loss_sums=sums.cpu(),
        guard_events=events,
        peak_memory_bytes=cut.get("peak_memory_bytes"),
        **numbers,
    )
