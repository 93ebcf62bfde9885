"""Batches as DP-SGD's accounting assumes them: Poisson sampling, from secret generators.

Each example joins each batch independently with probability ``sample_rate`` (so batch
sizes vary), which is what Opacus's accountant composes (`dgan.privacy.accounting`). The
batch is drawn in two equivalent steps that keep the device free of host syncs: its size
from Binomial(n, sample_rate) on the host, then that many distinct examples uniformly on
the device (a Poisson sample, conditioned on its size, is a uniform subset of that size).

The draws come from generators seeded by the operating system's entropy, never from
``DGANConfig.seed`` and never saved: privacy amplification by sampling holds only while
nobody knows which examples were in which batch, and the noise protects only while it
is secret (a seed or a saved generator state would let anyone with the model file redraw
both). Under torchrun every process gets rank 0's generators (`dgan.train.trainer`
broadcasts them), so all draw the same batches and the same noise.
"""

from __future__ import annotations

import secrets

import torch


def secret_generator(device: torch.device | str) -> torch.Generator:
    """A generator on ``device`` seeded from the operating system's entropy.

    Example:
        >>> a, b = secret_generator("cpu"), secret_generator("cpu")
        >>> torch.equal(torch.rand(4, generator=a), torch.rand(4, generator=b))
        False
    """
    generator = torch.Generator(device=device)
    generator.manual_seed(secrets.randbits(63))
    return generator


class PoissonBatches:
    """Poisson-sampled batches of ``n`` examples at ``sample_rate``, as device indices.

    ``host_rng`` (a CPU generator) draws the sizes, ``device_rng`` (on the device) the
    members; both secret (`secret_generator`) unless a test passes seeded ones.

    Example:
        >>> batches = PoissonBatches(1000, 0.05, secret_generator("cpu"), secret_generator("cpu"))
        >>> sizes = [len(batches.draw()) for _ in range(200)]
        >>> 40 < sum(sizes) / len(sizes) < 60
        True
    """

    def __init__(
        self,
        n: int,
        sample_rate: float,
        host_rng: torch.Generator,
        device_rng: torch.Generator,
    ):
        self.n = n
        self.sample_rate = sample_rate
        self.host_rng = host_rng
        self.device_rng = device_rng

    def draw(self) -> torch.Tensor:
        """The next batch: a 1-D index tensor on the device (possibly empty)."""
        count = torch.binomial(
            torch.tensor([float(self.n)]),
            torch.tensor([self.sample_rate]),
            generator=self.host_rng,
        )
        size = int(count.item())  # a CPU tensor: no device sync
        order = torch.randperm(self.n, device=self.device_rng.device, generator=self.device_rng)
        return order[:size]
