"""DoppelGANger's networks: the generator and the two critics (MLPs).

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
with a length attribute, every step after the generated length.
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import nn

from dgan.encoding.encoded import lengths_from_unit
from dgan.encoding.encoder import BITS, SIGMOID, SOFTMAX, TANH, OutputSlice, series_ends
from dgan.spectrum import magnitude_spectrum, magnitude_spectrum_vjp


class OutputActivation(nn.Module):
    """Apply each variable's activation to its slice of the last dimension.

    Columns are gathered into one block per activation kind (and per softmax width),
    activated, concatenated, and put back in order with a single index_select.

    Example:
        >>> act = OutputActivation([OutputSlice(0, 1, "sigmoid"), OutputSlice(1, 2, "softmax")])
        >>> out = act(torch.zeros(4, 3))
        >>> out[0].tolist()
        [0.5, 0.5, 0.5]
    """

    def __init__(self, slices: list[OutputSlice]):
        super().__init__()
        groups: dict[tuple[str, int], list[int]] = defaultdict(list)
        for s in slices:
            # Element-wise activations need no grouping by width; softmax groups do.
            width = s.width if s.activation == SOFTMAX else 1
            groups[(s.activation, width)].extend(range(s.start, s.start + s.width))
        self.kinds = list(groups)
        order = [i for key in self.kinds for i in groups[key]]
        for k, key in enumerate(self.kinds):
            self.register_buffer(f"idx{k}", torch.tensor(groups[key]), persistent=False)
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        self.register_buffer("inverse", inverse, persistent=False)

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        parts = []
        for k, (kind, width) in enumerate(self.kinds):
            x = logits.index_select(-1, getattr(self, f"idx{k}"))
            if kind in (SIGMOID, BITS):
                x = torch.sigmoid(x)
            elif kind == TANH:
                x = torch.tanh(x)
            else:  # softmax over each group of `width` consecutive gathered columns
                x = torch.softmax(x.unflatten(-1, (-1, width)), dim=-1).flatten(-2)
            parts.append(x)
        return torch.cat(parts, dim=-1).index_select(-1, self.inverse)


def _mlp(in_dim: int, hidden: int, layers: int, out_dim: int, batch_norm: bool) -> nn.Sequential:
    blocks: list[nn.Module] = []
    for i in range(layers):
        blocks.append(nn.Linear(in_dim if i == 0 else hidden, hidden))
        blocks.append(nn.ReLU())
        if batch_norm:
            blocks.append(nn.BatchNorm1d(hidden))
    blocks.append(nn.Linear(hidden if layers else in_dim, out_dim))
    return nn.Sequential(*blocks)


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
        length_column: int | None = None,
    ):
        super().__init__()
        self.length_column = length_column
        # The length's output range: [0, 1] from a sigmoid, else [-1, 1] from a tanh.
        self.length_zero_one = length_column is not None and any(
            x.start == length_column and x.activation == SIGMOID for x in additional_slices
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
                _mlp(
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
                _mlp(
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
        self.feature_activation = OutputActivation(feature_slices)

    def forward(
        self,
        attribute_noise: torch.Tensor,
        feature_noise: torch.Tensor,
        attributes: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor]:
        """Generate a batch; pass encoded ``attributes`` to condition on them."""
        if attributes is None and self.attribute_net is not None:
            attributes = self.attribute_net(attribute_noise)  # (B, A)
        additional = None
        if self.additional_net is not None:
            parts = (
                [attribute_noise] if attributes is None else [attributes.detach(), attribute_noise]
            )
            additional = self.additional_net(torch.cat(parts, dim=1))  # (B, AA)
        conditioning = [t.detach() for t in (attributes, additional) if t is not None]
        steps = feature_noise.shape[1]  # T / S cells
        lstm_in = torch.cat(
            [c.unsqueeze(1).expand(-1, steps, -1) for c in conditioning] + [feature_noise], dim=2
        )  # (B, T/S, A + AA + noise)
        if self.feature_feedback:
            features = self._features_with_feedback(lstm_in)  # (B, T, F)
        else:
            hidden, _ = self._lstm(lstm_in, None)  # (B, T/S, H): all steps in one call
            features = self._features(hidden)  # (B, T, F)
        if self.length_column is not None:
            features = self._end_at_length(features, additional[:, self.length_column])
        elif self.generation_flag_column is not None:
            features = features * self._alive_mask(features)
        return attributes, additional, features

    def _lstm(self, lstm_in: torch.Tensor, state):
        """The LSTM, in fp32 where the precision policy asks for it (`lstm_in_fp32`), with
        an even number of inputs where it asks for that (`lstm_even_input`)."""
        if self.lstm_in_fp32:
            with torch.autocast(lstm_in.device.type, enabled=False):
                return self.lstm(lstm_in.float(), state)
        if self.lstm_even_input and lstm_in.shape[-1] % 2:
            return even_input_lstm(self.lstm, lstm_in, state)
        return self.lstm(lstm_in, state)

    def _features(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, K, H) LSTM outputs -> (B, K * S, F) activated features."""
        logits = self.head(hidden)  # (B, K, S*F)
        logits = logits.reshape(logits.shape[0], -1, self.feature_dim)
        return self.feature_activation(logits)

    def _features_with_feedback(self, lstm_in: torch.Tensor) -> torch.Tensor:
        """The LSTM one step at a time, each step reading the previous step's values.

        The fed-back values keep their graph: the generator learns how each step's output
        shapes the next (a smooth join between consecutive groups of S steps).
        """
        batch, steps, _ = lstm_in.shape
        previous = lstm_in.new_zeros(batch, self.sample_len * self.feature_dim)
        state, chunks = None, []
        for k in range(steps):
            step_in = torch.cat([lstm_in[:, k], previous.to(lstm_in.dtype)], dim=1)
            hidden, state = self._lstm(step_in.unsqueeze(1), state)  # (B, 1, H)
            chunk = self._features(hidden)  # (B, S, F)
            chunks.append(chunk)
            previous = chunk.flatten(1)
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


class Critic(nn.Module):
    """Wasserstein critic: an MLP over the concatenated, flattened inputs.

    With ``spectrum=True`` it also reads the magnitude spectrum of the last input (the
    features, (B, T, F)): how strong each period is in a series, wherever it starts,
    which an MLP over the flattened steps would have to learn at every offset (a daily
    cycle where the real series has none). ``in_dim`` then counts the spectrum's
    (T // 2 + 1) * F columns.

    Example:
        >>> critic = Critic(in_dim=7, num_layers=2, num_units=8)
        >>> critic(torch.zeros(3, 2), torch.zeros(3, 5)).shape
        torch.Size([3, 1])
        >>> spectral = Critic(in_dim=2 + 4 + 3, num_layers=2, num_units=8, spectrum=True)
        >>> spectral(torch.zeros(3, 2), torch.zeros(3, 4, 1)).shape
        torch.Size([3, 1])
    """

    def __init__(
        self,
        in_dim: int,
        num_layers: int,
        num_units: int,
        spectrum: bool = False,
        projected: list[int] | None = None,
    ):
        super().__init__()
        self.spectrum = spectrum
        self.net = _mlp(in_dim, num_units, num_layers, 1, batch_norm=False)
        self.projection = None
        if projected:  # embeds into the last hidden layer (the input, without one)
            self.register_buffer("projected", torch.tensor(projected), persistent=False)
            width = num_units if num_layers else in_dim
            self.projection = nn.Linear(len(projected), width, bias=False)

    def _inputs(self, parts) -> list[torch.Tensor]:
        present = [p for p in parts if p is not None]
        if self.spectrum:
            present.append(magnitude_spectrum(present[-1]).to(present[-1].dtype))
        return [p.flatten(1) for p in present]  # each (B, -1)

    def forward(self, *parts: torch.Tensor | None) -> torch.Tensor:
        x = torch.cat(self._inputs(parts), dim=1)  # (B, in)
        if self.projection is None:
            return self.net(x)  # (B, 1)
        hidden = self.net[:-1](x)  # (B, H)
        embedded = self.projection(x.index_select(1, self.projected))  # (B, H)
        return self.net[-1](hidden) + (embedded * hidden).sum(dim=1, keepdim=True)

    def input_gradient(self, *parts: torch.Tensor | None) -> torch.Tensor:
        """d score / d input for each example, (B, inputs' columns), in closed form.

        For a ReLU MLP the input gradient is the last layer's weights carried back through
        each layer's weights, masked where that layer's ReLU was off. The result is
        differentiable with respect to the weights by an ordinary backward, so the gradient
        penalty needs no double backward (what autograd would compute, to rounding: ReLU's
        second derivative is zero). With a spectrum, the gradient reaching its columns is
        carried on to the features (`magnitude_spectrum_vjp`), so the penalty holds the
        critic to slope 1 in the series themselves.

        Example:
            >>> critic = Critic(in_dim=3 + 4 + 3, num_layers=2, num_units=4, spectrum=True)
            >>> a, x = torch.randn(5, 3), torch.randn(5, 4, 1, requires_grad=True)
            >>> auto, = torch.autograd.grad(critic(a, x).sum(), x)
            >>> torch.allclose(critic.input_gradient(a, x.detach())[:, 3:], auto.flatten(1),
            ...                atol=1e-5)
            True
        """
        inputs = self._inputs(parts)
        x = torch.cat(inputs, dim=1)  # (B, in)
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        masks = []
        with torch.no_grad():  # where each ReLU passes: constants of the gradient
            h = x
            for layer in linears[:-1]:
                h = torch.relu(nn.functional.linear(h, layer.weight, layer.bias))
                # 1 where the ReLU passed, else 0, in h's dtype: several times faster to
                # make and to multiply (forward and backward) than a bool mask `z > 0`.
                masks.append(torch.sign(h))
        gradient = linears[-1].weight  # (1, H): d score / d last hidden layer
        if self.projection is not None:
            gradient = gradient + self.projection(x.index_select(1, self.projected))  # (B, H)
        for layer, mask in zip(reversed(linears[:-1]), reversed(masks), strict=True):
            # (B, H) -> (B, layer input); the first product broadcasts the (1, H) row
            gradient = (gradient.to(mask.dtype) * mask) @ layer.weight
        gradient = gradient.expand(x.shape[0], -1)  # a critic without hidden layers: one row
        if self.projection is not None:  # the class columns also reach the score directly
            hidden = self.net[:-1](x)  # (B, H), with its graph: the term depends on weights
            direct = hidden @ self.projection.weight.to(hidden.dtype)  # (B, P)
            gradient = gradient.index_add(1, self.projected, direct.to(gradient.dtype))
        if not self.spectrum:
            return gradient
        features = [p for p in parts if p is not None][-1]  # (B, T, F)
        spectral = inputs[-1].shape[1]
        to_spectrum = gradient[:, -spectral:].reshape(features.shape[0], -1, features.shape[2])
        through = magnitude_spectrum_vjp(features, to_spectrum).flatten(1)  # (B, T * F)
        gradient, steps = gradient[:, :-spectral], through.shape[1]
        series = gradient[:, -steps:] + through.to(gradient.dtype)
        return torch.cat([gradient[:, :-steps], series], dim=1)


class TemporalCritic(nn.Module):
    """A critic that reads the series through 1-D convolutions over time.

    Three convolutions (kernel 5; the last two halve the length) and a mean over time
    summarise the series; attributes join after that, and an MLP scores. It sees local
    temporal patterns (steps, slopes, oscillations) with weights shared across time,
    which the MLP critic over the flattened series has to learn at every position.

    Example:
        >>> critic = TemporalCritic(feature_dim=3, attribute_dim=2, num_units=8)
        >>> critic(torch.zeros(4, 2), None, torch.zeros(4, 10, 3)).shape
        torch.Size([4, 1])
    """

    def __init__(self, feature_dim: int, attribute_dim: int, num_units: int):
        super().__init__()
        self.convolutions = nn.Sequential(
            nn.Conv1d(feature_dim, num_units, 5, padding=2),
            nn.LeakyReLU(0.2),
            nn.Conv1d(num_units, num_units, 5, stride=2, padding=2),
            nn.LeakyReLU(0.2),
            nn.Conv1d(num_units, num_units, 5, stride=2, padding=2),
            nn.LeakyReLU(0.2),
        )
        self.score = _mlp(num_units + attribute_dim, num_units, 1, 1, batch_norm=False)

    def forward(self, *parts: torch.Tensor | None) -> torch.Tensor:
        *attribute_parts, features = parts
        summary = self.convolutions(features.transpose(1, 2)).mean(dim=2)  # (B, U)
        flat = [p.flatten(1) for p in attribute_parts if p is not None]
        return self.score(torch.cat([*flat, summary], dim=1))  # (B, 1)


def build_networks(config, encoder) -> tuple[Generator, Critic, Critic | None]:
    """The generator, critic and (if used) attribute critic for a fitted `DataEncoder`.

    Initialisation draws from torch's global RNG: seed it (under ``fork_rng``) first for
    reproducible weights. The critic sees attributes, additional attributes and the whole
    flattened series; the attribute critic only the (additional) attributes.

    Example:
        >>> import numpy as np
        >>> from dgan import DGANConfig, OutputType
        >>> from dgan.encoding.encoder import DataEncoder
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
        >>> encoder = DataEncoder.fit(config, [np.zeros((4, 1))] * 2, [OutputType.CONTINUOUS],
        ...                           None, None)
        >>> generator, critic, attribute_critic = build_networks(config, encoder)
        >>> attribute_critic is not None  # example scaling makes additional attributes
        True
    """
    c, enc = config, encoder
    generator = Generator(
        attribute_slices=enc.attribute_slices,
        additional_slices=enc.additional_slices,
        feature_slices=enc.feature_slices,
        max_sequence_len=c.max_sequence_len,
        sample_len=c.sample_len,
        attribute_noise_dim=c.attribute_noise_dim,
        feature_noise_dim=c.feature_noise_dim,
        attribute_num_layers=c.attribute_num_layers,
        attribute_num_units=c.attribute_num_units,
        feature_num_layers=c.feature_num_layers,
        feature_num_units=c.feature_num_units,
        forget_bias=c.forget_bias,
        generation_flag_column=enc.generation_flag_column,
        feature_feedback=c.feature_feedback,
        length_column=enc.length_column,
    )
    attribute_dim = enc.attribute_dim + enc.additional_dim
    critic_dim = attribute_dim + c.max_sequence_len * enc.feature_dim
    if c.spectral_critic:
        critic_dim += (c.max_sequence_len // 2 + 1) * enc.feature_dim
    projected = [  # the discrete attributes' one-hot columns come first in the input
        i for s in enc.attribute_slices or [] if s.activation == SOFTMAX
        for i in range(s.start, s.start + s.width)
    ]  # fmt: skip
    critic = Critic(
        critic_dim,
        c.discriminator_num_layers,
        c.discriminator_num_units,
        c.spectral_critic,
        projected if c.projection_critic else None,
    )
    attribute_critic = None
    if c.use_attribute_discriminator and attribute_dim > 0:
        attribute_critic = Critic(
            attribute_dim, c.discriminator_num_layers, c.discriminator_num_units
        )
    return generator, critic, attribute_critic


def build_temporal_critic(config, encoder) -> TemporalCritic:
    """The optional temporal critic (``config.temporal_critic``) for a fitted encoder."""
    attribute_dim = encoder.attribute_dim + encoder.additional_dim
    return TemporalCritic(encoder.feature_dim, attribute_dim, config.temporal_critic_num_units)
