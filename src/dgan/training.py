"""The WGAN-GP training step and the epoch loop.

The step never waits for the host: batches are gathered on the device from a
device-side permutation, losses and counters accumulate into device tensors, and the
host reads them only every ``log_every`` steps and at the end of each epoch (each read
is marked below as a deliberate sync). The loop is the same in every precision: the
`PrecisionPolicy` supplies autocast, loss scaling and the gradient penalty, and the
`DivergenceGuard` checks health at those sync points.
"""

from __future__ import annotations

import contextlib
import logging
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
from dgan.precision import DivergenceGuard, PrecisionPolicy, fallback_precision

logger = logging.getLogger(__name__)


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
# Order of the on-device counters.
CRITIC_SKIPPED, GENERATOR_SKIPPED, NONFINITE_LOSS = range(3)


class Trainer:
    """Owns the optimizers and the precision policy; runs training epochs on device data."""

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
        self.guard = DivergenceGuard(self.modules(), self.optimizers())
        self.stopped = False  # set when the guard finds no safer precision to continue in
        self.steps_done = 0
        self.set_policy(policy)

    def modules(self) -> dict[str, torch.nn.Module]:
        parts = {"generator": self.generator, "critic": self.critic}
        if self.attribute_critic is not None:
            parts["attribute_critic"] = self.attribute_critic
        return parts

    def optimizers(self) -> dict[str, torch.optim.Optimizer]:
        parts = {"generator": self.generator_opt, "critic": self.critic_opt}
        if self.attribute_critic_opt is not None:
            parts["attribute_critic"] = self.attribute_critic_opt
        return parts

    def set_policy(self, policy: PrecisionPolicy) -> None:
        self.policy = policy
        policy.configure(self.generator)

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
    def discriminator_step(self, real: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Update both critics once.

        Returns ((critic loss, attribute critic loss, penalty), skipped) as device tensors.
        """
        c, policy = self.config, self.policy
        with torch.no_grad(), policy.autocast():
            fake = self._fake(len(real))  # detached fakes: no generator graph is kept
        alpha = torch.rand(len(real), 1, device=self.device, generator=self.rng)

        real_parts = (real.attributes, real.additional, real.features)
        fake_parts = (fake.attributes, fake.additional, fake.features)
        with policy.autocast():
            wasserstein = self.critic(*fake_parts).mean() - self.critic(*real_parts).mean()
        penalty = policy.gradient_penalty(self.critic, real_parts, fake_parts, alpha)
        loss = wasserstein.float() + c.gradient_penalty_coef * penalty
        attribute_loss = torch.zeros((), device=self.device)
        if self.attribute_critic is not None:
            real_attrs, fake_attrs = real_parts[:2], fake_parts[:2]
            with policy.autocast():
                attribute_loss = (
                    self.attribute_critic(*fake_attrs).mean()
                    - self.attribute_critic(*real_attrs).mean()
                ).float()
            attribute_penalty = policy.gradient_penalty(
                self.attribute_critic, real_attrs, fake_attrs, alpha
            )
            attribute_loss = attribute_loss + c.attribute_gradient_penalty_coef * attribute_penalty

        # The critics share no parameters and see detached inputs, so one backward of
        # the summed losses gives each critic exactly its own gradients.
        optimizers = [o for o in (self.critic_opt, self.attribute_critic_opt) if o is not None]
        skipped = policy.backward_and_step(loss + attribute_loss, policy.critic_scaler, optimizers)
        return torch.stack([loss, attribute_loss, penalty]).detach().float(), skipped

    def generator_step(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Update the generator once on fresh noise; returns (its loss, skipped)."""
        c, policy = self.config, self.policy
        with frozen(self.critic, self.attribute_critic), policy.autocast():
            fake = self._fake(n)
            loss = -self.critic(fake.attributes, fake.additional, fake.features).mean()
            if self.attribute_critic is not None:
                attribute_score = self.attribute_critic(fake.attributes, fake.additional)
                loss = loss - c.attribute_loss_coef * attribute_score.mean()
        loss = loss.float()
        skipped = policy.backward_and_step(loss, policy.generator_scaler, [self.generator_opt])
        return loss.detach(), skipped

    def train_step(self, real: Batch, sums: torch.Tensor, counters: torch.Tensor) -> None:
        """Critic rounds then generator rounds on one batch.

        Adds batch-weighted losses (LOSS_NAMES order) to the device tensor ``sums`` and
        skipped steps / non-finite losses to ``counters``; nothing is read on the host.
        """
        c, n = self.config, len(real)
        for _ in range(c.discriminator_rounds):
            stats, skipped = self.discriminator_step(real)
            sums[:3] += stats * (n / c.discriminator_rounds)
            counters[CRITIC_SKIPPED] += skipped
            counters[NONFINITE_LOSS] += (~torch.isfinite(stats)).any()
        for _ in range(c.generator_rounds):
            loss, skipped = self.generator_step(n)
            sums[3] += loss * (n / c.generator_rounds)
            counters[GENERATOR_SKIPPED] += skipped
            counters[NONFINITE_LOSS] += ~torch.isfinite(loss)
        self.steps_done += 1

    # ----- epochs ---------------------------------------------------------------------
    def fit(
        self,
        data: Batch,
        epochs: int,
        progress_callback: Callable[[ProgressInfo], None] | None = None,
        progress_bar: bool | None = None,
    ) -> list[dict[str, Any]]:
        """Train for ``epochs`` passes over ``data``; returns one history dict per epoch.

        Stops early, keeping the last good weights, only if the divergence guard finds
        no safer precision to continue in.
        """
        n = len(data)
        n_batches = max(1, math.ceil(n / self.config.batch_size))
        for m in self.modules().values():
            m.train()
        show = sys.stderr.isatty() if progress_bar is None else progress_bar
        bar = tqdm(total=epochs * n_batches, disable=not show, unit="batch", desc="training")
        if self.config.divergence_guard:
            self.guard.snapshot(self.policy)
        history = []
        self.stopped = False
        try:
            for epoch in range(epochs):
                record = self._epoch(data, epoch, epochs, n_batches, progress_callback, bar)
                history.append(record)
                if record.get("stopped"):
                    break
        finally:
            bar.close()
        return history

    def _epoch(self, data, epoch, epochs, n_batches, progress_callback, bar) -> dict[str, Any]:
        n, cuda = len(data), self.device.type == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats(self.device)
        start = time.perf_counter()
        sums = torch.zeros(4, device=self.device)
        counters = torch.zeros(3, dtype=torch.long, device=self.device)
        seen, events, stopped = 0, [], False
        # Balanced batches (sizes differ by at most one) from a device permutation.
        perm = torch.randperm(n, device=self.device, generator=self.rng)
        for b, index in enumerate(perm.tensor_split(n_batches)):
            self.train_step(data.take(index), sums, counters)
            seen += len(index)
            bar.update(1)
            if progress_callback is not None:
                progress_callback(ProgressInfo(epoch, epochs, b, n_batches))
            last = b == n_batches - 1
            if self.steps_done % self.config.log_every == 0 or last:
                healthy = self._check(epoch, counters, events)
                if not healthy:  # rolled back: this epoch's sums were polluted
                    sums.zero_()
                    counters[NONFINITE_LOSS] = 0
                    seen = 0
                    stopped = self.stopped
                    if stopped:
                        break
                elif not bar.disable:
                    means = self._means(sums, max(seen, 1))  # deliberate host sync, for the bar
                    bar.set_postfix(
                        {k: v for k, v in means.items() if v is not None}, refresh=False
                    )
        elapsed = time.perf_counter() - start
        means = self._means(sums, seen) if seen else dict.fromkeys(LOSS_NAMES)  # host sync
        if self.attribute_critic is None:
            means["attribute_discriminator_loss"] = None
        critic_skipped, generator_skipped, _ = counters.tolist()  # host sync
        record = {
            "epoch": epoch,
            **means,
            "examples_per_s": n / elapsed,
            "wall_time_s": elapsed,
            "precision": self.policy.name,
            "critic_loss_scale": loss_scale(self.policy.critic_scaler),
            "generator_loss_scale": loss_scale(self.policy.generator_scaler),
            "skipped_steps": critic_skipped + generator_skipped,
            "guard_events": events,
            "peak_memory_bytes": torch.cuda.max_memory_allocated(self.device)
            if cuda
            else peak_rss_bytes(),
        }
        if stopped:
            record["stopped"] = True
        return record

    def _check(self, epoch: int, counters: torch.Tensor, events: list[dict]) -> bool:
        """Guard check at a sync point; True when healthy (a new snapshot is taken)."""
        if not self.config.divergence_guard:
            return True
        problem = self.guard.problem(counters[NONFINITE_LOSS], self.policy)  # host sync
        if problem is None:
            self.guard.snapshot(self.policy)
            return True
        self.guard.restore(self.policy)
        old = self.policy.precision
        new = fallback_precision(old, self.device)
        if new is None:
            self.stopped = True
            action = "rolled back to the last good weights and stopped training"
            advice = "; lower the learning rates or raise gradient_penalty_coef"
        else:
            self.set_policy(self.policy.with_precision(new))
            action = f"rolled back and continued in {new.value}"
            advice = ""
        event = {
            "epoch": epoch,
            "step": self.steps_done,
            "reason": problem,
            "precision": old.value,
            "action": action,
        }
        events.append(event)
        logger.warning(
            "Divergence at step %d (epoch %d, %s): %s; %s%s.",
            self.steps_done,
            epoch,
            old.value,
            problem,
            action,
            advice,
        )
        return False

    def _means(self, sums: torch.Tensor, count: float) -> dict[str, float | None]:
        values = (sums / count).tolist()  # host sync
        means = dict(zip(LOSS_NAMES, values, strict=True))
        if self.attribute_critic is None:
            means["attribute_discriminator_loss"] = None
        return means


def peak_rss_bytes() -> int | None:
    """Peak resident memory of this process (Linux/macOS), or None where unknown."""
    try:
        import resource  # POSIX only
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS reports bytes, Linux KiB


def loss_scale(scaler: torch.amp.GradScaler) -> float | None:
    """The scaler's current scale, or None when loss scaling is off."""
    return scaler.get_scale() if scaler.is_enabled() else None  # host sync (epoch end)
