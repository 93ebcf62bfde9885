"""Memory: will the networks fit, what is free, and the peak a process used."""

from __future__ import annotations

import sys

import torch

from dgan.config import DGANConfig
from dgan.encoding.encoder import DataEncoder
from dgan.errors import DataError, ParameterError
from dgan.networks import build_model_networks


def check_memory(config: DGANConfig, encoder: DataEncoder, device: torch.device) -> None:
    """`check_network_memory` of the networks ``config`` and ``encoder`` make, counted on
    the meta device before any is built (allocating nothing): for a new model."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        networks = build_model_networks(config, encoder)
    check_network_memory(networks, device)


def check_network_memory(
    networks: dict[str, torch.nn.Module | None], device: torch.device, *, built: bool = False
) -> None:
    """Raise ParameterError when the ``networks``' fp32 weights, gradients and Adam moments
    (16 bytes per parameter, a lower bound of what training needs) exceed the memory
    available on ``device``; the message names each network's size and its config fields.
    ``built``: the networks are on ``device`` already, their weights out of what is
    available: their gradients and moments (12 bytes per parameter) must fit.

    Example:
        >>> check_network_memory({"critic": torch.nn.Linear(4, 1)}, torch.device("cpu"))
    """
    sizes = {
        name: sum(p.numel() for p in net.parameters())
        for name, net in networks.items()
        if net is not None
    }
    need = (12 if built else 16) * sum(sizes.values())
    available = available_memory_bytes(device)
    if available is None or need <= available:
        return
    fields = {
        "generator": "feature_num_units, attribute_num_units",
        "critic": "discriminator_num_units/layers (its input grows with max_sequence_len)",
        "attribute_critic": "discriminator_num_units/layers",
        "temporal_critic": "temporal_critic_num_units",
        "envelope_critic": "discriminator_num_units/layers",
    }
    parts = "; ".join(
        f"{name} {n / 1e6:,.1f}M parameters ({fields[name]})" for name, n in sizes.items()
    )
    raise ParameterError(
        f"These networks need at least {need / 2**30:,.1f} GiB for "
        f"{'' if built else 'weights, '}gradients and optimizer state, but {device} has "
        f"{available / 2**30:,.1f} GiB available: {parts}. "
        "Lower the largest of those settings."
    )


def check_data_memory(shape: tuple[int, int, int], extra_bytes: int, where: str, device) -> None:
    """Raise DataError, before the data is made or moved, when encoded training data of
    ``shape`` (series, steps, encoded values per step; float32) plus ``extra_bytes``
    (attributes) exceeds the memory available on ``device``; ``where`` says what is
    filled ("memory", "GPU memory"). The message names the size and what to change.

    Example:
        >>> check_data_memory((10, 24, 5), 0, "memory", torch.device("meta"))  # unknown: no check
    """
    available = available_memory_bytes(device)
    n, steps, width = shape
    need = 4 * n * steps * width + extra_bytes
    if available is None or need <= available:
        return
    fits = max(1, int(n * available / need))
    raise DataError(
        f"The encoded training data needs {need / 2**30:,.1f} GiB ({n:,} series x {steps} "
        f"steps x {width} encoded values, 4 bytes each, and the attributes), but {device} has "
        f"{available / 2**30:,.1f} GiB of {where} available. Train on fewer series (at most "
        f"about {fits:,}, e.g. a random sample), on shorter series (a smaller "
        "max_sequence_len: cut long series into windows), or on a device with more memory; "
        "under torchrun every process holds all the data, so more processes do not help."
    )


def available_memory_bytes(device: torch.device) -> int | None:
    """Free memory on ``device`` (CUDA: free device memory; CPU: MemAvailable), or None.

    Example:
        >>> available_memory_bytes(torch.device("meta")) is None
        True
    """
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    if device.type != "cpu":
        return None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_rss_bytes() -> int | None:
    """Peak resident memory of this process (Linux/macOS), or None where unknown."""
    try:
        import resource  # POSIX only
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS reports bytes, Linux KiB
