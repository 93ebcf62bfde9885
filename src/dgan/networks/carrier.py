"""A wave at each series' own period, on which the generator draws steady oscillations
(``period_carrier``, `dgan.encoding.periods`).

For each carried feature the series' frequency f is a generated additional attribute. A
carrier theta(t) = 2 pi f t + phi runs over the whole series, its phase phi drawn from the
attribute noise, and the feature's value (before its output activation) is
sum_h a_h(t) sin(h theta(t) + psi_h) over the model's harmonics (`HARMONICS`): the
LSTM's steps set the amplitudes a_h at `KNOTS` knots a step, joined by straight lines
that run on across the steps' seams, and its first step sets each higher harmonic's
phase psi_h (the waveform).
No step can break the phase or jump at a seam. A harmonic at or above half a cycle a
step would fold back onto a lower frequency: it is left out of that series. Beside the
head's own output the two waves beat (docs/quality.md, "A carrier of each series' own
period"), so the carried features are drawn by the carrier alone.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from dgan.encoding.periods import HARMONICS, lowest_frequency
from dgan.errors import ParameterError

KNOTS = 4
"""Amplitude knots per LSTM step (at its last value and evenly before it)."""


class Carrier(nn.Module):
    """The carried features' values (B, K, S, C) from the LSTM's outputs and the carrier.

    ``frequency_columns``: each carried feature's frequency among the additional
    attributes, in [0, 1] (``zero_one``) or [-1, 1]; ``noise_dim``: the attribute noise's
    size, whose last C columns give the C carriers' phases; ``harmonics``: H, the model's
    (`DataEncoder.period_harmonics`).

    Example:
        >>> carrier = Carrier(8, sample_len=5, max_sequence_len=20, frequency_columns=[0],
        ...                   zero_one=True, noise_dim=3, harmonics=3)
        >>> hidden = torch.randn(2, 4, 8)
        >>> sines = carrier.sines(torch.full((2, 1), 0.5), torch.randn(2, 3), hidden[:, 0])
        >>> waves, last = carrier(hidden, sines, None)
        >>> tuple(waves.shape), tuple(last.shape)
        ((2, 4, 5, 1), (2, 1, 3))
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
        self.harmonics = harmonics
        self.lowest = lowest_frequency(max_sequence_len)
        self.knots = nn.Linear(hidden_units, KNOTS * carried * harmonics)
        nn.init.zeros_(self.knots.weight)  # no wave until training asks for one
        nn.init.zeros_(self.knots.bias)
        self.phases = nn.Linear(hidden_units, carried * harmonics)
        # Not saved: fixed by sample_len.
        self.register_buffer("interpolation", knot_weights(sample_len), persistent=False)

    def sines(
        self, additional: torch.Tensor, attribute_noise: torch.Tensor, first_hidden: torch.Tensor
    ) -> torch.Tensor:
        """(B, T, C, H) each harmonic's wave sin(h theta(t) + psi_h) over the whole series,
        in fp32, from the generated frequencies (``additional``), the carriers' phases
        (``attribute_noise``) and the waveform (`harmonic_phases` of the series' first LSTM
        output ``first_hidden``, (B, H)); 0 for a harmonic at or above 0.5 cycles a step.
        Drawn once a series: the steps only scale them."""
        with torch.autocast(additional.device.type, enabled=False):
            angles, audible = self.angles(additional, attribute_noise)
            sines = torch.sin(angles + self.harmonic_phases(first_hidden)[:, None])
            return torch.where(audible, sines, 0.0)

    def angles(
        self, additional: torch.Tensor, attribute_noise: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, C, H) each harmonic's angle h theta(t) in fp32, reduced to [0, 2 pi) so
        that its sine stays exact over thousands of steps, and (B, 1, C, H) whether each
        harmonic lies below 0.5 cycles a step (above, it would fold back)."""
        carried = len(self.frequency_columns)
        with torch.autocast(additional.device.type, enabled=False):
            unit = additional[:, self.frequency_columns].detach().float()  # (B, C)
            unit = (unit if self.zero_one else (unit + 1) / 2).clamp(0, 1)
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
        first_step: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The values (B, K, S, C) of steps ``first_step`` .. + K from their LSTM outputs
        ``hidden`` (B, K, H), and the last knot (B, C, H) for the step after them.
        ``sines``: the series' `sines`; ``before``: the knot before the first step (None:
        the first step's own first knot)."""
        batch, steps = hidden.shape[:2]
        with torch.autocast(hidden.device.type, enabled=False):
            knots = self.knots(hidden.float()).view(batch, steps, KNOTS, -1, self.harmonics)
            first = knots[:, :1, :1] if before is None else before[:, None, None]
            previous = torch.cat([first, knots[:, :-1, -1:]], dim=1)  # (B, K, 1, C, H)
            amplitude = torch.einsum(
                "sm,bkmch->bksch", self.interpolation, torch.cat([previous, knots], dim=2)
            )
            span = slice(first_step * self.sample_len, (first_step + steps) * self.sample_len)
            wave = amplitude * sines[:, span].unflatten(1, (steps, self.sample_len))
            return wave.sum(-1), knots[:, -1, -1]

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
