"""A coarse view of a batch of series: each feature's mean over consecutive blocks of steps,
which the critic can read beside the steps themselves (`dgan.networks.Critic`,
``coarse_critic``), and its vector-Jacobian product in closed form, so that the critic's
gradient penalty stays an ordinary backward.

An MLP over the flattened steps sees a slow shape (a level that drifts down over a whole
series, a charger that steps up and decays, a compressor that runs for hundreds of steps)
only through weights it must spread over hundreds of noisy columns; the spectrum's
magnitudes see how slow a series moves but not which way or when. The block means say
where a series sits, in order, a few dozen columns a feature. Each is scaled by the
square root of its width, so the view is an orthonormal projection of the steps: the
gradient penalty holds it to the same slope as the steps themselves.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional

COARSE_BLOCKS = 64
"""About how many blocks a series is read in (`coarse_width`): fine enough to place a
switch within a fiftieth of a series, coarse enough that each block's mean averages the
noise of a few dozen steps of a long series."""


def coarse_width(max_sequence_len: int) -> int:
    """Steps per block of the coarse view: the length over `COARSE_BLOCKS`, at least 2.

    Example:
        >>> coarse_width(1460), coarse_width(24)
        (22, 2)
    """
    return max(2, max_sequence_len // COARSE_BLOCKS)


def block_means(features: torch.Tensor, width: int) -> torch.Tensor:
    """(B, T, F) series -> (B, T // width, F): each feature's mean over consecutive blocks
    of ``width`` steps times sqrt(width) (a tail shorter than ``width`` is left out).

    Example:
        >>> x = torch.tensor([1.0, 3.0, 5.0, 7.0, 9.0]).reshape(1, 5, 1)
        >>> (block_means(x, 2)[0, :, 0] / 2**0.5).tolist()
        [2.0, 6.0]
    """
    blocks = features[:, : features.shape[1] // width * width].unflatten(1, (-1, width))
    return blocks.mean(dim=2) * math.sqrt(width)


def block_means_vjp(features: torch.Tensor, cotangent: torch.Tensor, width: int) -> torch.Tensor:
    """d <cotangent, block_means(features, width)> / d features, (B, T, F), in closed form
    (linear: each step of a block receives the block's cotangent over sqrt(width); the
    tail left out, nothing), differentiable in ``cotangent`` by an ordinary backward.

    Example:
        >>> x = torch.randn(2, 11, 3, requires_grad=True)
        >>> c = torch.randn(2, 5, 3)
        >>> auto, = torch.autograd.grad((block_means(x, 2) * c).sum(), x)
        >>> torch.allclose(block_means_vjp(x.detach(), c, 2), auto)
        True
    """
    spread = cotangent.repeat_interleave(width, dim=1) / math.sqrt(width)
    return functional.pad(spread, (0, 0, 0, features.shape[1] - spread.shape[1]))
