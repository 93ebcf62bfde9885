"""Views of a batch of series that the critic reads beside the steps themselves.

An MLP over the flattened steps has to learn a pattern at every offset where it can
occur. Each view here summarises the series the same way wherever a pattern starts:

* `magnitude_spectrum`: how strong each period is (a daily cycle where the data has none);
* `sorted_increments`: the distribution of the step-to-step changes (readings that hold
  for hours and step, against ones that wander).

Each comes with its vector-Jacobian product in closed form, so the critic's gradient
penalty stays an ordinary backward (`dgan.networks.Critic.input_gradient`). All (B, T, F)
-> (B, K, F), in fp32 whatever the precision around them.
"""

from __future__ import annotations

import torch

SPECTRUM_EPS = 1e-6
"""Keeps each magnitude's square root differentiable where a frequency is absent."""


def magnitude_spectrum(features: torch.Tensor) -> torch.Tensor:
    """(B, T, F) series -> (B, T // 2 + 1, F) magnitudes of their discrete Fourier
    transform over time, divided by sqrt(T), in fp32 (no FFT in 16 bits on every device).

    Example:
        >>> t = torch.arange(48.0)
        >>> daily = torch.cos(2 * torch.pi * t / 24).reshape(1, 48, 1)
        >>> int(magnitude_spectrum(daily)[0, :, 0].argmax())  # 2 cycles in 48 steps
        2
    """
    with torch.autocast(features.device.type, enabled=False):
        z = torch.fft.rfft(features.float(), dim=1)
        return torch.sqrt(z.real**2 + z.imag**2 + SPECTRUM_EPS) / features.shape[1] ** 0.5


def magnitude_spectrum_vjp(features: torch.Tensor, cotangent: torch.Tensor) -> torch.Tensor:
    """d <cotangent, magnitude_spectrum(features)> / d features, (B, T, F), in closed form:
    differentiable in ``cotangent`` by an ordinary backward (the features are constants).

    With z = rfft(x), the magnitude's gradient with respect to (Re z, Im z) is z / |z|; the
    inverse real FFT carries a complex cotangent c back to x as Re(sum_k c_k e^(2 pi i k t
    / T)) once the bins it counts twice (all but 0 and T / 2) are halved.

    Example:
        >>> x = torch.randn(2, 9, 1, requires_grad=True)
        >>> c = torch.randn(2, 5, 1)
        >>> auto, = torch.autograd.grad((magnitude_spectrum(x) * c).sum(), x)
        >>> torch.allclose(magnitude_spectrum_vjp(x.detach(), c), auto, atol=1e-5)
        True
    """
    steps = features.shape[1]
    with torch.autocast(features.device.type, enabled=False):
        z = torch.fft.rfft(features.detach().float(), dim=1)  # (B, K, F)
        magnitude = torch.sqrt(z.real**2 + z.imag**2 + SPECTRUM_EPS)
        weights = cotangent.float() / (magnitude * steps**0.5)  # (B, K, F), real
        counted_once = torch.ones(z.shape[1], 1, device=z.device)
        counted_once[1 : (steps + 1) // 2] = 0.5
        return torch.fft.irfft(weights * counted_once * z, n=steps, dim=1) * steps


def sorted_increments(features: torch.Tensor) -> torch.Tensor:
    """(B, T, F) series -> (B, T - 1, F): each feature's step-to-step changes in increasing
    order, in fp32. Where in time a change happens is the flattened steps' business; this
    is how many changes of each size a series makes (how long it holds, how large it steps).

    Example:
        >>> held = torch.tensor([[[1.0], [1.0], [1.0], [3.0]]])
        >>> sorted_increments(held)[0, :, 0].tolist()
        [0.0, 0.0, 2.0]
    """
    with torch.autocast(features.device.type, enabled=False):
        return torch.diff(features.float(), dim=1).sort(dim=1).values


def sorted_increments_vjp(features: torch.Tensor, cotangent: torch.Tensor) -> torch.Tensor:
    """d <cotangent, sorted_increments(features)> / d features, (B, T, F), in closed form:
    differentiable in ``cotangent`` by an ordinary backward (the features are constants).

    Sorting only permutes the changes, so the cotangent goes back to the change it came
    from; change t (x[t + 1] - x[t]) then adds it to step t + 1 and takes it from step t.

    Example:
        >>> x = torch.randn(2, 7, 3, requires_grad=True)
        >>> c = torch.randn(2, 6, 3)
        >>> auto, = torch.autograd.grad((sorted_increments(x) * c).sum(), x)
        >>> torch.allclose(sorted_increments_vjp(x.detach(), c), auto)
        True
    """
    with torch.autocast(features.device.type, enabled=False):
        order = torch.diff(features.detach().float(), dim=1).sort(dim=1).indices
        to_changes = torch.zeros_like(cotangent, dtype=torch.float32)
        to_changes = to_changes.scatter(1, order, cotangent.float())  # (B, T - 1, F)
        pad = torch.nn.functional.pad
        return pad(to_changes, (0, 0, 1, 0)) - pad(to_changes, (0, 0, 0, 1))
