"""The WGAN-GP training step and the epoch loop.

The step never waits for the host: batches are gathered on the device from a
device-side permutation, losses accumulate into a device tensor, and the host reads
that tensor only every ``log_every`` steps and at the end of each epoch (each read is
marked below as a deliberate sync).
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from tqdm.auto import tqdm

from dgan.config import DGANConfig
from dgan.networks import Critic, Generator
from dgan.precision import PrecisionPolicy


@dataclass
class ProgressInfo:
    """Training progress handed to ``progress_callback`` after every batch (gretel API).

    Example:
        >>> ProgressInfo(epoch=1, total_epochs=4, batch=0, total_batches=2).frac_completed
        0.25
    """

    epoch: int
    total_epochs: int
    batch: int
    total_batches: int

    @property
    def frac_completed(self) -> float:
        done = self.epoch * self.total_batches + self.batch
        return done / (self.total_epochs * self.total_batches)


@dataclass
class Batch:
    """One batch of encoded examples on the training device; absent parts are None."""

    attributes: torch.Tensor | None  # (B, A)
    additional: torch.Tensor | None  # (B, AA)
    features: torch.Tensor  # (B, T, F)

    def __len__(self) -> int:
        return self.features.shape[0]

    def take(self, index: torch.Tensor) -> Batch:
        def pick(t):
            return None if t is None else t.index_select(0, index)

        return Batch(pick(self.attributes), pick(self.additional), pick(self.features))

    def head(self, n: int) -> Batch:
        def first(t):
            return None if t is None else t[:n]

        return Batch(first(self.attributes), first(self.additional), first(self.features))


@contextlib.contextmanager
def frozen(*modules: torch.nn.Module | None) -> Iterator[None]:
    """Turn off ``requires_grad`` of the modules' parameters for the generator step."""
    params = [p for m in modules if m is not None for p in m.parameters()]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)


# Order of the on-device loss accumulator: the critic step's three, then the generator's.
LOSS_NAMES = (
    "discriminator_loss",
    "attribute_discriminator_loss",
    "gradient_penalty",
    "generator_loss",
)


class Trainer:
    """Owns the networks' optimizers and runs training epochs on encoded device data."""

    def __init__(
        self,
        config: DGANConfig,
        generator: Generator,
        critic: Critic,
        attribute_critic: Critic | None,
        policy: PrecisionPolicy,
        rng: torch.Generator,
    ):
        self.config = config
        self.generator = generator
        self.critic = critic
        self.attribute_critic = attribute_critic
        self.policy = policy
        self.rng = rng
        self.device = policy.device
        # Fused Adam keeps the step on the GPU (and lets GradScaler skip without a sync).
        fused = {"fused": True} if self.device.type == "cuda" else {}

        def adam(module, lr, beta1):
            return torch.optim.Adam(module.parameters(), lr=lr, betas=(beta1, 0.999), **fused)

        c = config
        self.generator_opt = adam(generator, c.generator_learning_rate, c.generator_beta1)
        self.critic_opt = adam(critic, c.discriminator_learning_rate, c.discriminator_beta1)
        self.attribute_critic_opt = None
        if attribute_critic is not None:
            self.attribute_critic_opt = adam(
                attribute_critic,
                c.attribute_discriminator_learning_rate,
                c.attribute_discriminator_beta1,
            )
        self.steps_done = 0

    # ----- noise ----------------------------------------------------------------------
    def noise(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(attribute noise (n, Na), feature noise (n, T/S, Nf)) from the trainer's RNG."""
        c = self.config
        cells = c.max_sequence_len // c.sample_len
        attribute_noise = torch.randn(
            n, c.attribute_noise_dim, device=self.device, generator=self.rng
        )
        feature_noise = torch.randn(
            n, cells, c.feature_noise_dim, device=self.device, generator=self.rng
        )
        return attribute_noise, feature_noise

    def _fake(self, n: int) -> Batch:
        # BatchNorm cannot normalise a batch of one: generate two and keep one.
        return Batch(*self.generator(*self.noise(max(n, 2)))).head(n)

    # ----- one step -------------------------------------------------------------------
    def discriminator_step(self, real: Batch) -> torch.Tensor:
        """Update both critics once; returns (critic loss, attribute critic loss, penalty)."""
        c, policy = self.config, self.policy
        with torch.no_grad(), policy.autocast():
            fake = self._fake(len(real))  # detached fakes: no generator graph is kept
        alpha = torch.rand(len(real), 1, device=self.device, generator=self.rng)

        real_parts = (real.attributes, real.additional, real.features)
        fake_parts = (fake.attributes, fake.additional, fake.features)
        with policy.autocast():
            wasserstein = self.critic(*fake_parts).mean() - self.critic(*real_parts).mean()
        penalty = policy.gradient_penalty(self.critic, real_parts, fake_parts, alpha)
        loss = wasserstein + c.gradient_penalty_coef * penalty
        attribute_loss = torch.zeros((), device=self.device)
        if self.attribute_critic is not None:
            real_attrs, fake_attrs = real_parts[:2], fake_parts[:2]
            with policy.autocast():
                attribute_loss = (
                    self.attribute_critic(*fake_attrs).mean()
                    - self.attribute_critic(*real_attrs).mean()
                )
            attribute_penalty = policy.gradient_penalty(
                self.attribute_critic, real_attrs, fake_attrs, alpha
            )
            attribute_loss = attribute_loss + c.attribute_gradient_penalty_coef * attribute_penalty

        # The critics share no parameters and see detached inputs, so one backward of
        # the summed losses gives each critic exactly its own gradients.
        optimizers = [o for o in (self.critic_opt, self.attribute_critic_opt) if o is not None]
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        scaler = policy.critic_scaler
        scaler.scale(loss + attribute_loss).backward()
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()
        return torch.stack([loss, attribute_loss, penalty]).detach().float()

    def generator_step(self, n: int) -> torch.Tensor:
        """Update the generator once on fresh noise; returns its loss."""
        c, policy = self.config, self.policy
        with frozen(self.critic, self.attribute_critic), policy.autocast():
            fake = self._fake(n)
            loss = -self.critic(fake.attributes, fake.additional, fake.features).mean()
            if self.attribute_critic is not None:
                attribute_score = self.attribute_critic(fake.attributes, fake.additional)
                loss = loss - c.attribute_loss_coef * attribute_score.mean()
        self.generator_opt.zero_grad(set_to_none=True)
        scaler = policy.generator_scaler
        scaler.scale(loss).backward()
        scaler.step(self.generator_opt)
        scaler.update()
        return loss.detach().float()

    def train_step(self, real: Batch, sums: torch.Tensor) -> None:
        """Critic rounds then generator rounds on one batch; adds batch-weighted losses
        (in LOSS_NAMES order) to the device tensor ``sums``."""
        c, n = self.config, len(real)
        for _ in range(c.discriminator_rounds):
            sums[:3] += self.discriminator_step(real) * (n / c.discriminator_rounds)
        for _ in range(c.generator_rounds):
            sums[3] += self.generator_step(n) * (n / c.generator_rounds)
        self.steps_done += 1

    # ----- epochs ---------------------------------------------------------------------
    def fit(
        self,
        data: Batch,
        epochs: int,
        progress_callback: Callable[[ProgressInfo], None] | None = None,
        progress_bar: bool | None = None,
    ) -> list[dict[str, Any]]:
        """Train for ``epochs`` passes over ``data``; returns one history dict per epoch."""
        n = len(data)
        n_batches = max(1, math.ceil(n / self.config.batch_size))
        modules = [m for m in (self.generator, self.critic, self.attribute_critic) if m]
        for m in modules:
            m.train()
        show = sys.stderr.isatty() if progress_bar is None else progress_bar
        bar = tqdm(total=epochs * n_batches, disable=not show, unit="batch", desc="training")
        history = []
        try:
            for epoch in range(epochs):
                start = time.perf_counter()
                sums = torch.zeros(4, device=self.device)
                # Balanced batches (sizes differ by at most one) from a device permutation.
                perm = torch.randperm(n, device=self.device, generator=self.rng)
                for b, index in enumerate(perm.tensor_split(n_batches)):
                    self.train_step(data.take(index), sums)
                    bar.update(1)
                    if progress_callback is not None:
                        progress_callback(ProgressInfo(epoch, epochs, b, n_batches))
                    if show and self.steps_done % self.config.log_every == 0:
                        # Deliberate host sync, once every log_every steps, for the bar.
                        seen = (b + 1) * n / n_batches
                        bar.set_postfix(self._means(sums, seen), refresh=False)
                means = self._means(sums, n)  # deliberate host sync: once per epoch
                elapsed = time.perf_counter() - start
                history.append(
                    {"epoch": epoch, **means, "examples_per_s": n / elapsed, "wall_time_s": elapsed}
                )
                bar.set_postfix({k: v for k, v in means.items() if v is not None}, refresh=False)
        finally:
            bar.close()
        return history

    def _means(self, sums: torch.Tensor, count: float) -> dict[str, float | None]:
        values = (sums / count).tolist()  # host sync
        means = dict(zip(LOSS_NAMES, values, strict=True))
        if self.attribute_critic is None:
            means["attribute_discriminator_loss"] = None
        return means
