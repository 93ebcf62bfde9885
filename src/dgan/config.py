"""Model configuration: `DGANConfig` and the enums users pass to it.

Field names and defaults match gretel-synthetics' ``timeseries_dgan.config`` so that a
user switches by changing an import; the fields after ``mixed_precision_training`` are
dgan's own additions. The config is validated once, in ``__post_init__``, and never
mutated by dgan afterwards.
"""

from __future__ import annotations

import contextlib
import math
import os
import reprlib
from dataclasses import MISSING, asdict, dataclass, fields, replace
from enum import Enum
from typing import Any

import numpy as np

from dgan.errors import ParameterError, raise_all

FP16_MAX = 65504.0
"""The largest finite fp16 value: a static loss scale above it overflows every fp16 step."""
MAX_INIT_SCALE = 2.0**16
"""The largest first dynamic loss scale accepted (torch's default start). Each halving from
a larger start costs a skipped step: 1e30 skipped two whole epochs of a small model."""
MAX_SEED = 2**63 - 2
"""The largest seed: torch seeds are 64-bit and dgan seeds stream k with ``2 * seed + k + 1``."""
LARGE_DATA_MIN_SERIES = 1000
"""From this many training series on, ``large_data="auto"`` trains with the large-data
settings. On Stocks cut to 256 / 1,024 windows they won the discriminative score at both
sizes but lost the predictive score at 256 (0.050 vs 0.041) and won it at 1,024; on the
48-series weather data they lost both (docs/quality.md)."""
LARGE_DATA_SETTINGS: dict[str, Any] = {
    "batch_size": 128,
    "generator_learning_rate": 1e-4,
    "discriminator_learning_rate": 1e-4,
    "attribute_discriminator_learning_rate": 1e-4,
    "generator_ema_decay": 0.999,
    "feature_feedback": True,
}
"""The large-data settings (`DGANConfig.for_large_data`): more, smaller steps, sampling
from a weight average, feature feedback."""


class OutputType(Enum):
    """Type of one variable (attribute or feature): decides its encoding and activation."""

    DISCRETE = 0
    CONTINUOUS = 1


class Normalization(Enum):
    """Range continuous variables are scaled to: [0, 1] (sigmoid) or [-1, 1] (tanh)."""

    ZERO_ONE = 0
    MINUSONE_ONE = 1


class DfStyle(str, Enum):
    """Layout of a training DataFrame: one row per example (WIDE) or per time step (LONG)."""

    WIDE = "wide"
    LONG = "long"


@dataclass
class DGANConfig:
    """Everything that defines a DGAN model and how it is trained.

    Example:
        >>> from dgan import DGANConfig
        >>> config = DGANConfig(max_sequence_len=20, sample_len=5, epochs=10)
        >>> config.batch_size
        1024
    """

    # --- Model structure ---
    max_sequence_len: int
    """Length of every time series (the longest one, for variable-length data)."""
    sample_len: int
    """Time steps emitted per LSTM cell; must divide max_sequence_len."""
    attribute_noise_dim: int = 10
    """Size of the noise vector the attribute generator starts from."""
    feature_noise_dim: int = 10
    """Size of the per-cell noise vector fed to the feature LSTM."""
    attribute_num_layers: int = 3
    """Hidden layers of the attribute (and min/max) generator MLPs."""
    attribute_num_units: int = 100
    """Units per hidden layer of the attribute generator MLPs."""
    feature_num_layers: int = 1
    """Stacked LSTM layers of the feature generator."""
    feature_num_units: int = 100
    """Hidden units of the feature LSTM."""
    use_attribute_discriminator: bool = True
    """Train a second critic on attributes alone (helps match attribute distributions)."""

    # --- Data transformation ---
    normalization: Normalization = Normalization.ZERO_ONE
    """Range continuous variables are scaled to before training."""
    apply_feature_scaling: bool = True
    """Scale each continuous variable to the normalization range (else data must be in it)."""
    apply_example_scaling: bool = True
    """Learn each series' midpoint/half-range as generated 'additional attributes'."""
    binary_encoder_cutoff: int = 150
    """Discrete variables with more categories than this use a binary code, not one-hot."""

    # --- Model initialization ---
    forget_bias: bool = False
    """Initialise LSTM forget-gate biases to 1 (TF1 LSTMCell behaviour)."""

    # --- Loss ---
    gradient_penalty_coef: float = 10.0
    """Weight of the WGAN gradient penalty of the main critic."""
    attribute_gradient_penalty_coef: float = 10.0
    """Weight of the WGAN gradient penalty of the attribute critic."""
    attribute_loss_coef: float = 1.0
    """Weight of the attribute critic's term in the generator loss."""

    # --- Training ---
    generator_learning_rate: float = 0.001
    generator_beta1: float = 0.5
    discriminator_learning_rate: float = 0.001
    discriminator_beta1: float = 0.5
    attribute_discriminator_learning_rate: float = 0.001
    attribute_discriminator_beta1: float = 0.5
    batch_size: int = 1024
    """Examples per training batch (and per generation batch). 1024 is gretel's default and
    stays the default here below 1,000 series (from there on ``large_data="auto"`` trains
    at 128); with fewer examples than that every epoch is one optimizer step,
    which learns little. ``DGAN.plan`` then warns and suggests
    `dgan.planning.suggested_batch_size` (about 10 steps per epoch, 16 to 1024), which
    ``dgan train`` uses when neither ``--batch-size`` nor ``--config`` sets one."""
    epochs: int = 400
    """Passes over the training data."""
    discriminator_rounds: int = 1
    """Critic updates per batch."""
    generator_rounds: int = 1
    """Generator updates per batch."""

    # --- Privacy (accepted for gretel compatibility; not supported) ---
    dp_enabled: bool = False
    dp_eps: float = 1.0
    dp_max_grad_norm: float = 1.0
    dp_secure_mode: bool = False

    cuda: bool = True
    """Train on a CUDA device when one is available."""
    mixed_precision_training: bool = False
    """gretel's switch for mixed precision (fp16 autocast)."""

    # --- dgan additions ---
    seed: int | None = None
    """Fixes all randomness; on CPU training is then bit-for-bit reproducible."""
    discriminator_num_layers: int = 5
    """Hidden layers of both critics (gretel hard-codes 5)."""
    discriminator_num_units: int = 200
    """Units per hidden layer of both critics (gretel hard-codes 200)."""
    log_every: int = 50
    """Steps between reads of the on-device loss accumulators (each read is a host sync)."""
    max_nan_fraction: float = 0.2
    """Examples whose continuous features are more than this fraction NaN are dropped."""
    max_consecutive_nans: int = 5
    """Examples with a longer run of NaNs in a continuous feature are dropped."""
    max_dropped_fraction: float = 0.5
    """If NaN repair would drop more than this fraction of examples, raise DataError."""

    # --- Precision (see docs/precision.md) ---
    precision: str | None = None
    """"fp32", "fp16" (loss-scaled), "bf16" or "auto" (bf16 where native, else fp16 on
    CUDA, else fp32). None: "fp16" if mixed_precision_training else "fp32"."""
    loss_scale: str | float = "dynamic"
    """fp16 loss scaling: "dynamic", or a number for a static scale."""
    init_scale: float = 2.0**14
    """First dynamic loss scale; 2**16 overflows the gradient penalty's fp16 gradients."""
    growth_factor: float = 2.0
    """Dynamic scaling: multiply the scale by this after growth_interval clean steps."""
    backoff_factor: float = 0.5
    """Dynamic scaling: multiply the scale by this after a step with inf/NaN gradients."""
    growth_interval: int = 2000
    """Dynamic scaling: clean steps before the scale grows."""
    max_grad_norm: float | None = None
    """Clip each network's gradient norm to this (measured after unscaling), or None."""
    gradient_penalty_precision: str = "fp32"
    """"fp32": the penalty's critic pass in full precision; "autocast": in the training
    precision (faster where 16-bit maths is native, less exact). The norm is fp32 in both."""
    divergence_guard: bool = True
    """Roll back to the last good state and continue one precision safer on NaN/inf."""

    # --- Quality levers (see docs/quality.md for what each did on the benchmark suite) ---
    gradient_penalty_norm: str = "example"
    """"example": the penalty takes one gradient norm per example (WGAN-GP, DoppelGANger);
    "batch": one norm over the whole batch, as gretel-synthetics computes it."""
    generator_ema_decay: float | None = None
    """Generate with an exponential moving average of the generator's weights, e.g. 0.999
    (the decay ramps up over the first steps); None generates with the trained weights.
    0.999 improved the TimeGAN-protocol scores on Stocks and Sines but made the predictive
    score worse on variable-length weather, so on its own it is not the default; it is
    part of the large-data settings (``large_data``; docs/quality.md)."""
    feature_feedback: bool = False
    """Feed each LSTM step the values the generator produced at the step before (as
    DoppelGANger's original code does), so consecutive groups of ``sample_len`` steps join
    smoothly. Runs the LSTM one step at a time (slower for long series). With more, smaller
    steps (batch 128, learning rates 1e-4, ``generator_ema_decay=0.999``) it gave the best
    Stocks and Sines scores of the benchmark suite, and is on with the large-data settings
    (``large_data``); at gretel's settings it was worse on the 48-series weather data
    (docs/quality.md)."""
    large_data: bool | str = "auto"
    """Train with the large-data settings (`LARGE_DATA_SETTINGS`: batch 128, learning
    rates 1e-4, a 0.999 generator weight average, feature feedback), which won by far on
    the benchmark suite's thousands of series and lost on tens. "auto": when the data has
    at least `LARGE_DATA_MIN_SERIES` (1,000) series and none of those six fields was
    changed from its default (a field set to its default value counts as unchanged);
    True: always, for the fields left at their defaults; False:
    never (gretel's behaviour). Decided when training first sees the data: the trained
    model's config shows the settings used, with large_data True or False."""
    reuse_fakes: bool = False
    """Generate once per batch: the critic rounds train on these fakes and the first
    generator round backpropagates through the same ones (as gretel-synthetics does),
    saving a generator forward pass per batch. False draws fresh noise for every critic
    and generator round."""
    temporal_critic: bool = False
    """Train a third critic, 1-D convolutions over time, beside the MLP critics."""
    temporal_critic_loss_coef: float = 1.0
    """Weight of the temporal critic's term in the generator loss."""
    temporal_critic_num_units: int = 64
    """Channels of the temporal critic's convolutions."""

    # --- Checkpoints (see dgan.storage.checkpoint) ---
    checkpoint_dir: str | None = None
    """Directory for training checkpoints (model files plus what exact resume needs);
    None writes none. Resume with ``train_numpy(..., resume_from=checkpoint_dir)``."""
    checkpoint_every: int = 10
    """Write a checkpoint every this many epochs (and always after the last one)."""
    checkpoint_every_minutes: float | None = None
    """Also write one at the first epoch end at least this many minutes after the last."""
    checkpoint_keep: int = 3
    """Keep the newest this many checkpoints; older ones are deleted."""

    def __post_init__(self) -> None:
        self._coerce_inputs()
        if isinstance(self.checkpoint_dir, os.PathLike):  # a Path is kept as its text
            self.checkpoint_dir = os.fspath(self.checkpoint_dir)
        raise_all(self._problems(), ParameterError, "DGANConfig")

    def _coerce_inputs(self) -> None:
        # Convert input representations without changing what was asked for: the enum's
        # name as a string ("MINUSONE_ONE"), as config files carry it, and numpy scalars
        # (np.int64 epochs, np.float32 rates, np.bool_ flags) as the Python values they
        # hold, so the config compares, prints and saves to JSON like one built from literals.
        if isinstance(self.normalization, str):
            with contextlib.suppress(KeyError):  # an unknown name is reported by _problems
                self.normalization = Normalization[self.normalization.upper()]
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.generic) and isinstance(value, (np.number, np.bool_)):
                setattr(self, f.name, value.item())

    def _problems(self) -> list[str]:
        problems = []
        for name in _POSITIVE_INTS:
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                problems.append(
                    f"{name} must be a positive integer, got {short_repr(value)}; "
                    f"the default is {_default(name)!r}."
                )
        for name, (low, high, rule) in _REALS.items():
            value = getattr(self, name)
            if value is None and name in _OPTIONAL:
                continue
            if not (_is_real(value) and _in_range(value, low, high)):
                problems.append(_real_problem(name, value, rule))
        for name in _BOOLS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                problems.append(_bool_problem(name, value))
        if not isinstance(self.normalization, Normalization):
            names = ", ".join(n.name for n in Normalization)
            problems.append(
                f"normalization must be one of {names}, got {short_repr(self.normalization)}."
            )
        if (
            _is_int(self.max_sequence_len)
            and _is_int(self.sample_len)
            and self.sample_len > 0
            and self.max_sequence_len % self.sample_len != 0
        ):
            problems.append(_divisibility_problem(self.max_sequence_len, self.sample_len))
        if self.seed is not None and not (_is_int(self.seed) and 0 <= self.seed <= MAX_SEED):
            problems.append(
                f"seed must be None or an integer from 0 to 2**63 - 2 (torch's generators "
                f"take 64 bits and dgan derives one seed per stream), got {short_repr(self.seed)}."
            )
        problems += self._precision_problems()
        problems += self._quality_problems()
        if self.dp_enabled is True:
            problems.append(
                "dp_enabled=True (differential privacy) is not supported by dgan; "
                "set dp_enabled=False."
            )
        problems += self._checkpoint_problems()
        return problems

    def _checkpoint_problems(self) -> list[str]:
        problems = []
        if self.checkpoint_dir is not None and not isinstance(self.checkpoint_dir, str):
            problems.append(
                "checkpoint_dir must be a directory path or None, got "
                f"{short_repr(self.checkpoint_dir)}."
            )
        for name in ("checkpoint_every", "checkpoint_keep"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                problems.append(f"{name} must be a positive integer, got {short_repr(value)}.")
        minutes = self.checkpoint_every_minutes
        if minutes is not None and not (_is_real(minutes) and minutes > 0):
            problems.append(
                "checkpoint_every_minutes must be a positive number or None, got "
                f"{short_repr(minutes)}."
            )
        return problems

    def _precision_problems(self) -> list[str]:
        problems = []
        choices = ("fp32", "fp16", "bf16", "auto")
        if self.precision is not None and not (
            isinstance(self.precision, str) and self.precision in choices
        ):
            problems.append(
                f"precision must be one of {choices} or None, got {short_repr(self.precision)}."
            )
        if not (isinstance(self.loss_scale, str) and self.loss_scale == "dynamic") and not (
            _is_real(self.loss_scale) and 0 < self.loss_scale <= FP16_MAX
        ):
            problems.append(
                f"loss_scale must be 'dynamic' or a number > 0 and <= {FP16_MAX:g} (fp16's "
                "largest value: with a larger static scale every gradient of size 1 or more "
                "overflows fp16 and its step is skipped), got "
                f"{short_repr(self.loss_scale)}; use 'dynamic' unless you know the scale you need."
            )
        gp = self.gradient_penalty_precision
        if not (isinstance(gp, str) and gp in _GP_PRECISIONS):
            problems.append(
                f"gradient_penalty_precision must be 'fp32' or 'autocast', got "
                f"{short_repr(self.gradient_penalty_precision)}."
            )
        return problems

    def _quality_problems(self) -> list[str]:
        # The quality levers' numbers and flags are checked with the others (_REALS,
        # _POSITIVE_INTS, _BOOLS).
        if not (isinstance(self.large_data, bool) or self.large_data == "auto"):
            return [f"large_data must be True, False or 'auto', got {short_repr(self.large_data)}."]
        if isinstance(self.gradient_penalty_norm, str) and self.gradient_penalty_norm in (
            "example",
            "batch",
        ):
            return []
        return [
            "gradient_penalty_norm must be 'example' or 'batch', got "
            f"{short_repr(self.gradient_penalty_norm)}."
        ]

    @property
    def effective_precision(self) -> str:
        """The precision asked for, with gretel's mixed_precision_training=True meaning fp16.

        Example:
            >>> DGANConfig(max_sequence_len=4, sample_len=2,
            ...            mixed_precision_training=True).effective_precision
            'fp16'
        """
        if self.precision is not None:
            return self.precision
        return "fp16" if self.mixed_precision_training else "fp32"

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a dict usable as ``DGANConfig(**config.to_dict())``.

        Example:
            >>> DGANConfig(max_sequence_len=4, sample_len=2).to_dict()["sample_len"]
            2
        """
        return asdict(self)

    def to_json_dict(self) -> dict[str, Any]:
        """Like `to_dict`, with enums as their names so the result is JSON-serializable.

        Example:
            >>> DGANConfig(max_sequence_len=4, sample_len=2).to_json_dict()["normalization"]
            'ZERO_ONE'
        """
        return {
            f.name: (v.name if isinstance(v, Enum) else v)
            for f in fields(self)
            for v in [getattr(self, f.name)]
        }

    @classmethod
    def gretel(cls, **fields: Any) -> DGANConfig:
        """A config that trains as gretel-synthetics' DGAN does; ``fields`` as usual.

        dgan's defaults already match gretel's except where docs/quality.md measured a
        reason to differ; this undoes those: the gradient penalty takes one norm over the
        whole batch, one generator pass per batch serves the critic and generator rounds,
        the same settings for every data size (no large-data settings), no generator
        weight average or temporal critic, and fp16 loss scaling starts at GradScaler's
        2**16.

        Example:
            >>> config = DGANConfig.gretel(max_sequence_len=20, sample_len=5)
            >>> config.gradient_penalty_norm, config.generator_ema_decay
            ('batch', None)
        """
        gretel_choices = dict(
            gradient_penalty_norm="batch",
            generator_ema_decay=None,
            reuse_fakes=True,
            large_data=False,
            temporal_critic=False,
            init_scale=2.0**16,
        )
        return cls(**{**gretel_choices, **fields})

    @classmethod
    def for_large_data(cls, **fields: Any) -> DGANConfig:
        """The benchmark suite's best settings for thousands of series; ``fields`` win.

        More, smaller steps: batch 128, all three learning rates 1e-4, sampling from a
        0.999 moving average of the generator's weights, and feature feedback. On Stocks
        (3,661 windows, 400 epochs) and Sines (10,000 series, 250 epochs) these reached
        TimeGAN-protocol discriminative scores of 0.046 and 0.019 (gretel's settings:
        0.36 at 400 epochs, 0.27 at 50); on tens of series (the 48-month weather data)
        they are worse
        (docs/quality.md). ``large_data="auto"`` (the default) picks them by itself from
        1,000 series on; this forces them at any size.

        Example:
            >>> config = DGANConfig.for_large_data(max_sequence_len=24, sample_len=4)
            >>> config.batch_size, config.generator_learning_rate, config.feature_feedback
            (128, 0.0001, True)
        """
        return cls(**{**LARGE_DATA_SETTINGS, "large_data": True, **fields})

    def resolved_for(self, n_series: int) -> DGANConfig:
        """This config as training on ``n_series`` series uses it: ``large_data`` decided
        (True or False) and, when True, `LARGE_DATA_SETTINGS` in the fields left at their
        defaults. A new object; this one is unchanged.

        Example:
            >>> config = DGANConfig(max_sequence_len=24, sample_len=4)
            >>> config.resolved_for(48).batch_size, config.resolved_for(5000).batch_size
            (1024, 128)
            >>> DGANConfig(max_sequence_len=24, sample_len=4, batch_size=256).resolved_for(
            ...     5000).large_data
            False
        """
        if self.large_data == "auto":
            untouched = all(getattr(self, k) == _default(k) for k in LARGE_DATA_SETTINGS)
            return self.with_large_data(untouched and n_series >= LARGE_DATA_MIN_SERIES)
        return self.with_large_data(bool(self.large_data))

    def with_large_data(self, use: bool) -> DGANConfig:
        """A copy with ``large_data=use``; when True, with `LARGE_DATA_SETTINGS` in the
        fields left at their defaults."""
        changes: dict[str, Any] = {"large_data": use}
        if use:
            for name, value in LARGE_DATA_SETTINGS.items():
                if getattr(self, name) == _default(name):
                    changes[name] = value
        return replace(self, **changes)

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> DGANConfig:
        """Build a config from `to_json_dict` output (or a TOML/JSON config file's table).

        Unknown keys are an error that names them, so typos in config files are caught.

        Example:
            >>> c = DGANConfig(max_sequence_len=4, sample_len=2)
            >>> DGANConfig.from_json_dict(c.to_json_dict()) == c
            True
        """
        if not isinstance(data, dict):
            raise ParameterError(
                f"A DGANConfig must be read from a table of fields (like "
                f'{{"max_sequence_len": 20, "sample_len": 5}}), not {short_repr(data)}.'
            )
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ParameterError(
                f"Unknown DGANConfig field(s) {unknown}; valid fields are {sorted(known)}."
            )
        return cls(**data)


# ----- validation tables and helpers ---------------------------------------------------

_POSITIVE_INTS = (
    "max_sequence_len",
    "sample_len",
    "attribute_noise_dim",
    "feature_noise_dim",
    "attribute_num_layers",
    "attribute_num_units",
    "feature_num_layers",
    "feature_num_units",
    "binary_encoder_cutoff",
    "batch_size",
    "epochs",
    "discriminator_rounds",
    "generator_rounds",
    "discriminator_num_layers",
    "discriminator_num_units",
    "log_every",
    "max_consecutive_nans",
    "growth_interval",
    "temporal_critic_num_units",
)

_BOOLS = (
    "use_attribute_discriminator",
    "apply_feature_scaling",
    "apply_example_scaling",
    "forget_bias",
    "dp_enabled",
    "dp_secure_mode",
    "cuda",
    "mixed_precision_training",
    "divergence_guard",
    "temporal_critic",
    "feature_feedback",
    "reuse_fakes",
)

# Real-valued fields: (lower bound, upper bound, the rule as the message states it); a
# bound is (value, inclusive) or None. Every value must also be finite.
_Bound = tuple[float, bool] | None
_NONNEGATIVE: tuple[_Bound, _Bound, str] = ((0, True), None, "a finite number >= 0")
_POSITIVE: tuple[_Bound, _Bound, str] = ((0, False), None, "a finite number > 0")
_BETA: tuple[_Bound, _Bound, str] = ((0, True), (1, False), "a number in [0, 1)")
_FRACTION: tuple[_Bound, _Bound, str] = ((0, True), (1, True), "a fraction in [0, 1]")
_REALS: dict[str, tuple[_Bound, _Bound, str]] = {
    "gradient_penalty_coef": _NONNEGATIVE,
    "attribute_gradient_penalty_coef": _NONNEGATIVE,
    "attribute_loss_coef": _NONNEGATIVE,
    "generator_learning_rate": _POSITIVE,
    "discriminator_learning_rate": _POSITIVE,
    "attribute_discriminator_learning_rate": _POSITIVE,
    "generator_beta1": _BETA,
    "discriminator_beta1": _BETA,
    "attribute_discriminator_beta1": _BETA,
    "dp_eps": _POSITIVE,
    "dp_max_grad_norm": _POSITIVE,
    "max_nan_fraction": _FRACTION,
    "max_dropped_fraction": _FRACTION,
    "init_scale": (
        (0, False),
        (MAX_INIT_SCALE, True),
        "a number > 0 and <= 2**16 (65536, torch's default start; each halving from a "
        "larger start skips a training step)",
    ),
    "growth_factor": ((1, False), None, "a finite number > 1"),
    "backoff_factor": ((0, False), (1, False), "a number in (0, 1)"),
    "max_grad_norm": ((0, False), None, "None or a finite number > 0"),
    "generator_ema_decay": ((0, False), (1, False), "None or a number in (0, 1), e.g. 0.999"),
    "temporal_critic_loss_coef": ((0, True), (1e6, False), "a number in [0, 1e6)"),
}
_OPTIONAL = frozenset({"max_grad_norm", "generator_ema_decay"})
_GP_PRECISIONS = ("fp32", "autocast")
_DIVISOR_SCAN = 64  # divisors looked for: up to this and their cofactors (bounded work)

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _in_range(value: float, low: _Bound, high: _Bound) -> bool:
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range: not a usable rate or scale
        return False
    if not math.isfinite(value):
        return False
    if low is not None and not (value >= low[0] if low[1] else value > low[0]):
        return False
    return high is None or (value <= high[0] if high[1] else value < high[0])


def _default(name: str) -> Any:
    field = DGANConfig.__dataclass_fields__[name]
    return None if field.default is MISSING else field.default


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to a few dozen characters for messages, built in bounded time
    whatever the value's size.

    Example:
        >>> short_repr("x" * 1000)
        "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (1000 characters)"
        >>> short_repr(10**1000)
        'an integer of 3322 bits'
    """
    if _is_int(value) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:40]!r}... ({len(value)} characters)"
    try:
        return _REPR.repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        return f"a {type(value).__name__}"


def _real_problem(name: str, value: Any, rule: str) -> str:
    note = " (a bool is not a number)" if isinstance(value, (bool, np.bool_)) else ""
    return (
        f"{name} must be {rule}, got {short_repr(value)}{note}; the default is {_default(name)!r}."
    )


_FALSE_WORDS = frozenset({"false", "no", "off", "0", "n", "f", ""})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1", "y", "t"})


def _bool_problem(name: str, value: Any) -> str:
    message = f"{name} must be True or False, got {short_repr(value)}"
    if isinstance(value, str):
        word = value.strip().lower()
        meant = "False" if word in _FALSE_WORDS else "True" if word in _TRUE_WORDS else None
        fix = f"write {meant}" if meant else "write True or False"
        return (
            f"{message}: a non-empty string counts as true in Python, whatever it says; "
            f"{fix} without quotes (in a JSON or TOML config file: false or true)."
        )
    if value is None:
        return (
            f"{message}: None does not mean off; use False, or leave {name} out for its "
            f"default ({_default(name)})."
        )
    return f"{message}; use True or False (the default is {_default(name)})."


def _divisibility_problem(length: int, sample_len: int) -> str:
    """The message for a sample_len that does not divide max_sequence_len, with a few
    divisors near sample_len; bounded work however large the numbers are."""
    small = [d for d in range(1, min(length, _DIVISOR_SCAN) + 1) if length % d == 0]
    divisors = {*small, *(length // d for d in small)}
    near = sorted(sorted(divisors, key=lambda d: abs(math.log(d / sample_len)))[:8])
    multiple = length + (-length % sample_len)
    return (
        f"max_sequence_len={length} is not divisible by sample_len={sample_len}; choose a "
        f"sample_len that divides it, e.g. one of {near}, or raise max_sequence_len to "
        f"{multiple}, a multiple of sample_len (series may be shorter than max_sequence_len)."
    )
