"""DP-SGD for the critics, the only networks that read real data (`PrivateTraining`).

Each critic round on a Poisson-sampled batch of k real examples (`PoissonBatches`):

1. k fakes and k mixing weights pair up with the k real examples; example i's loss is the
   whole critic loss of its pair, for every critic together: the Wasserstein term
   D(fake_i) - D(real_i) plus the gradient penalty at alpha_i real_i + (1 - alpha_i)
   fake_i (the MLP and envelope critics' input gradients in closed form,
   `Critic.input_gradient`; the temporal critic's by a nested `torch.func.grad`: a double
   backward);
2. each example's gradient over all critics' parameters is clipped to
   ``dp_max_grad_norm`` and the clipped gradients summed (`dgan.privacy.gradients`), then
   summed over the processes of a torchrun job;
3. Gaussian noise of standard deviation noise_multiplier x bound is added once, in fp32,
   from a secret generator (the same on every process), and the sum divided by the
   expected batch size; each critic's optimizer steps on its part.

The generator never reads real data: it learns through the critics' scores of fakes,
which is post-processing of the private critics, so it needs no noise of its own.

With ``discriminator_rounds`` = r > 1 each batch is used r times; r Gaussian mechanisms on
the same batch compose into one of noise multiplier sigma / sqrt(r), which the accountant
counts once per batch (so each round adds sqrt(r) times the planned noise).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.func import functional_call
from torch.func import grad as func_grad

from dgan.config.sizing import default_delta
from dgan.privacy.accounting import Accountant, check_sample_rate
from dgan.privacy.gradients import Params, add_noise, clipped_sum
from dgan.privacy.sampling import PoissonBatches, secret_generator

Parts = Sequence[torch.Tensor | None]
CHUNK_BYTES = 2**28
"""Per-example gradients are computed for as many examples at a time as fit in this many
bytes (at most 256): their memory grows with the examples times the critics' weights."""


@dataclass(frozen=True)
class CriticTerm:
    """One critic in the private loss: its network, penalty weight and how many of the
    parts (attributes, additional attributes, features) it reads (2 or 3)."""

    name: str
    critic: nn.Module
    penalty_coef: float
    reads: int = 3


class _InputGradient(nn.Module):
    """Calls ``critic.input_gradient`` as a forward, so `functional_call` can run it."""

    def __init__(self, critic: nn.Module):
        super().__init__()
        self.critic = critic

    def forward(self, *parts: torch.Tensor | None) -> torch.Tensor:
        return self.critic.input_gradient(*parts)


def _penalty(term: CriticTerm, params: Params, mixed: list[torch.Tensor | None]) -> torch.Tensor:
    """(||d critic / d mixed|| - 1)^2 for one example (a batch of one)."""
    if hasattr(term.critic, "input_gradient"):
        wrapped = {f"critic.{k}": v for k, v in params.items()}
        grads = [functional_call(_InputGradient(term.critic), wrapped, tuple(mixed))]
    else:  # a double backward, nested in the per-example gradient
        where = [i for i, x in enumerate(mixed) if x is not None]

        def score(present: list[torch.Tensor]) -> torch.Tensor:
            parts = list(mixed)
            for i, x in zip(where, present, strict=True):
                parts[i] = x
            return functional_call(term.critic, params, tuple(parts)).sum()

        grads = func_grad(score)([mixed[i] for i in where])
    squared = sum(g.float().pow(2).sum() for g in grads)
    return (torch.sqrt(squared + 1e-12) - 1.0) ** 2


def pair_loss(
    terms: Sequence[CriticTerm], params: dict[str, Params], real: Parts, fake: Parts, alpha
) -> torch.Tensor:
    """The critics' whole loss for one (real, fake) pair, each part a batch of one:
    Wasserstein term plus weighted gradient penalty, summed over the critics.

    Example:
        >>> from dgan.networks import Critic
        >>> critic = Critic(in_dim=3, num_layers=1, num_units=4)
        >>> term = CriticTerm("critic", critic, penalty_coef=10.0)
        >>> params = {"critic": dict(critic.named_parameters())}
        >>> real, fake = [None, None, torch.ones(1, 3, 1)], [None, None, torch.zeros(1, 3, 1)]
        >>> pair_loss([term], params, real, fake, torch.full((1, 1), 0.5)).shape
        torch.Size([])
    """
    total: torch.Tensor | None = None
    for term in terms:
        p = params[term.name]
        r, f = list(real[: term.reads]), list(fake[: term.reads])
        both = tuple(None if a is None else torch.cat([a, b]) for a, b in zip(r, f, strict=True))
        scores = functional_call(term.critic, p, both)  # (2, 1): real, fake
        mixed = []
        for a, b in zip(r, f, strict=True):
            shaped = None if a is None else alpha.view(-1, *([1] * (a.dim() - 1)))
            mixed.append(None if a is None else shaped * a + (1 - shaped) * b)
        penalty = _penalty(term, p, mixed)
        term_loss = (scores[1, 0] - scores[0, 0]).float() + term.penalty_coef * penalty
        total = term_loss if total is None else total + term_loss
    return total


class PrivateTraining:
    """A private run's critic updates, batches and accounting (see the module docstring).

    Attributes:
        accountant: the run's `Accountant` (saved with the model; resume continues it).
        bound: each example's gradient norm bound (``dp_max_grad_norm``).
        rounds: critic rounds per batch (``discriminator_rounds``).
        batches: the Poisson sampler of the current training call (`begin` sets it).
    """

    def __init__(self, config: Any, device: torch.device):
        self.batch_size = config.batch_size
        self.bound = float(config.dp_max_grad_norm)
        self.rounds = config.discriminator_rounds
        self.device = device
        self.accountant = Accountant(config.dp_target_epsilon, config.dp_delta)
        # Secret (never seeded by the config, never saved): see dgan.privacy.sampling.
        self.noise_rng = secret_generator(device)
        self.sampling_rngs = (secret_generator("cpu"), secret_generator(device))
        self.batches: PoissonBatches | None = None
        self.steps_allowed = 0

    # ----- a training call ------------------------------------------------------------
    def begin(self, n_examples: int, planned_steps: int) -> None:
        """Start a training call on ``n_examples`` series planned for ``planned_steps``
        steps: plan the noise (the first time), sample at batch_size / n, and count the
        steps the target allows."""
        if self.accountant.delta is None:  # a config not settled for the data
            self.accountant.delta = default_delta(n_examples)
        rate = check_sample_rate(self.batch_size, n_examples)
        self.accountant.plan(rate, planned_steps)
        self.batches = PoissonBatches(n_examples, rate, *self.sampling_rngs)
        self.steps_allowed = self.accountant.steps_left(rate)

    def warm_up(self, n_examples: int, steps: int) -> None:
        """`begin` for a throwaway trainer that only times steps: any noise times alike,
        so none is planned (planning it can take seconds)."""
        self.accountant.noise_multiplier = 1.0
        self.begin(n_examples, steps)

    @property
    def generators(self) -> list[torch.Generator]:
        """The secret generators every process of a torchrun job must share."""
        return [self.noise_rng, *self.sampling_rngs]

    @property
    def exhausted(self) -> bool:
        """Another step would spend more than the target epsilon."""
        return self.steps_allowed <= 0

    @property
    def expected_batch(self) -> float:
        """The expected batch size: sample rate x series (the mean's denominator)."""
        return self.batches.sample_rate * self.batches.n

    def next_batch(self) -> torch.Tensor:
        """The next Poisson batch's indices; counts the step (whatever happens to it)."""
        self.accountant.step(self.batches.sample_rate)
        self.steps_allowed -= 1
        return self.batches.draw()

    def spent(self) -> float:
        """Epsilon spent so far (at the run's delta)."""
        return self.accountant.spent()

    # ----- one critic round -----------------------------------------------------------
    def critic_round(
        self,
        terms: Sequence[CriticTerm],
        optimizers: Sequence[torch.optim.Optimizer],
        real: Parts,
        fake: Parts,
        alpha: torch.Tensor,
        sum_over_processes: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        """One private update of every critic on this process's pairs (see the module
        docstring); the noisy gradients are left in each parameter's ``.grad``."""
        params = {t.name: {k: v.detach() for k, v in t.critic.named_parameters()} for t in terms}
        present = [i for i, x in enumerate(real) if x is not None]
        examples = [real[i].float() for i in present] + [fake[i].float() for i in present]
        examples.append(alpha.float())

        def loss(p: dict[str, Params], *one: torch.Tensor) -> torch.Tensor:
            r: list[torch.Tensor | None] = [None] * len(real)
            f: list[torch.Tensor | None] = [None] * len(real)
            for j, i in enumerate(present):  # each a batch of one
                r[i], f[i] = one[j].unsqueeze(0), one[len(present) + j].unsqueeze(0)
            return pair_loss(terms, p, r, f, one[-1].unsqueeze(0))

        flat_params = {f"{t}/{k}": v for t, group in params.items() for k, v in group.items()}

        def flat_loss(flat: Params, *one: torch.Tensor) -> torch.Tensor:
            grouped: dict[str, Params] = {t: {} for t in params}
            for key, value in flat.items():
                t, k = key.split("/", 1)
                grouped[t][k] = value
            return loss(grouped, *one)

        weights = sum(p.numel() for p in flat_params.values())
        chunk = max(1, min(256, CHUNK_BYTES // (4 * weights)))
        sums = clipped_sum(flat_loss, flat_params, examples, self.bound, chunk)
        if sum_over_processes is not None:  # the whole batch's sum, before the one noise
            names = list(sums)
            total = sum_over_processes(torch.cat([sums[k].reshape(-1) for k in names]))
            sizes = [sums[k].numel() for k in names]
            sums = {k: t.view_as(sums[k]) for k, t in zip(names, total.split(sizes), strict=True)}
        std = self.accountant.noise_multiplier * math.sqrt(self.rounds) * self.bound
        noisy = add_noise(sums, std, self.noise_rng)
        for optimizer in optimizers:
            optimizer.zero_grad(set_to_none=True)
        for t in terms:
            for k, p in t.critic.named_parameters():
                p.grad = (noisy[f"{t.name}/{k}"] / self.expected_batch).to(p.dtype)
        for optimizer in optimizers:
            optimizer.step()

    # ----- state ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The accounting (JSON); the secret generators are never saved."""
        return self.accountant.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the accounting of a saved run."""
        self.accountant.load_state_dict(state)
