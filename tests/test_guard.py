"""The divergence guard, driven through real training: what it detects (non-finite losses,
non-finite weights, a collapsed loss scale), where it rolls back to (the LAST healthy
snapshot), which precision it continues in, and that ``divergence_guard=False`` turns it
off.

Poisoning a loss here makes its value NaN while its gradients stay finite
(``loss + nan * loss.detach()``), so the weights stay healthy and only the loss check can
notice: a guard that ignored non-finite losses would let the run go on unnoticed.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

import dgan.precision
import dgan.train.losses
from dgan import DGAN
from dgan.precision import Precision, fallback_precision
from dgan.train.batch import Accumulators, Batch
from dgan.train.guard import MIN_LOSS_SCALE, DivergenceGuard, _all_finite, _copied
from tiny import tiny_config

CPU = torch.device("cpu")
# 24 examples in batches of 8: three steps per epoch. With log_every=2 the guard checks
# after steps 2, 3 (epoch end), 4, 6 (both), 8, 9, ...; step 5 is not a check.
N, LOG_EVERY = 24, 2


@pytest.fixture(autouse=True)
def no_native_bf16(monkeypatch):
    """fp16 falls back to fp32 in these tests on every CPU (bf16 where native is tested
    separately): the expected precisions then read the same everywhere."""
    monkeypatch.setattr(dgan.precision, "bf16_is_native", lambda device: False)


def _data():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(N, 6, 2))
    attributes = np.stack([rng.integers(0, 3, N), rng.normal(size=N)], axis=1)
    return features, attributes


def _poison_loss(monkeypatch, model_holder: list, loss_name: str, steps: set[int]) -> None:
    """Make ``dgan.train.losses.<loss_name>`` return NaN (with finite gradients) during the
    given 1-based training steps."""
    original = getattr(dgan.train.losses, loss_name)

    def poisoned(*args, **kwargs):
        loss = original(*args, **kwargs)
        if model_holder[0].trainer.steps_done + 1 in steps:
            return loss + float("nan") * loss.detach()
        return loss

    monkeypatch.setattr(dgan.train.losses, loss_name, poisoned)


def _train(monkeypatch=None, poison=None, steps=(5,), callback=None, **overrides) -> DGAN:
    features, attributes = _data()
    config = tiny_config(**{"epochs": 3, "log_every": LOG_EVERY, **overrides})
    model = DGAN(config)
    encoded = model.preprocess(features, attributes=attributes)
    if poison is not None:
        _poison_loss(monkeypatch, [model], poison, set(steps))
    model.train_encoded(encoded, callback, progress_bar=False)
    return model


def _events(model: DGAN) -> list[dict]:
    return [e for h in model.history for e in h["guard_events"]]


def _weights(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return copy.deepcopy(module.state_dict())


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return all(torch.equal(a[k], b[k]) for k in a)


# ----- what the guard detects ------------------------------------------------------------
@pytest.mark.parametrize("loss_name", ["critic_loss", "generator_loss"])
def test_a_non_finite_loss_with_healthy_weights_is_divergence(monkeypatch, loss_name):
    model = _train(monkeypatch, poison=loss_name, precision="fp16")
    events = _events(model)
    assert [(e["reason"], e["step"], e["precision"]) for e in events] == [
        ("non-finite loss", 6, "fp16")
    ]
    assert events[0]["action"] == "rolled back and continued in fp32"
    assert [h["precision"] for h in model.history] == ["fp16", "fp32", "fp32"]
    # The polluted sums of epoch 1 are dropped at the rollback (its last step).
    assert [h["generator_loss"] is None for h in model.history] == [False, True, False]
    assert math.isfinite(model.history[2]["generator_loss"])


def test_one_divergence_mid_epoch_is_one_event_and_the_epoch_reports_clean_steps(monkeypatch):
    """A NaN loss in step 4 (checked at once) rolls back once; the epoch's losses are
    those of its steps 5 and 6, not polluted by step 4, and the count starts afresh."""
    model = _train(monkeypatch, poison="critic_loss", steps=(4,), precision="fp16")
    assert [(e["step"], e["reason"]) for e in _events(model)] == [(4, "non-finite loss")]
    assert all(math.isfinite(h["discriminator_loss"]) for h in model.history)
    assert all(math.isfinite(h["generator_loss"]) for h in model.history)


def test_rollback_goes_to_the_last_healthy_snapshot_not_the_first(monkeypatch):
    """In fp32 the guard rolls back and stops: the weights left are those of the last
    healthy check (after step 4), not those training started from."""
    states = {}
    holder: list = []

    def record(info):
        trainer = holder[0].trainer
        states[trainer.steps_done] = (_weights(trainer.generator), _weights(trainer.critic))

    features, attributes = _data()
    model = DGAN(tiny_config(epochs=3, log_every=LOG_EVERY, precision="fp32"))
    holder.append(model)
    encoded = model.preprocess(features, attributes=attributes)
    states[0] = (_weights(model.generator), _weights(model.critic))
    _poison_loss(monkeypatch, holder, "generator_loss", {5})
    model.train_encoded(encoded, record, progress_bar=False)

    (event,) = _events(model)
    assert event["reason"] == "non-finite loss" and event["step"] == 6
    assert event["action"] == "rolled back to the last good weights and stopped training"
    assert model.history[-1]["stopped"] and len(model.history) == 2
    generator, critic = _weights(model.generator), _weights(model.critic)
    assert _same(generator, states[4][0]) and _same(critic, states[4][1])
    assert not _same(generator, states[0][0])
    assert not _same(generator, states[6][0])  # step 5 and 6 changed the weights


def test_a_guard_that_is_off_lets_training_run_on(monkeypatch):
    model = _train(monkeypatch, poison="generator_loss", divergence_guard=False)
    assert _events(model) == []
    assert len(model.history) == 3 and not model.history[-1].get("stopped")
    assert math.isnan(model.history[1]["generator_loss"])  # step 5 is in epoch 1
    assert model.trainer.guard.state_dict() is None  # no snapshot copies either


def test_a_collapsed_loss_scale_is_divergence():
    """A dynamic scale below 1 means fp16 cannot represent the gradients any more."""
    model = _train(precision="fp16", init_scale=MIN_LOSS_SCALE / 4)
    events = _events(model)
    assert events[0]["reason"] == f"critic loss scale collapsed below {MIN_LOSS_SCALE:g}"
    assert events[0]["step"] == 2  # the first check
    assert events[0]["action"] == "rolled back and continued in fp32"
    assert len(events) == 1 and model.history[-1]["precision"] == "fp32"


def test_fp16_penalty_overflows_are_skipped_steps_not_divergence():
    """fp16 with the penalty in autocast and the temporal critic (double backward under the
    loss scale): dynamic scaling raises the scale until the penalty's scaled gradients
    overflow, which makes that step's loss inf. That is loss scaling's normal event: the
    step is skipped and the scale backs off; the guard must not abandon fp16 for it."""
    model = _train(
        precision="fp16",
        gradient_penalty_precision="autocast",
        temporal_critic=True,
        init_scale=2.0**16,
        growth_interval=1,  # the scale grows every clean step: overflows come quickly
        epochs=6,
    )
    assert _events(model) == []
    assert {h["precision"] for h in model.history} == {"fp16"}
    assert sum(h["skipped_steps"] for h in model.history) >= len(model.history)


def test_the_guard_checks_each_scaler():
    model = _train(precision="fp16", epochs=1)
    guard = DivergenceGuard(model.trainer)
    policy = model.trainer.policy
    assert guard.problem(torch.tensor(0)) is None
    policy.generator_scaler.update(new_scale=torch.tensor(MIN_LOSS_SCALE / 2))
    assert guard.problem(torch.tensor(0)) == "generator loss scale collapsed below 1"
    assert guard.problem(torch.tensor(1)) == "non-finite loss"  # the loss is named first


# ----- the fallback order -------------------------------------------------------------------
def test_fp16_falls_back_to_bf16_where_bf16_is_native(monkeypatch):
    monkeypatch.setattr(dgan.precision, "bf16_is_native", lambda device: True)
    assert fallback_precision(Precision.FP16, CPU) == Precision.BF16
    assert fallback_precision(Precision.BF16, CPU) == Precision.FP32
    model = _train(monkeypatch, poison="generator_loss", precision="fp16")
    (event,) = _events(model)
    assert event["action"] == "rolled back and continued in bf16"
    assert model.trainer.policy.precision == Precision.BF16
    assert not model.trainer.policy.critic_scaler.is_enabled()  # bf16 needs no scaling
    assert [h["precision"] for h in model.history] == ["fp16", "bf16", "bf16"]


def test_recovery_restores_the_snapshot_s_precision_and_scalers(monkeypatch):
    """A snapshot holds the precision and scaler state too: rolling back an fp16 run
    restores the scale of the healthy state before it falls back."""
    model = _train(precision="fp16", epochs=1, init_scale=2.0**10)
    guard = model.trainer.guard
    guard.snapshot()
    scale = model.trainer.policy.critic_scaler.get_scale()
    model.trainer.policy.critic_scaler.update(new_scale=torch.tensor(scale / 8))
    restored = {}
    original = model.trainer.load_state_dict

    def spy(state):
        original(state)
        restored["scale"] = model.trainer.policy.critic_scaler.get_scale()

    monkeypatch.setattr(model.trainer, "load_state_dict", spy)
    guard.recover("non-finite loss", epoch=0)
    assert restored["scale"] == scale
    assert model.trainer.policy.precision == Precision.FP32


def test_the_guard_checks_at_every_epoch_end(monkeypatch):
    """Checks every log_every steps AND at the end of each epoch: with log_every=50 a
    three-step epoch is checked only at its end, and a divergence there is still caught."""
    model = _train(monkeypatch, poison="generator_loss", steps=(2,), log_every=50)
    (event,) = _events(model)
    assert event["reason"] == "non-finite loss" and event["step"] == 3


def test_a_snapshot_stays_as_taken_through_later_steps_and_recoveries():
    """Optimizers keep the tensors they load: recovering must not hand them the snapshot's
    own tensors, or the next steps would change the snapshot under the guard."""
    features, attributes = _data()
    model = DGAN(tiny_config(log_every=LOG_EVERY))
    batch = Batch.from_encoded(model.preprocess(features, attributes=attributes), model.device)
    trainer, guard = model.trainer, model.trainer.guard
    trainer.train_step(batch.head(8), Accumulators(CPU))  # optimizer state exists
    guard.snapshot()
    taken = copy.deepcopy(trainer.state_dict())
    for _ in range(2):
        trainer.train_step(batch.head(8), Accumulators(CPU))
        guard.recover("non-finite loss", epoch=0)
        state = trainer.state_dict()
        for name, module_state in taken["modules"].items():
            assert _same(state["modules"][name], module_state)
        for name, optimizer_state in taken["optimizers"].items():
            for key, values in optimizer_state["state"].items():
                live = state["optimizers"][name]["state"][key]
                assert all(torch.equal(live[k], v) for k, v in values.items()), (name, key)


# ----- the check and the copy themselves -------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_one_non_finite_element_anywhere_is_found(dtype, bad):
    """Read from each tensor's ends: a lone bad element at either end or inside any tensor,
    of any size, is found; empty tensors are skipped and no tensors are healthy."""
    healthy = [torch.randn(7, 3).to(dtype), torch.tensor(2.0, dtype=dtype), torch.empty(0)]
    assert _all_finite(healthy, CPU).item()
    for shape in [(), (1,), (5, 4), (1001,)]:
        for where in [0, -1, None]:
            tensor = torch.randn(shape).to(dtype)
            flat = tensor.view(-1)
            flat[torch.randint(flat.numel(), ()) if where is None else where] = bad
            assert not _all_finite([*healthy, tensor], CPU).item(), (shape, where)
    assert _all_finite([], CPU).item() and _all_finite([torch.empty(0)], CPU).item()


def test_a_large_finite_double_is_finite_beside_small_floats():
    """Tensors are compared in their own dtype: 1e300 would overflow in float32."""
    assert _all_finite([torch.tensor([1e300], dtype=torch.float64), torch.ones(3)], CPU).item()


def test_a_copied_state_is_equal_unshared_and_loads_like_the_original():
    module = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    optimizer = torch.optim.Adam(module.parameters())
    module(torch.randn(4, 3)).sum().backward()
    optimizer.step()
    state = {"module": module.state_dict(), "optimizer": optimizer.state_dict(), "name": "x"}
    copied = _copied(state)
    expected = copy.deepcopy(state)
    assert type(copied["module"]) is type(state["module"])
    assert copied["module"]._metadata == state["module"]._metadata  # the modules' versions
    assert copied["optimizer"]["param_groups"] == expected["optimizer"]["param_groups"]
    assert _same(copied["module"], expected["module"])
    for key, values in expected["optimizer"]["state"].items():
        assert _same(copied["optimizer"]["state"][key], values)
    with torch.no_grad():  # the live tensors change; the copy does not
        for tensor in state["module"].values():
            tensor.add_(1)
    assert _same(copied["module"], expected["module"])
    module.load_state_dict(copied["module"])
    assert _same(module.state_dict(), expected["module"])
