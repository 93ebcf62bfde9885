"""The WGAN-GP losses: the critics' Wasserstein estimate, the generator's loss and the
gradient penalty.

Each function takes the `PrecisionPolicy` it runs under, so the training step reads the
same in every precision. Scores are (B, 1) critic outputs; losses come back as fp32
scalars whatever the autocast dtype.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import torch

from dgan.precision import PrecisionPolicy

Parts = Sequence[torch.Tensor | None]


def critic_loss(real_scores: torch.Tensor, fake_scores: torch.Tensor) -> torch.Tensor:
    """The critic minimises E[D(fake)] - E[D(real)]: it learns to score real data higher.

    Example:
        >>> critic_loss(torch.tensor([[2.0]]), torch.tensor([[-1.0]]))
        tensor(-3.)
    """
    return (fake_scores.mean() - real_scores.mean()).float()


def paired_scores(
    critic: Callable[..., torch.Tensor], real: Parts, fake: Parts
) -> tuple[torch.Tensor, torch.Tensor]:
    """The critic's scores of the real and the fake examples, from one pass over both.

    One batch of 2B rows instead of two of B: fewer, larger matrix products (and one
    backward). The scores are the same as two separate passes, to rounding.

    Example:
        >>> critic = lambda x: x.sum(dim=1, keepdim=True)
        >>> real, fake = paired_scores(critic, [torch.ones(2, 3)], [torch.zeros(2, 3)])
        >>> real.flatten().tolist(), fake.flatten().tolist()
        ([3.0, 3.0], [0.0, 0.0])
    """
    n = next(r for r in real if r is not None).shape[0]
    both = [None if r is None else torch.cat([r, f]) for r, f in zip(real, fake, strict=True)]
    scores = critic(*both)  # (2B, 1)
    return scores[:n], scores[n:]


def generator_loss(fake_scores: torch.Tensor) -> torch.Tensor:
    """The generator minimises -E[D(fake)]: it learns to raise the critic's score of fakes.

    Example:
        >>> generator_loss(torch.tensor([[1.0], [3.0]]))
        tensor(-2.)
    """
    return (-fake_scores.mean()).float()


def interpolate(real: Parts, fake: Parts, alpha: torch.Tensor) -> list[torch.Tensor | None]:
    """Per-example mixes ``alpha * real + (1 - alpha) * fake`` of each part, in fp32.

    ``alpha`` is (B, 1); the same alpha mixes every part of an example. Absent parts
    (None) stay None. The mixes require gradients: the penalty differentiates through them.
    """
    mixed: list[torch.Tensor | None] = []
    for r, f in zip(real, fake, strict=True):
        if r is None:
            mixed.append(None)
            continue
        a = alpha.view(-1, *([1] * (r.dim() - 1)))  # broadcast over (B, ...)
        mixed.append((a * r.float() + (1 - a) * f.float()).requires_grad_(True))
    return mixed


def gradient_penalty(
    critic: Callable[..., torch.Tensor],
    real: Parts,
    fake: Parts,
    alpha: torch.Tensor,
    policy: PrecisionPolicy,
    norm: str = "example",
    sum_over_processes: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """WGAN-GP penalty: mean over the batch of (||d critic / d x_hat|| - 1)^2.

    With ``norm="example"`` the norm is taken per example over all of its parts together
    (WGAN-GP, DoppelGANger), so the penalty bounds the critic's gradient for each
    example's whole input. ``norm="batch"`` takes one norm over the whole batch (as
    gretel-synthetics does): holding that at 1 keeps each example's gradient near
    1/sqrt(B), a much tighter limit on the critic (docs/quality.md measures what that
    costs). When several processes each hold a shard of the batch (torchrun),
    ``sum_over_processes`` (a differentiable all-reduce) makes that one norm the whole
    batch's, so N processes compute what one process would.

    A critic with an ``input_gradient`` method (the MLP `Critic`) supplies its input
    gradient in closed form, so no double backward is needed: in fp32 with
    ``policy.gradient_penalty_precision == "fp32"``, in the training precision with
    "autocast" (its products are forward ones, so fp16 needs no loss scale there); the norm
    is fp32 either way. Other critics differentiate twice: with "fp32" the critic pass and
    the norm run in full precision (second-order gradients amplify rounding); with
    "autocast" they follow PyTorch's AMP recipe: the *scaled* critic output goes into
    ``autograd.grad`` (so small fp16 gradients do not flush to zero), the gradients are
    unscaled out of place by dividing by ``scaler.scale(1)`` (a device tensor: no host
    sync), and the penalty is computed inside autocast.

    Example:
        >>> from dgan.precision import Precision
        >>> policy = PrecisionPolicy(torch.device("cpu"), Precision.FP32)
        >>> critic = lambda x: 3.0 * x.sum(dim=1, keepdim=True)  # gradient norm 3 * sqrt(2)
        >>> real, fake = [torch.ones(4, 2)], [torch.zeros(4, 2)]
        >>> penalty = gradient_penalty(critic, real, fake, torch.rand(4, 1), policy)
        >>> round(penalty.item(), 4) == round((3 * 2**0.5 - 1) ** 2, 4)
        True
    """
    full_precision = policy.gradient_penalty_precision == "fp32"
    region = contextlib.nullcontext if full_precision else policy.autocast
    scaler = policy.critic_scaler
    off = torch.autocast(policy.device.type, enabled=False)
    explicit = getattr(critic, "input_gradient", None)
    if explicit is not None:
        # MLP critics: the input gradient in closed form, no double backward (faster). Its
        # products are forward ones (weights times masks), so under autocast they run in
        # 16 bits without a loss scale; the norm is taken in fp32 either way.
        with off, torch.no_grad():
            mixed = [None if x is None else x.detach() for x in interpolate(real, fake, alpha)]
        with off if full_precision else region():
            grads = [explicit(*mixed)]
        return _penalty_from(grads, norm, contextlib.nullcontext, sum_over_processes)
    mixed = interpolate(real, fake, alpha)
    inputs = [x for x in mixed if x is not None]
    with off if full_precision else region():
        scores = critic(*mixed)  # (B, 1)
    if full_precision or not scaler.is_enabled():
        grads = torch.autograd.grad(scores.float().sum(), inputs, create_graph=True)
    else:
        scaled = scaler.scale(scores.float().sum())
        scaled_grads = torch.autograd.grad(scaled, inputs, create_graph=True)
        inv_scale = 1.0 / scaler.scale(torch.ones((), device=policy.device))
        grads = [g * inv_scale for g in scaled_grads]
    return _penalty_from(grads, norm, region, sum_over_processes)


def _penalty_from(
    grads: Sequence[torch.Tensor], norm: str, region, sum_over_processes
) -> torch.Tensor:
    """(||gradient|| - 1)^2 from the input gradients of each part, averaged."""
    with region():
        squared = sum(g.flatten(1).float().pow(2).sum(dim=1) for g in grads)  # (B,)
        if norm == "batch":
            squared = squared.sum()
            if sum_over_processes is not None:  # the whole batch's, not this shard's
                squared = sum_over_processes(squared)
        # eps keeps the sqrt differentiable at a zero gradient (DoppelGANger uses it too)
        length = torch.sqrt(squared + 1e-12)
        return ((length - 1.0) ** 2).mean()
