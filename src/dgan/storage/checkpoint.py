"""Training checkpoints and exact resume.

With ``DGANConfig(checkpoint_dir=DIR)`` training writes ``DIR/checkpoint-NNNNNN.dgan``
(NNNNNN: epochs the model has trained in all) at epoch ends: every ``checkpoint_every``
epochs, at the first epoch end ``checkpoint_every_minutes`` after the last checkpoint,
and after the last epoch; the newest ``checkpoint_keep`` are kept. Each checkpoint is an
ordinary model file (``DGAN.load`` reads it; written atomically, never a pickle) whose
JSON also holds what exact resume needs beyond the model (`dgan.storage.resume`'s
`ResumeRecord`): the epochs and optimizer steps of the current training call, the epoch
the budget cut short (its permutation and sums so far), the divergence guard's last
healthy state, a digest of the encoded training data and the number of processes. The
model file already holds the networks, optimizers, precision in effect with its loss
scalers and the RNG states.

`dgan.storage.checkpointer.Checkpointer` writes them; ``train_numpy(...,
resume_from=DIR)`` (or a checkpoint file) restores the newest valid checkpoint and trains
the rest of the budget. Checkpoints are taken at epoch ends, and
where a budget ends an epoch early (a budget in steps, a time budget): a run killed
mid-epoch repeats that epoch from its start, with the same RNG state, and a run resumed
after a budget's cut finishes the cut epoch from its next batch, so on a CPU with a seed
the resumed run ends bit-identical to one never interrupted. The checkpoint of a cut
epoch carries that epoch's number and is replaced when the epoch is finished.

Example:
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> from dgan import DGAN, DGANConfig
    >>> folder = tempfile.mkdtemp()
    >>> config = DGANConfig(max_sequence_len=4, sample_len=2, epochs=2, cuda=False, seed=0,
    ...                     checkpoint_dir=folder, checkpoint_every=1)
    >>> data = np.random.default_rng(0).random((8, 4, 1))
    >>> DGAN(config).train_numpy(data, progress_bar=False)
    >>> sorted(p.name for p in Path(folder).iterdir())
    ['checkpoint-000001.dgan', 'checkpoint-000002.dgan']
    >>> resumed = DGAN(config)  # e.g. after a crash: nothing left to train here
    >>> resumed.train_numpy(data, progress_bar=False, resume_from=folder)
    >>> len(resumed.history)
    2
"""

from __future__ import annotations

import copy
import json
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from dgan.config import DGANConfig
from dgan.config.given import GIVEN
from dgan.encoding.encoder import DataEncoder, EncodedData
from dgan.errors import DataError, ParameterError, SerializationError
from dgan.storage.folder import check_resume_path, list_checkpoints
from dgan.storage.format import join_optimizer_state, unflatten_state_dict
from dgan.storage.model_file import ModelFile, ModelParts, inconsistent_file_errors
from dgan.storage.resume import ResumeRecord
from dgan.storage.schema import saved_config
from dgan.tabular.layout import FrameLayout
from dgan.train.loop import Budget, CutEpoch

if TYPE_CHECKING:
    from dgan.train.trainer import Trainer

logger = logging.getLogger(__name__)

# Config fields a resumed run may change: how long to train and how to checkpoint.
RESUMABLE_CHANGES = (
    "epochs",
    "training_steps",
    "training_minutes",
    "checkpoint_dir",
    "checkpoint_every",
    "checkpoint_every_minutes",
    "checkpoint_keep",
)


# ----- reading ------------------------------------------------------------------------
@dataclass
class Restored:
    """Where a training call restored from a checkpoint goes on (`ResumePoint.resume`).

    Attributes:
        start_epoch: the epoch of the training call to continue at.
        cut: that epoch, when the budget cut it short (the call finishes it), else None.
        history_offset: the history length when the interrupted call began.
        history: the interrupted run's history (ending with the cut epoch's record).
    """

    start_epoch: int
    cut: CutEpoch | None
    history_offset: int
    history: list[dict[str, Any]]


@dataclass
class ResumePoint(ModelFile):
    """A checkpoint read back: a model file plus where its training run stopped (`record`)."""

    record: ResumeRecord | None = None

    def __post_init__(self) -> None:
        if self.record is None:
            with inconsistent_file_errors(self.path):
                self.record = ResumeRecord.read(self.state["checkpoint"], self.tensors, self.path)

    def settled_config(self, config: DGANConfig) -> DGANConfig:
        """``config`` (check it with `check_config` first) as the interrupted run used it:
        settled for the same number of series (``large_data`` and what it implies)."""
        return config.resolved_for(self.record.examples)

    def seconds_used(self) -> float:
        """Wall time the interrupted training call trained: what its time budget spent."""
        offset = self.record.history_offset
        return sum(entry.get("wall_time_s") or 0.0 for entry in self.history[offset:])

    def check_config(self, config: DGANConfig) -> None:
        """ParameterError when the budget of ``config`` gives fewer optimizer steps than the
        run has trained, or naming every config field (other than `RESUMABLE_CHANGES`) that
        differs from the checkpoint's, comparing ``config`` as the interrupted run settled it
        for its data (`settled_config`)."""
        saved = saved_config(self.state["config"]).to_json_dict()
        settled = self.settled_config(config)
        current = settled.to_json_dict()
        differ = [  # the values decide; which of them were set (GIVEN) may differ
            f"{name}: {saved[name]!r} in the checkpoint, {current[name]!r} now"
            for name in current
            if name not in (*RESUMABLE_CHANGES, GIVEN) and saved[name] != current[name]
        ]
        budget = Budget.of(settled, self.record.examples)
        done = self.record.steps_at(budget.steps_per_epoch)
        if budget.steps < done:
            if settled.training_steps is None:
                given = f"epochs={config.epochs}"
                enough = f"epochs={-(-done // budget.steps_per_epoch)}"
            else:
                given, enough = f"training_steps={settled.training_steps}", f"training_steps={done}"
            raise ParameterError(
                f"Cannot resume from {str(self.path)!r} with {given}: its run has trained "
                f"{_position(self.record, budget)} ({done} optimizer steps) already, so it "
                f"would train none. The budget counts the whole run, not what to add: give "
                f"{enough} or more (as many only restores the run), or load the checkpoint "
                "with DGAN.load to use it as it is."
            )
        if differ:
            raise ParameterError(
                f"Cannot resume from {str(self.path)!r}: the config differs in "
                + "; ".join(differ)
                + ". Resume with the config of the interrupted run (only epochs and the "
                "checkpoint settings may change), or train from the start without resume_from."
            )

    def check_same(
        self,
        layout: FrameLayout | None,
        encoder: DataEncoder,
        data: EncodedData,
        world_size: int,
    ) -> None:
        """DataError (ParameterError for the number of processes) unless the columns,
        variables, encoded data and number of processes are the interrupted run's."""
        where = f"Cannot resume from {str(self.path)!r}"
        saved_layout = self.state["data_frame_layout"]
        if (None if layout is None else _json(layout.to_json_dict())) != saved_layout:
            saved = "numpy arrays" if saved_layout is None else saved_layout["column_order"]
            now = "numpy arrays" if layout is None else layout.column_order
            raise DataError(
                f"{where}: it was trained on columns {saved}, this call passes {now}; "
                "resume with the same table and column arguments."
            )
        if _json(encoder.to_json()) != self.state["encoder"]:
            raise DataError(
                f"{where}: the data's variables (types, categories or ranges) differ from "
                "the interrupted run's; resume with the same training data."
            )
        if data.digest() != self.record.data_sha256:
            raise DataError(
                f"{where}: the training data differs from the interrupted run's (its "
                f"encoded arrays, {len(data.features)} examples now, "
                f"{self.record.examples} then, have another digest); resume with the same data."
            )
        if self.record.world_size != world_size:
            raise ParameterError(
                f"{where}: it was written by a run of {self.record.world_size} "
                f"process(es), this one has {world_size}; resume with the same number of "
                "processes (e.g. torchrun --nproc-per-node), as each takes its shard of "
                "every batch."
            )

    def resume(
        self, parts: ModelParts, data: EncodedData, world_size: int, budget: Budget
    ) -> Restored:
        """Check that config, columns, data and number of processes match the interrupted
        run, then `restore` it into ``parts`` (a model built, not yet trained)."""
        self.check_config(parts.config)
        self.check_same(parts.layout, parts.encoder, data, world_size)
        with inconsistent_file_errors(self.path):
            return self.restore(parts.trainer, parts.generation_rng, budget)

    def restore(
        self, trainer: Trainer, generation_rng: torch.Generator, budget: Budget
    ) -> Restored:
        """Load the checkpoint's training state (and the guard's last healthy state) into
        ``trainer``, built for the same encoder and not yet trained; call `check_same` first.
        Returns where the training call of ``budget`` goes on (`dgan.train.loop.fit`)."""
        self.load_into(trainer, generation_rng)
        trainer.guard.load_state_dict(self._guard_snapshot(trainer))
        record = self.record
        start, cut = record.epochs_done, record.cut
        if record.stopped:
            logger.warning(
                "The run in %s was stopped by the divergence guard; not training further.",
                self.path,
            )
            start, cut = max(start, budget.epochs), None
        elif record.steps_at(budget.steps_per_epoch) >= budget.steps:
            logger.warning(
                "%s has trained %s of the budget's %d steps: nothing left to train.",
                self.path,
                _position(record, budget),
                budget.steps,
            )
        elif record.version == 1 and _last_epoch_cut(self.history, budget):
            logger.warning(
                "%s was written by an older dgan after an epoch the budget cut short; its "
                "rest is not trained: resuming at the start of epoch %d.",
                self.path,
                start,
            )
        return Restored(start, cut, record.history_offset, list(self.history))

    def _guard_snapshot(self, trainer: Trainer) -> dict[str, Any] | None:
        saved = self.record.guard
        if saved is None:
            return None
        if saved.get("same_as_model"):  # the usual case: healthy at the epoch's last check
            state = trainer.state_dict()
            parts = {k: state[k] for k in ("modules", "optimizers")}
            snapshot = copy.deepcopy(parts)
        else:
            snapshot = {
                "modules": {
                    name: unflatten_state_dict(f"guard.{name}", self.tensors)
                    for name in trainer.modules()
                },
                "optimizers": {
                    name: join_optimizer_state(f"guard.optimizer.{name}", self.tensors, kept)
                    for name, kept in saved["optimizers"].items()
                },
            }
        snapshot["precision"] = saved["precision"]
        return snapshot


def find_resume_point(path: str | os.PathLike) -> ResumePoint | None:
    """The newest readable checkpoint at ``path`` (a checkpoint file or a folder of them).

    A corrupt newest checkpoint falls back to the one before it, with a warning. A folder
    that holds no checkpoint (or does not exist yet) gives None, with a warning: training
    then starts from the beginning, so one command both starts and resumes a run. A
    missing path ending in ``.dgan`` is a ParameterError (`check_resume_path`).

    Example:
        >>> find_resume_point("/no/such/folder") is None
        True
    """
    path = check_resume_path(path)
    if path.is_file():
        return _point(ModelFile.read(path))
    candidates = list_checkpoints(path)
    if not candidates:
        logger.warning("No checkpoint in %s yet; training from the start.", path)
        return None
    problems = []
    for _, candidate in reversed(candidates):
        try:
            point = _point(ModelFile.read(candidate))
        except SerializationError as e:
            logger.warning("Skipping checkpoint %s: %s Trying the one before.", candidate, e)
            problems.append(f"{candidate.name}: {e}")
            continue
        return point
    raise SerializationError(
        f"No readable checkpoint in {str(path)!r}:\n  - "
        + "\n  - ".join(problems)
        + "\nDelete the folder to train from the start."
    )


def _point(file: ModelFile) -> ResumePoint:
    if not isinstance(file.state.get("checkpoint"), dict):
        raise SerializationError(
            f"{str(file.path)!r} is a dgan model file but not a training checkpoint (it "
            "holds no resume information); resume from a file in a checkpoint_dir."
        )
    return ResumePoint(file.path, file.tensors, file.state)


def _position(record: ResumeRecord, budget: Budget) -> str:
    """Where a training call stopped, in words: "2 epochs and 3 of 5 steps"."""
    whole = f"{record.epochs_done} epoch" + ("" if record.epochs_done == 1 else "s")
    if record.cut is None:
        return whole
    return f"{whole} and {record.cut.batches_done} of {budget.steps_per_epoch} steps"


def _last_epoch_cut(history: list[dict[str, Any]], budget: Budget) -> bool:
    """Whether the last epoch in ``history`` trained fewer steps than an epoch has."""
    steps = history[-1].get("steps") if history else None
    return isinstance(steps, int) and steps < budget.steps_per_epoch


def resume_point(resume_from: str | os.PathLike | ResumePoint | None) -> ResumePoint | None:
    """`find_resume_point` unless ``resume_from`` is already one (or None)."""
    if resume_from is None or isinstance(resume_from, ResumePoint):
        return resume_from
    return find_resume_point(resume_from)


def _json(value: Any) -> Any:
    """``value`` as it reads back from a model file's JSON."""
    return json.loads(json.dumps(value))
