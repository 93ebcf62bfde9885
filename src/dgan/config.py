"""Model configuration: `DGANConfig` and the enums users pass to it.

Field names and defaults match gretel-synthetics' ``timeseries_dgan.config`` so that a
user switches by changing an import; the fields after ``mixed_precision_training`` are
dgan's own additions. The config is validated once, in ``__post_init__``, and never
mutated by dgan afterwards.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import Any

from dgan.errors import ParameterError, raise_all


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
    """Examples per training batch (and per generation batch)."""
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
    """"fp32": the penalty's critic pass and norm in full precision; "autocast": in the
    training precision (faster, less exact)."""
    divergence_guard: bool = True
    """Roll back to the last good state and continue one precision safer on NaN/inf."""

    # --- Quality levers (see docs/quality.md for what each did on the benchmark suite) ---
    gradient_penalty_norm: str = "example"
    """"example": the penalty takes one gradient norm per example (WGAN-GP, DoppelGANger);
    "batch": one norm over the whole batch, as gretel-synthetics computes it."""
    generator_ema_decay: float | None = None
    """Generate with an exponential moving average of the generator's weights, e.g. 0.999
    (the decay ramps up over the first steps); None generates with the trained weights."""
    temporal_critic: bool = False
    """Train a third critic, 1-D convolutions over time, beside the MLP critics."""
    temporal_critic_loss_coef: float = 1.0
    """Weight of the temporal critic's term in the generator loss."""
    temporal_critic_num_units: int = 64
    """Channels of the temporal critic's convolutions."""

    def __post_init__(self) -> None:
        self._coerce_enums()
        raise_all(self._problems(), ParameterError, "DGANConfig")

    def _coerce_enums(self) -> None:
        # Accept the enum's name as a string ("MINUSONE_ONE"), as config files carry it.
        # This converts the input representation; it does not change what was asked for.
        if isinstance(self.normalization, str):
            with contextlib.suppress(KeyError):  # an unknown name is reported by _problems
                self.normalization = Normalization[self.normalization.upper()]

    def _problems(self) -> list[str]:
        problems = []

        def positive_int(name: str) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{name} must be a positive integer, got {value!r}.")

        for name in (
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
        ):
            positive_int(name)
        for name in (
            "gradient_penalty_coef",
            "attribute_gradient_penalty_coef",
            "attribute_loss_coef",
        ):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0:
                problems.append(f"{name} must be a number >= 0, got {value!r}.")
        for name in (
            "generator_learning_rate",
            "discriminator_learning_rate",
            "attribute_discriminator_learning_rate",
        ):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value > 0:
                problems.append(f"{name} must be a number > 0, got {value!r}.")
        for name in ("generator_beta1", "discriminator_beta1", "attribute_discriminator_beta1"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value < 1:
                problems.append(f"{name} must be in [0, 1), got {value!r}.")
        for name in ("max_nan_fraction", "max_dropped_fraction"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                problems.append(f"{name} must be a fraction in [0, 1], got {value!r}.")
        if not isinstance(self.normalization, Normalization):
            names = ", ".join(n.name for n in Normalization)
            problems.append(f"normalization must be one of {names}, got {self.normalization!r}.")
        if (
            isinstance(self.max_sequence_len, int)
            and isinstance(self.sample_len, int)
            and self.sample_len > 0
            and self.max_sequence_len % self.sample_len != 0
        ):
            divisors = [d for d in range(1, self.max_sequence_len + 1)]
            divisors = [d for d in divisors if self.max_sequence_len % d == 0]
            problems.append(
                f"max_sequence_len={self.max_sequence_len} is not divisible by "
                f"sample_len={self.sample_len}; choose sample_len from {divisors}."
            )
        problems += self._precision_problems()
        problems += self._quality_problems()
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            problems.append(f"seed must be an integer or None, got {self.seed!r}.")
        if self.dp_enabled:
            problems.append(
                "dp_enabled=True (differential privacy) is not supported by dgan; "
                "set dp_enabled=False."
            )
        return problems

    def _precision_problems(self) -> list[str]:
        problems = []
        choices = ("fp32", "fp16", "bf16", "auto")
        if self.precision is not None and self.precision not in choices:
            problems.append(f"precision must be one of {choices} or None, got {self.precision!r}.")
        if self.loss_scale != "dynamic" and not (
            isinstance(self.loss_scale, (int, float))
            and not isinstance(self.loss_scale, bool)
            and self.loss_scale > 0
        ):
            problems.append(
                f"loss_scale must be 'dynamic' or a positive number, got {self.loss_scale!r}."
            )
        if not (isinstance(self.init_scale, (int, float)) and self.init_scale > 0):
            problems.append(f"init_scale must be a positive number, got {self.init_scale!r}.")
        if not (isinstance(self.growth_factor, (int, float)) and self.growth_factor > 1):
            problems.append(f"growth_factor must be > 1, got {self.growth_factor!r}.")
        if not (isinstance(self.backoff_factor, (int, float)) and 0 < self.backoff_factor < 1):
            problems.append(f"backoff_factor must be in (0, 1), got {self.backoff_factor!r}.")
        if isinstance(self.growth_interval, bool) or not (
            isinstance(self.growth_interval, int) and self.growth_interval > 0
        ):
            problems.append(
                f"growth_interval must be a positive integer, got {self.growth_interval!r}."
            )
        if self.max_grad_norm is not None and not (
            isinstance(self.max_grad_norm, (int, float)) and self.max_grad_norm > 0
        ):
            problems.append(
                f"max_grad_norm must be a positive number or None, got {self.max_grad_norm!r}."
            )
        if self.gradient_penalty_precision not in ("fp32", "autocast"):
            problems.append(
                "gradient_penalty_precision must be 'fp32' or 'autocast', got "
                f"{self.gradient_penalty_precision!r}."
            )
        return problems

    def _quality_problems(self) -> list[str]:
        problems = []
        if self.gradient_penalty_norm not in ("example", "batch"):
            problems.append(
                "gradient_penalty_norm must be 'example' or 'batch', got "
                f"{self.gradient_penalty_norm!r}."
            )
        decay = self.generator_ema_decay
        if decay is not None and (
            isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0 < decay < 1
        ):
            problems.append(
                f"generator_ema_decay must be None or in (0, 1) (e.g. 0.999), got {decay!r}."
            )
        coef = self.temporal_critic_loss_coef
        if isinstance(coef, bool) or not isinstance(coef, (int, float)) or not 0 <= coef < 1e6:
            problems.append(f"temporal_critic_loss_coef must be a number >= 0, got {coef!r}.")
        units = self.temporal_critic_num_units
        if isinstance(units, bool) or not isinstance(units, int) or units < 1:
            problems.append(f"temporal_critic_num_units must be a positive integer, got {units!r}.")
        if not isinstance(self.temporal_critic, bool):
            problems.append(f"temporal_critic must be True or False, got {self.temporal_critic!r}.")
        return problems

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
    def from_json_dict(cls, data: dict[str, Any]) -> DGANConfig:
        """Build a config from `to_json_dict` output (or a TOML/JSON config file's table).

        Unknown keys are an error that names them, so typos in config files are caught.

        Example:
            >>> c = DGANConfig(max_sequence_len=4, sample_len=2)
            >>> DGANConfig.from_json_dict(c.to_json_dict()) == c
            True
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ParameterError(
                f"Unknown DGANConfig field(s) {unknown}; valid fields are {sorted(known)}."
            )
        return cls(**data)
