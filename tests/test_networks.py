import pytest
import torch

from dgan.encoding.encoder import OutputSlice
from dgan.networks import Critic, Generator, OutputActivation


def test_fused_activation_equals_separate_heads():
    slices = [
        OutputSlice(0, 1, "sigmoid"),
        OutputSlice(1, 3, "softmax"),
        OutputSlice(4, 1, "tanh"),
        OutputSlice(5, 2, "softmax"),
        OutputSlice(7, 3, "softmax"),
        OutputSlice(10, 2, "bits"),
    ]
    logits = torch.randn(5, 7, 12)
    fused = OutputActivation(slices)(logits)
    expected = torch.cat(
        [
            torch.sigmoid(logits[..., 0:1]),
            torch.softmax(logits[..., 1:4], -1),
            torch.tanh(logits[..., 4:5]),
            torch.softmax(logits[..., 5:7], -1),
            torch.softmax(logits[..., 7:10], -1),
            torch.sigmoid(logits[..., 10:12]),
        ],
        dim=-1,
    )
    torch.testing.assert_close(fused, expected)


def test_linear_columns_take_their_activations_tangent_and_others_are_unchanged():
    """A carried wave is its own value: sigmoid columns named ``linear`` give x / 4 + 1/2,
    tanh ones x; every other column is activated as before; a softmax column has no
    tangent to take, a clear error."""
    slices = [OutputSlice(0, 2, "sigmoid"), OutputSlice(2, 2, "tanh"), OutputSlice(4, 2, "softmax")]
    logits = 3 * torch.randn(5, 6)
    out = OutputActivation(slices, linear=[1, 3])(logits)
    torch.testing.assert_close(out[:, 1], 0.5 + 0.25 * logits[:, 1])
    torch.testing.assert_close(out[:, 3], logits[:, 3])
    others = [0, 2, 4, 5]
    torch.testing.assert_close(out[:, others], OutputActivation(slices)(logits)[:, others])
    with pytest.raises(ValueError, match="softmax"):
        OutputActivation(slices, linear=[4])


def _generator(flag=None, **kw):
    feature_slices = [OutputSlice(0, 1, "sigmoid")]
    if flag is not None:
        feature_slices.append(OutputSlice(1, 2, "softmax"))
    args = dict(
        attribute_slices=[OutputSlice(0, 3, "softmax")],
        additional_slices=[OutputSlice(0, 2, "sigmoid")],
        feature_slices=feature_slices,
        max_sequence_len=8,
        sample_len=2,
        attribute_noise_dim=4,
        feature_noise_dim=3,
        attribute_num_layers=2,
        attribute_num_units=16,
        feature_num_layers=1,
        feature_num_units=16,
        forget_bias=False,
        generation_flag_column=flag,
    )
    return Generator(**{**args, **kw})


def test_generator_shapes_and_conditioning():
    gen = _generator()
    attrs, additional, feats = gen(torch.randn(6, 4), torch.randn(6, 4, 3))
    assert attrs.shape == (6, 3) and additional.shape == (6, 2) and feats.shape == (6, 8, 1)
    given = torch.eye(3)[[0, 1, 2, 0, 1, 2]]
    attrs_c, _, _ = gen(torch.randn(6, 4), torch.randn(6, 4, 3), attributes=given)
    assert torch.equal(attrs_c, given)


def test_everything_after_the_end_flag_is_zero():
    gen = _generator(flag=1)
    with torch.no_grad():
        gen.head.bias.zero_()
        gen.head.weight.zero_()
        # The head emits (sample, feature) per cell: the first sample of each cell says
        # "continues", the second "ends", so the series ends at step 1.
        gen.head.bias.view(2, 3)[:, 1] = 1.0
        gen.head.bias.view(2, 3)[1, 2] = 5.0
    _, _, feats = gen(torch.randn(4, 4), torch.randn(4, 4, 3))
    assert (feats[:, :2] != 0).any(dim=-1).all()  # alive up to and including the end
    assert (feats[:, 2:] == 0).all()


def test_generated_attributes_are_trained_by_their_own_critics_only():
    """As in DoppelGANger, the series and the min/max outputs read the attributes
    detached: their losses do not train the attribute generator."""
    gen = _generator()
    _, additional, feats = gen(torch.randn(6, 4), torch.randn(6, 4, 3))
    (feats.sum() + additional.sum()).backward()
    assert all(p.grad is None for p in gen.attribute_net.parameters())
    assert any(p.grad is not None for p in gen.additional_net.parameters())


def test_forget_bias():
    gen = _generator(forget_bias=True)
    h = 16
    total = gen.lstm.bias_ih_l0[h : 2 * h] + gen.lstm.bias_hh_l0[h : 2 * h]
    torch.testing.assert_close(total, torch.ones(h))


def test_critic_ignores_absent_parts():
    critic = Critic(in_dim=8, num_layers=1, num_units=4)
    assert critic(None, torch.zeros(2, 2), torch.zeros(2, 3, 2)).shape == (2, 1)


@pytest.mark.parametrize("feedback", [False, True])
def test_attribute_state_lets_the_attributes_set_the_lstm_state_it_starts_from(feedback):
    """With the attributes' inputs to the LSTM cut, two classes given the same noise come
    out alike; with ``attribute_state`` the first state still tells them apart, and the
    map that makes it trains with the series' loss."""

    def drawn(gen, given):
        with torch.no_grad():  # the attributes and additional attributes reach no step
            gen.lstm.weight_ih_l0[:, :5] = 0.0
        torch.manual_seed(1)
        return gen(torch.randn(6, 4), torch.randn(6, 4, 3), attributes=given)[2]

    one, other = torch.eye(3)[[0] * 6], torch.eye(3)[[1] * 6]
    torch.manual_seed(0)
    plain = _generator(feature_feedback=feedback)
    assert plain.initial_state is None  # without it: zeros, as files from before
    torch.testing.assert_close(drawn(plain, one), drawn(plain, other))
    torch.manual_seed(0)
    started = _generator(feature_feedback=feedback, attribute_state=True)
    assert not torch.allclose(drawn(started, one), drawn(started, other))
    drawn(started, one).sum().backward()
    assert started.initial_state.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("fp32_lstm", [False, True])
def test_attribute_state_runs_under_bf16_autocast(fp32_lstm):
    gen = _generator(attribute_state=True, feature_feedback=True, feature_noise_dim=2)
    gen.lstm_in_fp32 = fp32_lstm
    gen.lstm_even_input = not fp32_lstm  # 9 inputs, padded to 10 as on AMX
    with torch.autocast("cpu", dtype=torch.bfloat16):
        _, _, feats = gen(torch.randn(6, 4), torch.randn(6, 4, 2))
    assert feats.shape == (6, 8, 1) and torch.isfinite(feats.float()).all()
