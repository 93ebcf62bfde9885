"""Resuming, in the command line's words: what ``--resume`` found, and what to do after
Ctrl-C or SIGTERM (continue from the newest checkpoint, or know that nothing was saved;
`dgan.cli.commands.run_train` puts it on the interrupt as ``advice``).

Example:
    >>> interrupted_advice(None, None)
    'nothing was saved: without --checkpoint-dir no checkpoints are written (pass \
--checkpoint-dir DIR to be able to resume a run)'
"""

from __future__ import annotations

import os
from pathlib import Path

from dgan.storage.checkpoint import ResumePoint
from dgan.storage.folder import list_checkpoints, resume_folder


def epochs_done(point: ResumePoint | None, epochs: int) -> int:
    """Epochs of this training call that the checkpoint has trained already: 0 without
    one, all ``epochs`` when the divergence guard stopped that run (nothing is left).

    Example:
        >>> point = ResumePoint(Path("ck/checkpoint-000080.dgan"), {},
        ...                     {"checkpoint": {"run_epochs_done": 80}})
        >>> epochs_done(point, 400), epochs_done(None, 400)
        (80, 0)
    """
    if point is None:
        return 0
    done = int(point.run["run_epochs_done"])
    return max(done, epochs) if point.run.get("stopped") else done


def seconds_done(point: ResumePoint | None) -> float:
    """Seconds the interrupted run trained (the epochs of its training call), which its
    time budget (``--training-minutes``) counts: 0 without a checkpoint.

    Example:
        >>> point = ResumePoint(Path("ck/checkpoint-000002.dgan"), {}, {
        ...     "history": [{"wall_time_s": 9.0}, {"wall_time_s": 1.5}, {"wall_time_s": 2.0}],
        ...     "checkpoint": {"run_epochs_done": 2, "history_offset": 1}})
        >>> seconds_done(point), seconds_done(None)
        (3.5, 0.0)
    """
    if point is None:
        return 0.0
    run = point.history[point.run["history_offset"] :]
    return float(sum(h.get("wall_time_s") or 0.0 for h in run))


def resume_note(point: ResumePoint, epochs: int) -> str:
    """The line ``dgan train --resume`` prints: the checkpoint, and the epochs done and left
    of the ``epochs`` of the training budget (``--epochs``, ``--training-steps`` or the
    budget picked for the data).

    Example:
        >>> point = ResumePoint(Path("ck/checkpoint-000080.dgan"), {},
        ...                     {"checkpoint": {"run_epochs_done": 80}})
        >>> resume_note(point, 400)
        'resuming from ck/checkpoint-000080.dgan: 80 of 400 epochs trained, 320 left'
    """
    done, path = int(point.run["run_epochs_done"]), point.path
    if point.run.get("stopped"):
        return (
            f"resuming from {path}: the divergence guard stopped that run after {done} epochs, "
            "so nothing is left to train (see its guard events)"
        )
    if done >= epochs:
        return (
            f"resuming from {path}: it has trained all {epochs} epochs of the budget; nothing "
            "is left to train (a larger --epochs or --training-steps trains further)"
        )
    return f"resuming from {path}: {done} of {epochs} epochs trained, {epochs - done} left"


def interrupted_advice(checkpoint_dir: str | None, resume: str | None) -> str:
    """What to tell a user who pressed Ctrl-C during ``dgan train``: the newest checkpoint
    in ``checkpoint_dir`` and how to continue from it (``resume``: the ``--resume`` given),
    or that nothing was saved.

    Example:
        >>> interrupted_advice("/no/such/folder", None).split(":")[0]
        'nothing was saved'
    """
    if checkpoint_dir is None:
        return (
            "nothing was saved: without --checkpoint-dir no checkpoints are written (pass "
            "--checkpoint-dir DIR to be able to resume a run)"
        )
    found = list_checkpoints(checkpoint_dir)
    if not found:
        return (
            f"nothing was saved: no checkpoint was written to {checkpoint_dir!r} yet (one "
            "every --checkpoint-every epochs, and after the last)"
        )
    epochs, path = found[-1]
    same = resume is not None and _same_place(resume_folder(resume), checkpoint_dir)
    again = "again" if same else f"with --resume {checkpoint_dir}"
    return (
        f"the newest checkpoint is {path} (after {epochs} epochs); to continue, run the same "
        f"command {again}"
    )


def _same_place(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    return Path(a).resolve() == Path(b).resolve()
