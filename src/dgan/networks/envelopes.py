"""The envelope of a batch of series: the log of each feature's spread in consecutive
windows, which the envelope critic reads (`dgan.networks.EnvelopeCritic`), and its
vector-Jacobian product in closed form, so that the critic's gradient penalty stays an
ordinary backward.

An MLP over the flattened steps sees a wave's amplitude only through the values at each
offset; the spreads say how loud each stretch is, in order, so a swell where real series
hold steady (or a transient that never decays) is a few columns. On a log scale a swell
of a quarter reads the same in a quiet series as in a loud one.
"""

from __future__ import annotations

import torch
from torch.nn import functional

ENVELOPE_EPS = 1e-6
"""Keeps each spread's square root differentiable where a window is flat (a padded tail)."""
ENVELOPE_FLOOR = 1e-2
"""Added to each spread before its log: a flat window (a padded tail, a series at rest)
reads as log(0.01) of the encoded range, not as minus infinity, and a spread far below
that cannot steer the critic."""


def _windows(features: torch.Tensor, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T, F) -> each whole window's deviations from its mean, (B, W, width, F), and
    its spread, (B, W, 1, F) (a tail shorter than ``width`` is left out)."""
    windows = features[:, : features.shape[1] // width * width].unflatten(1, (-1, width))
    deviations = windows - windows.mean(dim=2, keepdim=True)
    return deviations, torch.sqrt(deviations.pow(2).mean(dim=2, keepdim=True) + ENVELOPE_EPS)


def window_spreads(features: torch.Tensor, width: int) -> torch.Tensor:
    """(B, T, F) series -> (B, T // width, F): each feature's standard deviation in the
    consecutive windows of ``width`` steps (a tail shorter than ``width`` is left out).

    Example:
        >>> t = torch.arange(8.0)
        >>> swell = (torch.tensor([1.0, 1, 1, 1, 3, 3, 3, 3]) * (-1) ** t).reshape(1, 8, 1)
        >>> window_spreads(swell, 4)[0, :, 0].round(decimals=3).tolist()
        [1.0, 3.0]
    """
    return _windows(features, width)[1].squeeze(2)


def log_envelope(features: torch.Tensor, width: int) -> torch.Tensor:
    """(B, T, F) series -> (B, T // width, F): log(spread + `ENVELOPE_FLOOR`) in each
    window (`window_spreads`), in fp32 (outside autocast: a spread's square is small).

    Example:
        >>> t = torch.arange(8.0)
        >>> swell = (torch.tensor([1.0, 1, 1, 1, 3, 3, 3, 3]) * (-1) ** t).reshape(1, 8, 1)
        >>> [round(v, 2) for v in log_envelope(swell, 4).exp()[0, :, 0].tolist()]  # + floor
        [1.01, 3.01]
    """
    with torch.autocast(features.device.type, enabled=False):
        return torch.log(window_spreads(features.float(), width) + ENVELOPE_FLOOR)


def log_envelope_vjp(features: torch.Tensor, cotangent: torch.Tensor, width: int) -> torch.Tensor:
    """d <cotangent, log_envelope(features, width)> / d features, (B, T, F), in closed
    form, in fp32: differentiable in ``cotangent`` by an ordinary backward (the features
    are constants).

    A window's spread s = sqrt(mean((x - m)^2) + eps) moves with each of its steps by
    (x_t - m) / (width * s) (the mean's own change sums to zero over the window), and its
    log by that over (s + floor); steps in the tail beyond the last whole window get
    nothing.

    Example:
        >>> x = torch.randn(2, 9, 3, requires_grad=True)
        >>> c = torch.randn(2, 2, 3)
        >>> auto, = torch.autograd.grad((log_envelope(x, 4) * c).sum(), x)
        >>> torch.allclose(log_envelope_vjp(x.detach(), c, 4), auto, atol=1e-5)
        True
    """
    with torch.autocast(features.device.type, enabled=False):
        deviations, spreads = _windows(features.detach().float(), width)
        to_log = cotangent.float().unsqueeze(2) / (spreads + ENVELOPE_FLOOR)
        through = (to_log * deviations / (width * spreads)).flatten(1, 2)  # (B, whole, F)
        # out of place (no write into zeros), so per-example gradients can vmap over it
        return functional.pad(through, (0, 0, 0, features.shape[1] - through.shape[1]))
