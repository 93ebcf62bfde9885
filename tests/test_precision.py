"""Mixed precision: policy resolution, the AMP gradient-penalty recipe, loss scaling,
clipping after unscale, the divergence guard, and precision state in saved models."""

import logging

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.config import FP16_MAX
from dgan.errors import ParameterError
from dgan.networks import Critic
from dgan.precision import (
    Precision,
    PrecisionPolicy,
    bf16_is_native,
    fallback_precision,
    lstm_runs_safely,
    resolve_precision,
    runs_in_hardware,
)
from dgan.train.batch import Accumulators, Batch
from dgan.train.losses import gradient_penalty
from tiny import tiny_config

CPU = torch.device("cpu")


def _config(**kw) -> DGANConfig:
    return tiny_config(**{"epochs": 2, "log_every": 2, **kw})


def _data(rng, n=24):
    features = rng.normal(size=(n, 6, 2))
    attributes = np.stack([rng.integers(0, 3, n), rng.normal(size=n)], axis=1)
    return features, attributes


def _train(rng, callback=None, **kw) -> DGAN:
    features, attributes = _data(rng)
    model = DGAN(_config(**kw))
    types = [OutputType.DISCRETE, OutputType.CONTINUOUS]
    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=types,
        progress_callback=callback,
        progress_bar=False,
    )
    return model


# ----- choosing a precision -------------------------------------------------------------
def test_resolution_and_gretel_switch():
    assert resolve_precision("auto", CPU) == Precision.FP32  # mixed precision rarely pays on CPU
    # nor on a GPU at dgan's usual sizes (docs/precision.md, the H100 run): fp32 there too
    assert resolve_precision("auto", torch.device("cuda")) == Precision.FP32
    assert resolve_precision("BF16", CPU) == Precision.BF16
    assert _config(mixed_precision_training=True).effective_precision == "fp16"
    assert _config(mixed_precision_training=True, precision="bf16").effective_precision == "bf16"
    with pytest.raises(ParameterError, match="precision must be one of"):
        _config(precision="fp8")
    with pytest.raises(ParameterError, match="'fp64'"):
        resolve_precision("fp64", CPU)


def test_impossible_request_is_an_error_not_a_silent_downgrade(monkeypatch):
    import dgan.precision as precision

    monkeypatch.setattr(precision, "_autocast_works", lambda device_type, dtype: False)
    with pytest.raises(ParameterError, match="not supported on this cpu device"):
        resolve_precision("fp16", CPU)


def test_fallback_chain_on_cpu():
    safer = Precision.BF16 if bf16_is_native(CPU) else Precision.FP32  # bf16 only if native
    assert fallback_precision(Precision.FP16, CPU) == safer
    assert fallback_precision(Precision.BF16, CPU) == Precision.FP32
    assert fallback_precision(Precision.FP32, CPU) is None


def test_config_validation_of_precision_fields():
    with pytest.raises(ParameterError) as info:
        _config(loss_scale=-1, backoff_factor=2, gradient_penalty_precision="fp16")
    message = str(info.value)
    assert "loss_scale" in message and "backoff_factor" in message
    assert "gradient_penalty_precision" in message


# ----- capability probes ----------------------------------------------------------------
@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_probes_answer_the_same_under_no_grad_and_inference_mode(mode):
    """The probes are cached for the process: asked first without gradients (generation
    in bf16 does that), they must still answer as with gradients, or later training would
    call bf16 unsupported and run its LSTM in fp32."""
    import dgan.precision as precision

    probes = (precision._autocast_works, precision.lstm_runs_safely)
    for probe in probes:
        probe.cache_clear()
    try:
        with mode():
            first = [probe("cpu", torch.bfloat16) for probe in probes]
        for probe in probes:
            probe.cache_clear()
        assert first == [probe("cpu", torch.bfloat16) for probe in probes]
        assert first[0] is True  # bf16 autocast runs on every CPU torch supports
    finally:
        for probe in probes:
            probe.cache_clear()


def test_bf16_generation_first_does_not_change_how_bf16_trains_later():
    import dgan.precision as precision

    model = _train(np.random.default_rng(0), epochs=1)
    precision._autocast_works.cache_clear()
    precision.lstm_runs_safely.cache_clear()
    expected = PrecisionPolicy(CPU, Precision.BF16).lstm_in_fp32
    precision._autocast_works.cache_clear()
    precision.lstm_runs_safely.cache_clear()
    with torch.no_grad():  # as users often generate: the first probe runs here
        model.generate_numpy(4, precision="bf16")
    trained = _train(np.random.default_rng(0), epochs=1, precision="bf16")
    assert trained.trainer.policy.name == "bf16"
    assert trained.generator.lstm_in_fp32 is expected


# ----- LSTM safety and speed ------------------------------------------------------------
@pytest.mark.parametrize("layers,state", [(1, False), (2, True)])
def test_even_input_lstm_is_the_same_lstm(layers, state):
    """A zero input and a zero weight column change nothing: outputs, final state and
    every weight's gradient are nn.LSTM's (fp32)."""
    from dgan.networks import even_input_lstm

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 6, num_layers=layers, batch_first=True)
    x = torch.randn(3, 4, 5)
    h0 = (torch.randn(layers, 3, 6), torch.randn(layers, 3, 6)) if state else None
    results = []
    for run in (lstm, lambda x, h: even_input_lstm(lstm, x, h)):
        lstm.zero_grad()
        out, (h, c) = run(x, h0)
        (out.sum() + h.sum() + 2 * c.sum()).backward()
        results.append([out, h, c] + [p.grad.clone() for p in lstm.parameters()])
    for mine, theirs in zip(*results, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)


def test_16_bit_policies_on_a_cpu_give_the_lstm_an_even_number_of_inputs(rng):
    """bf16 on a CPU pads an odd number of LSTM inputs (AMX's kernel), fp32 never; the
    generator's output is the same either way, and generating restores the setting."""
    assert PrecisionPolicy(CPU, Precision.BF16).lstm_even_input
    assert not PrecisionPolicy(CPU, Precision.FP32).lstm_even_input
    model = _train(rng, epochs=1, feature_noise_dim=9)
    generator = model.generator
    assert generator.lstm.input_size == 3 + 1 + 2 * 2 + 9  # odd: padded
    generator.eval()
    noise = model.sampler.noise(6)
    with torch.no_grad():
        plain = generator(*noise)[2]
        generator.lstm_even_input = True
        padded = generator(*noise)[2]
    generator.lstm_even_input = False
    torch.testing.assert_close(padded, plain, rtol=1e-5, atol=1e-6)
    model.generate_numpy(4, precision="bf16")
    assert generator.lstm_even_input is False


# ----- LSTM safety ----------------------------------------------------------------------
@pytest.mark.parametrize("safe", [True, False])
def test_lstm_runs_in_fp32_where_the_device_cannot_run_it_in_low_precision(monkeypatch, safe):
    import dgan.precision as precision

    monkeypatch.setattr(precision, "lstm_runs_safely", lambda device_type, dtype: safe)
    model = _train(np.random.default_rng(0), epochs=1)
    policy = PrecisionPolicy(CPU, Precision.BF16)
    assert policy.lstm_in_fp32 is (not safe)
    policy.configure(model.generator)
    seen = {}
    model.generator.lstm.register_forward_hook(lambda m, i, o: seen.update(dtype=o[0].dtype))
    with policy.autocast():
        attribute_noise, feature_noise = model.sampler.noise(4)
        if safe and not lstm_runs_safely("cpu", torch.bfloat16):
            pytest.skip("this CPU's oneDNN has no bf16 LSTM; the unsafe case covers it")
        model.generator(attribute_noise, feature_noise)
    assert seen["dtype"] == (torch.bfloat16 if safe else torch.float32)


# ----- gradient penalty -----------------------------------------------------------------
def _penalty_inputs():
    torch.manual_seed(0)
    critic = Critic(in_dim=3 + 4 * 5, num_layers=3, num_units=64)
    real = (torch.rand(32, 3), None, torch.rand(32, 4, 5))
    fake = (torch.rand(32, 3), None, torch.rand(32, 4, 5))
    alpha = torch.rand(32, 1)
    return critic, real, fake, alpha


def _autograd_path(critic):
    """The critic without its closed-form input gradient: the penalty double-backwards."""
    return lambda *parts: critic(*parts)


def _penalty_and_grads(policy, wrap=lambda critic: critic):
    critic, real, fake, alpha = _penalty_inputs()
    penalty = gradient_penalty(wrap(critic), real, fake, alpha, policy)
    params = list(critic.parameters())
    # The last layer's bias cannot change d(score)/d(input): its gradient may be unused.
    grads = torch.autograd.grad(penalty, params, allow_unused=True)
    return penalty.detach(), [
        torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=True)
    ]


@pytest.mark.parametrize("path", ["closed form", "autograd"])
@pytest.mark.parametrize("penalty_precision,rtol", [("autocast", 3e-2), ("fp32", 1e-5)])
@pytest.mark.parametrize("precision", [Precision.FP16, Precision.BF16])
def test_low_precision_penalty_matches_fp32(precision, penalty_precision, rtol, path):
    """Both ways to the penalty (the MLP critic's closed form, and autograd's double
    backward through the scaled-output recipe) give fp32's penalty and gradients."""
    wrap = _autograd_path if path == "autograd" else (lambda critic: critic)
    reference, reference_grads = _penalty_and_grads(PrecisionPolicy(CPU, Precision.FP32))
    policy = PrecisionPolicy(CPU, precision, gradient_penalty_precision=penalty_precision)
    if policy.critic_scaler.is_enabled():
        policy.critic_scaler.scale(torch.ones(()))  # materialise the 2**14 scale
    penalty, grads = _penalty_and_grads(policy, wrap)
    torch.testing.assert_close(penalty, reference, rtol=rtol, atol=1e-6)
    for g, ref in zip(grads, reference_grads, strict=True):
        torch.testing.assert_close(g.float(), ref, rtol=rtol * 3, atol=rtol * ref.abs().max())


def test_penalty_unscales_gradients_whatever_the_scale():
    values = []
    for scale in (1.0, 2.0**10, 2.0**14):
        policy = PrecisionPolicy(
            CPU, Precision.FP16, init_scale=scale, gradient_penalty_precision="autocast"
        )
        values.append(_penalty_and_grads(policy, _autograd_path)[0])
    torch.testing.assert_close(values[1], values[0], rtol=3e-2, atol=1e-6)
    torch.testing.assert_close(values[2], values[0], rtol=3e-2, atol=1e-6)


@pytest.mark.parametrize(
    "penalty_precision,dtype", [("autocast", torch.bfloat16), ("fp32", torch.float32)]
)
def test_closed_form_penalty_runs_its_products_in_the_penalty_precision(penalty_precision, dtype):
    """Under "autocast" the MLP critic's input gradient comes out of 16-bit products (the
    speed), while the penalty built from it is fp32 (the norm is taken in fp32)."""
    critic, real, fake, alpha = _penalty_inputs()
    seen = []
    closed_form = critic.input_gradient
    critic.input_gradient = lambda *parts: seen.append(closed_form(*parts)) or seen[-1]
    policy = PrecisionPolicy(CPU, Precision.BF16, gradient_penalty_precision=penalty_precision)
    penalty = gradient_penalty(critic, real, fake, alpha, policy)
    assert [g.dtype for g in seen] == [dtype]
    assert penalty.dtype == torch.float32


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_training_with_the_penalty_in_autocast_stays_finite(rng, precision):
    """Both penalty paths in one step: the MLP critics' closed form in 16 bits (the
    envelope critic's through its log spreads too) and the temporal critic's double
    backward under the AMP recipe; the features drawn on a carrier (its waves in fp32)."""
    model = _train(
        rng,
        precision=precision,
        gradient_penalty_precision="autocast",
        temporal_critic=True,
        envelope_critic=True,
        period_carrier=True,
    )
    assert all(h["precision"] == precision and not h["guard_events"] for h in model.history)
    losses = [h[k] for h in model.history for k in ("discriminator_loss", "gradient_penalty")]
    losses += [h["envelope_discriminator_loss"] for h in model.history]
    assert np.isfinite(losses).all()
    assert all(torch.isfinite(p).all() for p in model.generator.parameters())


# ----- loss scaling, skipped steps and clipping -------------------------------------------
def test_forced_overflow_skips_steps_and_backs_the_scale_off(rng):
    model = _train(rng, precision="fp16", init_scale=2.0**16)
    first = model.history[0]
    assert first["skipped_steps"] > 0
    assert first["critic_loss_scale"] < 2.0**16
    assert first["guard_events"] == []  # skipped steps are normal, not divergence
    assert all(torch.isfinite(p).all() for p in model.generator.parameters())


def test_static_scale_never_changes(rng):
    # fp16's largest value as a static scale, with learning rates that make the weights
    # and gradients large: steps overflow and are skipped (a dynamic scale would back off
    # after each); check that the trainer keeps the scale static. The guard would step in
    # if every step overflowed: keep it out of the way.
    model = _train(
        rng,
        precision="fp16",
        loss_scale=FP16_MAX,
        generator_learning_rate=0.5,
        discriminator_learning_rate=0.5,
        divergence_guard=False,
    )
    assert sum(h["skipped_steps"] for h in model.history) > 0
    assert {h["critic_loss_scale"] for h in model.history} == {FP16_MAX}
    assert {h["generator_loss_scale"] for h in model.history} == {FP16_MAX}


def test_clipping_uses_the_true_gradient_norm():
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.0)
    x = torch.randn(16, 8)
    norms = []
    for precision, scale in ((Precision.FP32, 1.0), (Precision.FP16, 2.0**8)):
        policy = PrecisionPolicy(CPU, precision, loss_scale=scale, max_grad_norm=0.05)
        with policy.autocast():
            loss = net(x).float().pow(2).mean()
        skipped = policy.backward_and_step(loss, policy.critic_scaler, [opt])
        assert not skipped
        norms.append(torch.cat([p.grad.flatten() for p in net.parameters()]).norm())
    # Clipped to the threshold in both: the scaled gradient (256x larger) was unscaled first.
    torch.testing.assert_close(norms[0], torch.tensor(0.05), rtol=1e-5, atol=0)
    torch.testing.assert_close(norms[1], torch.tensor(0.05), rtol=1e-3, atol=0)


@pytest.mark.parametrize("precision", [Precision.FP32, Precision.BF16, Precision.FP16])
def test_a_step_counts_as_skipped_only_when_it_is(precision):
    """Before: in fp32 and bf16 with max_grad_norm, a NaN gradient counted as a skipped
    step although the optimizer applied it (only fp16's loss scaler skips steps)."""
    net = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    policy = PrecisionPolicy(CPU, precision, max_grad_norm=1.0)
    loss = net(torch.ones(2, 4)).float().sum() * float("nan")  # NaN gradients
    before = net.weight.detach().clone()
    skipped = bool(policy.backward_and_step(loss, policy.critic_scaler, [opt]))
    applied = not torch.equal(net.weight.detach(), before)
    assert skipped == (precision == Precision.FP16) and applied != skipped


# ----- divergence guard -------------------------------------------------------------------
def _poison_at(step_to_poison: int, model_holder: list):
    calls = {"n": 0}

    def callback(info):
        calls["n"] += 1
        if calls["n"] == step_to_poison:
            with torch.no_grad():
                model_holder[0].generator.head.weight[0, 0] = float("nan")

    return callback


def _train_poisoned(rng, step, **kw):
    holder: list = []
    features, attributes = _data(rng)
    model = DGAN(_config(**kw))
    holder.append(model)
    model.train_numpy(
        features,
        attributes=attributes,
        progress_callback=_poison_at(step, holder),
        progress_bar=False,
    )
    return model


def test_injected_nan_rolls_back_and_falls_back_to_a_safer_precision(rng, caplog):
    with caplog.at_level(logging.WARNING, logger="dgan.train.trainer"):
        model = _train_poisoned(rng, step=3, precision="fp16", epochs=3)
    events = [e for h in model.history for e in h["guard_events"]]
    assert len(events) == 1
    assert events[0]["precision"] == "fp16"
    # Poisoned weights (test_guard.py poisons losses, whose weights stay finite).
    assert events[0]["reason"] == "non-finite weights"
    safer = fallback_precision(Precision.FP16, CPU).value  # bf16 where native, else fp32
    assert events[0]["action"] == f"rolled back and continued in {safer}"
    assert model.history[-1]["precision"] == safer
    assert all(torch.isfinite(p).all() for p in model.generator.parameters())
    assert all(np.isfinite(h["generator_loss"]) for h in model.history[1:])
    assert "Divergence at step" in caplog.text
    # Generation still works after recovery.
    _, series = model.generate_numpy(4)
    assert np.isfinite(np.stack(series)).all()


def test_divergence_in_fp32_stops_with_good_weights(rng):
    model = _train_poisoned(rng, step=3, precision="fp32", epochs=4)
    events = [e for h in model.history for e in h["guard_events"]]
    assert [e["action"] for e in events] == [
        "rolled back to the last good weights and stopped training"
    ]
    assert len(model.history) < 4 and model.history[-1]["stopped"]
    assert all(torch.isfinite(p).all() for p in model.generator.parameters())


def test_history_records_precision_fields(rng):
    model = _train(rng, precision="bf16")
    for h in model.history:
        assert h["precision"] == "bf16"
        assert h["critic_loss_scale"] is None and h["skipped_steps"] == 0
        assert h["peak_memory_bytes"] > 0


# ----- saved state and generation --------------------------------------------------------
def test_scaler_state_and_precision_survive_save_and_load(rng, tmp_path):
    model = _train(rng, precision="fp16", init_scale=2.0**16)
    scale = model.trainer.policy.critic_scaler.get_scale()
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.trainer.policy.name == "fp16"
    assert loaded.trainer.policy.critic_scaler.get_scale() == scale
    assert loaded.history == model.history


@pytest.mark.parametrize(
    "precision, dtype", [(None, torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)]
)
def test_generation_runs_under_the_requested_autocast(rng, precision, dtype):
    """The generator's output head computes in the requested dtype; the caller still
    gets float data, and the training policy is left as it was."""
    model = _train(rng, epochs=1)
    seen = []
    hook = model.generator.head.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    _, series = model.generate_numpy(5, precision=precision)
    hook.remove()
    assert seen and set(seen) == {dtype}
    values = np.stack(series)
    assert values.dtype == np.float64 and np.isfinite(values).all()
    assert model.trainer.policy.name == "fp32" and model.generator.lstm_in_fp32 is False
    assert model.generator.lstm_even_input is False


def test_a_load_continues_in_the_precision_the_guard_lowered_to(rng, tmp_path):
    model = _train_poisoned(rng, step=3, precision="fp16", epochs=3)
    safer = fallback_precision(Precision.FP16, CPU)  # bf16 where native, else fp32
    assert model.history[-1]["precision"] == safer.value and model.config.precision == "fp16"
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.trainer.policy.precision == safer
    assert not loaded.trainer.policy.critic_scaler.is_enabled()
    features, attributes = _data(rng)
    loaded.train_numpy(features, attributes=attributes, progress_bar=False)
    assert loaded.history[-1]["precision"] == safer.value


# ----- settings reach the policy ------------------------------------------------------------
def test_from_config_keeps_every_precision_setting():
    settings = dict(
        loss_scale=512.0,
        init_scale=2.0**9,
        growth_factor=3.0,
        backoff_factor=0.25,
        growth_interval=7,
        max_grad_norm=0.5,
        gradient_penalty_precision="autocast",
    )
    policy = PrecisionPolicy.from_config(_config(precision="fp16", **settings), CPU)
    assert policy.precision == Precision.FP16 and policy.max_grad_norm == 0.5
    assert {k: policy.settings[k] for k in settings} == settings
    assert policy.gradient_penalty_precision == "autocast"
    assert policy.critic_scaler.get_scale() == 512.0  # the static scale, not init_scale
    dynamic = PrecisionPolicy.from_config(
        _config(precision="fp16", **{**settings, "loss_scale": "dynamic"}), CPU
    )
    assert dynamic.generator_scaler.get_scale() == 2.0**9
    assert dynamic.critic_scaler.get_growth_interval() == 7
    assert dynamic.critic_scaler.get_backoff_factor() == 0.25
    assert dynamic.critic_scaler.get_growth_factor() == 3.0


def test_the_default_initial_loss_scale_is_2_to_the_14():
    """2**16, GradScaler's default, overflows the gradient penalty's fp16 gradients."""
    assert DGANConfig(max_sequence_len=4, sample_len=2).init_scale == 2.0**14
    assert PrecisionPolicy(CPU, Precision.FP16).critic_scaler.get_scale() == 2.0**14
    policy = PrecisionPolicy.from_config(_config(precision="fp16"), CPU)
    assert policy.critic_scaler.get_scale() == policy.generator_scaler.get_scale() == 2.0**14


def test_max_grad_norm_in_the_config_clips_every_training_step(rng, monkeypatch):
    limits = []
    clip = torch.nn.utils.clip_grad_norm_

    def spy(params, max_norm, *args, **kwargs):
        limits.append(max_norm)
        return clip(params, max_norm, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    model = _train(rng, epochs=1, max_grad_norm=0.25)
    steps = model.trainer.steps_done
    # Per step: the critic and attribute critic optimizers, then the generator's.
    assert steps == 3 and limits == [0.25] * (3 * steps)
    limits.clear()
    _train(rng, epochs=1)  # fp32 without clipping: nothing to unscale or clip
    assert limits == []


# ----- GPU --------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_cuda_mixed_precision_step_never_syncs(precision):
    rng = np.random.default_rng(0)
    features, attributes = _data(rng, n=256)
    model = DGAN(_config(cuda=True, precision=precision, epochs=1, batch_size=64))
    model.train_numpy(features, attributes=attributes, progress_bar=False)
    trainer = model.trainer
    batch = Batch.from_encoded(model.preprocess(features, attributes=attributes), model.device)
    acc = Accumulators(model.device)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            trainer.train_step(batch.head(64), acc)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert torch.isfinite(acc.losses).all()


@pytest.mark.gpu
def test_cuda_bf16_never_runs_the_lstm_in_fp16():
    """docs/design.md, decision 8: cuDNN runs the LSTM in fp16 under bf16 autocast, where
    no loss scaler protects its gradients; the policy must keep it out of fp16 (bf16 where
    it runs in bf16, else fp32). A forward hook sees the dtype the LSTM ran in."""
    model = _train(np.random.default_rng(0), epochs=1, cuda=True, precision="bf16")
    seen = {}
    model.generator.lstm.register_forward_hook(lambda m, i, o: seen.update(dtype=o[0].dtype))
    with model.trainer.policy.autocast():
        model.generator(*model.sampler.noise(4))
    assert seen["dtype"] in (torch.bfloat16, torch.float32)


# ----- CPUs with and without bf16 hardware --------------------------------------------------
@pytest.mark.parametrize(
    "capability,expected",
    [
        ({"amx_bf16": True, "avx512_bf16": True}, "amx_bf16"),
        ({"amx_bf16": False, "avx512_bf16": True}, "avx512_bf16"),
        ({"amx_bf16": False, "avx512_bf16": False, "avx2": True}, None),
    ],
)
def test_cpu_bf16_hardware_is_read_from_torch(monkeypatch, capability, expected):
    import dgan.precision as precision

    monkeypatch.setattr(torch._C._cpu, "_get_cpu_capability", lambda: capability)
    precision.cpu_bf16_hardware.cache_clear()
    try:
        assert precision.cpu_bf16_hardware() == expected
        assert precision.bf16_is_native(CPU) is (expected is not None)
        # fp16 falls back to bf16 only where bf16 is native
        after = precision.fallback_precision(Precision.FP16, CPU)
        assert after == (Precision.BF16 if expected else Precision.FP32)
        # "auto" stays fp32 on CPU: bf16 lost quality on Sines (docs/quality.md)
        assert resolve_precision("auto", CPU) == Precision.FP32
    finally:
        precision.cpu_bf16_hardware.cache_clear()


@pytest.mark.parametrize("native", [True, False])
def test_history_says_whether_16_bit_maths_ran_in_hardware(monkeypatch, rng, native):
    import dgan.precision as precision

    monkeypatch.setattr(precision, "cpu_bf16_hardware", lambda: "avx512_bf16" if native else None)
    monkeypatch.setattr(precision, "cpu_fp16_hardware", lambda: "avx512_fp16" if native else None)
    bf16 = _train(rng, precision="bf16", epochs=1)
    assert [h["in_hardware"] for h in bf16.history] == [native]
    assert _train(rng, precision="fp16", epochs=1).history[0]["in_hardware"] is native
    assert _train(rng, epochs=1).history[0]["in_hardware"] is None  # fp32: nothing to say


@pytest.mark.parametrize("native", [True, False])
def test_cpu_emulation_warning_only_where_emulated(monkeypatch, caplog, native):
    import dgan.precision as precision

    monkeypatch.setattr(precision, "cpu_bf16_hardware", lambda: "avx512_bf16" if native else None)
    precision._warn_cpu_emulation.cache_clear()
    with caplog.at_level(logging.WARNING, logger="dgan.precision"):
        resolve_precision("bf16", CPU)
    assert ("emulated" in caplog.text) is (not native)
    precision._warn_cpu_emulation.cache_clear()


@pytest.mark.parametrize(
    "capability,expected",
    [
        ({"amx_fp16": True, "avx512_fp16": True, "avx512_bf16": True}, "amx_fp16"),
        ({"amx_fp16": False, "avx512_fp16": True}, "avx512_fp16"),
        ({"amx_fp16": False, "avx512_fp16": False, "avx512_bf16": True}, None),  # this CPU
    ],
)
def test_fp16_counts_as_hardware_only_on_cpus_with_fp16_instructions(
    monkeypatch, caplog, capability, expected
):
    # Sapphire Rapids and later Xeons run fp16 products in hardware: no emulation warning
    # there, and the history and the plan say so; elsewhere fp16 is emulated.
    import dgan.precision as precision
    from dgan.precision import precision_and_why

    monkeypatch.setattr(torch._C._cpu, "_get_cpu_capability", lambda: capability)
    precision.cpu_fp16_hardware.cache_clear()
    precision._warn_cpu_emulation.cache_clear()
    try:
        assert precision.cpu_fp16_hardware() == expected
        assert runs_in_hardware(Precision.FP16, CPU) is (expected is not None)
        with caplog.at_level(logging.WARNING, logger="dgan.precision"):
            resolve_precision("fp16", CPU)
        warned = "this CPU has no fp16 matrix hardware (AMX-FP16 or AVX-512-FP16)" in caplog.text
        assert warned is (expected is None)
        _, why = precision_and_why(_config(precision="fp16"), CPU)
        assert ("emulated" in why) is (expected is None)
        assert (expected or "no fp16 hardware") in why
    finally:
        precision.cpu_fp16_hardware.cache_clear()
        precision._warn_cpu_emulation.cache_clear()
