"""DP-SGD's arithmetic on gradients: per-example gradients (`torch.func`), each clipped
to a norm bound, summed, and Gaussian noise added once.

Nothing here knows GANs: `per_example_gradients` differentiates any per-example loss of a
dict of parameters (`torch.func.grad`, vectorised over the examples with `torch.func.vmap`,
in chunks that bound the memory); `clip_and_sum` bounds each example's influence;
`add_noise` makes the sum private. Everything is fp32.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch.func import grad, vmap

Params = dict[str, torch.Tensor]

NORM_EPS = 1e-6
"""Added to each example's gradient norm before dividing by it (as Opacus does)."""


def per_example_gradients(
    loss: Callable[..., torch.Tensor],
    params: Params,
    examples: Sequence[torch.Tensor],
) -> Params:
    """The gradient of ``loss(params, *example)`` for each example: a dict of
    (k, *param.shape) tensors, where each of ``examples`` is a (k, ...) tensor and
    ``loss`` takes one example's slices (without the leading dimension).

    Example:
        >>> w = {"w": torch.tensor([1.0, 2.0])}
        >>> xs = torch.tensor([[1.0, 0.0], [0.0, 3.0]])
        >>> per_example_gradients(lambda p, x: (p["w"] * x).sum(), w, [xs])["w"].tolist()
        [[1.0, 0.0], [0.0, 3.0]]
    """
    in_dims = (None, *([0] * len(examples)))
    return vmap(grad(loss), in_dims=in_dims)(params, *examples)


def clip_and_sum(gradients: Params, bound: float) -> tuple[Params, torch.Tensor]:
    """Scale each example's gradient (all parameters together) to norm at most ``bound``
    and sum over the examples; an example whose gradient is not finite counts as zero
    (so one bad example cannot poison the step, and no host check is needed).

    Returns ``(sums, clipped)``: a dict of param-shaped sums, and how many examples were
    scaled down (a device tensor).

    Example:
        >>> g = {"w": torch.tensor([[3.0, 4.0], [0.3, 0.4]])}  # norms 5 and 0.5
        >>> sums, clipped = clip_and_sum(g, bound=1.0)
        >>> [round(v, 4) for v in sums["w"].tolist()], int(clipped)
        ([0.9, 1.2], 1)
    """
    flat = {name: g.flatten(1).float() for name, g in gradients.items()}  # each (k, -1)
    squares = torch.stack([torch.linalg.vecdot(f, f) for f in flat.values()])
    norms = squares.sum(dim=0).sqrt()  # (k,)
    finite = torch.isfinite(norms)
    factor = torch.where(finite, (bound / (norms + NORM_EPS)).clamp(max=1.0), 0.0)
    # The weighted sum as one product per parameter (factor @ gradients). A non-finite
    # example's factor is 0, and its values are zeroed first, since 0 x inf is NaN: two
    # passes over the per-example gradients, the step's largest tensors.
    sums = {
        name: (factor @ f.nan_to_num(0.0, 0.0, 0.0)).view(gradients[name].shape[1:])
        for name, f in flat.items()
    }
    return sums, (finite & (norms > bound)).sum()


def clipped_sum(
    loss: Callable[..., torch.Tensor],
    params: Params,
    examples: Sequence[torch.Tensor],
    bound: float,
    chunk: int = 256,
) -> Params:
    """`per_example_gradients` clipped and summed, ``chunk`` examples at a time (the
    per-example gradients of a chunk are the memory peak). No examples: zeros.

    Example:
        >>> w = {"w": torch.tensor([1.0, 2.0])}
        >>> xs = torch.tensor([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
        >>> s = clipped_sum(lambda p, x: (p["w"] * x).sum(), w, [xs], bound=1.0, chunk=2)
        >>> [round(v, 4) for v in s["w"].tolist()]
        [0.9, 1.2]
    """
    total = {name: torch.zeros_like(p, dtype=torch.float32) for name, p in params.items()}
    count = len(examples[0]) if examples else 0
    for start in range(0, count, chunk):
        part = [e[start : start + chunk] for e in examples]
        sums, _ = clip_and_sum(per_example_gradients(loss, params, part), bound)
        for name in total:
            total[name] += sums[name]
    return total


def add_noise(sums: Params, std: float, generator: torch.Generator) -> Params:
    """``sums`` plus independent Gaussian noise of standard deviation ``std`` on every
    coordinate, drawn in fp32 from ``generator`` (new tensors).

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> noisy = add_noise({"w": torch.zeros(100_000)}, 2.0, g)
        >>> round(noisy["w"].std().item(), 1)
        2.0
    """
    noisy = {}
    for name, s in sums.items():
        noise = torch.empty(s.shape, dtype=torch.float32, device=s.device)
        noise.normal_(0.0, std, generator=generator)
        noisy[name] = s.float() + noise
    return noisy
