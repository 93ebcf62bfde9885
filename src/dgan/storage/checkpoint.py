"""Training checkpoints and exact resume.

With ``DGANConfig(checkpoint_dir=DIR)`` training writes ``DIR/checkpoint-NNNNNN.dgan``
(NNNNNN: epochs the model has trained in all) at epoch ends: every ``checkpoint_every``
epochs, at the first epoch end ``checkpoint_every_minutes`` after the last checkpoint,
and after the last epoch; the newest ``checkpoint_keep`` are kept. Each checkpoint is an
ordinary model file (``DGAN.load`` reads it; written atomically, never a pickle) whose
JSON also holds what exact resume needs beyond the model: the epoch reached in the
current training call, the divergence guard's last healthy state, a digest of the
encoded training data and the number of processes. The model file already holds the
networks, optimizers, precision in effect with its loss scalers and the RNG states.

``train_numpy(..., resume_from=DIR)`` (or a checkpoint file) restores the newest valid
checkpoint and trains the remaining epochs. Checkpoints are taken at epoch ends only: a
run killed mid-epoch repeats that epoch from its start, with the same RNG state, so on a
CPU with a seed the resumed run ends bit-identical to one never interrupted.

Example:
    >>> import tempfile, numpy as np
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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from dgan.config import DGANConfig
from dgan.encoding.encoder import DataEncoder, EncodedData
from dgan.errors import DataError, ParameterError, SerializationError
from dgan.records import EpochRecord
from dgan.storage.folder import (
    RunFolder,
    check_resume_path,
    checkpoint_path,
    list_checkpoints,
    new_run_id,
)
from dgan.storage.format import (
    flatten_state_dict,
    join_optimizer_state,
    split_optimizer_state,
    unflatten_state_dict,
    write_model_file,
)
from dgan.storage.model_file import ModelFile, ModelParts, inconsistent_file_errors
from dgan.tabular.layout import FrameLayout
from dgan.train.loop import Budget

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
class ResumePoint(ModelFile):
    """A checkpoint read back: a model file plus where its training run stopped."""

    @property
    def run(self) -> dict[str, Any]:
        """The resume information: epochs done in the training call, history offset, ..."""
        return self.state["checkpoint"]

    def settled_config(self, config: DGANConfig) -> DGANConfig:
        """``config`` (check it with `check_config` first) as the interrupted run used it:
        settled for the same number of series (``large_data`` and what it implies)."""
        return config.resolved_for(self.run["examples"])

    def check_config(self, config: DGANConfig) -> None:
        """ParameterError when the budget of ``config`` gives fewer epochs than the run has
        trained, or naming every config field (other than `RESUMABLE_CHANGES`) that differs
        from the checkpoint's, comparing ``config`` as the interrupted run settled it for
        its data (`settled_config`)."""
        saved = self.state["config"]
        settled = self.settled_config(config)
        current = settled.to_json_dict()
        differ = [
            f"{name}: {saved.get(name)!r} in the checkpoint, {current[name]!r} now"
            for name in current
            if name not in RESUMABLE_CHANGES and saved.get(name) != current[name]
        ]
        done, epochs = self.run["run_epochs_done"], Budget.of(settled, self.run["examples"]).epochs
        if epochs < done:
            given = (
                f"epochs={config.epochs}"
                if settled.training_steps is None
                else f"training_steps={settled.training_steps}"
            )
            raise ParameterError(
                f"Cannot resume from {str(self.path)!r} with {given} ({epochs} epochs): its "
                f"run has trained {done} epochs already, so it would train none. The budget "
                f"counts the whole run, not what to add: give it {done} epochs or more (as "
                "many only restores the run), or load the checkpoint with DGAN.load to use it "
                "as it is."
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
        if data.digest() != self.run["data_sha256"]:
            raise DataError(
                f"{where}: the training data differs from the interrupted run's (its "
                f"encoded arrays, {len(data.features)} examples now, "
                f"{self.run['examples']} then, have another digest); resume with the same data."
            )
        if self.run.get("world_size", 1) != world_size:
            raise ParameterError(
                f"{where}: it was written by a run of {self.run.get('world_size', 1)} "
                f"process(es), this one has {world_size}; resume with the same number of "
                "processes (e.g. torchrun --nproc-per-node), as each takes its shard of "
                "every batch."
            )

    def resume(
        self, parts: ModelParts, data: EncodedData, world_size: int, budget: Budget
    ) -> tuple[int, int, list[dict[str, Any]]]:
        """Check that config, columns, data and number of processes match the interrupted
        run, then `restore` it into ``parts`` (a model built, not yet trained).

        Returns ``(start_epoch, history_offset, history)``: `restore`'s, and the history of
        the interrupted run.
        """
        self.check_config(parts.config)
        self.check_same(parts.layout, parts.encoder, data, world_size)
        with inconsistent_file_errors(self.path):
            start, offset = self.restore(parts.trainer, parts.generation_rng, budget.epochs)
            return start, offset, list(self.history)

    def restore(
        self, trainer: Trainer, generation_rng: torch.Generator, epochs: int
    ) -> tuple[int, int]:
        """Load the checkpoint's training state (and the guard's last healthy state) into
        ``trainer``, built for the same encoder and not yet trained; call `check_same` first.

        Returns ``(start_epoch, history_offset)`` for `dgan.train.trainer.Trainer.fit`: the
        epoch of the training call to continue at (``epochs`` is the call's total), and the
        history length when that call began.
        """
        self.load_into(trainer, generation_rng)
        trainer.guard.load_state_dict(self._guard_snapshot(trainer))
        run = self.run
        start = run["run_epochs_done"]
        if run.get("stopped"):
            logger.warning(
                "The run in %s was stopped by the divergence guard; not training further.",
                self.path,
            )
            start = max(start, epochs)
        elif start >= epochs:
            logger.warning(
                "%s is at epoch %d of %d: nothing left to train.", self.path, start, epochs
            )
        return start, run["history_offset"]

    def _guard_snapshot(self, trainer: Trainer) -> dict[str, Any] | None:
        saved = self.run.get("guard")
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
                    name: join_optimizer_state(
                        f"guard.optimizer.{name}",
                        self.tensors,
                        saved["optimizers"][name],
                        opt.state_dict(),
                    )
                    for name, opt in trainer.optimizers().items()
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


def resume_point(resume_from: str | os.PathLike | ResumePoint | None) -> ResumePoint | None:
    """`find_resume_point` unless ``resume_from`` is already one (or None)."""
    if resume_from is None or isinstance(resume_from, ResumePoint):
        return resume_from
    return find_resume_point(resume_from)


# ----- writing ------------------------------------------------------------------------
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
        self.epochs = budget.epochs
        self.base_history = list(history)
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
            saved_id = self.resumed.run.get("run_id")
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

    def on_epoch_end(self, record: EpochRecord) -> None:
        """Called by the trainer after each epoch: write a checkpoint when one is due."""
        config = self.config
        self.records.append(record.renumbered(self.history_offset).as_dict())
        done = record.epoch + 1  # epochs of this training call
        minutes = config.checkpoint_every_minutes
        due = (
            done % config.checkpoint_every == 0
            or done >= self.epochs
            or record.stopped
            or record.time_budget_reached
            or record.privacy_budget_reached
            or (minutes is not None and time.monotonic() - self.last_write >= 60 * minutes)
        )
        if due:
            self.write(done, record.stopped)

    def write(self, run_epochs_done: int, stopped: bool = False) -> Path | None:
        """Write the checkpoint after ``run_epochs_done`` epochs of this call; prune old ones."""
        if not self.writes:
            return None
        history = self.base_history + self.records
        tensors, state = self.parts.contents(history)
        guard_tensors, guard = self._guard_state()
        tensors |= guard_tensors
        state["checkpoint"] = {
            "run_epochs_done": run_epochs_done,
            "history_offset": self.history_offset,
            "data_sha256": self.digest,
            "examples": self.examples,
            "world_size": self.world_size,
            "stopped": stopped,
            "guard": guard,
            "run_id": self.run_id,
        }
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


def _json(value: Any) -> Any:
    """``value`` as it reads back from a model file's JSON."""
    return json.loads(json.dumps(value))
