"""DoppelGANger's generator.

The generator has three parts (Lin et al., IMC 2020, and gretel-synthetics' port):

1. an attribute MLP: attribute noise -> attributes;
2. an additional-attribute MLP: (detached attributes, attribute noise) -> per-example
   midpoint/half-range of each continuous feature;
3. an LSTM that, per cell, reads all attributes (detached) and a feature-noise vector and
   emits ``sample_len`` time steps through ONE fused Linear head. Activations are applied
   per variable slice (sigmoid/tanh, softmax per one-hot group, sigmoid per binary bit)
   with index tensors computed once, so the number of kernels does not grow with the
   number of variables.

For variable-length data the last two feature columns are a generation flag
(continues / ends); every step after the first "ends" is zeroed, as in the paper, or,
with a length attribute, every step after the generated length. Features that oscillate
steadily can be drawn on a carrier at each series' generated period instead of by the
head (`dgan.networks.carrier`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torch import nn

from dgan.encoding.encoded import lengths_from_unit
from dgan.encoding.encoder import SIGMOID, TANH, OutputSlice, series_ends
from dgan.encoding.periods import HARMONICS
from dgan.networks.carrier import Carrier, UnitMap
from dgan.networks.layers import OutputActivation, mlp


class Generator(nn.Module):
    """DoppelGANger generator.

    ``forward`` returns ``(attributes, additional_attributes, features)``; the first two
    are None when the model has none. Shapes: attributes (B, A), additional (B, AA),
    features (B, T, F). Variable-length series end where the generated end-of-series flag
    says (``generation_flag_column``), or, given ``length_column``, at the length that
    additional attribute encodes (`lengths_from_unit`), with the flags set to match.
    """

    def __init__(
        self,
        *,
        attribute_slices: list[OutputSlice] | None,
        additional_slices: list[OutputSlice] | None,
        feature_slices: list[OutputSlice],
        max_sequence_len: int,
        sample_len: int,
        attribute_noise_dim: int,
        feature_noise_dim: int,
        attribute_num_layers: int,
        attribute_num_units: int,
        feature_num_layers: int,
        feature_num_units: int,
        forget_bias: bool,
        generation_flag_column: int | None,
        feature_feedback: bool = False,
        attribute_state: bool = False,
        length_column: int | None = None,
        bridge_seams: bool = False,
        bridge_width: int = 2,
        carried_columns: list[int] | None = None,
        frequency_columns: list[int] | None = None,
        carrier_switch_ons: list[tuple[float, float, float]] | None = None,
        carrier_harmonics: int = HARMONICS,
        carrier_waveform: str = "series",
        floor_columns: list[int] | None = None,
    ):
        super().__init__()
        self.length_column = length_column
        # The length's output range: [0, 1] from a sigmoid, else [-1, 1] from a tanh.
        self.length_zero_one = length_column is not None and sigmoid_at(
            additional_slices, length_column
        )
        self.feature_feedback = feature_feedback
        self.sample_len = sample_len
        self.max_sequence_len = max_sequence_len
        self.generation_flag_column = generation_flag_column
        attribute_dim = sum(s.width for s in attribute_slices or [])
        additional_dim = sum(s.width for s in additional_slices or [])
        self.feature_dim = sum(s.width for s in feature_slices)

        self.attribute_net = None
        if attribute_slices is not None:
            self.attribute_net = nn.Sequential(
                mlp(
                    attribute_noise_dim,
                    attribute_num_units,
                    attribute_num_layers,
                    attribute_dim,
                    batch_norm=True,
                ),
                OutputActivation(attribute_slices),
            )
        self.additional_net = None
        if additional_slices is not None:
            self.additional_net = nn.Sequential(
                mlp(
                    attribute_dim + attribute_noise_dim,
                    attribute_num_units,
                    attribute_num_layers,
                    additional_dim,
                    batch_norm=True,
                ),
                OutputActivation(additional_slices),
            )
        # With feedback, each LSTM step also reads the S values generated at the step
        # before (zeros at the first), as DoppelGANger's original generator does.
        feedback_dim = sample_len * self.feature_dim if feature_feedback else 0
        self.lstm = nn.LSTM(
            attribute_dim + additional_dim + feature_noise_dim + feedback_dim,
            feature_num_units,
            num_layers=feature_num_layers,
            batch_first=True,
        )
        if forget_bias:
            with torch.no_grad():
                for name, param in self.lstm.named_parameters():
                    if name.startswith("bias_ih"):  # gates are (input, forget, cell, output)
                        param[feature_num_units : 2 * feature_num_units].fill_(1.0)
                    elif name.startswith("bias_hh"):
                        param[feature_num_units : 2 * feature_num_units].fill_(0.0)
        # Set by the precision policy where the device cannot run the LSTM safely in the
        # reduced precision (see precision.py): then it runs in fp32 inside autocast.
        self.lstm_in_fp32 = False
        # Set by the policy in 16 bits on a CPU: an odd number of inputs gets a zero one.
        self.lstm_even_input = False
        self.head = nn.Linear(feature_num_units, sample_len * self.feature_dim)
        # With `attribute_state`, the LSTM's first hidden and cell states are made of the
        # (additional) attributes: a shape that lasts the series can be set at its start.
        self.initial_state = None
        if attribute_state and attribute_dim + additional_dim:
            self.initial_state = nn.Linear(
                attribute_dim + additional_dim, 2 * feature_num_layers * feature_num_units
            )
        # The feature columns drawn on a carrier at the frequencies in `frequency_columns`
        # of the additional attributes, in place of the head's output for them. In the
        # "series" form a carried wave is its own value, bounded by the carrier: the
        # activation would bend it (a sigmoid over half the range puts 2.3% of a third
        # harmonic on a sine) and hold a switch-on at the range's end only at infinity.
        self.carried_columns = list(carried_columns or [])
        own_value = bool(self.carried_columns) and carrier_waveform == "series"
        self.feature_activation = OutputActivation(
            feature_slices, linear=self.carried_columns if own_value else None
        )
        self.carrier = None
        if self.carried_columns:
            self.carrier = Carrier(
                feature_num_units,
                sample_len=sample_len,
                max_sequence_len=max_sequence_len,
                frequency_columns=list(frequency_columns),
                zero_one=sigmoid_at(additional_slices, frequency_columns[0]),
                noise_dim=attribute_noise_dim,
                harmonics=carrier_harmonics,
                switch_ons=carrier_switch_ons,
                waveform=carrier_waveform,
                floor_columns=floor_columns,
                # the tangents' x / 4 + 1/2 and x reach the range's ends at x = -+2 and -+1
                half_range=2.0 if sigmoid_at(feature_slices, self.carried_columns[0]) else 1.0,
            )
        # With `bridge_seams`, each LSTM step's first continuous logit is the one that
        # continues the step before: the line fitted to its last `bridge_width` values,
        # one value on. The others are shifted by an offset that falls linearly from that
        # value minus the step's own start (the line fitted to its values 1 to width, one
        # value back) to 0 where the step's last `bridge_width` values begin. The step's
        # value 0 sets nothing (anchored at it, the generator used it as a knob and jumped
        # right after it), and its last values stay as generated, so all steps' offsets
        # follow from the raw logits at once. A width of 2 continues the last value plus
        # the last change; a wider fit makes the few values at a seam a dear knob (at 2
        # and 200 values a step, the generator jumped at each step's third-last value
        # to steer the next step's start).
        bridge, reach = None, None
        if bridge_seams and sample_len >= 3:
            width = min(bridge_width, sample_len - 1)
            continuous = torch.zeros(self.feature_dim)
            for s in feature_slices:
                if s.activation in (SIGMOID, TANH):
                    continuous[s.start : s.start + s.width] = 1.0
            if self.carried_columns:  # a carrier's wave has no seams to bridge
                continuous[self.carried_columns] = 0.0
            # 0 from the last `width` values on: the step's own end stays its own.
            ramp = (1.0 - torch.arange(sample_len) / (sample_len - width)).clamp(min=0.0)
            bridge = ramp[:, None] * continuous  # (S, F)
            reach = line_reach(width)
        # Not saved: models and checkpoints hold the same tensors with and without it.
        self.register_buffer("bridge", bridge, persistent=False)
        self.register_buffer("reach", reach, persistent=False)

    def forward(
        self,
        attribute_noise: torch.Tensor,
        feature_noise: torch.Tensor,
        attributes: torch.Tensor | None = None,
        period_map: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor]:
        """Generate a batch; pass encoded ``attributes`` to condition on them. Generation
        may pass ``period_map``, which takes the batch's encoded attributes and the
        carrier's frequency units and returns the units its waves are drawn at
        (`dgan.encoding.period_map`)."""
        attributes, additional = self.draw_attributes(attribute_noise, attributes)
        unit_map = None if period_map is None else functools.partial(period_map, attributes)
        conditioning = [t.detach() for t in (attributes, additional) if t is not None]
        steps = feature_noise.shape[1]  # T / S cells
        lstm_in = torch.cat(
            [c.unsqueeze(1).expand(-1, steps, -1) for c in conditioning] + [feature_noise], dim=2
        )  # (B, T/S, A + AA + noise)
        state = self._first_state(
            conditioning, torch.float32 if self.lstm_in_fp32 else lstm_in.dtype
        )
        if self.feature_feedback:
            features = self._features_with_feedback(
                lstm_in, additional, attribute_noise, feature_noise, unit_map, state
            )
        else:
            hidden, _ = self._lstm(lstm_in, state)  # (B, T/S, H): all steps in one call
            logits = self._logits(hidden)
            if self.carrier is not None:
                sines = self.carrier.sines(additional, attribute_noise, hidden[:, 0], unit_map)
                waves, _ = self.carrier(hidden, sines, None, feature_noise)
                logits = self._carried(logits, waves)
            features = self._features(logits, None)  # (B, T, F)
        if self.length_column is not None:
            features = self._end_at_length(features, additional[:, self.length_column])
        elif self.generation_flag_column is not None:
            features = features * self._alive_mask(features)
        return attributes, additional, features

    def draw_attributes(
        self, attribute_noise: torch.Tensor, attributes: torch.Tensor | None = None
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """``(attributes, additional)``: the attributes (B, A) the attribute MLP makes of
        ``attribute_noise``, or the encoded ``attributes`` given, and the additional
        attributes (B, AA) made of both; None where the model has none."""
        if attributes is None and self.attribute_net is not None:
            attributes = self.attribute_net(attribute_noise)  # (B, A)
        additional = None
        if self.additional_net is not None:
            parts = (
                [attribute_noise] if attributes is None else [attributes.detach(), attribute_noise]
            )
            additional = self.additional_net(torch.cat(parts, dim=1))  # (B, AA)
        return attributes, additional

    def _first_state(self, conditioning: list[torch.Tensor], dtype: torch.dtype):
        """The LSTM's (hidden, cell) state before its first step, each (layers, B, H) in
        ``dtype`` (the LSTM's input's: made under autocast, it may be 16 bits), made of the
        ``conditioning`` (the detached attributes and additional attributes) with
        `attribute_state`; None (zeros) without it."""
        if self.initial_state is None or not conditioning:
            return None
        made = self.initial_state(torch.cat(conditioning, dim=1))  # (B, 2 * layers * H)
        layers, units = self.lstm.num_layers, self.lstm.hidden_size
        hidden, cell = made.unflatten(1, (2, layers, units)).permute(1, 2, 0, 3)
        hidden = torch.tanh(hidden)  # within (-1, 1), as an LSTM's hidden state
        return hidden.to(dtype).contiguous(), cell.to(dtype).contiguous()

    def _lstm(self, lstm_in: torch.Tensor, state):
        """The LSTM, in fp32 where the precision policy asks for it (`lstm_in_fp32`), with
        an even number of inputs where it asks for that (`lstm_even_input`)."""
        if self.lstm_in_fp32:
            with torch.autocast(lstm_in.device.type, enabled=False):
                return self.lstm(lstm_in.float(), state)
        if self.lstm_even_input and lstm_in.shape[-1] % 2:
            return even_input_lstm(self.lstm, lstm_in, state)
        return self.lstm(lstm_in, state)

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, K, H) LSTM outputs -> (B, K, S, F) feature logits."""
        logits = self.head(hidden)  # (B, K, S*F)
        return logits.unflatten(-1, (self.sample_len, self.feature_dim))

    def _carried(self, logits: torch.Tensor, waves: torch.Tensor) -> torch.Tensor:
        """``logits`` (B, K, S, F) with the carried columns the carrier's ``waves``
        (B, K, S, C)."""
        logits = logits.clone()
        logits[..., self.carried_columns] = waves.to(logits.dtype)
        return logits

    def _features(self, logits: torch.Tensor, before: torch.Tensor | None) -> torch.Tensor:
        """(B, K, S, F) raw logits -> (B, K * S, F) activated features, each of the K
        steps bridged to the one before (`bridge`); ``before`` holds the raw logits
        (B, S, F) of the step before the first, None where the series starts."""
        if self.bridge is not None:
            first = 1 if before is None else 0  # the first step with a step before it
            previous = logits[:, :-1]  # (B, K - first, S, F): the raw step before each
            if before is not None:
                previous = torch.cat([before.unsqueeze(1), previous], dim=1)
            reach = self.reach.to(logits.dtype)  # (W,): a line's value one past W values
            width = reach.shape[0]
            continued = torch.einsum("bksf,s->bkf", previous[:, :, -width:], reach)
            joined, bridge = logits[:, first:], self.bridge.to(logits.dtype)
            # its own start: the line through its values 1..W, one value back (at value 0)
            anchor = torch.einsum("bksf,s->bkf", joined[:, :, 1 : width + 1], reach.flip(0))
            start = joined[:, :, :1] + (continued - joined[:, :, 0]).unsqueeze(2) * bridge[:1]
            rest = joined[:, :, 1:] + (continued - anchor).unsqueeze(2) * bridge[1:]
            joined = torch.cat([start, rest], dim=2)
            logits = torch.cat([logits[:, :first], joined], dim=1)
        return self.feature_activation(logits.flatten(1, 2))

    def _features_with_feedback(
        self,
        lstm_in: torch.Tensor,
        additional: torch.Tensor | None,
        attribute_noise: torch.Tensor,
        feature_noise: torch.Tensor,
        unit_map: UnitMap | None = None,
        state: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """The LSTM one step at a time, each step reading the previous step's values,
        from ``state`` (`_first_state`; None: zeros).

        The fed-back values keep their graph: the generator learns how each step's output
        shapes the next (a smooth join between consecutive groups of S steps). The
        additional attributes, the attribute noise and the feature noise set the
        carrier's waves, if any (their units mapped by ``unit_map``, as in `forward`).
        """
        batch, steps, _ = lstm_in.shape
        previous = lstm_in.new_zeros(batch, self.sample_len * self.feature_dim)
        chunks, before = [], None
        sines, knot = None, None  # the carrier's waves and last knot
        for k in range(steps):
            step_in = torch.cat([lstm_in[:, k], previous.to(lstm_in.dtype)], dim=1)
            hidden, state = self._lstm(step_in.unsqueeze(1), state)  # (B, 1, H)
            logits = self._logits(hidden)  # (B, 1, S, F)
            if self.carrier is not None:
                if sines is None:  # the series' first step sets its waveform
                    sines = self.carrier.sines(additional, attribute_noise, hidden[:, 0], unit_map)
                noise = feature_noise[:, k : k + 1]
                waves, knot = self.carrier(hidden, sines, knot, noise, first_step=k)
                logits = self._carried(logits, waves)
            chunk = self._features(logits, before)  # (B, S, F)
            chunks.append(chunk)
            previous, before = chunk.flatten(1), logits[:, 0]
        return torch.cat(chunks, dim=1)  # (B, T, F)

    def _end_at_length(self, features: torch.Tensor, encoded: torch.Tensor) -> torch.Tensor:
        """Zero each series after its generated length, its flags one-hot from it (the
        flags are the last two feature columns): a hard cut, as `_alive_mask`'s."""
        unit = encoded.detach().float()
        length = lengths_from_unit(unit, features.shape[1], self.length_zero_one)  # (B,)
        steps = torch.arange(features.shape[1], device=features.device)  # (T,)
        alive = (steps < length[:, None]).unsqueeze(-1)  # (B, T, 1)
        flags = torch.stack([steps < length[:, None] - 1, steps == length[:, None] - 1], -1)
        values = features[..., : self.generation_flag_column] * alive.to(features.dtype)
        return torch.cat([values, flags.to(features.dtype)], dim=-1)

    def _alive_mask(self, features: torch.Tensor) -> torch.Tensor:
        """(B, T, 1) mask: 1 up to and including the first step where `series_ends`."""
        flag = self.generation_flag_column
        with torch.no_grad():  # a hard, non-differentiable cut as in DoppelGANger
            ended = series_ends(features[..., flag], features[..., flag + 1])
            continues = (~ended).to(features.dtype)
            alive = torch.cumprod(continues, dim=1)  # (B, T): 1 while every step so far continues
            mask = torch.cat([torch.ones_like(alive[:, :1]), alive[:, :-1]], dim=1)
        return mask.unsqueeze(-1)


def sigmoid_at(slices: list[OutputSlice], column: int) -> bool:
    """Whether the output at ``column`` comes from a sigmoid (in [0, 1]; else a tanh's
    [-1, 1]): how a generated length or frequency is read back.

    Example:
        >>> sigmoid_at([OutputSlice(0, 2, TANH), OutputSlice(2, 1, SIGMOID)], 2)
        True
    """
    return any(s.start == column and s.activation == SIGMOID for s in slices)


def line_reach(width: int) -> torch.Tensor:
    """(width,) weights that give the least-squares line through ``width`` evenly spaced
    values at the next position: for 2, the last value plus the last change; for 1, the
    last value.

    Example:
        >>> line_reach(2).tolist(), line_reach(1).tolist()
        ([-1.0, 2.0], [1.0])
        >>> values = torch.tensor([1.0, 3.0, 2.0, 4.0])  # the line 1.3 + 0.8 x
        >>> round(float(line_reach(4) @ values), 4)  # at x = 4
        4.5
    """
    if width == 1:  # one value has no slope: a flat line
        return torch.ones(1)
    x = torch.arange(width, dtype=torch.float64)
    centred = x - x.mean()
    weights = 1.0 / width + (width - x.mean()) * centred / (centred**2).sum()
    return weights.float()


def even_input_lstm(lstm: nn.LSTM, inputs: torch.Tensor, state=None):
    """``lstm(inputs, state)`` (batch first) with one more input, always zero, and a zero
    weight column for it: the same outputs and gradients, for kernels that want an even
    number of inputs (oneDNN's bf16 LSTM on AMX). ``lstm.weight_ih_l0`` gets its gradient
    through the padding.

    Example:
        >>> lstm = nn.LSTM(3, 4, batch_first=True)
        >>> x = torch.randn(2, 5, 3)
        >>> torch.allclose(even_input_lstm(lstm, x)[0], lstm(x)[0], atol=1e-6)
        True
    """
    weights = [w for layer in lstm.all_weights for w in layer]
    weights[0] = nn.functional.pad(weights[0], (0, 1))  # (4H, I) -> (4H, I + 1)
    inputs = nn.functional.pad(inputs, (0, 1))
    if state is None:
        zeros = inputs.new_zeros(lstm.num_layers, inputs.shape[0], lstm.hidden_size)
        state = (zeros, zeros)
    output, hidden, cell = torch.lstm(
        inputs, state, weights, lstm.bias, lstm.num_layers, lstm.dropout, lstm.training,
        lstm.bidirectional, True,
    )  # fmt: skip
    return output, (hidden, cell)
