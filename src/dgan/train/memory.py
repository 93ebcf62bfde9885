"""Memory: will the networks fit, what is free, and the peak a process used."""

from __future__ import annotations

import sys

import torch

from dgan.config import DGANConfig
from dgan.encoding.encoder import DataEncoder
from dgan.errors import ParameterError
from dgan.networks import build_networks, build_temporal_critic


def check_memory(config: DGANConfig, encoder: DataEncoder, device: torch.device) -> None:
    """Raise ParameterError when the networks' fp32 weights, gradients and Adam moments
    (16 bytes per parameter, a lower bound of what training needs) exceed the memory
    available on ``device``; the message names each network's size and its config fields.
    """
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        names = ("generator", "critic", "attribute_critic")
        networks = dict(zip(names, build_networks(config, encoder), strict=True))
        if config.temporal_critic:
            networks["temporal_critic"] = build_temporal_critic(config, encoder)
    sizes = {
        name: sum(p.numel() for p in net.parameters())
        for name, net in networks.items()
        if net is not None
    }
    need = 16 * sum(sizes.values())
    available = available_memory_bytes(device)
    if available is None or need <= available:
        return
    fields = {
        "generator": "feature_num_units, attribute_num_units",
        "critic": "discriminator_num_units/layers (its input grows with max_sequence_len)",
        "attribute_critic": "discriminator_num_units/layers",
        "temporal_critic": "temporal_critic_num_units",
    }
    parts = "; ".join(
        f"{name} {n / 1e6:,.1f}M parameters ({fields[name]})" for name, n in sizes.items()
    )
    raise ParameterError(
        f"These networks need at least {need / 2**30:,.1f} GiB for weights, gradients and "
        f"optimizer state, but {device} has {available / 2**30:,.1f} GiB available: {parts}. "
        "Lower the largest of those settings."
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
