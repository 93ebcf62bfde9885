"""The magnitude spectrum of a batch of series, which the spectral critic reads beside the
steps themselves (`dgan.networks.Critic`), and its vector-Jacobian product in closed form,
so that the critic's gradient penalty stays an ordinary backward. An MLP over the
flattened steps sees a period only as a pattern at every offset; the spectrum says how
strong each period is wherever a series starts. `dominant_frequencies` finds each
series' strongest period, which `dgan evaluate` compares and the period carrier
(`dgan.encoding.periods`) generates.
"""

from __future__ import annotations

import numpy as np
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


def dominant_frequencies(
    centred: np.ndarray, lengths: np.ndarray, padding: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """(N,) each series' strongest frequency (cycles per step) between 2 cycles per series
    and 0.5, and the share of its power there (the peak and ``padding`` bins each side);
    NaN for series with no power there. ``centred``: (N, T) series less their means, zero
    past ``lengths``; ``padding``: the transform's length over T (8 finds a peak to within
    1/16 of a bin; 1 is the plain transform, whose neighbours count one bin).

    Example:
        >>> t = np.arange(100)
        >>> wave = np.sin(2 * np.pi * t / 12.5)[None, :]
        >>> frequency, share = dominant_frequencies(wave, np.array([100]), padding=8)
        >>> round(float(1 / frequency[0]), 1), bool(share[0] > 0.9)
        (12.5, True)
    """
    size = centred.shape[1] * padding
    power = np.abs(np.fft.rfft(centred, n=size, axis=1)) ** 2  # (N, size//2 + 1)
    frequency = np.fft.rfftfreq(size)[None, :]
    # From 2 cycles over the series' own length to 0.5 (zero padding leaves the rest).
    usable = (frequency >= 2.0 / lengths[:, None]) & (frequency <= 0.5)
    masked = np.where(usable, power, -1.0)
    best = masked.argmax(axis=1)
    rows = np.arange(len(best))
    total = np.where(usable, power, 0.0).sum(axis=1)
    near = np.zeros(len(best))
    for offset in range(-padding, padding + 1):  # the peak's lobe (leakage of one period)
        column = np.clip(best + offset, 0, power.shape[1] - 1)
        near += np.where(usable[rows, column], power[rows, column], 0.0)
    found = (masked[rows, best] > 0) & (total > 0)
    peak = np.where(found, frequency[0, best], np.nan)
    share = np.where(found, near / np.where(total > 0, total, 1.0), np.nan)
    return peak, share
