"""A wave at each series' own period, on which the generator draws steady oscillations
(``period_carrier``, `dgan.encoding.periods`).

For each carried feature the series' frequency f is a generated additional attribute. A
carrier theta(t) = 2 pi f t + phi runs over the whole series, its phase phi drawn from the
attribute noise, and the feature's value, taken as it is (on its output activation's
tangent at 0, which bends no wave: `dgan.networks.generator`), is
c + a(t) sum_h s_h sin(h theta(t) + psi_h) over the model's harmonics (those the training
series hold, `held_harmonics`), plus noise. The series' first LSTM step sets its
centre c (where the series rests, which need not be its range's middle: a switch-on
overshoots on one side), its waveform, each higher harmonic's share s_h (s_1 = 1) and
phase psi_h, and its loudness
a(t) = (L + (A - L) exp(-t / tau)) s(t): a level L and a start A, both between 0 and
`HEADROOM` times the feature's half range, the start decaying to the level over tau,
while the LSTM's steps only swing it, s(t) within 1 -+ `SWING`, at `KNOTS` knots a step
joined by straight lines that run on across the steps' seams. White noise at the
series' generated noise floor r (an additional attribute, `dgan.encoding.periods`) sits
at its level, L r e(t) (`dgan.networks.white_noise`): a sensor's noise does not follow
the switch-on. All of this is the ``waveform`` "series" (docs/quality.md, "One loudness
and one noise floor a series"). Models from before it ("step") let the steps set each
harmonic's amplitude a_h(t) on its own, with no noise: waveform and loudness wandered
within a series, which real steady waves do not.
No step can break the phase or jump at a seam. A harmonic at or above half a cycle a
step would fold back onto a lower frequency: it is left out of that series. Beside the
head's own output the two waves beat (docs/quality.md, "A carrier of each series' own
period"), so the carried features are drawn by the carrier alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from dgan.encoding.periods import FLOORS, HARMONICS, WAVEFORMS, lowest_frequency
from dgan.errors import ParameterError
from dgan.networks.white_noise import white_noise

UnitMap = Callable[[torch.Tensor], torch.Tensor]
"""Each series' frequency unit (B, C) -> the unit its waves are drawn at: generation's map
onto the training series' periods (`dgan.encoding.period_map`)."""

KNOTS = 4
"""Amplitude knots per LSTM step (at its last value and evenly before it)."""
SWING = 0.1
"""How far the steps may swing a "series" carrier's loudness, as a share of it."""
HEADROOM = 1.25
"""A "series" carrier's level and start, at most, over the feature's half range: room
above the range's end, where each training series' largest value sits, so that a
generated one reaches it at a finite weight."""


class Carrier(nn.Module):
    """The carried features' values (B, K, S, C) from the LSTM's outputs and the carrier.

    ``frequency_columns``: each carried feature's frequency among the additional
    attributes, in [0, 1] (``zero_one``) or [-1, 1]; ``noise_dim``: the attribute noise's
    size, whose last C columns give the C carriers' phases; ``harmonics``: H, and
    ``waveform``: "series" (one waveform and loudness a series) or "step" (each
    harmonic's amplitude set by the steps), the model's (`DataEncoder.period_harmonics`,
    ``period_waveform``); ``floor_columns``: with "series", each carried feature's noise
    floor among the additional attributes (`DataEncoder.floor_columns`); ``half_range``:
    the features' half range before their output's tangent (1 for tanh, 2 for sigmoid),
    which bounds a "series" carrier's loudness; ``switch_ons``: each carried feature's
    median switch-on, where a "series" carrier's loudness starts training
    (`switch_on_bias`; None: a steady wave at half the bound, decaying over one LSTM step).

    Example:
        >>> carrier = Carrier(8, sample_len=5, max_sequence_len=20, frequency_columns=[0],
        ...                   zero_one=True, noise_dim=3, harmonics=3, floor_columns=[1])
        >>> hidden = torch.randn(2, 4, 8)
        >>> sines = carrier.sines(torch.full((2, 2), 0.5), torch.randn(2, 3), hidden[:, 0])
        >>> waves, last = carrier(hidden, sines, None, torch.randn(2, 4, 3))
        >>> tuple(waves.shape), tuple(last.shape)  # one loudness a carrier
        ((2, 4, 5, 1), (2, 1, 1))
    """

    def __init__(
        self,
        hidden_units: int,
        *,
        sample_len: int,
        max_sequence_len: int,
        frequency_columns: list[int],
        zero_one: bool,
        noise_dim: int,
        harmonics: int = HARMONICS,
        waveform: str = "series",
        floor_columns: list[int] | None = None,
        half_range: float = 1.0,
        switch_ons: list[tuple[float, float, float]] | None = None,
    ):
        super().__init__()
        carried = len(frequency_columns)
        if noise_dim < carried:
            raise ParameterError(
                f"period_carrier draws {carried} features on carriers, each with its phase "
                f"from one number of attribute noise, and attribute_noise_dim is {noise_dim}: "
                f"set attribute_noise_dim to {carried} or more, or period_carrier=False."
            )
        self.frequency_columns = list(frequency_columns)
        self.zero_one = zero_one
        self.sample_len = sample_len
        self.max_sequence_len = max_sequence_len
        if waveform not in WAVEFORMS:
            raise ParameterError(f"waveform is {waveform!r}: use one of {WAVEFORMS}.")
        self.floor_columns = list(floor_columns or [])
        if len(self.floor_columns) != (carried if waveform == "series" else 0):
            raise ParameterError(
                f"a {waveform!r} carrier of {carried} features takes "
                f"{carried if waveform == 'series' else 0} noise floors, and "
                f"{len(self.floor_columns)} were given."
            )
        self.harmonics = harmonics
        self.bound = HEADROOM * half_range
        self.lowest = lowest_frequency(max_sequence_len)
        # The amplitudes the steps set a carrier: its loudness, or each harmonic's.
        self.amplitudes = 1 if waveform == "series" else harmonics
        self.knots = nn.Linear(hidden_units, KNOTS * carried * self.amplitudes)
        nn.init.zeros_(self.knots.weight)  # no wave until training asks for one
        nn.init.zeros_(self.knots.bias)
        self.phases = nn.Linear(hidden_units, carried * harmonics)
        self.shares, self.loudness, self.centre = None, None, None
        self.half_range = half_range
        if waveform == "series":
            # the higher harmonics' shares, if any (0 at the start: a sine), the
            # loudness's level, start and decay (0 at the start: a steady wave at half
            # the bound) and the wave's centre (0 at the start: the range's middle)
            if harmonics > 1:
                self.shares = nn.Linear(hidden_units, carried * (harmonics - 1))
            self.loudness = nn.Linear(hidden_units, carried * 3)
            self.centre = nn.Linear(hidden_units, carried)
            for layer in (self.shares, self.loudness, self.centre):
                if layer is not None:
                    nn.init.zeros_(layer.weight)
                    nn.init.zeros_(layer.bias)
            if switch_ons is not None:  # every series starts at the data's median switch-on
                with torch.no_grad():
                    self.loudness.bias.copy_(self.switch_on_bias(switch_ons))
        # Not saved: fixed by sample_len.
        self.register_buffer("interpolation", knot_weights(sample_len), persistent=False)

    def sines(
        self,
        additional: torch.Tensor,
        attribute_noise: torch.Tensor,
        first_hidden: torch.Tensor,
        unit_map: UnitMap | None = None,
    ) -> torch.Tensor:
        """(B, T, C, H) each harmonic's wave s_h sin(h theta(t) + psi_h) over the whole
        series, in fp32, from the generated frequencies (``additional``), the carriers'
        phases (``attribute_noise``) and the waveform (its shares s_h, 1 where the steps
        set each harmonic's amplitude, and its `harmonic_phases`, from the series' first
        LSTM output ``first_hidden``, (B, H)); 0 for a harmonic at or above 0.5 cycles a
        step. In the "series" form each is times the series' loudness (`envelope`), and
        two more channels follow: the wave's centre c, within the half range (H + 1),
        and the noise floor r times the level, which `forward` multiplies by white noise
        (H + 2). Drawn once a series: the steps only swing the harmonics. ``unit_map``:
        as `angles`'."""
        with torch.autocast(additional.device.type, enabled=False):
            angles, audible = self.angles(additional, attribute_noise, unit_map)
            sines = torch.sin(angles + self.harmonic_phases(first_hidden)[:, None])
            if self.shares is not None:
                higher = self.shares(first_hidden.float()).view(
                    len(first_hidden), -1, self.harmonics - 1
                )
                shares = torch.cat([torch.ones_like(higher[..., :1]), higher], dim=-1)
                sines = sines * shares[:, None]
            sines = torch.where(audible, sines, 0.0)
            if self.loudness is None:
                return sines
            unit = additional[:, self.floor_columns].detach().float()  # (B, C)
            unit = (unit if self.zero_one else (unit + 1) / 2).clamp(0, 1)
            floor = FLOORS[0] * (FLOORS[1] / FLOORS[0]) ** unit
            level, loudness = self.envelope(first_hidden)
            steps = sines.shape[1]
            centre = self.half_range * torch.tanh(self.centre(first_hidden.float()))  # (B, C)
            centre = centre[:, None, :, None].expand(-1, steps, -1, 1)
            noise = (level * floor)[:, None, :, None].expand(-1, steps, -1, 1)
            return torch.cat([sines * loudness[..., None], centre, noise], dim=-1)

    def envelope(self, first_hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each series' level L (B, C) and its loudness before the steps' swing (B, T, C),
        L + (A - L) exp(-t / tau), from its first LSTM output (B, H): the level L and the
        start A each `bound` sigmoid(.), tau S exp(.) steps (S at the start)."""
        with torch.autocast(first_hidden.device.type, enabled=False):
            raw = self.loudness(first_hidden.float()).view(len(first_hidden), -1, 3)
            level, start = (self.bound * torch.sigmoid(raw[..., :2])).unbind(-1)  # (B, C)
            decay = self.sample_len * torch.exp(raw[..., 2].clamp(min=-20.0))
            t = torch.arange(self.max_sequence_len, device=raw.device, dtype=torch.float32)
            switch_on = torch.exp(-t[None, :, None] / decay[:, None])  # (B, T, C)
            return level, level[:, None] + (start - level)[:, None] * switch_on

    def switch_on_bias(self, switch_ons: list[tuple[float, float, float]]) -> torch.Tensor:
        """(C * 3,) the loudness layer's bias at which its zero weights give every series
        ``switch_ons`` (each carried feature's level L and start A, in units of the
        series' half range, and decay tau in steps: `dgan.encoding.switch_on`): the
        inverse of `envelope`'s maps, L and A kept within 1-99% of the bound."""
        bias = []
        for level, start, decay in switch_ons:
            for amplitude in (level, start):
                share = min(max(amplitude * self.half_range / self.bound, 0.01), 0.99)
                bias.append(math.log(share / (1 - share)))
            bias.append(math.log(max(decay, 1e-3) / self.sample_len))
        return torch.tensor(bias)

    def units(self, additional: torch.Tensor) -> torch.Tensor:
        """(B, C) each carried feature's generated frequency in ``additional`` as a unit in
        [0, 1], on a log scale from the lowest frequency to 0.5 cycles a step, in fp32."""
        unit = additional[:, self.frequency_columns].detach().float()
        return (unit if self.zero_one else (unit + 1) / 2).clamp(0, 1)

    def angles(
        self,
        additional: torch.Tensor,
        attribute_noise: torch.Tensor,
        unit_map: UnitMap | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, C, H) each harmonic's angle h theta(t) in fp32, reduced to [0, 2 pi) so
        that its sine stays exact over thousands of steps, and (B, 1, C, H) whether each
        harmonic lies below 0.5 cycles a step (above, it would fold back); at each series'
        generated frequency (`units`), mapped by ``unit_map`` where generation gives one
        (each unit onto the training series' periods, `dgan.encoding.period_map`; training
        draws the waves at the units as generated)."""
        carried = len(self.frequency_columns)
        with torch.autocast(additional.device.type, enabled=False):
            unit = self.units(additional)
            if unit_map is not None:
                unit = unit_map(unit)
            frequency = self.lowest * (0.5 / self.lowest) ** unit  # cycles per step
            z = attribute_noise[:, attribute_noise.shape[1] - carried :].float()
            phase = 0.5 * (1 + torch.erf(z / math.sqrt(2)))  # (B, C) uniform, in cycles
            device = additional.device
            t = torch.arange(self.max_sequence_len, device=device, dtype=torch.float32)
            h = torch.arange(1, self.harmonics + 1, device=device, dtype=torch.float32)
            cycles = frequency[:, None, :, None] * t[None, :, None, None]  # (B, T, C, 1)
            audible = frequency[:, None, :, None] * h < 0.5  # (B, 1, C, H)
            cycles = (cycles + phase[:, None, :, None]) * h  # (B, T, C, H)
            return 2 * math.pi * torch.frac(cycles), audible

    def forward(
        self,
        hidden: torch.Tensor,
        sines: torch.Tensor,
        before: torch.Tensor | None,
        feature_noise: torch.Tensor,
        first_step: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The values (B, K, S, C) of steps ``first_step`` .. + K from their LSTM outputs
        ``hidden`` (B, K, H), and the last knot (B, C, 1 or H) for the step after them.
        ``sines``: the series' `sines`; ``before``: the knot before the first step (None:
        the first step's own first knot); ``feature_noise``: those steps' (B, K, Nf),
        from which the white noise is made (`white_noise`)."""
        batch, steps = hidden.shape[:2]
        with torch.autocast(hidden.device.type, enabled=False):
            knots = self.knots(hidden.float()).view(batch, steps, KNOTS, -1, self.amplitudes)
            first = knots[:, :1, :1] if before is None else before[:, None, None]
            previous = torch.cat([first, knots[:, :-1, -1:]], dim=1)  # (B, K, 1, C, H)
            amplitude = torch.einsum(
                "sm,bkmch->bksch", self.interpolation, torch.cat([previous, knots], dim=2)
            )
            span = slice(first_step * self.sample_len, (first_step + steps) * self.sample_len)
            waves = sines[:, span].unflatten(1, (steps, self.sample_len))  # (B, K, S, C, *)
            if self.loudness is None:
                return (amplitude * waves).sum(-1), knots[:, -1, -1]
            swing = 1 + SWING * torch.tanh(amplitude)  # the steps only swing the loudness
            count = self.sample_len * len(self.floor_columns)
            noise = white_noise(feature_noise, count, first_step).view(waves.shape[:4])
            harmonics, centre = waves[..., :-2], waves[..., -2]
            wave = (swing * harmonics).sum(-1) + centre + waves[..., -1] * noise
            return wave, knots[:, -1, -1]

    def harmonic_phases(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, C, H) each harmonic's phase against the carrier's from the series' first LSTM
        output (B, H): the waveform; the first harmonic's is 0 (the carrier's own)."""
        with torch.autocast(hidden.device.type, enabled=False):
            raw = self.phases(hidden.float()).view(hidden.shape[0], -1, self.harmonics)
            phases = math.pi * torch.tanh(raw)
            return torch.cat([torch.zeros_like(phases[..., :1]), phases[..., 1:]], dim=-1)


def knot_weights(sample_len: int) -> torch.Tensor:
    """(S, KNOTS + 1) the weights that give each of a step's S values its amplitude from
    the step before's last knot and the step's own `KNOTS` knots: knot m sits at value
    (m + 1) S / KNOTS - 1 (the last at the step's last value), the step before's last at
    value -1, and each value lies on the straight line between the two knots around it.

    Example:
        >>> knot_weights(4).tolist()[:2]  # knots at values 0, 1, 2, 3
        [[0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]]
    """
    at = [-1.0] + [(m + 1) * sample_len / KNOTS - 1 for m in range(KNOTS)]
    rows = []
    for value in range(sample_len):
        right = next(m for m in range(1, KNOTS + 1) if at[m] >= value)
        frac = (value - at[right - 1]) / (at[right] - at[right - 1])
        row = [0.0] * (KNOTS + 1)
        row[right - 1], row[right] = 1 - frac, frac
        rows.append(row)
    return torch.tensor(rows)
