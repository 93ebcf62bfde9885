"""Encoded examples on the training device (`Batch`) and the step's on-device sums
(`Accumulators`): what the training step reads and writes."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from dgan.encoding.encoder import EncodedData
from dgan.train.memory import check_data_memory

# Mean losses an epoch reports, in the order of `Accumulators.losses`.
LOSS_NAMES = (
    "discriminator_loss",
    "attribute_discriminator_loss",
    "gradient_penalty",
    "generator_loss",
    "temporal_discriminator_loss",
    "envelope_discriminator_loss",
)
CRITIC_LOSSES = slice(0, 3)  # the critic step's (main, attribute, penalty)
GENERATOR_LOSS, TEMPORAL_LOSS, ENVELOPE_LOSS = 3, 4, 5


@dataclass
class Batch:
    """Encoded examples on the training device; absent parts are None.

    Example:
        >>> batch = Batch(None, None, torch.zeros(5, 4, 2))
        >>> len(batch.take(torch.tensor([0, 2]))), len(batch.head(3))
        (2, 3)
    """

    attributes: torch.Tensor | None  # (B, A)
    additional: torch.Tensor | None  # (B, AA)
    features: torch.Tensor  # (B, T, F)

    @classmethod
    def from_encoded(cls, data: EncodedData, device: torch.device | str) -> Batch:
        """Move encoded data (e.g. from `DGAN.preprocess`) to ``device``, once."""

        device = torch.device(device)
        if device.type != "cpu":  # on a CPU the tensors share the arrays' memory
            extra = sum(
                a.nbytes for a in (data.attributes, data.additional_attributes) if a is not None
            )
            check_data_memory(data.features.shape, extra, "device memory", device)

        def move(a):
            return None if a is None else torch.from_numpy(a).to(device)

        return cls(move(data.attributes), move(data.additional_attributes), move(data.features))

    def __len__(self) -> int:
        return self.features.shape[0]

    def parts(self) -> tuple[torch.Tensor | None, ...]:
        """(attributes, additional, features): what the main critic reads."""
        return self.attributes, self.additional, self.features

    def take(self, index: torch.Tensor) -> Batch:
        def pick(t):
            return None if t is None else t.index_select(0, index)

        return Batch(pick(self.attributes), pick(self.additional), pick(self.features))

    def detach(self) -> Batch:
        """The same values without the graph that produced them."""

        def cut(t):
            return None if t is None else t.detach()

        return Batch(cut(self.attributes), cut(self.additional), cut(self.features))

    def head(self, n: int) -> Batch:
        def first(t):
            return None if t is None else t[:n]

        return Batch(first(self.attributes), first(self.additional), first(self.features))


class Accumulators:
    """On-device sums over a logging window; nothing here is read on the host by a step.

    Attributes:
        losses: batch-weighted sums of the losses, in `LOSS_NAMES` order.
        critic_skipped, generator_skipped: optimizer steps skipped for inf/NaN gradients.
        nonfinite_losses: steps whose loss was NaN or inf (divergence, not fp16 overflow).
    """

    def __init__(self, device: torch.device):
        self.losses = torch.zeros(len(LOSS_NAMES), device=device)
        self.critic_skipped = torch.zeros((), dtype=torch.long, device=device)
        self.generator_skipped = torch.zeros((), dtype=torch.long, device=device)
        self.nonfinite_losses = torch.zeros((), dtype=torch.long, device=device)
        # Since the last guard check: skipped optimizer steps (device) and steps taken (host).
        self.window_skipped = torch.zeros((), dtype=torch.long, device=device)
        self.window_steps = 0

    def skipped(self, which: str, step_skipped: torch.Tensor) -> None:
        """Count one optimizer step of the critics or the generator that was (not) skipped."""
        total = self.critic_skipped if which == "critic" else self.generator_skipped
        total += step_skipped
        self.window_skipped += step_skipped
        self.window_steps += 1

    def every_step_skipped(self) -> torch.Tensor:
        """Device bool: every optimizer step since the last `new_window` was skipped."""
        return self.window_skipped >= max(self.window_steps, 1)

    def new_window(self) -> None:
        """Start counting the next guard-check window."""
        self.window_skipped.zero_()
        self.window_steps = 0

    def mean_losses(self, examples: int) -> dict[str, float]:
        """Mean of each loss over ``examples``. Deliberate host sync."""
        return dict(zip(LOSS_NAMES, (self.losses / examples).tolist(), strict=True))

    def skipped_steps(self) -> int:
        """Skipped optimizer steps of both kinds. Deliberate host sync."""
        return int((self.critic_skipped + self.generator_skipped).item())
