"""Differential privacy (dgan.privacy, docs/privacy.md): per-example clipping, the noise,
Poisson sampling, the refusal of data-derived bounds, and (with Opacus) the accounting.

The tests before the Opacus section import no Opacus: they run wherever dgan does.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from tests.tiny import tiny_config

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.periods import HARMONICS
from dgan.errors import ParameterError
from dgan.networks import Critic, EnvelopeCritic, TemporalCritic
from dgan.precision import Precision, PrecisionPolicy
from dgan.privacy.accounting import INSTALL, opacus_accounting
from dgan.privacy.critics import CriticTerm, PrivateTraining, pair_loss
from dgan.privacy.gradients import clip_and_sum, per_example_gradients
from dgan.privacy.sampling import PoissonBatches
from dgan.storage.format import read_model_file
from dgan.train import losses

FEATURES, ATTRIBUTES, T = 2, 1, 6


def _critics() -> list[CriticTerm]:
    torch.manual_seed(0)
    spectrum = (T // 2 + 1) * FEATURES  # a spectral critic beside a plain MLP one
    critic = Critic(ATTRIBUTES + T * FEATURES + spectrum, num_layers=2, num_units=16, spectrum=True)
    attribute = Critic(ATTRIBUTES, num_layers=2, num_units=16)
    temporal = TemporalCritic(FEATURES, ATTRIBUTES, num_units=8)
    envelope = EnvelopeCritic(ATTRIBUTES, FEATURES, T, width=2, num_layers=2, num_units=8)
    return [
        CriticTerm("critic", critic, 10.0),
        CriticTerm("attribute_critic", attribute, 5.0, reads=2),
        CriticTerm("temporal_critic", temporal, 10.0),
        CriticTerm("envelope_critic", envelope, 10.0),
    ]


def _pairs(k: int):
    g = torch.Generator().manual_seed(1)
    real = [torch.rand(k, ATTRIBUTES, generator=g), None, torch.rand(k, T, FEATURES, generator=g)]
    fake = [torch.rand(k, ATTRIBUTES, generator=g), None, torch.rand(k, T, FEATURES, generator=g)]
    return real, fake, torch.rand(k, 1, generator=g)


def _per_example(terms, real, fake, alpha):
    """Per-example gradients of the private loss over all critics (flattened names)."""
    params = {f"{t.name}/{k}": v.detach() for t in terms for k, v in t.critic.named_parameters()}

    def loss(flat, a, x, fa, fx, al):
        grouped = {t.name: {} for t in terms}
        for key, value in flat.items():
            name, k = key.split("/", 1)
            grouped[name][k] = value
        one = [a.unsqueeze(0), None, x.unsqueeze(0)]
        other = [fa.unsqueeze(0), None, fx.unsqueeze(0)]
        return pair_loss(terms, grouped, one, other, al.unsqueeze(0))

    examples = [real[0], real[2], fake[0], fake[2], alpha]
    return per_example_gradients(loss, params, examples)


def test_per_example_gradient_is_the_critic_loss_gradient_of_that_example_alone():
    """vmap(grad) of the private loss equals autograd of the non-private training losses
    (Wasserstein term + penalty, `dgan.train.losses`) on a batch of that one example."""
    terms = _critics()
    real, fake, alpha = _pairs(3)
    per_example = _per_example(terms, real, fake, alpha)
    policy = PrecisionPolicy(torch.device("cpu"), Precision.FP32)
    i = 1
    one_real = [None if t is None else t[i : i + 1] for t in real]
    one_fake = [None if t is None else t[i : i + 1] for t in fake]
    total = 0.0
    for t in terms:
        r, f = one_real[: t.reads], one_fake[: t.reads]
        real_score, fake_score = losses.paired_scores(t.critic, r, f)
        penalty = losses.gradient_penalty(t.critic, r, f, alpha[i : i + 1], policy)
        total = total + losses.critic_loss(real_score, fake_score) + t.penalty_coef * penalty
    total.backward()
    for t in terms:
        for k, p in t.critic.named_parameters():
            torch.testing.assert_close(
                per_example[f"{t.name}/{k}"][i], p.grad, atol=1e-5, rtol=1e-4
            )


def test_every_examples_clipped_gradient_norm_is_within_the_bound():
    terms = _critics()
    gradients = _per_example(terms, *_pairs(16))
    norms = torch.stack([g.flatten(1).pow(2).sum(1) for g in gradients.values()]).sum(0).sqrt()
    bound = float(norms.median())  # half of the examples must be scaled down
    assert (norms > bound).sum() >= 7
    total = None
    for i in range(16):
        one = {name: g[i : i + 1] for name, g in gradients.items()}
        clipped, _ = clip_and_sum(one, bound)
        norm = math.sqrt(sum(float(c.pow(2).sum()) for c in clipped.values()))
        assert norm <= bound * (1 + 1e-5)
        if norms[i] <= bound:  # examples within the bound are left as they are
            assert all(torch.allclose(clipped[n], one[n][0]) for n in one)
        total = clipped if total is None else {n: total[n] + clipped[n] for n in total}
    summed, scaled = clip_and_sum(gradients, bound)
    assert int(scaled) == int((norms > bound).sum())
    for name in summed:  # the batch's sum is the sum of the clipped examples
        torch.testing.assert_close(summed[name], total[name], atol=1e-5, rtol=1e-5)


def test_a_non_finite_example_gradient_counts_as_zero():
    gradients = {"w": torch.tensor([[float("nan"), 1.0], [0.3, 0.4]])}
    summed, _ = clip_and_sum(gradients, bound=1.0)
    torch.testing.assert_close(summed["w"], torch.tensor([0.3, 0.4]))


def _private(noise_multiplier: float, rounds: int = 1) -> PrivateTraining:
    config = tiny_config(dp_epsilon=1.0, dp_delta=1e-5, discriminator_rounds=rounds)
    private = PrivateTraining(config, torch.device("cpu"))
    private.accountant.noise_multiplier = noise_multiplier  # as `begin` plans it
    private.batches = PoissonBatches(1000, 0.05, *private.sampling_rngs)
    return private


@pytest.mark.parametrize("rounds", [1, 4])
def test_noise_std_is_the_noise_multiplier_times_the_bound_over_the_expected_batch(rounds):
    """With real == fake and no penalty every example's gradient is exactly zero, so the
    critic's gradient is the noise alone: std sigma x bound x sqrt(rounds) / (q n)."""
    critic = Critic(40, num_layers=2, num_units=200)
    private = _private(noise_multiplier=1.7, rounds=rounds)
    private.bound = 0.5
    real = [None, None, torch.rand(7, 20, 2)]
    optimizer = torch.optim.SGD(critic.parameters(), lr=0.0)
    terms = [CriticTerm("critic", critic, penalty_coef=0.0)]
    private.critic_round(terms, [optimizer], real, real, torch.rand(7, 1))
    grads = torch.cat([p.grad.flatten() for p in critic.parameters()])
    expected = 1.7 * 0.5 * math.sqrt(rounds) / (0.05 * 1000)
    assert grads.numel() > 40_000
    assert abs(float(grads.std()) / expected - 1) < 0.02
    assert abs(float(grads.mean())) < 0.02 * expected


def test_noise_is_the_same_on_every_process_that_shares_the_generators():
    """Under torchrun every process gets rank 0's secret generators, so all add the same
    noise: once for the whole batch."""
    a, b = _private(1.0), _private(1.0)
    for mine, theirs in zip(a.generators, b.generators, strict=True):
        mine.set_state(theirs.get_state())
    critics = [Critic(12, num_layers=1, num_units=8) for _ in range(2)]
    critics[1].load_state_dict(critics[0].state_dict())
    real = [None, None, torch.rand(3, 6, 2)]
    for private, critic in zip((a, b), critics, strict=True):
        optimizer = torch.optim.SGD(critic.parameters(), lr=0.0)
        private.critic_round(
            [CriticTerm("critic", critic, 0.0)], [optimizer], real, real, torch.rand(3, 1)
        )
    for p, q in zip(critics[0].parameters(), critics[1].parameters(), strict=True):
        assert torch.equal(p.grad, q.grad)


def test_poisson_sampling_includes_each_example_independently_at_the_rate():
    n, rate, draws = 50, 0.2, 4000
    batches = PoissonBatches(
        n, rate, torch.Generator().manual_seed(0), torch.Generator().manual_seed(1)
    )
    counts = torch.zeros(n)
    sizes = []
    for _ in range(draws):
        index = batches.draw()
        assert len(set(index.tolist())) == len(index)  # no example twice in a batch
        counts[index] += 1
        sizes.append(len(index))
    sizes = np.array(sizes)
    # Each example in a fraction `rate` of batches; sizes Binomial(n, rate).
    assert abs(float(counts.mean()) / draws - rate) < 0.005
    assert float((counts / draws - rate).abs().max()) < 0.04
    assert abs(sizes.mean() - n * rate) < 0.15
    assert abs(sizes.var() - n * rate * (1 - rate)) < 0.8


# ----- refusing what the data would decide ------------------------------------------------


def _series(n: int = 64) -> np.ndarray:
    return np.random.default_rng(0).random((n, T, FEATURES))


def _dp_config(**overrides) -> DGANConfig:
    public = {"feature 0": [0, 1], "feature 1": [0, 1]}
    return tiny_config(dp_epsilon=8.0, public_values=public, **overrides)


def test_a_private_run_refuses_ranges_and_categories_from_the_data():
    attributes = np.random.default_rng(0).integers(0, 3, (64, 1))
    config = tiny_config(dp_epsilon=8.0, public_values={"feature 0": [0, 1]})
    with pytest.raises(ParameterError) as info:
        DGAN(config).train_numpy(
            _series(), attributes=attributes, attribute_types=[OutputType.DISCRETE]
        )
    message = str(info.value)
    assert "'feature 1' has no public values" in message
    assert "public_values={'feature 1': [low, high]}" in message
    assert "public_values={'attribute 0': [every category]}" in message


def test_a_private_run_refuses_the_size_rule_and_a_time_grid_from_the_data():
    config = DGANConfig(max_sequence_len=T, sample_len=3, cuda=False, dp_epsilon=4.0)
    with pytest.raises(ParameterError, match="give batch_size and training_steps"):
        DGAN(config).train_numpy(_series())
    df = pd.DataFrame({"id": np.repeat(np.arange(20), T), "day": np.tile(np.arange(T), 20)})
    df["x"] = np.random.default_rng(0).random(len(df))
    long = tiny_config(dp_epsilon=4.0, public_values={"x": [0, 1]})
    with pytest.raises(ParameterError, match=r"public_values=\{'day': \[the times"):
        DGAN(long).train_dataframe(df, example_id_column="id", time_column="day", df_style="long")


def test_private_settings_that_do_not_split_per_example_are_config_errors():
    with pytest.raises(ParameterError) as info:
        DGANConfig.gretel(max_sequence_len=4, sample_len=2, dp_enabled=True, dp_eps=2.0)
    message = str(info.value)
    assert "gradient_penalty_norm='example'" in message and "reuse_fakes=False" in message


def test_without_opacus_a_private_run_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "opacus.accountants", None)  # import fails
    with pytest.raises(ParameterError, match=r'pip install "dgan\[dp\]"'):
        opacus_accounting()
    assert INSTALL == 'pip install "dgan[dp]"'


# ----- with Opacus: the accounting ---------------------------------------------------------


def _opacus():
    return pytest.importorskip("opacus")


def test_epsilon_for_known_steps_equals_opacus_own():
    _opacus()
    from opacus.accountants import RDPAccountant
    from opacus.accountants.utils import get_noise_multiplier

    from dgan.privacy.accounting import Accountant, noise_multiplier_for

    accountant = Accountant(epsilon=5.0, delta=1e-5)
    accountant.noise_multiplier = 1.1
    theirs = RDPAccountant()
    for rate in [0.01] * 300 + [0.02] * 200:
        accountant.step(rate)
        theirs.step(noise_multiplier=1.1, sample_rate=rate)
    assert accountant.history == [[1.1, 0.01, 300], [1.1, 0.02, 200]]
    assert accountant.spent() == pytest.approx(theirs.get_epsilon(delta=1e-5), rel=1e-12)
    sigma = get_noise_multiplier(
        target_epsilon=3.0, target_delta=1e-5, sample_rate=0.02, steps=800, accountant="rdp"
    )
    assert noise_multiplier_for(3.0, 1e-5, 0.02, 800) == pytest.approx(sigma)
    # the steps allowed are the most whose epsilon stays within the target
    accountant = Accountant(epsilon=3.0, delta=1e-5)
    accountant.noise_multiplier = sigma
    allowed = accountant.steps_left(0.02)
    assert allowed >= 800
    assert Accountant.spent_by(sigma, 0.02, allowed, 1e-5) <= 3.0
    assert Accountant.spent_by(sigma, 0.02, allowed + 1, 1e-5) > 3.0


def test_private_training_spends_at_most_its_epsilon_and_stops_at_it(tmp_path):
    _opacus()
    config = _dp_config(batch_size=8, epochs=2)
    model = DGAN(config)
    model.train_numpy(_series(), progress_bar=False)
    spent = [h["epsilon"] for h in model.history]
    assert 0 < spent[0] < spent[1] <= 8.0
    assert spent[1] > 7.0  # the noise was planned for this budget, not far more
    assert all(h["discriminator_loss"] is None for h in model.history)  # real-data losses
    assert model.config.dp_delta == pytest.approx(0.1 / 64)
    epochs = len(model.history)
    model.train_numpy(_series(), progress_bar=False)  # trained again: the budget is spent
    assert len(model.history) == epochs
    assert model.trainer.privacy.accountant.steps == sum(h["steps"] for h in model.history)
    # The saved file carries the accounting and no value read from the data.
    path = model.save(tmp_path / "private.dgan")
    _, state = read_model_file(path)
    assert state["privacy"]["history"] == model.trainer.privacy.accountant.state_dict()["history"]
    loaded = DGAN.load(path)
    assert loaded.trainer.privacy.spent() == pytest.approx(model.history[-1]["epsilon"])
    encoder = state["encoder"]
    assert [(e["min"], e["max"]) for e in encoder["feature_encoders"]] == [(0, 1), (0, 1)]
    scaling = [(e["min"], e["max"]) for e in encoder["additional_encoders"]]
    assert scaling == [(0.0, 1.0), (0.0, 0.5)] * 2
    assert json.dumps(state["history"])  # JSON-native


def test_a_carrier_is_off_by_auto_and_trains_when_asked_for_in_a_private_run(tmp_path):
    """ "auto" would read the values to decide: off; True carries every continuous feature,
    each period encoded by max_sequence_len alone, with the envelope critic beside it."""
    _opacus()
    auto = DGAN(_dp_config(batch_size=8, epochs=1))
    auto.train_numpy(_series(), progress_bar=False)
    assert auto.encoder.period_features == [] and auto.trainer.envelope_critic is None
    model = DGAN(_dp_config(batch_size=8, epochs=1, period_carrier=True))
    assert "periods: 'feature 0', 'feature 1' drawn" in str(model.plan(_series(), warm_up_steps=0))
    model.train_numpy(_series(), progress_bar=False)
    assert model.encoder.period_features == [0, 1] and model.trainer.envelope_critic is not None
    assert np.isfinite(model.history[-1]["generator_loss"])
    _, state = read_model_file(model.save(tmp_path / "private.dgan"))
    assert state["encoder"]["period_features"] == [0, 1]
    # every harmonic: which ones the data holds is not read; each floor on a fixed scale
    assert state["encoder"]["period_harmonics"] == HARMONICS
    assert len(model.encoder.floor_columns) == 2


def test_the_envelope_critic_trains_privately_and_records_no_loss_of_real_data():
    """Its term joins the private critic round (clipped with the others), and its loss,
    read on real data, stays out of the history as the other critics' do."""
    _opacus()
    model = DGAN(_dp_config(batch_size=8, epochs=1, envelope_critic=True))
    model.train_numpy(_series(), progress_bar=False)
    assert all(h["envelope_discriminator_loss"] is None for h in model.history)
    assert np.isfinite(model.history[-1]["generator_loss"])
    optimizer = model.trainer.optimizers()["envelope_critic"]
    assert all(optimizer.state[p]["step"] > 0 for p in model.trainer.envelope_critic.parameters())


def test_training_stops_before_a_step_that_would_spend_more_than_epsilon():
    _opacus()
    model = DGAN(_dp_config(batch_size=8, epochs=2))
    encoded = model.preprocess(_series())
    model.trainer.privacy.accountant.noise_multiplier = 0.6  # less than planned: 16 steps
    model.train_encoded(encoded, progress_bar=False)  # would spend far more than 8
    last = model.history[-1]
    assert last["privacy_budget_reached"] is True
    steps = sum(h["steps"] for h in model.history)
    assert 0 < steps < 16 and model.trainer.privacy.accountant.steps == steps
    accountant = model.trainer.privacy.accountant
    assert last["epsilon"] <= 8.0 < accountant.spent(1, accountant.history[-1][1])


@pytest.mark.parametrize("length_attribute", [False, True])
def test_private_frames_keep_public_values_only(tmp_path, length_attribute):
    _opacus()
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": np.repeat(np.arange(40), T), "day": np.tile(np.arange(T), 40)})
    df["x"] = rng.random(len(df)).round(3) * 7
    df["kind"] = np.repeat(rng.choice(["a", "b"], 40), T)
    public = {"x": [-1, 8], "kind": ["a", "b", "c"], "day": list(range(10, 10 + T))}
    config = tiny_config(
        dp_epsilon=20.0, public_values=public, batch_size=8, length_attribute=length_attribute
    )
    model = DGAN(config)
    model.train_dataframe(
        df, attribute_columns=["kind"], example_id_column="id", time_column="day", df_style="long"
    )
    layout = model.data_frame_layout
    assert layout.time_grid == public["day"] and layout.spec("x").decimals is None
    assert model.encoder.variable_length  # a LONG table with ids may hold any lengths
    # a length attribute is encoded by max_sequence_len alone, never by the data's lengths
    assert (model.encoder.length_column is not None) == length_attribute
    assert model.encoder.attribute_encoders[0].categories == ["a", "b", "c"]
    # No per-class ranges (they would be read from the data); decoding choices apply as
    # usual, being post-processing.
    assert model.encoder.groups is None and model.encoder.fill_range == "auto"
    assert model.encoder.marginals is None  # no quantiles of the values either
    out = model.generate_dataframe(3)
    assert set(out["day"]) <= set(public["day"])


def test_resume_continues_the_accounting_exactly(tmp_path):
    _opacus()
    folder = tmp_path / "checkpoints"
    config = _dp_config(batch_size=8, epochs=3, checkpoint_dir=str(folder), checkpoint_every=1)
    whole = DGAN(config)
    whole.train_numpy(_series(), progress_bar=False)
    history = whole.trainer.privacy.accountant.state_dict()
    # an interrupted run: its second checkpoint kept, the third lost
    (folder / "checkpoint-000003.dgan").unlink()
    resumed = DGAN(config)
    resumed.train_numpy(_series(), progress_bar=False, resume_from=folder)
    again = resumed.trainer.privacy.accountant.state_dict()
    assert again["noise_multiplier"] == history["noise_multiplier"]
    assert again["history"] == history["history"]
    assert [h["epsilon"] for h in resumed.history] == pytest.approx(
        [h["epsilon"] for h in whole.history]
    )


def test_divergence_rollbacks_do_not_undo_the_accounting():
    """The guard rolls back weights, never the steps counted: they saw the data."""
    _opacus()
    model = DGAN(_dp_config(batch_size=8, epochs=1, log_every=2))
    model.train_numpy(_series(), progress_bar=False)
    trainer = model.trainer
    steps = trainer.privacy.accountant.steps
    trainer.guard.snapshot()
    trainer.privacy.next_batch()
    trainer.guard.recover("test", epoch=0)
    assert trainer.privacy.accountant.steps == steps + 1


@pytest.mark.parametrize("precision", ["bf16"])
def test_private_step_runs_in_fp32_whatever_the_precision(precision):
    _opacus()
    config = _dp_config(batch_size=8, epochs=1, precision=precision)
    model = DGAN(config)
    model.train_numpy(_series(), progress_bar=False)
    assert all(p.dtype == torch.float32 for p in model.critic.parameters())
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in model.critic.parameters())
    assert model.history[0]["epsilon"] > 0


# ----- the command line -----------------------------------------------------------------


def _cli_data(tmp_path) -> list[str]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": np.repeat(np.arange(30), T), "step": np.tile(np.arange(T), 30)})
    df["level"] = rng.uniform(0, 5, len(df))
    df["kind"] = np.repeat(rng.choice(["a", "b"], 30), T)
    df.to_csv(tmp_path / "data.csv", index=False)
    return ["--example-id", "id", "--time", "step", "--attributes", "kind"]


def test_cli_private_run_refuses_settings_it_would_infer(tmp_path, monkeypatch, capsys):
    from dgan.cli.main import main

    monkeypatch.chdir(tmp_path)
    flags = _cli_data(tmp_path)
    assert main(["train", "data.csv", "--dry-run", "--dp-epsilon", "4", *flags]) == 1
    err = capsys.readouterr().err
    assert "give --max-sequence-len and --batch-size" in err
    args = ["train", "data.csv", "--dry-run", "--dp-epsilon", "4", *flags]
    assert main([*args, "--max-sequence-len", str(T), "--batch-size", "8"]) == 1
    err = capsys.readouterr().err  # the training length would be picked from the data
    assert "give --batch-size and --training-steps" in err, err
    sized = ["--max-sequence-len", str(T), "--batch-size", "8", "--training-steps", "50"]
    assert main([*args, *sized]) == 1
    err = capsys.readouterr().err
    assert "in --config's [public_values] table: {'level': [low, high]}" in err


def test_cli_private_run_trains_and_reports_its_epsilon(tmp_path, monkeypatch, capsys):
    _opacus()
    from dgan.cli.main import main

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)  # WIDE: one row per series, t0..t5 its steps
    df = pd.DataFrame({"kind": rng.choice(["a", "b"], 30)})
    for t in range(T):
        df[f"t{t}"] = rng.uniform(0, 5, 30)
    df.to_csv(tmp_path / "data.csv", index=False)
    flags = ["--attributes", "kind"]
    (tmp_path / "dp.toml").write_text(
        "epochs = 2\ndiscriminator_num_layers = 1\nfeature_num_units = 8\ncuda = false\n"
        '[public_values]\n"t0..t5" = [0, 5]\nkind = ["a", "b"]\n'
    )
    sizes = ["--max-sequence-len", str(T), "--batch-size", "8", "--config", "dp.toml"]
    args = ["train", "data.csv", "-o", "m.dgan", "--dp-epsilon", "6", "--dp-delta", "1e-4"]
    assert main([*args, *flags, *sizes]) == 0
    out = capsys.readouterr().out
    assert "differential privacy: epsilon 6 at delta 0.0001, noise multiplier" in out  # plan
    spent = DGAN.load("m.dgan").history[-1]["epsilon"]
    assert 0 < spent <= 6.0
    assert f"differential privacy: (epsilon {spent:.3g}, delta 0.0001)" in out  # summary
    assert main(["generate", "m.dgan", "-n", "30", "-o", "synthetic.csv"]) == 0
    evaluate = ["evaluate", "data.csv", "synthetic.csv", "--model", "m.dgan", "--seeds", "1"]
    assert main([*evaluate, "--json", "metrics.json"]) == 0
    assert f"differential privacy: (epsilon {spent:.3g}" in capsys.readouterr().out
    saved = json.loads((tmp_path / "metrics.json").read_text())["privacy"]
    assert saved["epsilon"] == pytest.approx(spent) and saved["delta"] == 1e-4


def test_the_report_states_the_guarantee():
    pytest.importorskip("matplotlib")
    from dgan.report.training import training_section

    history = [
        {"epoch": 0, "generator_loss": -0.1, "examples_per_s": 10.0, "wall_time_s": 1.0}
        | {"epsilon": 2.5, "delta": 1e-5, "steps": 4, "privacy_budget_reached": True}
    ]
    section = training_section(history)
    assert "differential privacy: (epsilon 2.5, delta 1e-05) over 4 steps; stopped" in section
