"""The sorted sizes of a batch of series' step changes, which the change critic reads beside
the steps themselves (`dgan.networks.Critic`), and their vector-Jacobian product in closed
form, so that the critic's gradient penalty stays an ordinary backward.

An MLP over the flattened steps sees a jump only as a pattern at one position; sorted, the
changes say how a series moves wherever it jumps: a real leaf outline moves at a nearly
constant speed, a generated one can creep and then jump, and the largest changes stand out
at the same columns whatever the positions they came from.
"""

from __future__ import annotations

import torch
from torch.nn import functional


def sorted_changes(features: torch.Tensor) -> torch.Tensor:
    """(B, T, F) series -> (B, T - 1, F): each feature's absolute step changes, smallest first.

    Example:
        >>> x = torch.tensor([0.0, 1.0, 1.5, 4.5]).reshape(1, 4, 1)
        >>> sorted_changes(x)[0, :, 0].tolist()
        [0.5, 1.0, 3.0]
    """
    return features.diff(dim=1).abs().sort(dim=1, stable=True).values


def sorted_changes_vjp(features: torch.Tensor, cotangent: torch.Tensor) -> torch.Tensor:
    """d <cotangent, sorted_changes(features)> / d features, (B, T, F), in closed form:
    differentiable in ``cotangent`` by an ordinary backward (the features are constants).

    Sorting only moves each change's cotangent back to where it came from; the absolute
    value multiplies it by the change's sign; change t is ``x[t + 1] - x[t]``, so step t
    receives change t - 1's and gives back change t's.

    Example:
        >>> x = torch.randn(2, 9, 3, requires_grad=True)
        >>> c = torch.randn(2, 8, 3)
        >>> auto, = torch.autograd.grad((sorted_changes(x) * c).sum(), x)
        >>> torch.allclose(sorted_changes_vjp(x.detach(), c), auto)
        True
    """
    changes = features.detach().diff(dim=1)  # (B, T - 1, F)
    order = changes.abs().sort(dim=1, stable=True).indices
    unsorted = torch.zeros_like(cotangent).scatter(1, order, cotangent)
    to_changes = unsorted * changes.sign().to(cotangent.dtype)
    return functional.pad(to_changes, (0, 0, 1, 0)) - functional.pad(to_changes, (0, 0, 0, 1))
