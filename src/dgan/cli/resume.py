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

from dgan.planning import TrainingPlan
from dgan.storage.checkpoint import ResumePoint
from dgan.storage.folder import list_checkpoints, resume_folder


def steps_done(point: ResumePoint | None, plan: TrainingPlan) -> int:
    """Optimizer steps of the training budget (``plan``'s) that the checkpoint has trained
    already: 0 without one, all of them when the divergence guard stopped its run. A spent
    time budget leaves the count as it is: the plan says what is left of the steps and
    that no time is.

    Example:
        >>> steps_done(None, None)
        0
    """
    if point is None:
        return 0
    done = point.record.steps_at(plan.steps_per_epoch)
    return max(done, plan.steps) if point.record.stopped else done


def nothing_left(point: ResumePoint | None, plan: TrainingPlan) -> str | None:
    """Why a resumed run of ``plan`` has nothing left to train, with what trains further,
    or None when something is left (or there is no checkpoint)."""
    if point is None:
        return None
    record = point.record
    if record.stopped:
        return "the divergence guard stopped that run (see its guard events)"
    if record.steps_at(plan.steps_per_epoch) >= plan.steps:
        return "the budget is trained (a larger --epochs or --training-steps trains further)"
    if plan.minutes is not None and point.seconds_used() >= 60 * plan.minutes:
        return (
            f"its time budget, --training-minutes {plan.minutes:g} of the whole run's "
            "training, is spent (a larger --training-minutes trains further)"
        )
    return None


def resume_note(point: ResumePoint, plan: TrainingPlan) -> str:
    """The line ``dgan train --resume`` prints: the checkpoint, and what its run has trained
    of the training budget (``--epochs``, ``--training-steps`` or the budget picked for
    the data) and what is left, or why nothing is.

    Example:
        >>> from dgan.planning import TrainingPlan
        >>> from dgan.storage.resume import ResumeRecord
        >>> record = ResumeRecord(80, 320, 0, "0" * 64, 40)
        >>> point = ResumePoint(Path("ck/checkpoint-000080.dgan"), {}, {"history": []}, record)
        >>> plan = TrainingPlan([], 40, (4, 4), 4, 2, 10, 4, 400, 1600, "", "fp32", "", "cpu", 1)
        >>> resume_note(point, plan)
        'resuming from ck/checkpoint-000080.dgan: 80 of 400 epochs trained, 320 left'
    """
    path, per_epoch = point.path, plan.steps_per_epoch
    why = nothing_left(point, plan)
    done = point.record.steps_at(per_epoch)
    if why is not None:
        return (
            f"resuming from {path}: it has trained {_steps(done, per_epoch)}; nothing is left "
            f"to train: {why}"
        )
    if done % per_epoch == 0 and plan.steps % per_epoch == 0:
        return (
            f"resuming from {path}: {done // per_epoch} of {plan.epochs} epochs trained, "
            f"{plan.epochs - done // per_epoch} left"
        )
    return (
        f"resuming from {path}: {done:,} of {plan.steps:,} steps trained "
        f"({_steps(done, per_epoch)}), {plan.steps - done:,} left"
    )


def _steps(steps: int, per_epoch: int) -> str:
    """``steps`` optimizer steps as epochs and steps: "2 epochs and 3 of 5 steps"."""
    whole, rest = divmod(steps, per_epoch)
    text = f"{whole:,} epoch" + ("" if whole == 1 else "s")
    return text + (f" and {rest} of {per_epoch} steps" if rest else "")


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
