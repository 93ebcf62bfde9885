"""The divergence guard: finds divergence at the training loop's sync points, rolls back
to the last healthy state and decides how training goes on.

Divergence is a non-finite loss or weight, or a collapsed fp16 loss scale. The normal
skipped steps of a loss scaler (inf gradients, scale backed off) are not divergence. On
each healthy check the guard keeps an in-memory copy of the trainer's state (networks,
optimizers, precision and scalers: `Trainer.state_dict`); on divergence it restores that
copy and continues one step safer along `fallback_precision` (fp16 -> bf16 where native
-> fp32), or, in fp32, stops training with the good weights.
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

import torch

from dgan.precision import fallback_precision
from dgan.records import GuardEvent

if TYPE_CHECKING:
    from dgan.training import Trainer

logger = logging.getLogger(__name__)

# A dynamic scale that has backed off below this means fp16 cannot represent the model's
# gradients at all any more.
MIN_LOSS_SCALE = 1.0


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

    def __init__(self, trainer: Trainer):
        self.trainer = trainer
        self._snapshot: dict[str, Any] | None = None

    def snapshot(self) -> None:
        """Remember the trainer's current state as the last healthy one."""
        state = self.trainer.state_dict()
        # The RNG and step count go on: replaying the same draws would not help.
        self._snapshot = copy.deepcopy(
            {k: state[k] for k in ("modules", "optimizers", "precision")}
        )

    def state_dict(self) -> dict[str, Any] | None:
        """The last healthy state (what `recover` rolls back to), or None before any
        snapshot; a checkpoint keeps it so that a resumed run rolls back alike."""
        return self._snapshot

    def load_state_dict(self, snapshot: dict[str, Any] | None) -> None:
        """Take ``snapshot`` (from `state_dict`) as the last healthy state."""
        self._snapshot = snapshot

    def problem(self, nonfinite_losses: torch.Tensor) -> str | None:
        """What is wrong, or None. Deliberate host sync: called every log_every steps.

        Args:
            nonfinite_losses: device count of non-finite losses since the last check.
        """
        trainer = self.trainer
        params = [p for m in trainer.modules().values() for p in m.parameters()]
        finite_weights = torch.stack([torch.isfinite(p).all() for p in params]).all()
        bad_loss, bad_weights = torch.stack(
            [nonfinite_losses.bool(), ~finite_weights]
        ).tolist()  # host sync
        if bad_loss:
            return "non-finite loss"
        if bad_weights:
            return "non-finite weights"
        policy = trainer.policy
        for label, scaler in (
            ("critic", policy.critic_scaler),
            ("generator", policy.generator_scaler),
        ):
            if scaler.is_enabled() and scaler.get_scale() < MIN_LOSS_SCALE:  # host sync
                return f"{label} loss scale collapsed below {MIN_LOSS_SCALE:g}"
        return None

    def recover(self, problem: str, epoch: int) -> GuardEvent:
        """Roll back to the last snapshot and continue one precision safer, or stop.

        Sets ``trainer.stopped`` when no safer precision is left. Returns the event (also
        logged as a warning).
        """
        if self._snapshot is None:
            raise RuntimeError("DivergenceGuard.recover() before any snapshot")
        trainer = self.trainer
        old = trainer.policy.precision
        # A copy: optimizers keep the tensors they load and would update the snapshot.
        trainer.load_state_dict(copy.deepcopy(self._snapshot))
        new = fallback_precision(old, trainer.device)
        if new is None:
            trainer.stopped = True
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
        return event
