"""The generator's random inputs: noise shapes, draws, and the seeded RNG streams.

Training (`dgan.train.trainer`) and generation (`dgan.sampling`) draw their noise here, so
the shapes are defined once. Training uses RNG stream 0 and generation stream 1 of the
config's seed, so generating never changes what training draws next. `seeded_cpu_rng`
seeds torch's global CPU generator for code that draws from it (network initialisation,
the metrics' classifiers) without touching the caller's random state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from dgan.config import DGANConfig


def noise_shapes(config: DGANConfig) -> dict[str, tuple[int, ...]]:
    """Per-example shapes of the two noise inputs, by argument name.

    Example:
        >>> noise_shapes(DGANConfig(max_sequence_len=20, sample_len=5))
        {'attribute_noise': (10,), 'feature_noise': (4, 10)}
    """
    cells = config.max_sequence_len // config.sample_len  # LSTM steps
    return {
        "attribute_noise": (config.attribute_noise_dim,),
        "feature_noise": (cells, config.feature_noise_dim),
    }


def draw_noise(
    config: DGANConfig, n: int, rng: torch.Generator, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """(attribute noise (n, Na), feature noise (n, T/S, Nf)), standard normal, from ``rng``.

    Example:
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> a, f = draw_noise(config, 3, torch.Generator().manual_seed(0), torch.device("cpu"))
        >>> tuple(a.shape), tuple(f.shape)
        ((3, 10), (3, 2, 10))
    """
    return tuple(  # type: ignore[return-value]
        draw_noise_part(config, part, n, rng, device) for part in noise_shapes(config)
    )


def draw_noise_part(
    config: DGANConfig, part: str, n: int, rng: torch.Generator, device: torch.device
) -> torch.Tensor:
    """Standard normal noise for ``n`` examples of one input (a key of `noise_shapes`).

    Example:
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> rng = torch.Generator().manual_seed(0)
        >>> tuple(draw_noise_part(config, "feature_noise", 3, rng, torch.device("cpu")).shape)
        (3, 2, 10)
    """
    shape = noise_shapes(config)[part]
    return torch.randn(n, *shape, device=device, generator=rng)


def make_rng(seed: int | None, stream: int, device: torch.device) -> torch.Generator:
    """A random generator on ``device``: stream ``stream`` of ``seed``, or fresh entropy.

    Training uses stream 0 and generation stream 1, so generating never changes what
    training draws next (and vice versa).

    Example:
        >>> a = make_rng(7, 0, torch.device("cpu")).initial_seed()
        >>> a == make_rng(7, 0, torch.device("cpu")).initial_seed() != make_rng(7, 1,
        ...     torch.device("cpu")).initial_seed()
        True
    """
    rng = torch.Generator(device=device)
    if seed is None:
        rng.seed()
    else:
        rng.manual_seed(seed * 2 + stream + 1)
    return rng


@contextlib.contextmanager
def seeded_cpu_rng(seed: int | None) -> Iterator[None]:
    """Draw from torch's global CPU generator seeded with ``seed`` (unseeded for None),
    restoring the caller's state afterwards; no other generator is touched.

    ``torch.manual_seed`` would also reseed every CUDA generator of the process (and
    ``fork_rng(devices=[])`` would not restore them): network initialisation and the
    metrics' classifiers draw on the CPU only, so only its generator is seeded.

    Example:
        >>> with seeded_cpu_rng(0):
        ...     a = torch.rand(2)
        >>> with seeded_cpu_rng(0):
        ...     torch.equal(a, torch.rand(2))
        True
    """
    with torch.random.fork_rng(devices=[]):
        if seed is not None:
            torch.random.default_generator.manual_seed(seed)
        yield
