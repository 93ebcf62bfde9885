"""Writing a training call's checkpoints (`Checkpointer`); `dgan.storage.checkpoint`
reads them back and resumes.

The checkpointer takes the folder for its run (`dgan.storage.folder.RunFolder`) before
the first epoch and writes a checkpoint when one is due at an epoch's end, and always
where the budget cuts an epoch short: the model file of the parts being trained, plus
their `dgan.storage.resume.ResumeRecord` and the divergence guard's last healthy state.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import torch

from dgan.encoding.encoder import EncodedData
from dgan.errors import ParameterError
from dgan.records import EpochRecord
from dgan.storage.checkpoint import ResumePoint
from dgan.storage.folder import RunFolder, checkpoint_path, new_run_id
from dgan.storage.format import flatten_state_dict, split_optimizer_state, write_model_file
from dgan.storage.model_file import ModelParts
from dgan.storage.resume import ResumeRecord
from dgan.train.loop import Budget, CutEpoch, continued_history

logger = logging.getLogger(__name__)


class Checkpointer:
    """Writes a training call's checkpoints; `on_epoch_end` is the trainer's hook.

    Use it as a context manager around the training call: entering takes the checkpoint
    folder for this run (`dgan.storage.folder.RunFolder`: the lock, the check that no other
    run's checkpoints are there), before the first epoch; leaving releases it.

    Args:
        parts: the model being trained.
        data: the encoded training data (its digest goes in each checkpoint).
        history: the model's history when the training call began (with the epochs of
            this call restored from a checkpoint, when it resumes).
        history_offset: the history length when the training call began.
        budget: the training call's budget (a checkpoint follows its last epoch).
        cut: the epoch cut short that this call finishes (resumed; its partial record ends
            ``history``, and the whole epoch's replaces it), or None.
        world_size: number of processes training the model together.
        writes: False on processes other than the first (rank 0 writes for all).
        run_id: the id of the run this training call continues (None: a new run).
        resumed: the checkpoint this call resumes from; resumed from a checkpoint in the
            same folder, the call continues that checkpoint's run (and id).

    Example:
        >>> import tempfile, numpy as np
        >>> from dgan import DGAN, DGANConfig
        >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, epochs=1, cuda=False,
        ...                         checkpoint_dir=tempfile.mkdtemp()))
        >>> encoded = model.preprocess(np.zeros((4, 2, 1)))
        >>> parts = ModelParts(model.config, model.encoder, None, model.trainer, model.sampler.rng)
        >>> from dgan.train.loop import Budget
        >>> budget = Budget.of(model.config, len(encoded.features))
        >>> with Checkpointer(parts, encoded, [], 0, budget) as writer:
        ...     writer.write(0).name
        'checkpoint-000000.dgan'
    """

    def __init__(
        self,
        parts: ModelParts,
        data: EncodedData,
        history: list[dict[str, Any]],
        history_offset: int,
        budget: Budget,
        world_size: int = 1,
        writes: bool = True,
        run_id: str | None = None,
        resumed: ResumePoint | None = None,
        cut: CutEpoch | None = None,
    ):
        self.parts = parts
        self.config = parts.config
        if not self.config.checkpoint_dir.strip():  # a config check would stop files loading
            raise ParameterError(
                f"checkpoint_dir is empty ({self.config.checkpoint_dir!r}); give a folder for "
                "the checkpoints ('.' for the current one), or None to write none."
            )
        self.folder = Path(self.config.checkpoint_dir)
        self.history_offset = history_offset
        self.epochs, self.steps_per_epoch = budget.epochs, budget.steps_per_epoch
        self.base_history = list(history)
        self.cut = cut
        self.records: list[dict[str, Any]] = []
        self.digest = data.digest()
        self.examples = len(data.features)
        self.world_size = world_size
        self.writes = writes
        self.run_id = run_id or new_run_id()
        self.resumed = resumed
        self.run_folder: RunFolder | None = None
        self.last_write = time.monotonic()

    def __enter__(self) -> Checkpointer:
        if not self.writes:
            return self
        earlier: list[str | None] = []
        here = self.resumed is not None and _same_folder(self.resumed.path.parent, self.folder)
        if here:  # the same run, continued
            saved_id = self.resumed.record.run_id
            earlier.append(saved_id)
            self.run_id = saved_id or self.run_id  # None: from before dgan had run ids
        self.run_folder = RunFolder.open(
            self.folder,
            self.run_id,
            start=len(self.base_history),
            also_owned=earlier,
            resumed_here=here,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.run_folder is not None:
            self.run_folder.close()
            self.run_folder = None

    def on_epoch_end(self, record: EpochRecord, cut: CutEpoch | None = None) -> None:
        """Called by the trainer after each epoch (with its `CutEpoch` when the budget cut
        it short): write a checkpoint when one is due, always after a cut."""
        config = self.config
        self.records.append(record.renumbered(self.history_offset).as_dict())
        ended = record.epoch + 1  # epochs of this training call that have ended
        minutes = config.checkpoint_every_minutes
        due = (
            ended % config.checkpoint_every == 0
            or ended >= self.epochs
            or record.stopped
            or record.privacy_budget_reached
            or cut is not None
            or (minutes is not None and time.monotonic() - self.last_write >= 60 * minutes)
        )
        if due:
            steps = record.epoch * self.steps_per_epoch + (record.steps or 0)
            self.write(ended - (cut is not None), steps, stopped=record.stopped, cut=cut)

    def write(
        self,
        epochs_done: int,
        steps_done: int | None = None,
        *,
        stopped: bool = False,
        cut: CutEpoch | None = None,
    ) -> Path | None:
        """Write the checkpoint after ``epochs_done`` whole epochs and ``steps_done``
        optimizer steps of this call (None: the whole epochs'), and ``cut``, the epoch the
        budget cut short; prune old ones."""
        if not self.writes:
            return None
        history = continued_history(self.base_history, self.records, self.cut)
        tensors, state = self.parts.contents(history)
        guard_tensors, guard = self._guard_state()
        record = ResumeRecord(
            epochs_done=epochs_done,
            steps_done=epochs_done * self.steps_per_epoch if steps_done is None else steps_done,
            history_offset=self.history_offset,
            data_sha256=self.digest,
            examples=self.examples,
            world_size=self.world_size,
            stopped=stopped,
            run_id=self.run_id,
            guard=guard,
            cut=cut,
        )
        state["checkpoint"], cut_tensors = record.to_header()
        tensors |= guard_tensors | cut_tensors
        folder = self.run_folder
        tag = "" if folder is None else folder.temporary_tag
        path = checkpoint_path(self.folder, len(history))
        write_model_file(path, tensors, state, tag=tag)
        self.last_write = time.monotonic()
        if folder is not None:
            folder.prune((len(history), path), self.config.checkpoint_keep)
        logger.info("Checkpoint written: %s", path)
        return path

    def _guard_state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any] | None]:
        trainer = self.parts.trainer
        snapshot = trainer.guard.state_dict()
        if not trainer.config.divergence_guard or snapshot is None:
            return {}, None
        guard: dict[str, Any] = {"precision": snapshot["precision"]}
        current = trainer.state_dict()
        if all(_equal(snapshot[k], current[k]) for k in ("modules", "optimizers")):
            guard["same_as_model"] = True
            return {}, guard
        tensors: dict[str, torch.Tensor] = {}
        guard["optimizers"] = {}
        for name, module_state in snapshot["modules"].items():
            tensors |= flatten_state_dict(f"guard.{name}", module_state)
        for name, optimizer_state in snapshot["optimizers"].items():
            opt_tensors, guard["optimizers"][name] = split_optimizer_state(
                f"guard.optimizer.{name}", optimizer_state
            )
            tensors |= opt_tensors
        return tensors, guard


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # b does not exist yet
        return False


def _equal(a: Any, b: Any) -> bool:
    """Deep equality of nested state dicts, tensors compared exactly."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(torch.equal(a, b))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b
