"""The trainer's optimizers: Adam for each trained network, and the loading of a saved
state into one built on another device.

`dgan.train.trainer.Trainer` builds them on first use: building an optimizer imports
torch._dynamo, seconds that generating from a loaded model never needs.
"""

from __future__ import annotations

from typing import Any

import torch

from dgan.config import DGANConfig

DEVICE_OPTIONS = ("fused", "foreach", "capturable")
"""Optimizer options that say how to step on the device, not what was learned: a state
saved on another device keeps the loading optimizer's own (a model trained on CUDA with
fused Adam steps the CPU's way after loading)."""


def adam_optimizers(
    config: DGANConfig, networks: dict[str, torch.nn.Module], device: torch.device
) -> dict[str, torch.optim.Optimizer]:
    """Adam for each of ``networks`` that trains (generator and critics, by name), at
    ``config``'s learning rate and beta1 for it.

    Example:
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> nets = {"critic": torch.nn.Linear(2, 1), "generator_ema": torch.nn.Linear(2, 1)}
        >>> opts = adam_optimizers(config, nets, torch.device("cpu"))
        >>> list(opts), opts["critic"].defaults["fused"]  # the average does not train
        (['critic'], True)
    """
    c = config
    settings = {
        "generator": (c.generator_learning_rate, c.generator_beta1),
        "critic": (c.discriminator_learning_rate, c.discriminator_beta1),
        "attribute_critic": (
            c.attribute_discriminator_learning_rate,
            c.attribute_discriminator_beta1,
        ),
        "temporal_critic": (c.discriminator_learning_rate, c.discriminator_beta1),
        "envelope_critic": (c.discriminator_learning_rate, c.discriminator_beta1),
    }
    # Fused Adam: one kernel per step instead of a dozen per parameter (faster steps on
    # CPU too; docs/precision.md); on the GPU it lets GradScaler skip without a sync.
    fused = {"fused": True} if device.type in ("cuda", "cpu") else {}
    return {
        name: torch.optim.Adam(networks[name].parameters(), lr=rate, betas=(beta1, 0.999), **fused)
        for name, (rate, beta1) in settings.items()
        if name in networks
    }


def load_optimizer(optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """Load ``state`` (an optimizer's state dict, maybe saved on another device) into
    ``optimizer``, which keeps its own `DEVICE_OPTIONS`.

    Example:
        >>> net = torch.nn.Linear(2, 1)
        >>> saved = torch.optim.Adam(net.parameters(), foreach=True).state_dict()
        >>> here = torch.optim.Adam(net.parameters(), fused=True)
        >>> load_optimizer(here, saved)
        >>> here.param_groups[0]["fused"], here.param_groups[0]["foreach"]
        (True, None)
    """
    own = optimizer.state_dict()["param_groups"]
    groups = [
        {**saved, **{k: here[k] for k in DEVICE_OPTIONS if k in here}}
        for saved, here in zip(state["param_groups"], own, strict=True)
    ]
    optimizer.load_state_dict({**state, "param_groups": groups})
