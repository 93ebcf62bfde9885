"""The Wasserstein critics: an MLP over the flattened series (optionally its spectrum and its
sorted step changes too, and a projection of the discrete attributes), one of 1-D
convolutions over time, and one of the series' envelopes."""

from __future__ import annotations

import torch
from torch import nn

from dgan.networks.changes import sorted_changes, sorted_changes_vjp
from dgan.networks.envelopes import log_envelope, log_envelope_vjp
from dgan.networks.layers import mlp
from dgan.spectrum import magnitude_spectrum, magnitude_spectrum_vjp


class Critic(nn.Module):
    """Wasserstein critic: an MLP over the concatenated, flattened inputs.

    With ``spectrum=True`` it also reads the magnitude spectrum of the last input (the
    features, (B, T, F)): how strong each period is in a series, wherever it starts,
    which an MLP over the flattened steps would have to learn at every offset (a daily
    cycle where the real series has none). ``in_dim`` then counts the spectrum's
    (T // 2 + 1) * F columns. With ``changes=True`` it also reads each feature's step
    changes sorted by size (`sorted_changes`: a jump where real series move evenly,
    wherever it is), (T - 1) * F more columns, after the spectrum's.

    Example:
        >>> critic = Critic(in_dim=7, num_layers=2, num_units=8)
        >>> critic(torch.zeros(3, 2), torch.zeros(3, 5)).shape
        torch.Size([3, 1])
        >>> spectral = Critic(in_dim=2 + 4 + 3, num_layers=2, num_units=8, spectrum=True)
        >>> spectral(torch.zeros(3, 2), torch.zeros(3, 4, 1)).shape
        torch.Size([3, 1])
        >>> both = Critic(in_dim=2 + 4 + 3 + 3, num_layers=2, num_units=8, spectrum=True,
        ...               changes=True)
        >>> both(torch.zeros(3, 2), torch.zeros(3, 4, 1)).shape
        torch.Size([3, 1])
    """

    def __init__(
        self,
        in_dim: int,
        num_layers: int,
        num_units: int,
        spectrum: bool = False,
        projected: list[int] | None = None,
        changes: bool = False,
    ):
        super().__init__()
        self.spectrum, self.changes = spectrum, changes
        # What the critic reads of the series beside its steps, each with its closed-form
        # vector-Jacobian product (`input_gradient` carries their gradient to the steps).
        self.summaries = [
            pair
            for wanted, pair in (
                (spectrum, (magnitude_spectrum, magnitude_spectrum_vjp)),
                (changes, (sorted_changes, sorted_changes_vjp)),
            )
            if wanted
        ]
        self.net = mlp(in_dim, num_units, num_layers, 1, batch_norm=False)
        self.projection = None
        if projected:  # embeds into the last hidden layer (the input, without one)
            self.register_buffer("projected", torch.tensor(projected), persistent=False)
            width = num_units if num_layers else in_dim
            self.projection = nn.Linear(len(projected), width, bias=False)

    def _inputs(self, parts) -> list[torch.Tensor]:
        present = [p for p in parts if p is not None]
        series = present[-1]  # (B, T, F)
        present += [summarise(series).to(series.dtype) for summarise, _ in self.summaries]
        return [p.flatten(1) for p in present]  # each (B, -1)

    def forward(self, *parts: torch.Tensor | None) -> torch.Tensor:
        return self.score_inputs(torch.cat(self._inputs(parts), dim=1))

    def score_inputs(self, x: torch.Tensor) -> torch.Tensor:
        """(B, in) the flattened inputs (the parts, then the summaries) -> (B, 1) scores:
        `forward` after the summaries, for scoring inputs put together by hand (e.g. one
        part from another batch, `benchmarks/critic_probe.py`)."""
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
        second derivative is zero). With a spectrum or sorted changes, the gradient reaching
        their columns is carried on to the features (`magnitude_spectrum_vjp`,
        `sorted_changes_vjp`), so the penalty holds the critic to slope 1 in the series
        themselves.

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
        if not self.summaries:
            return gradient
        features = [p for p in parts if p is not None][-1]  # (B, T, F)
        batch, features_dim = features.shape[0], features.shape[2]
        widths = [part.shape[1] for part in inputs[-len(self.summaries) :]]
        widths.insert(0, gradient.shape[1] - sum(widths))  # the attributes' and steps'
        gradient, *to_summaries = gradient.split(widths, dim=1)
        steps = features.shape[1] * features_dim
        series = gradient[:, -steps:]
        for (_, vjp), to_summary in zip(self.summaries, to_summaries, strict=True):
            through = vjp(features, to_summary.reshape(batch, -1, features_dim))
            series = series + through.flatten(1).to(series.dtype)
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
        self.score = mlp(num_units + attribute_dim, num_units, 1, 1, batch_norm=False)

    def forward(self, *parts: torch.Tensor | None) -> torch.Tensor:
        *attribute_parts, features = parts
        summary = self.convolutions(features.transpose(1, 2)).mean(dim=2)  # (B, U)
        flat = [p.flatten(1) for p in attribute_parts if p is not None]
        return self.score(torch.cat([*flat, summary], dim=1))  # (B, 1)


class EnvelopeCritic(nn.Module):
    """A Wasserstein critic of the attributes and each feature's envelope only: the log of
    its spread in consecutive windows of ``width`` steps (`log_envelope`).

    The main critic reads the envelope too, but among every value of the series: a wave
    that swells and fades costs it little against the gaps it sees elsewhere, so the
    generator has no reason to hold its amplitude. This critic sees nothing else, and its
    term in the generator loss gives the envelope a gradient of its own: a steady level
    where real series hold one, a transient that decays as theirs do. Its input gradient
    is in closed form (`input_gradient`), so its penalty needs no double backward.

    Example:
        >>> critic = EnvelopeCritic(attribute_dim=2, feature_dim=1, max_sequence_len=8,
        ...                         width=4, num_layers=2, num_units=8)
        >>> critic(torch.zeros(3, 2), None, torch.randn(3, 8, 1)).shape
        torch.Size([3, 1])
    """

    def __init__(
        self,
        attribute_dim: int,
        feature_dim: int,
        max_sequence_len: int,
        width: int,
        num_layers: int,
        num_units: int,
    ):
        super().__init__()
        self.width = width
        windows = max_sequence_len // width * feature_dim
        self.critic = Critic(attribute_dim + windows, num_layers, num_units)

    def forward(self, *parts: torch.Tensor | None) -> torch.Tensor:
        *attributes, features = parts
        envelope = log_envelope(features, self.width).to(features.dtype)
        return self.critic(*attributes, envelope)

    def input_gradient(self, *parts: torch.Tensor | None) -> torch.Tensor:
        """d score / d (attributes, additional, flattened features) for each example,
        (B, columns), in closed form: the MLP's input gradient, its envelope columns
        carried on to the steps (`log_envelope_vjp`).

        Example:
            >>> critic = EnvelopeCritic(2, 1, 8, 4, num_layers=2, num_units=8)
            >>> a, x = torch.randn(5, 2), torch.randn(5, 8, 1, requires_grad=True)
            >>> auto, = torch.autograd.grad(critic(a, None, x).sum(), x)
            >>> torch.allclose(critic.input_gradient(a, None, x.detach())[:, 2:],
            ...                auto.flatten(1), atol=1e-5)
            True
        """
        *attributes, features = parts
        envelope = log_envelope(features, self.width).to(features.dtype)
        gradient = self.critic.input_gradient(*attributes, envelope)  # (B, A + W * F)
        windows = envelope.shape[1] * envelope.shape[2]
        to_attributes, to_envelope = gradient.split([gradient.shape[1] - windows, windows], 1)
        to_steps = log_envelope_vjp(features, to_envelope.reshape(envelope.shape), self.width)
        return torch.cat([to_attributes, to_steps.flatten(1).to(to_attributes.dtype)], dim=1)
