"""The WGAN-GP losses and the direction of each training step.

Each test here guards a promise a wrong sign or a wrong norm would break silently (the
networks still train, only towards the wrong thing): the critic learns to score real data
above fakes, the generator learns to raise the critic's score of its fakes, and the
gradient penalty bounds the critic's gradient per example, not over the whole batch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dgan.train.losses as losses
from dgan import DGAN
from dgan.networks import Critic
from dgan.noise import draw_noise
from dgan.precision import Precision, PrecisionPolicy
from dgan.train.batch import Accumulators, Batch
from dgan.train.losses import critic_loss, generator_loss, gradient_penalty
from tiny import tiny_config

CPU = torch.device("cpu")


def _built(**overrides) -> tuple[DGAN, Batch]:
    """An untrained tiny model built on data with a discrete and a continuous attribute,
    and its whole encoded dataset as one batch."""
    rng = np.random.default_rng(0)
    n = 16
    features = rng.normal(size=(n, 6, 2))
    attributes = np.stack([rng.integers(0, 3, n), rng.normal(size=n)], axis=1)
    model = DGAN(tiny_config(**overrides))
    encoded = model.preprocess(features, attributes=attributes)
    return model, Batch.from_encoded(encoded, model.device)


def _fixed_fakes(model: DGAN, n: int, seed: int = 1):
    """Make the trainer draw its fakes from one fixed noise batch (with the graph)."""
    trainer = model.trainer
    noise = draw_noise(model.config, n, torch.Generator().manual_seed(seed), CPU)

    def fake_batch(m: int) -> Batch:
        return Batch(*trainer.generator(*noise)).head(m)

    trainer.fake_batch = fake_batch  # instance attribute: the steps call self.fake_batch
    return fake_batch


def _gap(score, real: Batch, fake: Batch) -> float:
    """Mean score of real minus mean score of fake examples."""
    with torch.no_grad():
        return (score(real).mean() - score(fake).mean()).item()


# ----- the Wasserstein terms ------------------------------------------------------------
def test_loss_functions_have_the_wgan_signs():
    real, fake = torch.tensor([[3.0], [1.0]]), torch.tensor([[0.5], [-0.5]])
    assert critic_loss(real, fake).item() == pytest.approx(0.0 - 2.0)  # E[D(fake)] - E[D(real)]
    assert generator_loss(fake).item() == pytest.approx(-0.0)
    assert generator_loss(real).item() == pytest.approx(-2.0)
    assert critic_loss(real.half(), fake.half()).dtype == torch.float32


def test_a_critic_step_widens_the_gap_between_real_and_fake_scores():
    """Swapping real and fake anywhere in a critic's loss makes its gap shrink."""
    model, real = _built(
        gradient_penalty_coef=0.0,
        attribute_gradient_penalty_coef=0.0,
        temporal_critic=True,
        temporal_critic_num_units=8,
        envelope_critic=True,
    )
    trainer = model.trainer
    fake_batch = _fixed_fakes(model, len(real))
    with torch.no_grad():
        fake = fake_batch(len(real))
    scores = {
        "critic": lambda b: trainer.critic(*b.parts()),
        "attribute critic": lambda b: trainer.attribute_critic(b.attributes, b.additional),
        "temporal critic": lambda b: trainer.temporal_critic(*b.parts()),
        "envelope critic": lambda b: trainer.envelope_critic(*b.parts()),
    }

    def gaps():
        return {name: _gap(score, real, fake) for name, score in scores.items()}

    before = gaps()
    trainer.critic_step(real, Accumulators(CPU), weight=1.0)
    after = gaps()
    assert all(after[name] > before[name] for name in scores), (before, after)


def test_the_recorded_critic_loss_is_wasserstein_plus_coef_times_penalty(monkeypatch):
    seen = {}

    def spy(name, function):
        def wrapper(*args, **kwargs):
            value = function(*args, **kwargs)
            seen.setdefault(name, []).append(value.detach().clone())
            return value

        monkeypatch.setattr(losses, name, wrapper)

    spy("critic_loss", losses.critic_loss)
    spy("gradient_penalty", losses.gradient_penalty)
    model, real = _built(
        gradient_penalty_coef=3.0, attribute_gradient_penalty_coef=7.0, discriminator_rounds=1
    )
    acc = Accumulators(CPU)
    model.trainer.critic_step(real, acc, weight=1.0)
    (w_main, w_attr), (p_main, p_attr) = seen["critic_loss"], seen["gradient_penalty"]
    assert p_main.item() > 0 and p_attr.item() > 0
    loss, attribute_loss, penalty = acc.losses[:3].tolist()
    assert loss == pytest.approx((w_main + 3.0 * p_main).item(), rel=1e-5)
    assert attribute_loss == pytest.approx((w_attr + 7.0 * p_attr).item(), rel=1e-5)
    assert penalty == pytest.approx(p_main.item(), rel=1e-6)


@pytest.mark.parametrize("critic", ["critic", "attribute_critic", "temporal_critic"])
def test_a_generator_step_raises_the_critics_score_of_its_fakes(critic):
    """Flipping the generator loss's sign (anywhere) makes the score fall. The other
    critics' terms are weighted zero, so each critic is tested on its own."""
    model, real = _built(
        use_attribute_discriminator=critic == "attribute_critic",
        attribute_loss_coef=1.0,
        temporal_critic=critic == "temporal_critic",
        temporal_critic_num_units=8,
    )
    trainer = model.trainer
    fake_batch = _fixed_fakes(model, len(real))
    if critic != "critic":  # silence the main critic: a zero last layer scores 0
        last = trainer.critic.net[-1]
        with torch.no_grad():
            last.weight.zero_()
            last.bias.zero_()
    parts = {
        "critic": lambda b: trainer.critic(*b.parts()),
        "attribute_critic": lambda b: trainer.attribute_critic(b.attributes, b.additional),
        "temporal_critic": lambda b: trainer.temporal_critic(*b.parts()),
    }

    def score() -> float:
        with torch.no_grad():
            return parts[critic](fake_batch(len(real))).mean().item()

    before = score()
    trainer.generator_step(len(real), Accumulators(CPU), weight=1.0)
    assert score() > before


@pytest.mark.parametrize(
    "coef_name, settings",
    [("attribute_loss_coef", {}), ("temporal_critic_loss_coef", {"temporal_critic": True})],
)
def test_each_extra_critic_steers_the_generator_by_its_coefficient(coef_name, settings):
    """The generator's update depends on the attribute (or temporal) critic, linearly in
    that critic's coefficient."""
    updates = []
    for coef in (0.0, 1.0, 2.0):
        model, real = _built(**{coef_name: coef, "temporal_critic_num_units": 8, **settings})
        trainer = model.trainer
        _fixed_fakes(model, len(real))
        trainer.generator_opt = torch.optim.SGD(trainer.generator.parameters(), lr=1.0)
        before = [p.detach().clone() for p in trainer.generator.parameters()]
        trainer.generator_step(len(real), Accumulators(CPU), weight=1.0)
        after = list(trainer.generator.parameters())
        updates.append(torch.cat([(a - b).flatten() for a, b in zip(after, before, strict=True)]))
    # SGD with lr 1: the update is minus the gradient, linear in the coefficient.
    assert not torch.allclose(updates[0], updates[1])
    torch.testing.assert_close(updates[2] - updates[0], 2 * (updates[1] - updates[0]))


# ----- the gradient penalty ---------------------------------------------------------------
def _per_example_penalty(critic, real, fake, alpha) -> torch.Tensor:
    """WGAN-GP written out: one critic pass and one gradient norm per example."""
    terms = []
    for i in range(len(alpha)):
        mixed = [
            None if r is None else (alpha[i] * r[i : i + 1] + (1 - alpha[i]) * f[i : i + 1])
            for r, f in zip(real, fake, strict=True)
        ]
        inputs = [m.requires_grad_(True) for m in mixed if m is not None]
        grads = torch.autograd.grad(critic(*mixed).sum(), inputs)
        norm = torch.sqrt(sum((g**2).sum() for g in grads))
        terms.append((norm - 1.0) ** 2)
    return torch.stack(terms).mean()


def _whole_batch_penalty(critic, real, fake, alpha) -> torch.Tensor:
    """The wrong variant: one norm over the whole batch's gradient."""
    mixed = [
        None if r is None else (alpha.view(-1, *[1] * (r.dim() - 1)) * (r - f) + f)
        for r, f in zip(real, fake, strict=True)
    ]
    inputs = [m.requires_grad_(True) for m in mixed if m is not None]
    grads = torch.autograd.grad(critic(*mixed).sum(), inputs)
    return (torch.sqrt(sum((g**2).sum() for g in grads)) - 1.0) ** 2


def _tiny_penalty_inputs():
    torch.manual_seed(0)
    critic = Critic(in_dim=2 + 3 * 2, num_layers=2, num_units=8)
    real = (torch.rand(5, 2), None, torch.rand(5, 3, 2))
    fake = (torch.rand(5, 2), None, torch.rand(5, 3, 2))
    return critic, real, fake, torch.rand(5, 1)


def test_gradient_penalty_matches_a_hand_written_per_example_wgan_gp():
    critic, real, fake, alpha = _tiny_penalty_inputs()
    policy = PrecisionPolicy(CPU, Precision.FP32)
    penalty = gradient_penalty(critic, real, fake, alpha, policy)
    expected = _per_example_penalty(critic, real, fake, alpha)
    torch.testing.assert_close(penalty, expected, rtol=1e-5, atol=1e-7)
    # The test tells the two norms apart: a whole-batch norm is far from it.
    whole_batch = _whole_batch_penalty(critic, real, fake, alpha)
    assert abs(whole_batch.item() - expected.item()) > 0.1 * expected.item()


def test_a_critic_with_unit_gradient_per_example_has_no_penalty():
    """A linear critic with a unit weight vector has gradient norm 1 for every example;
    a whole-batch norm would see sqrt(batch) and penalise it."""
    torch.manual_seed(0)
    weight = torch.randn(2 + 3 * 2)
    weight = weight / weight.norm()

    def critic(attributes, additional, features):
        flat = torch.cat([attributes.flatten(1), features.flatten(1)], dim=1)
        return (flat @ weight)[:, None]

    _, real, fake, alpha = _tiny_penalty_inputs()
    for precision in (Precision.FP32, Precision.BF16):
        policy = PrecisionPolicy(CPU, precision)
        penalty = gradient_penalty(critic, real, fake, alpha, policy)
        assert penalty.item() == pytest.approx(0.0, abs=1e-6)
    doubled = gradient_penalty(lambda *p: 2 * critic(*p), real, fake, alpha, policy)
    assert doubled.item() == pytest.approx(1.0, rel=1e-5)  # (2 - 1)^2 for every example


class _UnitCritic(torch.nn.Module):
    """A linear critic whose gradient is the same unit vector for every example."""

    def __init__(self, dim: int):
        super().__init__()
        weight = torch.randn(dim, generator=torch.Generator().manual_seed(0))
        self.weight = torch.nn.Parameter(weight / weight.norm())

    def forward(self, *parts):
        flat = torch.cat([p.flatten(1) for p in parts if p is not None], dim=1)
        return (flat @ self.weight)[:, None]


@pytest.mark.parametrize("norm", ["example", "batch"])
def test_the_training_step_takes_the_configured_penalty_norm(norm):
    """Default "example": a critic with unit gradient per example is not penalised; a
    "batch" norm sees sqrt(batch) and penalises it by (sqrt(B) - 1)^2."""
    model, real = _built(use_attribute_discriminator=False, gradient_penalty_norm=norm)
    trainer = model.trainer
    dim = sum(p.flatten(1).shape[1] for p in real.parts() if p is not None)
    trainer.critic = _UnitCritic(dim)
    acc = Accumulators(CPU)
    trainer.critic_step(real, acc, weight=1.0)
    expected = 0.0 if norm == "example" else (len(real) ** 0.5 - 1) ** 2
    assert acc.losses[2].item() == pytest.approx(expected, abs=1e-5)


def test_interpolates_mix_each_example_with_its_own_alpha():
    from dgan.train.losses import interpolate

    real, fake = [torch.ones(3, 2), None], [torch.zeros(3, 2), None]
    alpha = torch.tensor([[0.0], [0.25], [1.0]])
    mixed = interpolate(real, fake, alpha)
    assert mixed[1] is None
    torch.testing.assert_close(mixed[0], torch.tensor([[0.0, 0.0], [0.25, 0.25], [1.0, 1.0]]))
    assert mixed[0].requires_grad
