"""Quality levers: gradient-penalty norm, generator weight average, temporal critic,
feature feedback, fakes shared by the critic and generator rounds (the settings chosen
from the data's size: tests/test_sizing.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.errors import ParameterError
from dgan.networks import Generator, TemporalCritic
from dgan.networks.build import envelope_window
from dgan.precision import Precision, PrecisionPolicy
from dgan.train.losses import gradient_penalty
from tiny import tiny_config

CPU = torch.device("cpu")
TYPES = [OutputType.DISCRETE, OutputType.CONTINUOUS]


def _data(rng, n=20):
    features = rng.normal(size=(n, 6, 2))
    attributes = np.stack([rng.integers(0, 3, n), rng.normal(size=n)], axis=1)
    return features, attributes


def _train(rng, **kw) -> DGAN:
    features, attributes = _data(rng)
    model = DGAN(tiny_config(**{"epochs": 2, **kw}))
    model.train_numpy(features, attributes=attributes, attribute_types=TYPES, progress_bar=False)
    return model


# ----- gradient-penalty norm ---------------------------------------------------------------
def _linear_critic(weights: torch.Tensor):
    """score(x) = x @ w per example: every example's input gradient is w."""
    return lambda x: x.flatten(1) @ weights[:, None]


@pytest.mark.parametrize("norm", ["example", "batch"])
def test_penalty_norm_follows_its_definition(norm):
    batch, weights = 4, torch.tensor([3.0, 4.0])  # |w| = 5 for every example
    real, fake = [torch.rand(batch, 2)], [torch.rand(batch, 2)]
    policy = PrecisionPolicy(CPU, Precision.FP32)
    penalty = gradient_penalty(
        _linear_critic(weights), real, fake, torch.rand(batch, 1), policy, norm
    )
    # per example: (5 - 1)^2; over the batch: (||stacked gradients|| - 1)^2 = (5 * 2 - 1)^2
    expected = (5.0 - 1) ** 2 if norm == "example" else (5.0 * batch**0.5 - 1) ** 2
    assert penalty.item() == pytest.approx(expected, rel=1e-5)


def test_batch_norm_penalty_is_a_config_choice(rng):
    model = _train(rng, gradient_penalty_norm="batch")
    assert np.isfinite(model.history[-1]["gradient_penalty"])
    with pytest.raises(ParameterError, match="gradient_penalty_norm must be 'example' or 'batch'"):
        tiny_config(gradient_penalty_norm="global")


# ----- generator weight average ----------------------------------------------------------
def test_weight_average_follows_its_ramped_decay(rng):
    model = _train(rng, generator_ema_decay=0.99, epochs=1, batch_size=64)  # one step
    live = dict(model.trainer.generator.named_parameters())
    average = dict(model.trainer.generator_ema.named_parameters())
    # After one step (t = 0) the decay is min(0.99, 1/10): 90% of the way to the weights.
    start = DGAN(model.config)  # same seed and data: the initial weights
    features, attributes = _data(np.random.default_rng(12345))
    start.preprocess(features, attributes=attributes, attribute_types=TYPES)
    assert any(not torch.equal(average[k], live[k]) for k in live)
    for k, initial in start.trainer.generator.named_parameters():
        torch.testing.assert_close(average[k], 0.1 * initial + 0.9 * live[k])


def test_generation_uses_the_weight_average(rng, tmp_path):
    model = _train(rng, generator_ema_decay=0.9)
    assert model.sampler.generator is model.trainer.generator_ema
    noise = model.attribute_noise_func(3), model.feature_noise_func(3)
    _, from_model = model.generate_numpy(attribute_noise=noise[0], feature_noise=noise[1])
    average = model.trainer.generator_ema
    # Different weights give different series: generation must follow the average's.
    with torch.no_grad():
        model.trainer.generator.eval()
        _, _, live = model.trainer.generator(*noise)
        average.eval()
        _, _, averaged = average(*noise)
    assert not torch.allclose(live, averaged)
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    saved = loaded.trainer.generator_ema.state_dict()
    for k, p in average.state_dict().items():
        assert torch.equal(p, saved[k]), k
    _, again = loaded.generate_numpy(attribute_noise=noise[0], feature_noise=noise[1])
    np.testing.assert_array_equal(np.stack(again), np.stack(from_model))


def test_without_decay_generation_uses_the_trained_generator(rng):
    model = _train(rng)
    assert model.trainer.generator_ema is None
    assert model.sampler.generator is model.trainer.generator


# ----- temporal critic ---------------------------------------------------------------------
def test_temporal_critic_trains_saves_and_shapes_the_generator(rng, tmp_path):
    model = _train(rng, temporal_critic=True, temporal_critic_num_units=8)
    assert isinstance(model.trainer.temporal_critic, TemporalCritic)
    assert all(np.isfinite(h["temporal_discriminator_loss"]) for h in model.history)
    assert all(p.requires_grad for p in model.trainer.temporal_critic.parameters())
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    for p, q in zip(
        model.trainer.temporal_critic.parameters(),
        loaded.trainer.temporal_critic.parameters(),
        strict=True,
    ):
        assert torch.equal(p, q)


def test_temporal_critic_gradient_reaches_the_generator(rng):
    """With the MLP critics' weight at zero, only the temporal critic moves the generator."""
    model = _train(rng, temporal_critic=True, temporal_critic_num_units=8, epochs=1)
    trainer = model.trainer
    trainer.generator.zero_grad()
    fake = trainer.fake_batch(8)
    trainer.temporal_critic(*fake.parts()).mean().backward()
    lstm_grads = [p.grad for p in trainer.generator.lstm.parameters()]
    assert all(g is not None and g.abs().sum() > 0 for g in lstm_grads)


def test_temporal_critic_reads_series_of_any_length():
    critic = TemporalCritic(feature_dim=2, attribute_dim=0, num_units=4)
    for length in (1, 2, 7, 50):
        assert critic(None, None, torch.zeros(3, length, 2)).shape == (3, 1)


# ----- feature feedback --------------------------------------------------------------------
def _generators(sample_len: int) -> tuple[Generator, Generator]:
    """A plain generator and a feedback one with the same weights, the feedback's input
    weights zero: the two must then compute the same function."""
    model = _train(np.random.default_rng(0), epochs=1, sample_len=sample_len)
    plain = model.trainer.generator
    fed = _train(np.random.default_rng(0), epochs=1, sample_len=sample_len, feature_feedback=True)
    feedback = fed.trainer.generator
    state = plain.state_dict()
    width = state["lstm.weight_ih_l0"].shape[1]
    with torch.no_grad():
        own = feedback.lstm.weight_ih_l0
        state["lstm.weight_ih_l0"] = torch.cat([state["lstm.weight_ih_l0"], own[:, width:] * 0], 1)
    feedback.load_state_dict(state)
    return plain.eval(), feedback.eval()


@pytest.mark.parametrize("sample_len", [1, 2, 3])
def test_feedback_with_zero_feedback_weights_is_the_plain_generator(sample_len):
    plain, feedback = _generators(sample_len)
    assert feedback.lstm.input_size == plain.lstm.input_size + sample_len * plain.feature_dim
    noise = (torch.randn(5, 10), torch.randn(5, 6 // sample_len, 10))
    with torch.no_grad():
        for a, b in zip(plain(*noise), feedback(*noise), strict=True):
            assert torch.allclose(a, b, atol=1e-6)


def test_feedback_carries_each_steps_values_into_the_next():
    """With the LSTM's own memory cut (no recurrent weights, forget gate shut), the second
    group of steps depends on the first group's noise only through the fed-back values,
    and the gradient flows back through them."""
    plain, feedback = _generators(2)
    with torch.no_grad():
        feedback.lstm.weight_ih_l0[:, -2 * feedback.feature_dim :].normal_()
    for generator, linked in ((feedback, True), (plain, False)):
        units = generator.lstm.hidden_size
        with torch.no_grad():
            generator.lstm.weight_hh_l0.zero_()
            generator.lstm.bias_ih_l0[units : 2 * units] = -1e4  # forget gate: 0
        feature_noise = torch.randn(5, 3, 10, requires_grad=True)
        features = generator(torch.randn(5, 10), feature_noise)[2]
        features[:, 2:4].sum().backward()  # the second group of steps
        reached = feature_noise.grad[:, 0].abs().sum() > 0  # from the first step's noise
        assert bool(reached) == linked


def test_feedback_model_trains_saves_and_loads(rng, tmp_path):
    model = _train(rng, feature_feedback=True)
    assert all(np.isfinite(h["generator_loss"]) for h in model.history)
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.config.feature_feedback
    first = model.generate_numpy(
        attribute_noise=torch.zeros(3, 10), feature_noise=torch.zeros(3, 2, 10)
    )
    again = loaded.generate_numpy(
        attribute_noise=torch.zeros(3, 10), feature_noise=torch.zeros(3, 2, 10)
    )
    np.testing.assert_array_equal(first[1][0], again[1][0])


def test_lever_fields_are_checked():
    with pytest.raises(ParameterError) as error:
        DGANConfig(
            max_sequence_len=4,
            sample_len=2,
            generator_ema_decay=1.5,
            temporal_critic="yes",
            temporal_critic_num_units=0,
        )
    message = str(error.value)
    assert "generator_ema_decay" in message and "temporal_critic must be True or False" in message
    assert "temporal_critic_num_units" in message


# ----- one generator pass per batch -------------------------------------------------------
def _step_and_watch(reuse: bool, **kw) -> tuple[int, list[torch.Tensor]]:
    """One training step on a tiny model: how often the generator ran, and the features
    of every batch the main critic scored (the penalty's closed form is not a forward)."""
    from dgan.train.batch import Accumulators, Batch

    features, attributes = _data(np.random.default_rng(0), n=8)
    model = DGAN(tiny_config(reuse_fakes=reuse, **kw))
    encoded = model.preprocess(features, attributes=attributes, attribute_types=TYPES)
    trainer, real = model.trainer, Batch.from_encoded(encoded, CPU)
    generated, scored = [], []
    trainer.generator.register_forward_hook(lambda *_: generated.append(1))
    trainer.critic.register_forward_hook(lambda m, parts, out: scored.append(parts[2].detach()))
    trainer.train_step(real, Accumulators(CPU))
    return len(generated), scored


def test_reused_fakes_are_generated_once_and_scored_by_both_rounds():
    runs, scored = _step_and_watch(reuse=True)
    assert runs == 1
    paired, generator_round = scored  # the critic round scores [real; fake] in one pass
    n = len(generator_round)
    torch.testing.assert_close(paired[n:], generator_round, rtol=0, atol=0)
    fresh_runs, (fresh_paired, fresh_round) = _step_and_watch(reuse=False)
    assert fresh_runs == 2 and not torch.equal(fresh_paired[n:], fresh_round)


def test_later_rounds_generate_afresh():
    runs, _ = _step_and_watch(reuse=True, discriminator_rounds=2, generator_rounds=2)
    assert runs == 2  # shared by both critic rounds and the first generator round
    assert _step_and_watch(reuse=False, discriminator_rounds=2, generator_rounds=2)[0] == 4


def test_reused_fakes_train_the_generator_and_only_the_generator_round_moves_it(rng):
    from dgan.train.batch import Accumulators, Batch

    features, attributes = _data(rng, n=8)
    model = DGAN(tiny_config(reuse_fakes=True))
    encoded = model.preprocess(features, attributes=attributes, attribute_types=TYPES)
    trainer, real = model.trainer, Batch.from_encoded(encoded, CPU)
    before = [p.detach().clone() for p in trainer.generator.parameters()]
    fake = trainer.fake_batch(len(real))  # with the generator's graph
    trainer.critic_step(real, Accumulators(CPU), weight=1.0, fake=fake)
    unchanged = all(
        torch.equal(b, p) for b, p in zip(before, trainer.generator.parameters(), strict=True)
    )
    assert unchanged and all(
        p.grad is None or not p.grad.any() for p in trainer.generator.parameters()
    )
    trainer.generator_step(len(real), Accumulators(CPU), weight=1.0, fake=fake)
    moved = [
        not torch.equal(b, p) for b, p in zip(before, trainer.generator.parameters(), strict=True)
    ]
    assert any(moved)


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
def test_reused_fakes_train_in_every_precision(rng, precision):
    model = _train(rng, reuse_fakes=True, precision=precision, discriminator_rounds=2)
    last = model.history[-1]
    assert last["precision"] == precision
    assert np.isfinite([last["discriminator_loss"], last["generator_loss"]]).all()


# ----- closed-form penalty of the MLP critic ----------------------------------------------
@pytest.mark.parametrize(
    "spectrum,projected,changes",
    [
        (False, None, False),
        (True, None, False),
        (False, [0, 2], False),
        (True, [0, 2], False),
        (False, None, True),
        (True, [0, 2], True),
    ],
    ids=["mlp", "spectrum", "projection", "both", "changes", "all"],
)
@pytest.mark.parametrize("norm", ["example", "batch"])
def test_closed_form_penalty_equals_autograds(norm, spectrum, projected, changes):
    """The MLP critic's explicit input gradient gives autograd's penalty and gradients,
    with and without the spectrum and the sorted changes (whose gradients are carried
    back to the series)."""
    from dgan.networks import Critic

    torch.manual_seed(0)
    in_dim = 3 + 4 * 5 + (3 * 5 if spectrum else 0)  # 4 steps: 3 frequencies a feature
    in_dim += 3 * 5 if changes else 0  # and 3 changes
    critic = Critic(in_dim, 3, 32, spectrum=spectrum, projected=projected, changes=changes)
    real = (torch.rand(16, 3), None, torch.rand(16, 4, 5))
    fake = (torch.rand(16, 3), None, torch.rand(16, 4, 5))
    alpha = torch.rand(16, 1)
    policy = PrecisionPolicy(CPU, Precision.FP32)

    def penalty_and_grads(critic_like):
        penalty = gradient_penalty(critic_like, real, fake, alpha, policy, norm)
        grads = torch.autograd.grad(penalty, list(critic.parameters()), allow_unused=True)
        params = critic.parameters()
        return penalty, [
            torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=False)
        ]

    explicit, explicit_grads = penalty_and_grads(critic)
    hidden = lambda *parts: critic(*parts)  # noqa: E731 -- no input_gradient: autograd's path
    auto, auto_grads = penalty_and_grads(hidden)
    torch.testing.assert_close(explicit, auto, rtol=1e-5, atol=1e-6)
    for e, a in zip(explicit_grads, auto_grads, strict=True):
        torch.testing.assert_close(e, a, rtol=1e-4, atol=1e-6)


def test_gretel_config_undoes_dgans_choices():
    config = DGANConfig.gretel(max_sequence_len=4, sample_len=2, epochs=3)
    assert config.gradient_penalty_norm == "batch" and config.generator_ema_decay is None
    assert config.reuse_fakes  # gretel generates once per batch
    assert not config.temporal_critic and config.init_scale == 2.0**16 and config.epochs == 3
    # every field gretel has keeps gretel's default
    assert config.batch_size == 1024 and config.generator_learning_rate == 0.001


def test_large_data_recipe_sets_its_fields_and_yours_win():
    config = DGANConfig.for_large_data(max_sequence_len=4, sample_len=2, batch_size=64)
    assert config.batch_size == 64  # the caller's choice over the recipe's 128
    assert config.generator_ema_decay == 0.999 and config.feature_feedback
    rates = (
        config.generator_learning_rate,
        config.discriminator_learning_rate,
        config.attribute_discriminator_learning_rate,
    )
    assert rates == (1e-4, 1e-4, 1e-4)
    with pytest.raises(ParameterError, match="batch_size"):
        DGANConfig.for_large_data(max_sequence_len=4, sample_len=2, batch_size=0)


# ----- spectral and projection critics ---------------------------------------------------
def test_spectral_projection_critic_reads_the_classes_and_spectrum_and_survives_a_save(
    rng, tmp_path
):
    """The embedding reads exactly the discrete attribute's one-hot columns (not the
    continuous attribute's), the first layer the spectrum's columns too, and a saved model
    keeps both (resume goes on training them)."""
    model = _train(rng, projection_critic=True, spectral_critic=True)
    config, encoder, critic = model.config, model.encoder, model.critic
    attribute = encoder.attribute_slices[0]  # the discrete attribute: 3 categories
    assert critic.projected.tolist() == list(range(attribute.start, attribute.start + 3))
    series = config.max_sequence_len * encoder.feature_dim
    spectrum = (config.max_sequence_len // 2 + 1) * encoder.feature_dim
    attributes = encoder.attribute_dim + encoder.additional_dim
    assert critic.net[0].in_features == attributes + series + spectrum
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    for name, weight in model.critic.state_dict().items():
        torch.testing.assert_close(loaded.critic.state_dict()[name], weight, rtol=0, atol=0)


def test_change_critic_reads_the_sorted_changes_and_survives_a_save(rng, tmp_path):
    """The first layer reads (T - 1) columns a feature after the spectrum's, a jump moved
    to another step leaves them as they were, and a saved model keeps the critic."""
    model = _train(rng, change_critic=True, spectral_critic=True)
    config, encoder, critic = model.config, model.encoder, model.critic
    T, F = config.max_sequence_len, encoder.feature_dim
    attributes = encoder.attribute_dim + encoder.additional_dim
    assert (
        critic.changes
        and critic.net[0].in_features == attributes + T * F + (T // 2 + 1) * F + (T - 1) * F
    )
    early, late = torch.zeros(2, T, F), torch.zeros(2, T, F)
    early[:, 1:], late[:, T - 1 :] = 1.0, 1.0  # the same jump at another step
    a = torch.zeros(2, attributes)
    (early_changes, late_changes) = (critic._inputs((a, None, x))[-1] for x in (early, late))
    torch.testing.assert_close(early_changes, late_changes, rtol=0, atol=0)
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.critic.changes
    for name, weight in model.critic.state_dict().items():
        torch.testing.assert_close(loaded.critic.state_dict()[name], weight, rtol=0, atol=0)


def test_envelope_critic_reads_the_log_spreads_trains_and_survives_a_save(rng, tmp_path):
    """The envelope critic reads the attributes and T // width log spreads a feature, no
    more: the same values reordered within a window score the same, a swell in one
    window does not; its closed-form input gradient is autograd's; its loss is in the
    history; a saved model keeps it and resumes training it."""
    model = _train(rng, envelope_critic=True)
    config, encoder = model.config, model.encoder
    critic = model.trainer.envelope_critic
    T, F, width = config.max_sequence_len, encoder.feature_dim, critic.width
    attributes = encoder.attribute_dim + encoder.additional_dim
    assert width == envelope_window(config.sample_len)
    assert critic.critic.net[0].in_features == attributes + T // width * F
    a, x = torch.randn(4, attributes), torch.randn(4, T, F)
    shuffled, swelled = x.clone(), x.clone()
    shuffled[:, :width] = x[:, :width].flip(1)  # the first window's values, reordered
    swelled[:, :width] *= 3
    with torch.no_grad():
        scores = [critic(a, None, s) for s in (x, shuffled, swelled)]
    torch.testing.assert_close(scores[1], scores[0])
    assert not torch.allclose(scores[2], scores[0])
    xg = x.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(critic(a, None, xg).sum(), xg)
    closed = critic.input_gradient(a, None, x)
    assert closed.shape == (4, attributes + T * F)
    torch.testing.assert_close(closed[:, attributes:], auto.flatten(1), atol=1e-5, rtol=1e-4)
    assert all(np.isfinite(h["envelope_discriminator_loss"]) for h in model.history)
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    for name, weight in critic.state_dict().items():
        kept = loaded.trainer.envelope_critic.state_dict()[name]
        torch.testing.assert_close(kept, weight, rtol=0, atol=0)
    features, attributes_ = _data(rng)
    loaded.train_numpy(features, attributes=attributes_, attribute_types=TYPES,
                       progress_bar=False)  # fmt: skip
    assert np.isfinite(loaded.history[-1]["envelope_discriminator_loss"])


def test_projection_critic_without_hidden_layers_projects_onto_its_input():
    from dgan.networks import Critic

    critic = Critic(in_dim=5, num_layers=0, num_units=8, projected=[0, 1])
    x = torch.randn(4, 5, requires_grad=True)
    (auto,) = torch.autograd.grad(critic(x).sum(), x)
    torch.testing.assert_close(critic.input_gradient(x.detach()), auto)


def test_projection_critic_without_discrete_attributes_is_the_mlp_critic(rng):
    model = DGAN(tiny_config(epochs=1, projection_critic=True))
    model.train_numpy(rng.normal(size=(20, 6, 2)), progress_bar=False)
    assert model.critic.projection is None


# ----- seams bridged ------------------------------------------------------------------------
def _seamed_generators(feedback: bool, sample_len: int = 5, width: int = 2):
    """Two generators with the same weights, the second bridging its seams over ``width``
    values: 4 LSTM steps of ``sample_len`` values of a tanh column, a sigmoid column and a
    two-way softmax."""
    from dgan.encoding.variables import OutputSlice

    def build(bridge: bool) -> Generator:
        torch.manual_seed(0)
        generator = Generator(
            attribute_slices=None, additional_slices=None,
            feature_slices=[OutputSlice(0, 1, "tanh"), OutputSlice(1, 1, "sigmoid"),
                            OutputSlice(2, 2, "softmax")],
            max_sequence_len=4 * sample_len, sample_len=sample_len, attribute_noise_dim=3,
            feature_noise_dim=3, attribute_num_layers=1, attribute_num_units=8,
            feature_num_layers=1, feature_num_units=8, forget_bias=True,
            generation_flag_column=None, feature_feedback=feedback, bridge_seams=bridge,
            bridge_width=width,
        )  # fmt: skip
        with torch.no_grad():  # away from saturation, where logits are read back exactly
            generator.head.weight.mul_(0.2)
        return generator.eval()

    return build(False), build(True)


@pytest.mark.parametrize("feedback", [False, True])
@pytest.mark.parametrize("sample_len, width", [(5, 2), (9, 4)])
def test_bridged_seams_continue_the_step_before(feedback, sample_len, width):
    """Each step's first logits continue the line through the step before's last ``width``
    (at 2: the change across each seam is the step before's last change); each step's last
    ``width`` values and the discrete columns stay as generated; no saved tensor is added.
    The step's value 0 sets nothing: changing it changes only itself."""
    from dgan.networks.generator import line_reach

    plain, bridged = _seamed_generators(feedback, sample_len, width)
    assert plain.state_dict().keys() == bridged.state_dict().keys()
    noise = (torch.randn(6, 3), torch.randn(6, 4, 3))
    with torch.no_grad():
        a, b = plain(*noise)[2], bridged(*noise)[2]

    def logits(x):  # the continuous columns before their activations
        return torch.stack([torch.atanh(x[..., 0]), torch.logit(x[..., 1])], dim=-1).double()

    reach, S = line_reach(width).double(), sample_len
    for features, joined in ((b, True), (a, False)):
        steps = logits(features).unflatten(1, (4, S))  # (B, 4, S, 2)
        continued = torch.einsum("bksf,s->bkf", steps[:, :-1, -width:], reach)
        assert bool(torch.allclose(steps[:, 1:, 0], continued, atol=1e-4)) == joined
        if width == 2:  # the same as: the change across a seam is the one before it
            change = logits(features).diff(dim=1)  # seams at changes S-1, 2S-1, 3S-1
            across, before = change[:, S - 1 :: S], change[:, S - 2 : -1 : S]
            assert bool(torch.allclose(across, before, atol=1e-4)) == joined
    torch.testing.assert_close(b[:, :S], a[:, :S])  # the first step has nothing to join
    if not feedback:  # the same LSTM outputs: only the bridge differs
        ends = [i for i in range(4 * S) if i % S >= S - width]  # each step's last values
        torch.testing.assert_close(b[:, ends], a[:, ends])
        torch.testing.assert_close(b[..., 2:], a[..., 2:])  # the softmax as generated
        with torch.no_grad():
            bridged.head.bias[0] += 1.0  # value 0 of every step, the tanh column
            moved = bridged(*noise)[2]
        assert not torch.equal(moved[:, 0, 0], b[:, 0, 0])  # the first step's own value 0
        torch.testing.assert_close(moved[:, S:], b[:, S:])  # the bridged steps: no change


def test_bridged_model_trains_saves_and_generates_the_same(rng, tmp_path):
    model = _train(rng, bridge_seams=True)
    assert model.trainer.generator.bridge is not None
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.config.bridge_seams and loaded.trainer.generator.bridge is not None
    noise = {"attribute_noise": torch.zeros(3, 10), "feature_noise": torch.randn(3, 2, 10)}
    np.testing.assert_array_equal(
        model.generate_numpy(**noise)[1][0], loaded.generate_numpy(**noise)[1][0]
    )
    for short in (1, 2):  # under 3 values a step: no start of its own to anchor on
        assert _train(rng, bridge_seams=True, sample_len=short).trainer.generator.bridge is None
    # a width past the step is cut to the values it has; files from before the field
    # bridged over 2 values, which its default keeps
    cut = _train(rng, bridge_seams=True, bridge_width=9)  # 3 values a step
    assert cut.trainer.generator.reach.shape == (2,)
    wide = _train(rng, bridge_seams=True, bridge_width=3, sample_len=6)  # one step of 6
    assert DGAN.load(wide.save(tmp_path / "w.dgan")).trainer.generator.reach.shape == (3,)
    old = {k: v for k, v in model.config.to_json_dict().items() if k != "bridge_width"}
    assert DGANConfig.from_json_dict(old).bridge_width == 2
