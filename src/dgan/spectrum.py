"""The magnitude spectrum of a batch of series, which the spectral critic reads beside the
steps themselves (`dgan.networks.Critic`), and its vector-Jacobian product in closed form,
so that the critic's gradient penalty stays an ordinary backward. An MLP over the
flattened steps sees a period only as a pattern at every offset; the spectrum says how
strong each period is wherever a series starts.
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
