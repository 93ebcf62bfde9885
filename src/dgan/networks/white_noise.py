"""White noise that is a function of the generator's inputs (the carrier's noise floor).

The carrier adds white noise at each series' generated floor (`dgan.networks.carrier`).
Drawn from torch's global generator it would make a seeded run depend on what else drew
from it, and a generation from given noise inputs differ from call to call; a noise
input of its own would change every caller's noise shapes. So the values come from a
counter-based hash: each LSTM step's key is made from the bits of its feature noise and
its index, each value's from the key and the value's place in the step, and two hashed
24-bit uniforms make a standard normal (Box-Muller). The same inputs give the same
noise on every device, at once or step by step, with no draw on the host.
"""

from __future__ import annotations

import math

import torch

_BITS32 = 0xFFFFFFFF
_MULTIPLIER = 0x45D9F3B  # an odd 27-bit multiplier: products stay inside int64
_GOLDEN = 0x9E3779B9  # 2^32 over the golden ratio: spreads consecutive counters


def mix32(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash of each element of ``x`` (int64 holding 32 bits): xor-shifts
    and multiplications that flip about half the output bits for any input bit.

    Example:
        >>> mix32(torch.tensor([0, 1, 2])).tolist()
        [0, 824515495, 1722258072]
    """
    for _ in range(2):
        x = ((x ^ (x >> 16)) * _MULTIPLIER) & _BITS32
    return x ^ (x >> 16)


def white_noise(feature_noise: torch.Tensor, count: int, first_step: int = 0) -> torch.Tensor:
    """(B, K, ``count``) standard normal values in fp32 for steps ``first_step`` .. + K,
    a function of their feature noise (B, K, Nf) alone: new bits there, new values.

    Example:
        >>> z = torch.randn(2, 3, 4)
        >>> noise = white_noise(z, 100)
        >>> tuple(noise.shape), torch.equal(noise, white_noise(z, 100))
        ((2, 3, 100), True)
        >>> torch.equal(noise[:, 1:], white_noise(z[:, 1:], 100, first_step=1))
        True
    """
    bits = feature_noise.detach().float().contiguous().view(torch.int32).to(torch.int64)
    bits = bits & _BITS32
    step = torch.arange(feature_noise.shape[1], device=feature_noise.device) + first_step
    key = mix32(bits[..., 0]) ^ mix32((bits[..., -1] + _GOLDEN) & _BITS32)
    key = mix32(key ^ mix32((step * _GOLDEN + 1) & _BITS32))  # (B, K)
    counter = torch.arange(count, device=feature_noise.device, dtype=torch.int64)
    first = mix32(key[..., None] ^ mix32((2 * counter + 1) * _GOLDEN & _BITS32))
    second = mix32(key[..., None] ^ mix32((2 * counter + 2) * _GOLDEN & _BITS32))
    # 24 bits each, exact in fp32, strictly inside (0, 1)
    u1 = ((first >> 8).float() + 0.5) / (1 << 24)
    u2 = ((second >> 8).float() + 0.5) / (1 << 24)
    return torch.sqrt(-2 * torch.log(u1)) * torch.cos(2 * math.pi * u2)
