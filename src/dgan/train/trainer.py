"""The `Trainer`: networks, optimizers, precision and RNG, and the WGAN-GP training step.

The step never waits for the host: batches are gathered on the device, losses and
counters accumulate into device tensors (`Accumulators`), which the epoch loop
(`dgan.train.loop`) reads only at its sync points. The step is the same in every
precision: the `PrecisionPolicy` supplies autocast and loss scaling, and the losses take
the policy.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from dgan.config import DGANConfig
from dgan.encoding.encoder import DataEncoder, EncodedData
from dgan.errors import ParameterError
from dgan.networks import (
    Critic,
    EnvelopeCritic,
    Generator,
    TemporalCritic,
    build_model_networks,
)
from dgan.noise import draw_noise, make_rng, seeded_cpu_rng
from dgan.precision import (
    Precision,
    PrecisionPolicy,
    resolve_precision,
)
from dgan.privacy.critics import CriticTerm, PrivateTraining
from dgan.train import losses
from dgan.train.batch import (
    CRITIC_LOSSES,
    ENVELOPE_LOSS,
    GENERATOR_LOSS,
    TEMPORAL_LOSS,
    Accumulators,
    Batch,
)
from dgan.train.distributed import Collective, join, sync_batchnorm
from dgan.train.guard import DivergenceGuard
from dgan.train.memory import check_network_memory
from dgan.train.optimizers import adam_optimizers, load_optimizer

logger = logging.getLogger(__name__)


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


def _optimizer(name: str) -> property:
    """The optimizer of network ``name`` (None where there is no such network), built
    with the others on first use (`Trainer.optimizers`)."""
    return property(
        lambda trainer: trainer.optimizers().get(name),
        lambda trainer, optimizer: trainer._set_optimizer(name, optimizer),
    )


class Trainer:
    """Owns the networks, optimizers, precision policy and training RNG; runs epochs.

    Build one with `Trainer.create`. Its whole state (`state_dict`) is what a saved model
    and the divergence guard's snapshot hold.
    """

    generator_opt = _optimizer("generator")
    critic_opt = _optimizer("critic")
    attribute_critic_opt = _optimizer("attribute_critic")
    temporal_critic_opt = _optimizer("temporal_critic")
    envelope_critic_opt = _optimizer("envelope_critic")

    def __init__(
        self,
        config: DGANConfig,
        generator: Generator,
        critic: Critic,
        attribute_critic: Critic | None,
        policy: PrecisionPolicy,
        rng: torch.Generator,
        temporal_critic: TemporalCritic | None = None,
        envelope_critic: EnvelopeCritic | None = None,
    ):
        self.config = config
        self.generator = generator
        self.critic = critic
        self.attribute_critic = attribute_critic
        self.temporal_critic = temporal_critic
        self.envelope_critic = envelope_critic
        self.rng = rng
        # Generation may use an exponential moving average of the generator's weights.
        self.generator_ema = None
        if config.generator_ema_decay is not None:
            self.generator_ema = copy.deepcopy(generator).requires_grad_(False)
            # A deep copy leaves an LSTM's weights in separate tensors; cuDNN wants them in
            # one chunk and would copy them together at every call (a warning on CUDA).
            for module in self.generator_ema.modules():
                if isinstance(module, torch.nn.RNNBase):
                    module.flatten_parameters()
        self.device = policy.device
        # Built on first use (`optimizers`, `dgan.train.optimizers`); states loaded
        # before then wait for them.
        self._optimizers: dict[str, torch.optim.Optimizer] | None = None
        self._saved_optimizers: dict[str, Any] = {}
        self.set_policy(policy)
        # Differential privacy: DP-SGD on the critics (dgan.privacy); None without.
        self.privacy = None
        if config.dp_target_epsilon is not None:
            self.privacy = PrivateTraining(config, self.device)
        self.guard = DivergenceGuard(self)
        self.steps_done = 0
        # Set by `join_processes` when several processes train this model (torchrun).
        self.collective: Collective | None = None

    @classmethod
    def create(cls, config: DGANConfig, encoder: DataEncoder, device: torch.device) -> Trainer:
        """Networks sized for ``encoder``, initialised from ``config.seed``, on ``device``.

        Seeding never touches the caller's global RNG. Whether training fits in the
        device's memory is checked when training first needs it (`optimizers`; a new
        model's networks were counted before they were built, `dgan.prepare`): a model
        loaded to generate needs none of it.
        """
        with seeded_cpu_rng(config.seed):  # the caller's RNG state is untouched
            built = build_model_networks(config, encoder)
        nets = {name: None if net is None else net.to(device) for name, net in built.items()}
        return cls(
            config,
            nets["generator"],
            nets["critic"],
            nets["attribute_critic"],
            PrecisionPolicy.from_config(config, device),
            make_rng(config.seed, 0, device),
            nets["temporal_critic"],
            nets["envelope_critic"],
        )

    def modules(self) -> dict[str, torch.nn.Module]:
        """Every network by name: those with optimizers, then the generator's average."""
        parts = {"generator": self.generator, "critic": self.critic}
        if self.attribute_critic is not None:
            parts["attribute_critic"] = self.attribute_critic
        if self.temporal_critic is not None:
            parts["temporal_critic"] = self.temporal_critic
        if self.envelope_critic is not None:
            parts["envelope_critic"] = self.envelope_critic
        if self.generator_ema is not None:
            parts["generator_ema"] = self.generator_ema
        return parts

    def optimizers(self) -> dict[str, torch.optim.Optimizer]:
        """Each trained network's optimizer, by the network's name; built on the first
        call, with any state loaded before it (`load_state_dict`), once
        `check_network_memory` finds room for the training state (else a ParameterError)."""
        if self._optimizers is None:
            modules = self.modules()
            optimizers = adam_optimizers(self.config, modules, self.device)
            # Adam makes its moments at the first step: the networks it trains fit first.
            check_network_memory({k: modules[k] for k in optimizers}, self.device, built=True)
            self._optimizers = optimizers
            for name, state in self._saved_optimizers.items():
                if name in self._optimizers:
                    load_optimizer(self._optimizers[name], state)
            self._saved_optimizers = {}
        return dict(self._optimizers)

    def _set_optimizer(self, name: str, optimizer: torch.optim.Optimizer) -> None:
        self.optimizers()
        self._optimizers[name] = optimizer

    def join_processes(
        self, data: EncodedData, shared_rngs: Sequence[torch.Generator] = ()
    ) -> Collective | None:
        """Train with the other processes of a torchrun job; None (and nothing done) in one
        process. See `dgan.train.distributed`.

        Checks that all processes have the same config and data and that each gets at
        least two examples of every batch, then starts every process from rank 0's weights
        and random states (this trainer's and ``shared_rngs``, e.g. the sampler's).
        """
        collective = join(self.device)
        self.collective = collective
        if collective is None:
            return None
        n, batch_size = len(data.features), self.config.batch_size
        smallest = n // max(1, -(-n // batch_size))
        if smallest < 2 * collective.world_size:
            raise ParameterError(
                f"batch_size={batch_size} with {n} examples gives batches of {smallest} for "
                f"{collective.world_size} processes; each needs at least 2 examples per batch "
                f"(BatchNorm): use batch_size >= {2 * collective.world_size} (and enough data)."
            )
        collective.check_same_config(self.config.to_json_dict())
        collective.check_same_data(data.digest())
        secret = [] if self.privacy is None else self.privacy.generators  # the same noise
        collective.broadcast_start(self.modules().values(), [self.rng, *shared_rngs, *secret])
        sync_batchnorm(self.generator, collective)
        return collective

    @property
    def sampling_generator(self) -> Generator:
        """The generator to generate with: the weight average where there is one."""
        return self.generator if self.generator_ema is None else self.generator_ema

    # ----- precision and state --------------------------------------------------------
    def set_policy(self, policy: PrecisionPolicy) -> None:
        self.policy = policy
        policy.configure(self.generator)
        if self.generator_ema is not None:
            policy.configure(self.generator_ema)

    def set_precision(self, precision: Precision) -> None:
        """Continue in ``precision`` with the same settings (and fresh loss scalers)."""
        self.set_policy(self.policy.with_precision(precision))

    def state_dict(self) -> dict[str, Any]:
        """Everything training needs to continue exactly: networks, optimizers, precision
        in effect with its scalers, the training RNG and the step count. Tensors are the
        live ones: copy before keeping.

        Example:
            >>> import numpy as np
            >>> from dgan import DGAN, DGANConfig
            >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
            >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
            >>> sorted(model.trainer.state_dict())
            ['modules', 'optimizers', 'precision', 'rng', 'steps_done']
        """
        policy = self.policy
        return {
            "modules": {name: m.state_dict() for name, m in self.modules().items()},
            "optimizers": {name: o.state_dict() for name, o in self.optimizers().items()},
            "precision": {
                "in_effect": policy.name,
                "critic_scaler": policy.critic_scaler.state_dict(),
                "generator_scaler": policy.generator_scaler.state_dict(),
            },
            "rng": self.rng.get_state(),
            "steps_done": self.steps_done,
            **({} if self.privacy is None else {"privacy": self.privacy.state_dict()}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned; parts missing from ``state`` stay as they are.

        A saved precision this device cannot run (e.g. fp16 saved on a GPU, loaded on a
        CPU without fp16 autocast) is logged and the current one kept; loss-scaler states
        load only into the precision they were saved in.
        """
        for name, module in self.modules().items():
            if name in state.get("modules", {}):
                module.load_state_dict(state["modules"][name])
        for name, saved in state.get("optimizers", {}).items():
            if self._optimizers is None:  # loaded when they are built
                self._saved_optimizers[name] = saved
            elif name in self._optimizers:
                load_optimizer(self._optimizers[name], saved)
        if "precision" in state:
            self._restore_precision(state["precision"])
        if "rng" in state:
            self.rng.set_state(state["rng"])
        if "steps_done" in state:
            self.steps_done = state["steps_done"]
        if self.privacy is not None and state.get("privacy") is not None:
            self.privacy.load_state_dict(state["privacy"])

    def _restore_precision(self, saved: dict[str, Any]) -> None:
        """Continue in the saved precision (a guard may have lowered it) with its scalers."""
        in_effect = Precision(saved["in_effect"])
        if in_effect != self.policy.precision:
            try:
                resolve_precision(in_effect, self.device)  # can this device run it?
            except ParameterError:
                logger.warning(
                    "The model was training in %s, which %s cannot run; continuing in %s.",
                    in_effect.value,
                    self.device,
                    self.policy.name,
                )
                return
            self.set_precision(in_effect)
        if self.policy.critic_scaler.is_enabled() and saved["critic_scaler"]:
            self.policy.critic_scaler.load_state_dict(saved["critic_scaler"])
            self.policy.generator_scaler.load_state_dict(saved["generator_scaler"])

    # ----- one step -------------------------------------------------------------------
    def fake_batch(self, n: int) -> Batch:
        """``n`` generated examples from fresh noise (with the graph, unless under no_grad)."""
        # BatchNorm cannot normalise a batch of one: generate two and keep one.
        noise = draw_noise(self.config, max(n, 2), self.rng, self.device)
        if self.collective is not None:  # drawn for the whole batch: this process's rows
            noise = [self.collective.rows(t) for t in noise]
        return Batch(*self.generator(*noise)).head(n)

    def critic_step(
        self,
        real: Batch,
        acc: Accumulators,
        weight: float,
        n: int | None = None,
        fake: Batch | None = None,
    ) -> None:
        """Update every critic once on ``real`` and as many fakes (``fake``, detached, or
        fresh ones when None).

        ``n``: the whole batch's size when ``real`` is this process's shard of it.
        """
        c, policy, n = self.config, self.policy, len(real) if n is None else n
        if fake is None:
            with torch.no_grad(), policy.autocast():
                fake = self.fake_batch(n)  # no generator graph is kept
        fake = fake.detach()  # the critics' backward must not reach the generator
        # One interpolation weight per example, shared by the critics' penalties.
        alpha = torch.rand(n, 1, device=self.device, generator=self.rng)
        if self.collective is not None:
            alpha = self.collective.rows(alpha)
        real_all, fake_all = real.parts(), fake.parts()
        if self.privacy is not None:  # per-example gradients, clipped and noised
            self._private_critic_step(real_all, fake_all, alpha)
            acc.skipped("critic", torch.zeros((), dtype=torch.long, device=self.device))
            return
        loss, penalty = self._critic_loss(
            self.critic, real_all, fake_all, alpha, c.gradient_penalty_coef
        )
        attribute_loss = temporal_loss = envelope_loss = torch.zeros((), device=self.device)
        if self.attribute_critic is not None:  # reads the (additional) attributes only
            attribute_loss, _ = self._critic_loss(
                self.attribute_critic,
                real_all[:2],
                fake_all[:2],
                alpha,
                c.attribute_gradient_penalty_coef,
            )
        if self.temporal_critic is not None:
            temporal_loss, _ = self._critic_loss(
                self.temporal_critic, real_all, fake_all, alpha, c.gradient_penalty_coef
            )
        if self.envelope_critic is not None:
            envelope_loss, _ = self._critic_loss(
                self.envelope_critic, real_all, fake_all, alpha, c.gradient_penalty_coef
            )
        total = loss + attribute_loss + temporal_loss + envelope_loss
        # The critics share no parameters and see detached inputs, so one backward of the
        # summed losses gives each critic exactly its own gradients.
        critic_optimizers = [o for name, o in self.optimizers().items() if name != "generator"]
        skipped = policy.backward_and_step(
            total, policy.critic_scaler, critic_optimizers, self.gradient_hook
        )
        acc.losses[CRITIC_LOSSES] += torch.stack([loss, attribute_loss, penalty]).detach() * weight
        acc.losses[TEMPORAL_LOSS] += temporal_loss.detach() * weight
        acc.losses[ENVELOPE_LOSS] += envelope_loss.detach() * weight
        acc.skipped("critic", skipped)
        acc.nonfinite_losses += policy.diverged(total, skipped, policy.critic_scaler)

    def _private_critic_step(self, real, fake, alpha) -> None:
        """The critics' DP-SGD update (`dgan.privacy.critics`): fp32, no loss scaling; the
        losses of real data are not recorded (they would be released without noise)."""
        c = self.config
        coef = c.gradient_penalty_coef
        terms = [CriticTerm("critic", self.critic, coef)]
        if self.attribute_critic is not None:
            attribute_coef = c.attribute_gradient_penalty_coef
            terms.append(CriticTerm("attribute_critic", self.attribute_critic, attribute_coef, 2))
        if self.temporal_critic is not None:
            terms.append(CriticTerm("temporal_critic", self.temporal_critic, coef))
        if self.envelope_critic is not None:
            terms.append(CriticTerm("envelope_critic", self.envelope_critic, coef))
        optimizers = [o for name, o in self.optimizers().items() if name != "generator"]
        total = None if self.collective is None else self.collective.total
        self.privacy.critic_round(terms, optimizers, real, fake, alpha, total)

    def _critic_loss(self, critic, real, fake, alpha, coef) -> tuple[torch.Tensor, torch.Tensor]:
        """(Wasserstein estimate + coef x gradient penalty, the penalty) of one critic."""
        with self.policy.autocast():
            real_scores, fake_scores = losses.paired_scores(critic, real, fake)
        norm, collective = self.config.gradient_penalty_norm, self.collective
        total = None if collective is None else collective.differentiable_sum
        penalty = losses.gradient_penalty(critic, real, fake, alpha, self.policy, norm, total)
        return losses.critic_loss(real_scores, fake_scores) + coef * penalty, penalty

    def generator_step(
        self, n: int, acc: Accumulators, weight: float, fake: Batch | None = None
    ) -> None:
        """Update the generator once through frozen critics, on ``fake`` (generated with
        its graph by the current weights) or on ``n`` fresh fakes when None."""
        c, policy = self.config, self.policy
        critics = (self.critic, self.attribute_critic, self.temporal_critic, self.envelope_critic)
        with frozen(*critics), policy.autocast():
            if fake is None:
                fake = self.fake_batch(n)
            loss = losses.generator_loss(self.critic(*fake.parts()))
            if self.attribute_critic is not None:
                attribute_scores = self.attribute_critic(fake.attributes, fake.additional)
                loss = loss + c.attribute_loss_coef * losses.generator_loss(attribute_scores)
            if self.temporal_critic is not None:
                temporal_scores = self.temporal_critic(*fake.parts())
                loss = loss + c.temporal_critic_loss_coef * losses.generator_loss(temporal_scores)
            if self.envelope_critic is not None:
                envelope_scores = self.envelope_critic(*fake.parts())
                loss = loss + c.envelope_critic_loss_coef * losses.generator_loss(envelope_scores)
        skipped = policy.backward_and_step(
            loss, policy.generator_scaler, [self.generator_opt], self.gradient_hook
        )
        if self.generator_ema is not None:
            self._update_generator_ema()
        acc.losses[GENERATOR_LOSS] += loss.detach() * weight
        acc.skipped("generator", skipped)
        acc.nonfinite_losses += policy.diverged(loss, skipped, policy.generator_scaler)

    @torch.no_grad()
    def _update_generator_ema(self) -> None:
        """Move the average toward the generator; the decay ramps up so early, poor
        weights are forgotten (decay_t = min(decay, (1 + t) / (10 + t)))."""
        t = self.steps_done
        decay = min(self.config.generator_ema_decay, (1 + t) / (10 + t))
        average, live = self.generator_ema, self.generator
        torch._foreach_lerp_(list(average.parameters()), list(live.parameters()), 1.0 - decay)
        for mine, theirs in zip(average.buffers(), live.buffers(), strict=True):
            mine.copy_(theirs)  # BatchNorm statistics: the live ones

    def train_step(self, real: Batch, acc: Accumulators, n: int | None = None) -> None:
        """Critic rounds, then generator rounds, on one batch; adds to ``acc`` on the device.

        ``n``: the whole batch's size when ``real`` is this process's shard of it.
        """
        c, mine = self.config, len(real)
        n = mine if n is None else n
        if self.privacy is not None and self.privacy.batches is None:  # outside `fit`: the
            self.privacy.warm_up(n, 1)  # plan's warm-up, which only times steps
        # A private batch's size is random; the generator trains on the expected size.
        generated = n if self.privacy is None else max(1, round(self.privacy.expected_batch))
        fake = None
        if c.reuse_fakes:  # one generator pass, its graph kept for the generator round
            with self.policy.autocast():
                fake = self.fake_batch(n)
        for _ in range(c.discriminator_rounds):
            self.critic_step(real, acc, weight=mine / c.discriminator_rounds, n=n, fake=fake)
        for round_ in range(c.generator_rounds):
            # Later rounds generate afresh: the first one's step changed the weights.
            shared = fake if round_ == 0 else None
            self.generator_step(generated, acc, weight=mine / c.generator_rounds, fake=shared)
        self.steps_done += 1

    @property
    def gradient_hook(self) -> Callable | None:
        """Run after each backward, before the optimizer steps: the all-reduce of gradients
        under torchrun (see distributed.py), None in one process."""
        return None if self.collective is None else self.collective.reduce_gradients

    def random_batch(self, data: Batch, size: int) -> Batch:
        """``size`` examples of ``data`` drawn on the device with the training RNG."""
        index = torch.randperm(len(data), device=self.device, generator=self.rng)[:size]
        return data.take(index)
