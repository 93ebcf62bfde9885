"""Layers the generator and the critics share: each variable's output activation, and
the MLPs."""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import nn

from dgan.encoding.encoder import BITS, SIGMOID, SOFTMAX, TANH, OutputSlice


class OutputActivation(nn.Module):
    """Apply each variable's activation to its slice of the last dimension.

    Columns are gathered into one block per activation kind (and per softmax width),
    activated, concatenated, and put back in order with a single index_select. The
    ``linear`` columns (sigmoid or tanh ones) take their activation's tangent at 0
    instead, x / 4 + 1/2 or x: a value drawn whole elsewhere (a carrier's wave,
    `dgan.networks.carrier`) that the activation would bend.

    Example:
        >>> act = OutputActivation([OutputSlice(0, 1, "sigmoid"), OutputSlice(1, 2, "softmax")])
        >>> out = act(torch.zeros(4, 3))
        >>> out[0].tolist()
        [0.5, 0.5, 0.5]
    """

    def __init__(self, slices: list[OutputSlice], linear: list[int] | None = None):
        super().__init__()
        linear = set(linear or ())
        groups: dict[tuple[str, int, bool], list[int]] = defaultdict(list)
        for s in slices:
            # Element-wise activations need no grouping by width; softmax groups do.
            width = s.width if s.activation == SOFTMAX else 1
            for i in range(s.start, s.start + s.width):
                tangent = i in linear
                if tangent and s.activation not in (SIGMOID, TANH):
                    raise ValueError(
                        f"column {i} is {s.activation}: only sigmoid and tanh "
                        "columns have a tangent to draw them on"
                    )
                groups[(s.activation, width, tangent)].append(i)
        self.kinds = list(groups)
        order = [i for key in self.kinds for i in groups[key]]
        for k, key in enumerate(self.kinds):
            self.register_buffer(f"idx{k}", torch.tensor(groups[key]), persistent=False)
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        self.register_buffer("inverse", inverse, persistent=False)

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        parts = []
        for k, (kind, width, tangent) in enumerate(self.kinds):
            x = logits.index_select(-1, getattr(self, f"idx{k}"))
            if tangent:
                x = x if kind == TANH else 0.5 + 0.25 * x
            elif kind in (SIGMOID, BITS):
                x = torch.sigmoid(x)
            elif kind == TANH:
                x = torch.tanh(x)
            else:  # softmax over each group of `width` consecutive gathered columns
                x = torch.softmax(x.unflatten(-1, (-1, width)), dim=-1).flatten(-2)
            parts.append(x)
        return torch.cat(parts, dim=-1).index_select(-1, self.inverse)


def mlp(in_dim: int, hidden: int, layers: int, out_dim: int, batch_norm: bool) -> nn.Sequential:
    """``layers`` hidden ReLU layers of ``hidden`` units (each followed by batch norm with
    ``batch_norm``) and a linear output of ``out_dim``.

    Example:
        >>> net = mlp(4, 8, 2, 1, batch_norm=False)
        >>> [type(m).__name__ for m in net], net(torch.zeros(3, 4)).shape
        (['Linear', 'ReLU', 'Linear', 'ReLU', 'Linear'], torch.Size([3, 1]))
    """
    blocks: list[nn.Module] = []
    for i in range(layers):
        blocks.append(nn.Linear(in_dim if i == 0 else hidden, hidden))
        blocks.append(nn.ReLU())
        if batch_norm:
            blocks.append(nn.BatchNorm1d(hidden))
    blocks.append(nn.Linear(hidden if layers else in_dim, out_dim))
    return nn.Sequential(*blocks)
