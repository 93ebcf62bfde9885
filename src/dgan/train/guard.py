"""The divergence guard: finds divergence at the training loop's sync points, rolls back
to the last healthy state and decides how training goes on.

Divergence is a non-finite loss, weight, BatchNorm statistic or optimizer moment, or a
collapsed fp16 loss scale. The normal skipped steps of a loss scaler (inf gradients, scale
backed off, and the inf loss of such a step: `PrecisionPolicy.diverged`) are not
divergence. On
each healthy check the guard keeps an in-memory copy of the trainer's state (networks,
optimizers, precision and scalers: `Trainer.state_dict`); on divergence it restores that
copy and continues one step safer along `fallback_precision` (fp16 -> bf16 where native
-> fp32), or, in fp32, stops training with the good weights.
"""

from __future__ import annotations

import copy
import logging
from collections import OrderedDict
from typing import Any, Protocol

import torch

from dgan.precision import Precision, PrecisionPolicy, fallback_precision
from dgan.records import GuardEvent

logger = logging.getLogger(__name__)

# A dynamic scale that has backed off below this means fp16 cannot represent the model's
# gradients at all any more.
MIN_LOSS_SCALE = 1.0


def _all_finite(tensors: list[torch.Tensor], device: torch.device) -> torch.Tensor:
    """Device bool: every element of every tensor is finite (True for no tensors).

    Read from each tensor's least and greatest element (`torch.aminmax`, which NaN
    propagates to): one pass and no temporary of the tensor's size, several times faster
    than ``isfinite(t).all()`` on a CPU.
    """
    ends: dict[torch.dtype, list[torch.Tensor]] = {}  # stacked per dtype: no casts
    for t in tensors:
        if t.numel():
            ends.setdefault(t.dtype, []).extend(torch.aminmax(t.detach()))
    if not ends:
        return torch.ones((), dtype=torch.bool, device=device)
    return torch.stack([torch.isfinite(torch.stack(e)).all() for e in ends.values()]).all()


def _copied(state: Any) -> Any:
    """``state`` (nested dicts, lists and tuples of tensors and plain values) with every
    tensor cloned: what `copy.deepcopy` makes of a state dict, several times faster."""
    if torch.is_tensor(state):
        return state.detach().clone()
    if type(state) in (dict, OrderedDict):
        copied = type(state)((key, _copied(value)) for key, value in state.items())
        if hasattr(state, "_metadata"):  # a module's state dict: its version numbers
            copied._metadata = copy.deepcopy(state._metadata)
        return copied
    if type(state) in (list, tuple):
        return type(state)(_copied(value) for value in state)
    return copy.deepcopy(state)


class Guarded(Protocol):
    """What the guard needs of the training it watches (`dgan.train.trainer.Trainer`)."""

    device: torch.device
    policy: PrecisionPolicy
    steps_done: int

    def modules(self) -> dict[str, torch.nn.Module]: ...
    def optimizers(self) -> dict[str, torch.optim.Optimizer]: ...
    def state_dict(self) -> dict[str, Any]: ...
    def load_state_dict(self, state: dict[str, Any]) -> None: ...
    def set_precision(self, precision: Precision) -> None: ...


class DivergenceGuard:
    """Snapshot, health check and recovery for one `Trainer`.

    Example:
        >>> import numpy as np
        >>> from dgan import DGAN, DGANConfig
        >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
        >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
        >>> guard = DivergenceGuard(model.trainer)
        >>> guard.snapshot()
        >>> guard.problem(torch.tensor(0)) is None
        True
    """

    def __init__(self, trainer: Guarded):
        self.trainer = trainer
        self._snapshot: dict[str, Any] | None = None

    def snapshot(self) -> None:
        """Remember the trainer's current state as the last healthy one."""
        state = self.trainer.state_dict()
        # The RNG and step count go on: replaying the same draws would not help.
        self._snapshot = _copied({k: state[k] for k in ("modules", "optimizers", "precision")})

    def state_dict(self) -> dict[str, Any] | None:
        """The last healthy state (what `recover` rolls back to), or None before any
        snapshot; a checkpoint keeps it so that a resumed run rolls back alike."""
        return self._snapshot

    def load_state_dict(self, snapshot: dict[str, Any] | None) -> None:
        """Take ``snapshot`` (from `state_dict`) as the last healthy state."""
        self._snapshot = snapshot

    def problem(
        self, nonfinite_losses: torch.Tensor, every_step_skipped: torch.Tensor | None = None
    ) -> str | None:
        """What is wrong, or None. Deliberate host sync: called every log_every steps.

        Args:
            nonfinite_losses: device count of non-finite losses since the last check.
            every_step_skipped: device bool, every optimizer step since the last check was
                skipped for inf/NaN gradients (with a static loss scale that never backs
                off, training then silently stands still).
        """
        trainer = self.trainer
        if every_step_skipped is None:
            every_step_skipped = torch.zeros((), dtype=torch.bool, device=trainer.device)
        bad_loss, bad_weights, bad_moments, all_skipped = torch.stack(
            [
                nonfinite_losses.bool(),
                ~_all_finite(self._weights_and_buffers(), trainer.device),
                ~_all_finite(self._optimizer_state(), trainer.device),
                every_step_skipped.bool(),
            ]
        ).tolist()  # host sync
        if bad_loss:
            return "non-finite loss"
        if bad_weights:
            return "non-finite weights"
        if bad_moments:
            return "non-finite optimizer state"
        policy = trainer.policy
        if all_skipped and policy.static_scale is not None and policy.critic_scaler.is_enabled():
            return (
                f"every optimizer step since the last check was skipped: the static loss "
                f"scale {policy.static_scale:g} overflows fp16 (use loss_scale='dynamic' or a "
                "smaller scale)"
            )
        for label, scaler in (
            ("critic", policy.critic_scaler),
            ("generator", policy.generator_scaler),
        ):
            if scaler.is_enabled() and scaler.get_scale() < MIN_LOSS_SCALE:  # host sync
                return f"{label} loss scale collapsed below {MIN_LOSS_SCALE:g}"
        return None

    def _weights_and_buffers(self) -> list[torch.Tensor]:
        """Parameters and floating buffers (BatchNorm statistics) of every network."""
        tensors = []
        for module in self.trainer.modules().values():
            tensors += list(module.parameters())
            tensors += [b for b in module.buffers() if b.is_floating_point()]
        return tensors

    def _optimizer_state(self) -> list[torch.Tensor]:
        """Floating tensors of the optimizers' state (Adam's moments)."""
        return [
            value
            for optimizer in self.trainer.optimizers().values()
            for state in optimizer.state.values()
            for value in state.values()
            if torch.is_tensor(value) and value.is_floating_point()
        ]

    def recover(self, problem: str, epoch: int) -> tuple[GuardEvent, bool]:
        """Roll back to the last snapshot and continue one precision safer, or stop.

        Returns the event (also logged as a warning) and whether training must stop (no
        safer precision is left; the trainer keeps the good weights).
        """
        if self._snapshot is None:
            raise RuntimeError("DivergenceGuard.recover() before any snapshot")
        trainer = self.trainer
        old = trainer.policy.precision
        # A copy: optimizers keep the tensors they load and would update the snapshot.
        trainer.load_state_dict(_copied(self._snapshot))
        new = fallback_precision(old, trainer.device)
        if new is None:
            action = "rolled back to the last good weights and stopped training"
            advice = "; lower the learning rates or raise gradient_penalty_coef"
        else:
            trainer.set_precision(new)
            action = f"rolled back and continued in {new.value}"
            advice = ""
        event = GuardEvent(
            epoch=epoch, step=trainer.steps_done, reason=problem, precision=old.value, action=action
        )
        logger.warning(
            "Divergence at step %d (epoch %d, %s): %s; %s%s.",
            trainer.steps_done,
            epoch,
            old.value,
            problem,
            action,
            advice,
        )
        return event, new is None
