import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import dgan
from dgan import DGAN, OutputType, ProgressInfo
from dgan.train.batch import LOSS_NAMES, Accumulators, Batch
from tiny import tiny_config


def _model(**kw) -> DGAN:
    length = {} if "training_steps" in kw else {"epochs": 2}
    return DGAN(tiny_config(**{**length, **kw}))


def _data(rng, n=20):
    features = rng.normal(size=(n, 6, 2))
    attributes = np.stack([rng.integers(0, 3, n), rng.normal(size=n)], axis=1)
    return features, attributes


TYPES = [OutputType.DISCRETE, OutputType.CONTINUOUS]


def test_training_step_never_reads_device_values(rng, monkeypatch):
    """docs/design.md, decision 2: no .item(), .tolist(), .cpu() or bool of a tensor in a step."""
    features, attributes = _data(rng)
    model = _model(epochs=1)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    trainer = model.trainer
    batch = Batch.from_encoded(model.preprocess(features, attributes=attributes), model.device)
    acc = Accumulators(model.device)

    package_dir = str(Path(dgan.__file__).parent)
    reads = []

    def guard(name):
        original = getattr(torch.Tensor, name)

        def wrapper(self, *args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(package_dir):  # torch's own CPU bookkeeping is fine
                reads.append(f"{name} at {caller}:{sys._getframe(1).f_lineno}")
            return original(self, *args, **kwargs)

        return wrapper

    for name in ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__"):
        monkeypatch.setattr(torch.Tensor, name, guard(name))
    trainer.train_step(batch.head(8), acc)
    monkeypatch.undo()
    assert reads == []
    assert torch.isfinite(acc.losses).all()


def test_history_and_progress_callback(rng):
    features, attributes = _data(rng, n=20)  # 20 examples, batch 8 -> 3 batches
    seen: list[ProgressInfo] = []
    model = _model(epochs=3)
    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=TYPES,
        progress_callback=seen.append,
        progress_bar=False,
    )
    assert [(p.epoch, p.batch) for p in seen] == [(e, b) for e in range(3) for b in range(3)]
    assert seen[-1].total_batches == 3 and seen[-1].total_epochs == 3
    assert [h["epoch"] for h in model.history] == [0, 1, 2]
    for h in model.history:
        optional = ("temporal_discriminator_loss", "envelope_discriminator_loss")
        assert all(np.isfinite(h[k]) for k in LOSS_NAMES if k not in optional)
        assert all(h[k] is None for k in optional)  # neither critic by default
        assert h["examples_per_s"] > 0 and h["wall_time_s"] > 0
    # Continuing training appends to the history.
    model.train_numpy(features, attributes=attributes, progress_bar=False)
    assert [h["epoch"] for h in model.history] == list(range(6))


def test_progress_callback_gets_the_losses_where_training_reads_them(rng):
    """`ProgressInfo.losses`: the epoch's mean losses so far at each sync point (every
    log_every steps and each epoch's end), None between, so a callback can report them
    without making training wait for the device."""
    features, attributes = _data(rng, n=40)  # batch 8 -> 5 batches per epoch
    seen: list[ProgressInfo] = []
    model = _model(epochs=2, log_every=2)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES,
                      progress_callback=seen.append, progress_bar=False)  # fmt: skip
    read = [p.step for p in seen if p.losses is not None]
    assert read == [1, 3, 4, 5, 7, 9]  # steps 2, 4 (log_every), 5 (epoch end), 6, 8, 10
    last = seen[-1].losses
    assert last["generator_loss"] == pytest.approx(model.history[-1]["generator_loss"])
    assert last["temporal_discriminator_loss"] is None  # no temporal critic


@pytest.mark.parametrize("n,batch_size", [(9, 8), (5, 64), (3, 2)])
def test_awkward_batch_sizes(rng, n, batch_size):
    """Last batch of one, and a batch larger than the dataset, must not break BatchNorm."""
    features, attributes = _data(rng, n=n)
    model = _model(batch_size=batch_size, epochs=1)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    assert np.isfinite(model.history[0]["generator_loss"])


def _adam_steps(optimizer: torch.optim.Optimizer) -> int:
    """How many times the optimizer has stepped (Adam counts per parameter)."""
    counts = {int(state["step"]) for state in optimizer.state.values()}
    assert len(counts) == 1, counts
    return counts.pop()


@pytest.mark.parametrize("critic_rounds,generator_rounds", [(1, 1), (3, 2)])
def test_rounds_are_optimizer_steps_per_batch(rng, critic_rounds, generator_rounds):
    features, attributes = _data(rng)  # 20 examples, batch 8 -> 3 batches per epoch
    model = _model(discriminator_rounds=critic_rounds, generator_rounds=generator_rounds)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    trainer = model.trainer
    assert trainer.steps_done == 2 * 3
    assert _adam_steps(trainer.critic_opt) == critic_rounds * 6
    assert _adam_steps(trainer.attribute_critic_opt) == critic_rounds * 6
    assert _adam_steps(trainer.generator_opt) == generator_rounds * 6


def test_epoch_losses_are_example_weighted_means_of_the_step_losses(rng, monkeypatch):
    """20 examples in batches of 7, 7 and 6, two generator rounds per batch: the epoch's
    generator loss weighs each batch's mean round loss by the batch's size."""
    import dgan.train.losses

    losses, sizes = [], []
    original = dgan.train.losses.generator_loss

    def spy(scores):
        loss = original(scores)
        losses.append(loss.item())
        return loss

    monkeypatch.setattr(dgan.train.losses, "generator_loss", spy)
    features, attributes = _data(rng)
    model = _model(epochs=1, generator_rounds=2, use_attribute_discriminator=False)
    encoded = model.preprocess(features, attributes=attributes)
    step = model.trainer.train_step
    model.trainer.train_step = lambda real, acc: (sizes.append(len(real)), step(real, acc))
    model.train_encoded(encoded, progress_bar=False)
    assert sizes == [7, 7, 6] and len(losses) == 6
    per_batch = np.array(losses).reshape(3, 2).mean(axis=1)
    expected = (per_batch * np.array(sizes)).sum() / 20
    assert model.history[0]["generator_loss"] == pytest.approx(expected, rel=1e-5)


def test_no_attribute_discriminator(rng):
    features, attributes = _data(rng)
    model = _model(use_attribute_discriminator=False)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    assert model.attribute_critic is None and model.trainer.attribute_critic_opt is None
    assert model.history[-1]["attribute_discriminator_loss"] is None
    assert np.isfinite(model.history[-1]["discriminator_loss"])


def test_critics_are_trainable_again_after_generator_step(rng):
    features, attributes = _data(rng)
    model = _model(epochs=1)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    assert all(p.requires_grad for p in model.critic.parameters())
    assert all(p.requires_grad for p in model.attribute_critic.parameters())


def test_the_weight_average_generates_with_the_live_batchnorm_statistics(rng):
    """Weights are averaged; BatchNorm's running statistics are copied from the live
    generator, so the average normalises its attribute MLPs as training left them."""
    features, attributes = _data(rng)
    model = _model(generator_ema_decay=0.9)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    live = dict(model.trainer.generator.named_buffers())
    average = dict(model.trainer.generator_ema.named_buffers())
    assert any("running_mean" in name for name in live)
    for name, buffer in live.items():
        assert torch.equal(average[name], buffer), name


@pytest.mark.gpu
def test_the_weight_average_keeps_its_lstm_weights_in_one_chunk_on_cuda(rng):
    """cuDNN runs an LSTM from one buffer of weights; the average is a deep copy, whose
    weights would each be a tensor of their own, copied together at every call."""
    features, attributes = _data(rng)
    model = _model(generator_ema_decay=0.9, cuda=True)
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    for generator in (model.trainer.generator, model.trainer.generator_ema):
        weights = generator.lstm._flat_weights
        assert len({w.untyped_storage().data_ptr() for w in weights}) == 1


# ----- the training budget ------------------------------------------------------------------
def test_a_budget_in_steps_ends_with_a_partial_epoch(rng):
    """20 examples in batches of 8: 3 steps per epoch; 7 steps are 2 epochs and 1 step."""
    features, attributes = _data(rng)
    seen: list[ProgressInfo] = []
    model = _model(training_steps=7)
    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=TYPES,
        progress_callback=seen.append,
        progress_bar=False,
    )
    assert [h["steps"] for h in model.history] == [3, 3, 1]
    assert model.trainer.steps_done == 7 == len(seen)
    assert [p.step for p in seen] == list(range(7)) and seen[-1].total_steps == 7
    assert seen[-1].frac_completed == 1.0  # the batch just done counts: all 7 are done
    assert [p.epoch for p in seen] == [0, 0, 0, 1, 1, 1, 2]


def test_a_time_budget_stops_at_the_first_batch_end_after_it(rng):
    features, attributes = _data(rng)
    model = _model(epochs=5, training_minutes=1e-6)  # 60 microseconds: less than a step
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    (record,) = model.history
    assert record["steps"] == 1 and record["time_budget_reached"] is True
    assert model.trainer.steps_done == 1
    assert record["discriminator_loss"] is not None  # the guard checked, the losses are read


def test_budget_fields_are_checked():
    with pytest.raises(dgan.errors.ParameterError, match="training_steps must be a positive"):
        _model(training_steps=0)
    with pytest.raises(dgan.errors.ParameterError, match="training_minutes must be None or a"):
        _model(training_minutes=-1.0)
