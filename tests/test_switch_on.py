"""Where a "series" carrier's loudness starts training: the training series' median
switch-on (`dgan.encoding.switch_on`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dgan import DGANConfig, OutputType
from dgan.encoding import periods
from dgan.encoding.encoder import DataEncoder
from dgan.encoding.encoder_state import encoder_state
from dgan.encoding.switch_on import median_switch_ons, series_switch_on
from dgan.networks import build_networks
from dgan.networks.carrier import Carrier
from dgan.series import SeriesRows


def _switch_on(rng, n, period, tau, ratio=2.0, noise=0.01, scale=1.0):
    """A wave that switches on at ``ratio`` times its level and decays to it over ``tau``
    steps, at a random phase, with white noise of ``noise`` of its level."""
    t = np.arange(n)
    wave = np.sin(2 * np.pi * t / period + rng.uniform(0, 2 * np.pi))
    level = rng.uniform(0.8, 1.25) * scale
    return level * ((1 + (ratio - 1) * np.exp(-t / tau)) * wave + noise * rng.normal(size=n))


class _Scaled:
    """A global encoder stand-in that scales values by a constant."""

    def __init__(self, factor):
        self.factor = factor

    def transform(self, values):
        return values * self.factor


@pytest.mark.parametrize(("period", "tau", "ratio"), [(12, 40, 2.0), (24, 80, 1.5), (48, 20, 3.0)])
def test_a_series_switch_on_is_read_back(rng, period, tau, ratio):
    """The start over the level and the decay time come back within a few percent, at
    any phase and under a little noise; the level is in units of the series' half
    range, so L times that half range is the wave's steady amplitude."""
    fits = []
    for _ in range(8):
        n = int(rng.integers(500, 1000))
        wave = _switch_on(rng, n, period * rng.uniform(0.95, 1.05), tau, ratio)
        steady = wave[n // 2 :].std() * np.sqrt(2)
        level, start, decay = series_switch_on(wave, float(period))
        assert level * (wave.max() - wave.min()) / 2 == pytest.approx(steady, rel=0.05)
        fits.append((start / level, decay))
    ratios, decays = np.array(fits).T
    assert np.median(ratios) == pytest.approx(ratio, rel=0.08)
    assert np.median(decays) == pytest.approx(tau, rel=0.1)


def test_a_steady_wave_reads_as_its_level_throughout(rng):
    """With no switch-on the start is the level (whatever decay fits best)."""
    wave = _switch_on(rng, 600, 12.0, 40, ratio=1.0)
    level, start, _ = series_switch_on(wave, 12.0)
    assert start / level == pytest.approx(1.0, abs=0.03)


def test_short_flat_or_periodless_series_tell_no_envelope(rng):
    assert series_switch_on(_switch_on(rng, 40, 12.0, 40), 12.0) is None  # under 4 periods
    assert series_switch_on(np.ones(200), 12.0) is None
    assert series_switch_on(_switch_on(rng, 200, 12.0, 40), np.nan) is None
    assert series_switch_on(_switch_on(rng, 200, 12.0, 40), 1.0) is None  # no wave to read


def test_median_switch_ons_read_the_models_values_from_the_gate_sample(rng, monkeypatch):
    """The medians read the values as the model's global encoders give them (a linear
    scale changes nothing: the level is over each series' half range) from at most
    `GATE_SERIES` series; a column where no series tells an envelope gives None."""
    waves = [_switch_on(rng, int(rng.integers(300, 800)), 12.0, 40)[:, None] for _ in range(30)]
    rows = SeriesRows.from_list(waves)
    (plain,) = median_switch_ons(rows, [0], [_Scaled(1.0)])
    (scaled,) = median_switch_ons(rows, [0], [_Scaled(1000.0)])
    np.testing.assert_allclose(plain, scaled, rtol=1e-6)
    level, start, decay = plain
    assert start / level == pytest.approx(2.0, rel=0.06) and decay == pytest.approx(40, rel=0.1)
    monkeypatch.setattr(periods, "GATE_SERIES", 8)
    read = []
    real_frequencies = periods.series_frequencies
    monkeypatch.setattr(
        "dgan.encoding.switch_on.series_frequencies",
        lambda f, c: read.append(len(f)) or real_frequencies(f, c),
    )
    median_switch_ons(rows, [0], [_Scaled(1.0)])
    assert read == [8]
    short = SeriesRows.from_list([w[:30] for w in waves])
    assert median_switch_ons(short, [0], [_Scaled(1.0)]) is None


@pytest.mark.parametrize("half_range", [1.0, 2.0])
def test_the_carrier_starts_every_series_at_the_given_envelope(half_range):
    """Before training (zero weights) every series' loudness is the given switch-on, in
    the carrier's units (the series' half range is ``half_range`` there); without
    switch-ons it is as before, a steady wave at half the bound."""
    kwargs = dict(sample_len=10, max_sequence_len=200, frequency_columns=[0], zero_one=True,
                  noise_dim=1, floor_columns=[1], half_range=half_range)  # fmt: skip
    carrier = Carrier(6, switch_ons=[(0.5, 1.0, 40.0)], **kwargs)
    with torch.no_grad():
        level, loudness = carrier.envelope(torch.randn(3, 6))
    t = torch.arange(200.0)
    expected = half_range * (0.5 + 0.5 * torch.exp(-t / 40))
    torch.testing.assert_close(level, torch.full((3, 1), 0.5 * half_range))
    torch.testing.assert_close(loudness[..., 0], expected.expand(3, -1))
    plain = Carrier(6, **kwargs)
    with torch.no_grad():
        level, loudness = plain.envelope(torch.randn(3, 6))
    torch.testing.assert_close(loudness, level[:, None].expand_as(loudness), rtol=0, atol=0.02)


def test_the_encoder_reads_the_switch_on_and_the_networks_start_there_unsaved(rng):
    """Fitting reads each carried feature's median switch-on; the generator's carrier
    starts at it; the model file leaves it out (after training the weights hold it)."""
    waves = [_switch_on(rng, int(rng.integers(300, 800)), 12.0, 40)[:, None] for _ in range(24)]
    config = DGANConfig(max_sequence_len=800, sample_len=20, period_carrier=True)
    encoder = DataEncoder.fit(config, waves, [OutputType.CONTINUOUS], None, None)
    (level, start, decay) = encoder.period_switch_ons[0]
    assert start / level == pytest.approx(2.0, rel=0.06) and decay == pytest.approx(40, rel=0.1)
    generator = build_networks(config, encoder)[0]
    carrier = generator.carrier
    torch.testing.assert_close(
        carrier.loudness.bias, carrier.switch_on_bias([(level, start, decay)])
    )
    assert "period_switch_ons" not in encoder_state(encoder)
    assert DataEncoder.from_json(encoder_state(encoder)).period_switch_ons is None
