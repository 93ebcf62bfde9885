"""The generator's random inputs: noise shapes, draws, and the seeded RNG streams.

Training (`dgan.train.trainer`) and generation (`dgan.sampling`) draw their noise here, so
the shapes are defined once. Training uses RNG stream 0 and generation stream 1 of the
config's seed, so generating never changes what training draws next. `seeded_cpu_rng`
seeds torch's global CPU generator for code that draws from it (network initialisation,
the metrics' classifiers) without touching the caller's random state. `given_noise`
checks noise that a user passes to generation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch

from dgan.config import DGANConfig
from dgan.errors import ParameterError


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


def given_noise(
    config: DGANConfig, n: int | None, device: torch.device, **arrays
) -> tuple[dict[str, torch.Tensor | None], int]:
    """``(arrays, count)``: each noise array given by name (None: not given) checked
    against ``config``'s `noise_shapes` and moved to ``device`` as float32, and the number
    of examples that ``n`` and the arrays agree on; a `ParameterError` that names the fix
    where they are not numbers, have the wrong shape, hold NaN or disagree.

    Example:
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> arrays, count = given_noise(config, None, torch.device("cpu"),
        ...                             attribute_noise=None, feature_noise=np.zeros((3, 2, 10)))
        >>> count, tuple(arrays["feature_noise"].shape), arrays["attribute_noise"]
        (3, (3, 2, 10), None)
    """
    shapes = noise_shapes(config)
    given = dict(arrays)
    counts = {n} if n is not None else set()
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, torch.Tensor):  # maybe on a GPU, where numpy cannot go
            value = value.detach().float()
        else:
            try:
                value = torch.as_tensor(np.asarray(value, dtype=np.float32))
            except (TypeError, ValueError) as e:
                raise ParameterError(
                    f"{name} must be an array of numbers (e.g. from {name}_func), got "
                    f"{type(value).__name__}: {e}."
                ) from None
        if tuple(value.shape[1:]) != shapes[name] or value.ndim != len(shapes[name]) + 1:
            raise ParameterError(
                f"{name} has shape {tuple(value.shape)}; expected (n, "
                f"{', '.join(map(str, shapes[name]))})."
            )
        if not bool(torch.isfinite(value).all()):
            raise ParameterError(
                f"{name} holds NaN or infinite values, which generate NaN series; pass "
                "finite noise (standard normal, as the model's *_noise_func draws)."
            )
        counts.add(value.shape[0])
        given[name] = value.to(device)
    if not counts:
        raise ParameterError("Pass n (the number of examples to generate) or noise arrays.")
    if len(counts) > 1:
        raise ParameterError(
            f"n and the noise arrays disagree on the number of examples {sorted(counts)}; "
            "give the same count everywhere (or just n)."
        )
    count = counts.pop()
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ParameterError(f"n must be a positive integer, got {count!r}.")
    return given, count
