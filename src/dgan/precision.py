"""Numeric precision policy: the only module that knows about autocast and loss scaling.

The training loop reads the same in every precision: it enters ``policy.autocast()``,
scales losses with the policy's scalers and asks the policy for the gradient penalty.
A disabled `torch.amp.GradScaler` is a no-op, so fp32 runs through the same code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import torch

Parts = Sequence[torch.Tensor | None]


class PrecisionPolicy:
    """How one training run computes: autocast dtype (or none) and the loss scalers.

    Example:
        >>> policy = PrecisionPolicy(torch.device("cpu"))
        >>> with policy.autocast():
        ...     y = torch.ones(2) * 2
        >>> y.dtype
        torch.float32
    """

    def __init__(self, device: torch.device, name: str = "fp32"):
        self.device = device
        self.name = name
        self.autocast_dtype: torch.dtype | None = None
        # One scaler for the critics' joint loss and one for the generator: the two are
        # stepped independently, so each needs its own skip/backoff decision.
        self.critic_scaler = torch.amp.GradScaler(device.type, enabled=False)
        self.generator_scaler = torch.amp.GradScaler(device.type, enabled=False)

    def autocast(self) -> contextlib.AbstractContextManager:
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)

    def gradient_penalty(
        self,
        critic: Callable[..., torch.Tensor],
        real: Parts,
        fake: Parts,
        alpha: torch.Tensor,
    ) -> torch.Tensor:
        """WGAN-GP penalty: mean over the batch of (||d critic / d x_hat|| - 1)^2.

        ``x_hat`` interpolates each real/fake part with the same per-example ``alpha``
        (B, 1). Following PyTorch's AMP recipe, the *scaled* critic output goes into
        ``autograd.grad`` (so small gradients do not flush to zero in fp16), and the
        gradients are unscaled out of place by dividing by ``scaler.scale(1)``, a device
        tensor, so there is no host sync.
        """
        interpolated = []
        for r, f in zip(real, fake, strict=True):
            if r is None:
                interpolated.append(None)
                continue
            a = alpha.view(-1, *([1] * (r.dim() - 1)))  # broadcast over (B, ...)
            interpolated.append((a * r + (1 - a) * f).requires_grad_(True))
        inputs = [x for x in interpolated if x is not None]
        scaler = self.critic_scaler
        with self.autocast():
            scores = critic(*interpolated)  # (B, 1)
        scaled = scaler.scale(scores.sum())
        grads = torch.autograd.grad(scaled, inputs, create_graph=True)
        inv_scale = 1.0 / scaler.scale(torch.ones((), device=self.device))
        with self.autocast():
            squared = sum((g * inv_scale).flatten(1).float().pow(2).sum(dim=1) for g in grads)
            # eps keeps the sqrt differentiable at a zero gradient (DoppelGANger uses it too)
            norm = torch.sqrt(squared + 1e-12)
            return ((norm - 1.0) ** 2).mean()
