"""Each series' own period as a generated attribute, and the carrier the generator draws
steady oscillations on (``period_carrier``: `dgan.encoding.periods`,
`dgan.networks.carrier`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dgan import DGAN, DGANConfig, Normalization, OutputType
from dgan.encoding import periods
from dgan.encoding.encoder import DataEncoder
from dgan.encoding.periods import (
    FLOORS,
    HARMONICS,
    carried_features,
    encode_floors,
    encode_frequencies,
    series_frequencies,
    series_noise_floors,
)
from dgan.errors import DataError, ParameterError
from dgan.metrics.features import CONTINUOUS_FEATURES, _continuous_block
from dgan.networks import build_networks
from dgan.networks.carrier import HEADROOM, KNOTS, SWING, Carrier, knot_weights
from dgan.networks.white_noise import white_noise
from dgan.series import SeriesRows
from dgan.spectrum import dominant_frequencies
from tiny import tiny_config

T = 120


def _waves(rng, n=24, length=T, period=(8.0, 12.0), noise=0.05):
    """n series of varied lengths that oscillate steadily, each at its own period."""
    out = []
    for _ in range(n):
        steps = np.arange(rng.integers(length // 2, length + 1))
        wave = np.sin(2 * np.pi * steps / rng.uniform(*period) + rng.uniform(0, 2 * np.pi))
        out.append((rng.uniform(1, 3) * wave + noise * rng.normal(size=len(steps)))[:, None])
    return out


# ----- the period and the rule ---------------------------------------------------------------
def test_a_padded_transform_finds_a_period_between_the_plain_bins():
    t = np.arange(96)
    wave = np.cos(2 * np.pi * t / 11.3)[None, :]
    plain, _ = dominant_frequencies(wave, np.array([96]))
    padded, share = dominant_frequencies(wave, np.array([96]), padding=8)
    assert abs(1 / padded[0] - 11.3) < abs(1 / plain[0] - 11.3)
    assert abs(1 / padded[0] - 11.3) < 0.1 and share[0] > 0.9


def test_the_judges_period_feature_reads_as_before():
    """`dgan evaluate`'s dominant period is the plain transform's (padding 1), moved into
    `dgan.spectrum`: a wave of 8 steps in 64 reads 8, with all of its power there."""
    t = np.arange(64.0)
    values = _continuous_block([np.sin(2 * np.pi * t / 8)], floor=1e-6)[0]
    assert values[CONTINUOUS_FEATURES.index("dominant period (log10 steps)")] == pytest.approx(
        np.log10(8.0)
    )
    assert values[CONTINUOUS_FEATURES.index("period strength (share of power)")] == pytest.approx(
        1.0
    )


def test_series_frequencies_are_each_series_own_and_do_not_depend_on_the_chunking(rng, monkeypatch):
    series = [*_waves(rng), np.ones((30, 1))]
    rows = SeriesRows.from_list(series)
    frequency, share = series_frequencies(rows, 0)
    assert np.isnan(frequency[-1]) and np.isnan(share[-1])  # constant: no period
    monkeypatch.setattr(periods, "_CHUNK_VALUES", 1)  # one series a chunk
    again, again_share = series_frequencies(rows, 0)
    np.testing.assert_array_equal(again, frequency)
    np.testing.assert_array_equal(again_share, share)
    assert np.all((1 / frequency[:-1] > 7.5) & (1 / frequency[:-1] < 12.5))


def test_frequencies_transform_many_series_at_once(rng, monkeypatch):
    """A chunk holds as many series as `_CHUNK_VALUES` padded values allow, not as many
    rows: read as rows, long series went one a chunk, a Python call each."""
    batches = []
    real = periods.dominant_frequencies
    monkeypatch.setattr(
        periods, "dominant_frequencies", lambda c, *a: batches.append(len(c)) or real(c, *a)
    )
    rows = SeriesRows.from_list([np.sin(np.arange(1000.0) / 3)[:, None]] * 40)
    series_frequencies(rows, 0)
    assert batches == [40]
    monkeypatch.setattr(periods, "_CHUNK_VALUES", 1000 * periods.PADDING * 16)
    batches.clear()
    series_frequencies(rows, 0)
    assert batches == [16, 16, 8]


def test_auto_carries_steady_waves_and_nothing_else(rng):
    waves = SeriesRows.from_list(_waves(rng))
    assert carried_features("auto", waves, [0]) == [0]
    noise = SeriesRows.from_list([rng.normal(size=(T, 1)) for _ in range(24)])
    assert carried_features("auto", noise, [0]) == []
    # Two or three cycles a series (a window of a slow wave) is no steady period.
    slow = SeriesRows.from_list(_waves(rng, length=24))
    assert carried_features("auto", slow, [0]) == []
    assert carried_features(False, waves, [0]) == []
    assert carried_features(True, noise, [0]) == [0]
    with pytest.raises(DataError, match="period_carrier=True needs a continuous feature"):
        carried_features(True, noise, [])


def test_auto_reads_evenly_spaced_series_of_large_data(rng, monkeypatch):
    """On more than `GATE_SERIES` series "auto" reads the medians of that many: the waves
    among many noisy series are still told by their median, from a sample."""
    mixed = SeriesRows.from_list(_waves(rng, n=30) + [rng.normal(size=(T, 1)) for _ in range(10)])
    monkeypatch.setattr(periods, "GATE_SERIES", 8)
    read = []
    real_frequencies = periods.series_frequencies
    monkeypatch.setattr(
        periods, "series_frequencies", lambda f, c: read.append(len(f)) or real_frequencies(f, c)
    )
    assert carried_features("auto", mixed, [0]) == [0]
    assert read == [8]


def test_the_plans_periods_line_reads_the_same_evenly_spaced_sample(rng, monkeypatch):
    """The plan's medians of the periods and noise floors cost the same for a million
    series as for four thousand: they read `gate_sample`, as the encoder does."""
    from dgan import planning

    monkeypatch.setattr(periods, "GATE_SERIES", 8)
    read = []
    for name in ("series_frequencies", "series_noise_floors"):
        real = getattr(planning, name)
        monkeypatch.setattr(
            planning, name, lambda f, c, real=real: read.append(len(f)) or real(f, c)
        )
    plan = DGAN(tiny_config(max_sequence_len=T, sample_len=10)).plan(_waves(rng, n=20))
    assert "periods: 'feature 0' (median period" in str(plan)
    assert read == [8, 8]


def test_the_encoders_fit_computes_each_carried_features_frequencies_once(rng, monkeypatch):
    """ "auto", the held harmonics, the median switch-on and the period and centre maps all
    read the same `GateSample`, which computes each column's frequencies once."""
    calls = []
    real = periods._frequencies
    monkeypatch.setattr(
        periods, "_frequencies", lambda f, c: calls.append((type(f).__name__, c)) or real(f, c)
    )
    config = tiny_config(max_sequence_len=T, sample_len=10, period_carrier="auto")
    series = [np.c_[w, rng.normal(size=(len(w), 1))] for w in _waves(rng, n=16)]
    types = [OutputType.CONTINUOUS] * 2
    encoder = DataEncoder.fit(config, series, types, None, None)
    assert encoder.period_features == [0]
    assert encoder.period_map is not None and encoder.centre_map is not None
    assert calls.count(("GateSample", 0)) == 1 and calls.count(("GateSample", 1)) == 1


def test_frequencies_encode_on_a_log_scale_the_carrier_reads_back():
    """The carrier turns the generated attribute back into the frequency it encodes: its
    first harmonic's angle advances by 2 pi f a step."""
    frequency = np.array([1 / 40, 1 / 12, 0.3])
    for zero_one in (True, False):
        unit = encode_frequencies(frequency, T, zero_one)
        assert (np.diff(unit) > 0).all()
        carrier = Carrier(
            4,
            sample_len=10,
            max_sequence_len=T,
            frequency_columns=[0],
            zero_one=zero_one,
            noise_dim=1,
            floor_columns=[1],
        )
        angles, _ = carrier.angles(torch.from_numpy(unit)[:, None], torch.zeros(3, 1))
        step = torch.diff(angles[:, :, 0, 0], dim=1) % (2 * np.pi)  # (B, T - 1)
        np.testing.assert_allclose(step.median(dim=1).values, 2 * np.pi * frequency, rtol=1e-3)


# ----- the encoder ---------------------------------------------------------------------------
def test_the_encoder_adds_each_carried_period_and_decodes_as_before(rng):
    series = _waves(rng)
    config = DGANConfig(max_sequence_len=T, sample_len=10, length_attribute=True)
    encoder = DataEncoder.fit(config, series, [OutputType.CONTINUOUS], None, None)
    plain = DataEncoder.fit(
        DGANConfig(max_sequence_len=T, sample_len=10, length_attribute=True, period_carrier=False),
        series,
        [OutputType.CONTINUOUS],
        None,
        None,
    )
    assert encoder.period_features == [0] and plain.period_features == []
    assert encoder.additional_dim == plain.additional_dim + 2  # a frequency and a floor
    encoded = encoder.transform(series, None)
    column = encoded.additional_attributes[:, encoder.period_columns[0]]
    expected = encode_frequencies(series_frequencies(SeriesRows.from_list(series), 0)[0], T, True)
    np.testing.assert_allclose(column, expected)
    floors = encoded.additional_attributes[:, encoder.floor_columns[0]]
    expected = encode_floors(series_noise_floors(SeriesRows.from_list(series), 0), True)
    np.testing.assert_allclose(floors, expected)
    # Their columns sit before the length; decoding reads the others where they were.
    assert encoder.period_columns[0] < encoder.floor_columns[0] < encoder.length_column
    _, decoded = encoder.inverse(encoded)
    _, decoded_plain = plain.inverse(plain.transform(series, None))
    for got, want, plain_got in zip(decoded, series, decoded_plain, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
        np.testing.assert_allclose(got, plain_got, atol=1e-6)
    again = DataEncoder.from_json(encoder.to_json())
    assert again.period_features == [0] and again.period_columns == encoder.period_columns
    assert again.period_harmonics == encoder.period_harmonics == 1  # sines: no harmonics held
    assert again.period_waveform == encoder.period_waveform == "series"
    assert again.floor_columns == encoder.floor_columns
    state = encoder.to_json()
    del state["period_waveform"]  # a model file from before one waveform a series
    old = DataEncoder.from_json(state)
    assert old.period_waveform == "step" and old.floor_columns == []  # and no floors
    assert old.additional_dim == plain.additional_dim + 1
    del state["period_harmonics"]  # a model file from the carrier's first form: three
    assert DataEncoder.from_json(state).period_harmonics == 3
    del state["period_features"]  # a model file from before the carrier
    assert DataEncoder.from_json(state).period_features == []


# ----- the carrier ---------------------------------------------------------------------------
def _carrier(sample_len=8, steps=5, carried=2, seed=0, waveform="series"):
    torch.manual_seed(seed)
    carrier = Carrier(
        6,
        sample_len=sample_len,
        max_sequence_len=sample_len * steps,
        frequency_columns=list(range(carried)),
        zero_one=True,
        noise_dim=3,
        waveform=waveform,
        floor_columns=list(range(carried, 2 * carried)) if waveform == "series" else None,
    )
    for layer in (carrier.knots, carrier.shares, carrier.loudness, carrier.centre):  # trained
        if layer is not None:
            torch.nn.init.normal_(layer.weight)
            torch.nn.init.normal_(layer.bias)
    return carrier


def _set_loudness(carrier, level, start, decay=0.0):
    """The carrier's loudness fixed at a ``level`` and a ``start`` (within its bound) and
    a decay of S exp(``decay``) steps, whatever its first LSTM output."""
    bound = HEADROOM  # the features' half range is 1 (tanh) in these tests
    with torch.no_grad():
        carrier.loudness.weight.zero_()
        carrier.loudness.bias.copy_(
            torch.tensor([float(np.log(x / (bound - x))) for x in (level, start)] + [decay])
        )
    return carrier


def test_knots_interpolate_within_a_step_and_end_on_its_last_value():
    weights = knot_weights(10)
    np.testing.assert_allclose(weights.sum(dim=1), 1.0)
    assert weights[-1].tolist() == [0.0] * KNOTS + [1.0]  # the last value: the last knot
    assert (weights[:, 0] > 0).sum() == 10 // KNOTS  # values before the first knot


@pytest.mark.parametrize("waveform", ["series", "step"])
def test_the_carrier_step_by_step_draws_what_it_draws_at_once(waveform):
    """The generator with feature feedback runs the carrier one LSTM step at a time,
    handing each step's last knot on; without, all steps at once: the same series."""
    carrier = _carrier(waveform=waveform)
    hidden, batch, noise = torch.randn(4, 5, 6), 4, torch.randn(4, 5, 3)
    sines = carrier.sines(torch.rand(batch, 4), torch.randn(batch, 3), hidden[:, 0])
    knot, parts = None, []
    whole, _ = carrier(hidden, sines, None, noise)
    for k in range(5):
        part, knot = carrier(hidden[:, k : k + 1], sines, knot, noise[:, k : k + 1], k)
        parts.append(part)
    torch.testing.assert_close(torch.cat(parts, dim=1), whole)


@pytest.mark.parametrize("waveform", ["series", "step"])
def test_the_amplitude_runs_on_across_the_seams(waveform):
    """With every harmonic's wave at its crest the value is the sum of the amplitudes: a
    line between knots, so no value jumps further than the knots' steepest line allows,
    at a seam as within a step."""
    sample_len, steps = 8, 5
    carrier = _carrier(sample_len, steps, carried=1, waveform=waveform)
    hidden, amplitudes = torch.randn(3, steps, 6), carrier.amplitudes
    crests = torch.ones(3, sample_len * steps, 1, amplitudes)
    if waveform == "series":  # and no noise: its channel at 0
        crests = torch.cat([crests, torch.zeros_like(crests)], dim=-1)
    with torch.no_grad():
        wave, _ = carrier(hidden, crests, None, torch.randn(3, steps, 3))
        knots = carrier.knots(hidden).view(3, steps, KNOTS, 1, amplitudes).sum(-1)[..., 0]
    values = wave.flatten(1, 2)[..., 0]  # (B, T)
    spacing = sample_len / KNOTS
    steepest = knots.flatten(1).diff(dim=1).abs().max() / spacing
    assert values.diff(dim=1).abs().max() <= steepest + 1e-5
    # and at the seams the change is an ordinary one, not a restart
    seam = values[:, sample_len::sample_len] - values[:, sample_len - 1 : -1 : sample_len]
    assert seam.abs().max() <= steepest + 1e-5


def test_harmonics_that_would_fold_back_are_left_out():
    """A harmonic at or above half a cycle a step would alias onto a lower frequency: at
    a period of 5 steps only the first two harmonics sound, at 3 steps only the first;
    the audible ones turn at h times the carrier's frequency."""
    carrier = Carrier(4, sample_len=10, max_sequence_len=T, frequency_columns=[0],
                      zero_one=True, noise_dim=1, harmonics=5, floor_columns=[1])  # fmt: skip
    torch.nn.init.ones_(carrier.shares.bias)  # every harmonic at the fundamental's share
    _set_loudness(carrier, level=1.0, start=1.0)  # a level of 1 and no switch-on
    frequency = np.array([1 / 5, 1 / 3, 1 / 12])
    unit = torch.from_numpy(encode_frequencies(frequency, T, True))[:, None]
    unit = torch.cat([unit, torch.zeros_like(unit)], dim=1)  # the lowest floor
    with torch.no_grad():
        sines = carrier.sines(unit, torch.full((3, 1), 0.3), torch.zeros(3, 4))[:, :, 0, :-2]
    sounding = sines.abs().amax(dim=1) > 0.5  # (B, H)
    audible = [[True, True, False, False, False], [True] + [False] * 4, [True] * 5]
    assert sounding.tolist() == audible  # the lowest ones, up to half a cycle a step
    steps = 1 / frequency[2]
    crossings = (sines[2, :-1] * sines[2, 1:] < 0).sum(dim=0)  # (H,): 2 h per period
    np.testing.assert_allclose(crossings.numpy(), 2 * np.arange(1, 6) * T / steps, atol=2)


def test_the_carrier_draws_the_harmonics_its_encoder_holds(rng):
    """A model file keeps its carrier's harmonics (its weights' shapes follow them): the
    networks are built with the encoder's count, not today's default."""
    series = _waves(rng)
    config = tiny_config(max_sequence_len=T, sample_len=10)
    encoder = DataEncoder.fit(config, series, [OutputType.CONTINUOUS], None, None)
    encoder.period_harmonics = HARMONICS + 2
    carrier = build_networks(config, encoder)[0].carrier
    assert carrier.harmonics == HARMONICS + 2
    assert carrier.knots.out_features == KNOTS  # one carried feature, one loudness
    assert carrier.phases.out_features == HARMONICS + 2
    assert carrier.shares.out_features == HARMONICS + 1  # the higher harmonics' shares
    assert carrier.loudness.out_features == 3  # a level, a switch-on and its decay
    assert carrier.centre.out_features == 1
    encoder.period_waveform = "step"  # a model file from before: a knot per harmonic
    carrier = build_networks(config, encoder)[0].carrier
    assert carrier.knots.out_features == KNOTS * (HARMONICS + 2)
    assert carrier.shares is carrier.loudness is carrier.centre is None
    assert carrier.floor_columns == []


def test_the_steps_set_the_loudness_and_the_first_the_waveform():
    """Two series that share their first LSTM step share their waveform: where both are
    loud (a positive loudness throughout), they cross zero at the same steps, however
    the later steps differ. When the steps set each harmonic's amplitude, they do not."""
    crossings = {}
    for waveform in ("series", "step"):
        carrier = _carrier(sample_len=8, steps=5, carried=1, waveform=waveform)
        torch.nn.init.normal_(carrier.knots.weight, std=0.1)
        torch.nn.init.constant_(carrier.knots.bias, 2.0)  # a loudness well above 0
        hidden = torch.randn(1, 5, 6).repeat(2, 1, 1)
        hidden[1, 1:] = torch.randn(4, 6)  # the same first step, different later ones
        unit, noise = torch.tensor([[0.6, 0.0]]).repeat(2, 1), torch.zeros(2, 3)
        with torch.no_grad():
            sines = carrier.sines(unit, noise, hidden[:, 0])
            wave, _ = carrier(hidden, sines, None, torch.randn(2, 5, 3))
        signs = wave.flatten(1, 2)[..., 0] > 0  # (2, T)
        crossings[waveform] = bool((signs[0] == signs[1]).all())
    assert crossings == {"series": True, "step": False}


def test_the_loudness_is_a_level_and_a_switch_on_that_the_steps_swing_a_little():
    """The first LSTM output sets a level and a start that decays to it; whatever the
    steps' knots, they swing that loudness by `SWING` of it at most."""
    carrier = _set_loudness(_carrier(sample_len=8, steps=5, carried=1), level=0.5, start=1.0)
    with torch.no_grad():
        hidden = torch.randn(3, 5, 6)
        level, envelope = carrier.envelope(hidden[:, 0])
        envelope = envelope[..., 0]  # (B, T)
        torch.testing.assert_close(level, torch.full((3, 1), 0.5))
        t = torch.arange(40.0)
        torch.testing.assert_close(envelope, (0.5 * (1 + torch.exp(-t / 8))).expand(3, -1))
        crests = torch.ones(3, 40, 1, 1) * envelope[..., None, None]
        crests = torch.cat([crests] + [torch.zeros_like(crests)] * 2, dim=-1)  # at 0, no noise
        wave, _ = carrier(hidden, crests, None, torch.randn(3, 5, 3))
    ratio = wave.flatten(1, 2)[..., 0] / envelope
    assert (ratio - 1).abs().max() <= SWING + 1e-6
    assert (ratio - 1).abs().max() > SWING / 10  # the trained knots do swing it


def test_the_loudness_stays_within_its_bound_however_far_training_pushes():
    """A level and a start are each at most `HEADROOM` times the features' half range,
    and above 0, whatever the first LSTM output: a switch-on cannot run away (drawn
    unbounded, the fans' grew to 4.3 times their level, real 1.9)."""
    for half_range in (1.0, 2.0):
        carrier = Carrier(6, sample_len=8, max_sequence_len=40, frequency_columns=[0],
                          zero_one=True, noise_dim=1, floor_columns=[1],
                          half_range=half_range)  # fmt: skip
        torch.nn.init.normal_(carrier.loudness.weight, std=100.0)
        with torch.no_grad():
            level, envelope = carrier.envelope(torch.randn(64, 6))
        bound = HEADROOM * half_range
        assert level.min() >= 0 and level.max() <= bound
        assert envelope.min() >= 0 and envelope.max() <= bound
        assert envelope.max() > 0.99 * bound  # the bound itself is within reach


def test_the_first_step_sets_where_the_wave_rests_within_the_half_range():
    """A series' centre moves its whole wave, noise and swing included, by one value that
    its first LSTM output sets; within the features' half range however far training
    pushes, and at the range's middle before training (a real series rests where it was
    before its switch-on, which need not be its range's middle)."""
    hidden, noise = torch.randn(4, 5, 6), torch.randn(4, 5, 3)
    additional = torch.tensor([[0.6, 0.5]]).repeat(4, 1)
    for half_range in (1.0, 2.0):
        carrier = Carrier(6, sample_len=8, max_sequence_len=40, frequency_columns=[0],
                          zero_one=True, noise_dim=3, floor_columns=[1],
                          half_range=half_range)  # fmt: skip
        with torch.no_grad():
            sines = carrier.sines(additional, torch.zeros(4, 3), hidden[:, 0])
            at_middle, _ = carrier(hidden, sines, None, noise)
            assert (sines[..., -2] == 0).all()  # untrained: the range's middle
            torch.nn.init.normal_(carrier.centre.weight, std=100.0)
            sines = carrier.sines(additional, torch.zeros(4, 3), hidden[:, 0])
            moved, _ = carrier(hidden, sines, None, noise)
        centre = sines[:, :1, 0, -2]  # (B, 1): one value a series
        torch.testing.assert_close(sines[..., 0, -2], centre.expand(-1, 40))
        torch.testing.assert_close(moved - at_middle, centre[:, :, None, None].expand(-1, 5, 8, 1))
        assert centre.abs().max() <= half_range and centre.abs().max() > 0.9 * half_range


def test_the_noise_sits_at_the_generated_floor_of_the_level():
    """The white noise's size is the generated floor times the series' level, through the
    switch-on and whatever the steps' swing; its values follow from the feature noise."""
    carrier = _carrier(sample_len=10, steps=300, carried=1)
    with torch.no_grad():
        for layer in (carrier.knots, carrier.shares):
            layer.weight.zero_()
            layer.bias.zero_()
        _set_loudness(carrier, level=0.5, start=1.0)  # a level of 0.5, a switch-on
        torch.nn.init.normal_(carrier.knots.bias)  # and a swing
        floor = np.array([0.01, 0.1])
        unit = torch.from_numpy(encode_floors(floor, True))[:, None]
        additional = torch.cat([torch.full((2, 1), 0.5), unit], dim=1)
        hidden, noise = torch.randn(2, 300, 6), torch.randn(2, 300, 3)
        sines = carrier.sines(additional, torch.zeros(2, 3), hidden[:, 0])
        wave, _ = carrier(hidden, sines, None, noise)
        again, _ = carrier(hidden, sines, None, noise)
        quiet = sines.clone()
        quiet[..., -1] = 0.0  # the noise channel off: the swung waves alone
        clean, _ = carrier(hidden, quiet, None, noise)
    residual = (wave - clean).flatten(1, 2)[..., 0]
    np.testing.assert_allclose(residual.std(dim=1), 0.5 * floor, rtol=0.05)
    lag = (residual[:, 1:] * residual[:, :-1]).mean(dim=1) / residual.var(dim=1)
    assert lag.abs().max() < 0.1  # white
    torch.testing.assert_close(wave, again)


def test_white_noise_is_standard_normal_and_a_function_of_the_feature_noise():
    z = torch.randn(64, 10, 10, generator=torch.Generator().manual_seed(0))
    noise = white_noise(z, 100)
    assert abs(noise.mean().item()) < 0.02 and abs(noise.std().item() - 1) < 0.02
    assert abs((noise[..., 1:] * noise[..., :-1]).mean().item()) < 0.02  # within a step
    assert abs((noise[:, 1:] * noise[:, :-1]).mean().item()) < 0.02  # step to step
    torch.testing.assert_close(noise, white_noise(z.clone(), 100))
    other = z.clone()
    other[0, 3, 0] += 1e-3  # one step's noise changed: that step's values, and only those
    changed = (white_noise(other, 100) != noise).any(dim=-1)
    assert changed.nonzero().tolist() == [[0, 3]]
    same = white_noise(torch.zeros(2, 4, 10), 50)  # equal inputs: each step its own values
    assert torch.equal(same[0], same[1]) and not torch.equal(same[0, 0], same[0, 1])


def test_noise_floors_are_read_past_the_wave_and_its_switch_on(monkeypatch):
    """A wave that switches on, decays to its steady size and carries white noise: its
    floor is the noise over the wave's amplitude, for sines and distorted waves, long or
    short; a constant series has none; chunks change nothing."""
    rng = np.random.default_rng(3)
    series, want = [], []
    for length, period, share, distortion in [
        (900, 12, 0.01, 0.0), (400, 24.5, 0.03, 0.3), (300, 48, 0.003, 0.0), (600, 7.2, 0.1, 0.3),
    ]:  # fmt: skip
        t = np.arange(length)
        angle = 2 * np.pi * t / period + rng.uniform(0, 2 * np.pi)
        wave = np.sin(angle) + distortion * np.sin(3 * angle + 1)
        series.append(5 * (1 + np.exp(-t / 40)) * wave + 5 * share * rng.normal(size=length))
        want.append(share)
    series.append(np.full(50, 2.0))
    rows = SeriesRows.from_list([s[:, None] for s in series])
    floors = series_noise_floors(rows, 0)
    np.testing.assert_allclose(floors[:-1], want, rtol=0.25)
    assert np.isnan(floors[-1])
    monkeypatch.setattr(periods, "_CHUNK_VALUES", 1000)
    np.testing.assert_allclose(series_noise_floors(rows, 0), floors, equal_nan=True)
    assert encode_floors(np.array(FLOORS) * [0.1, 10], False).tolist() == [-1.0, 1.0]


def test_an_unknown_waveform_is_a_clear_error():
    with pytest.raises(ParameterError, match="waveform is 'harmonic'"):
        Carrier(4, sample_len=2, max_sequence_len=8, frequency_columns=[0],
                zero_one=True, noise_dim=1, waveform="harmonic")  # fmt: skip
    with pytest.raises(ParameterError, match="takes 1 noise floors, and 0 were given"):
        Carrier(4, sample_len=2, max_sequence_len=8, frequency_columns=[0],
                zero_one=True, noise_dim=1)  # fmt: skip


def test_too_little_attribute_noise_for_the_phases_is_a_clear_error():
    with pytest.raises(ParameterError, match="set attribute_noise_dim to 3 or more"):
        Carrier(4, sample_len=2, max_sequence_len=8, frequency_columns=[0, 1, 2],
                zero_one=True, noise_dim=2)  # fmt: skip


@pytest.mark.parametrize("tanh", [False, True])
def test_a_carried_feature_is_the_carriers_wave_as_it_is_and_is_not_bridged(rng, tanh):
    """The head's output for a carried feature is not used, and no activation bends the
    carrier's wave: the value is the wave itself on the tangent of the feature's
    activation at 0 (a sigmoid's x / 4 + 1/2, a tanh's x), unbridged."""
    series = _waves(rng)
    config = tiny_config(
        max_sequence_len=T,
        sample_len=10,
        bridge_seams=True,
        normalization=Normalization.MINUSONE_ONE if tanh else Normalization.ZERO_ONE,
    )
    encoder = DataEncoder.fit(config, series, [OutputType.CONTINUOUS], None, None)
    generator = build_networks(config, encoder)[0]
    assert generator.carried_columns == [0]
    assert generator.bridge[:, 0].abs().sum() == 0  # the carried column is not bridged
    inputs = torch.randn(5, 10), torch.randn(5, T // 10, 10)
    carried = []
    for _ in range(2):  # two different heads for the carried column, the same carrier
        with torch.no_grad():
            generator.head.weight[:: generator.feature_dim].normal_(std=3.0)
            _, additional, features = generator(*inputs)
        carried.append(features[..., 0])
    torch.testing.assert_close(carried[0], carried[1])
    alive = features[..., 1] + features[..., 2] > 0  # steps before each series' end
    with torch.no_grad():  # the carrier's wave, drawn by hand from the same inputs
        lstm_in = torch.cat([additional[:, None].expand(-1, T // 10, -1), inputs[1]], dim=2)
        hidden, _ = generator.lstm(lstm_in)
        sines = generator.carrier.sines(additional, inputs[0], hidden[:, 0])
        wave = generator.carrier(hidden, sines, None, inputs[1])[0].flatten(1, 2)[..., 0]
    expected = wave if tanh else 0.5 + 0.25 * wave
    torch.testing.assert_close(carried[1][alive], expected[alive])
    assert alive.any() and wave.abs().max() > 0.1  # a wave, not a constant


# ----- training ------------------------------------------------------------------------------
@pytest.mark.parametrize("feedback", [False, True])
def test_a_model_with_a_carrier_trains_plans_saves_and_generates(rng, tmp_path, feedback):
    series = _waves(rng, n=32)
    config = tiny_config(max_sequence_len=T, sample_len=10, epochs=2, feature_feedback=feedback)
    model = DGAN(config)
    plan = model.plan(series, warm_up_steps=0)
    assert "periods: 'feature 0' (median period" in str(plan)
    assert "an envelope critic" in str(plan)
    model.train_numpy(series, progress_bar=False)
    assert model.trainer.envelope_critic is not None  # "auto": beside a carrier
    assert np.isfinite(model.history[-1]["generator_loss"])
    loaded = DGAN.load(model.save(tmp_path / "carrier.dgan"))
    for name, value in model.generator.state_dict().items():
        torch.testing.assert_close(loaded.generator.state_dict()[name], value)
    _, features = loaded.generate_numpy(6)
    assert all(np.isfinite(f).all() for f in features)


def test_a_carried_feature_takes_no_texture_filter_and_others_keep_it(rng):
    """The carrier draws a carried feature's noise floor and loudness; the texture filter
    (`match_texture`) would swing them (docs/quality.md, "A carried wave as its own
    value, its loudness bounded"): it filters the other continuous features only, and
    the plan says so column by column."""
    waves = _waves(rng)
    walks = [np.cumsum(rng.normal(size=(len(w), 1)), axis=0) for w in waves]
    series = [np.concatenate([w, k], axis=1) for w, k in zip(waves, walks, strict=True)]
    config = tiny_config(max_sequence_len=T, sample_len=10, match_texture=True)
    kinds = [OutputType.CONTINUOUS] * 2
    encoder = DataEncoder.fit(config, series, kinds, None, None)
    assert encoder.period_features == [0]
    assert encoder.texture.features == [1]  # the random walk only
    plan = str(DGAN(config).plan(series, warm_up_steps=0))
    texture_lines = [line for line in plan.splitlines() if "(match_texture)" in line]
    assert len(texture_lines) == 1 and "feature 1" in texture_lines[0]


def test_noise_gets_no_carrier_and_false_turns_it_off(rng):
    noise = [rng.normal(size=(T, 1)) for _ in range(16)]
    model = DGAN(tiny_config(max_sequence_len=T, sample_len=10))
    assert "periods:" not in str(model.plan(noise, warm_up_steps=0))
    waves = _waves(rng)
    off = DGAN(tiny_config(max_sequence_len=T, sample_len=10, period_carrier=False))
    assert "periods:" not in str(off.plan(waves, warm_up_steps=0))
    gretel = DGANConfig.gretel(max_sequence_len=T, sample_len=10)
    assert gretel.period_carrier is gretel.envelope_critic is gretel.onset_attribute is False
