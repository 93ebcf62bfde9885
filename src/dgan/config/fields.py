"""Model configuration: `DGANConfig` and the enums users pass to it.

Field names and defaults match gretel-synthetics' ``timeseries_dgan.config`` so that a user
switches by changing an import; the fields after ``mixed_precision_training`` are dgan's own
additions. The config is validated once, in ``__post_init__``, and never mutated by dgan
afterwards. It records which fields were set, whatever their values (`dgan.config.given`),
so the settings that follow the data's size (`dgan.config.sizing`) honour every value given
and still show gretel's defaults.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import MISSING, Field, InitVar, asdict, dataclass, field, fields
from enum import Enum
from typing import Any

from dgan.config.checks import (
    MAX_INIT_SCALE,
    MAX_LAYERS,
    MAX_ROUNDS,
    PRECISIONS,
    Check,
    Custom,
    Flag,
    OneOf,
    PositiveInt,
    Real,
    checkpoint_dir_problem,
    coerce_inputs,
    length_problems,
    loss_scale_problem,
    normalization_problem,
    per_class_scaling_problem,
    privacy_problems,
    public_values_problem,
    seed_problem,
    short_repr,
)
from dgan.config.enums import Normalization
from dgan.config.given import GIVEN, record_given
from dgan.config.sizing import LARGE_DATA_SETTINGS, private_settings, resolve
from dgan.errors import ParameterError, raise_all


def setting(default: Any = MISSING, check: Check | None = None) -> Any:
    """A config field with its check: ``name: int = setting(10, PositiveInt())``."""
    return field(default=default, metadata={"check": check})


_NONNEGATIVE = Real((0, True), None, "a finite number >= 0")
_POSITIVE = Real((0, False), None, "a finite number > 0")
_BETA = Real((0, True), (1, False), "a number in [0, 1)")
_FRACTION = Real((0, True), (1, True), "a fraction in [0, 1]")
_LOSS_WEIGHT = Real((0, True), (1e6, False), "a number in [0, 1e6)")
_OPTIONAL_MINUTES = Real((0, False), None, "None or a number of minutes > 0", optional=True)
_DECAY = Real((0, False), (1, False), "None or a number in (0, 1), e.g. 0.999", optional=True)
_PRECISION = OneOf(PRECISIONS, optional=True, text=f"one of {PRECISIONS}")
_OPTIONAL_POSITIVE = Real((0, False), None, "None or a finite number > 0", optional=True)
_LAYERS = PositiveInt(most=MAX_LAYERS, why_most=" (deeper networks train no better here)")
_ROUNDS = PositiveInt(most=MAX_ROUNDS, why_most=" (each round is a whole update per batch)")


@record_given
@dataclass
class DGANConfig:
    """Everything that defines a DGAN model and how it is trained.

    Every field shows gretel's default unless set; `fields_set` says which were set.

    Example:
        >>> from dgan import DGANConfig
        >>> config = DGANConfig(max_sequence_len=20, sample_len=5, epochs=10)
        >>> config.batch_size, sorted(config.fields_set)
        (1024, ['epochs', 'max_sequence_len', 'sample_len'])
    """

    # --- Model structure ---
    max_sequence_len: int = setting(check=PositiveInt())
    """Length of every time series (the longest one, for variable-length data)."""
    sample_len: int = setting(check=PositiveInt())
    """Time steps emitted per LSTM cell; must divide max_sequence_len."""
    attribute_noise_dim: int = setting(10, PositiveInt())
    """Size of the noise vector the attribute generator starts from."""
    feature_noise_dim: int = setting(10, PositiveInt())
    """Size of the per-cell noise vector fed to the feature LSTM."""
    attribute_num_layers: int = setting(3, _LAYERS)
    """Hidden layers of the attribute (and min/max) generator MLPs."""
    attribute_num_units: int = setting(100, PositiveInt())
    """Units per hidden layer of the attribute generator MLPs."""
    feature_num_layers: int = setting(1, _LAYERS)
    """Stacked LSTM layers of the feature generator."""
    feature_num_units: int = setting(100, PositiveInt())
    """Hidden units of the feature LSTM."""
    use_attribute_discriminator: bool = setting(True, Flag())
    """Train a second critic on attributes alone (helps match attribute distributions)."""

    # --- Data transformation ---
    normalization: Normalization = setting(Normalization.ZERO_ONE, Custom(normalization_problem))
    """Range continuous variables are scaled to before training."""
    apply_feature_scaling: bool = setting(True, Flag())
    """Scale each continuous variable to the normalization range (else data must be in it)."""
    apply_example_scaling: bool = setting(True, Flag())
    """Learn each series' midpoint/half-range as generated 'additional attributes'."""
    log_series_ranges: bool | str = setting(False, OneOf((True, False, "auto")))
    """Learn each series' half-range on a log scale ("auto": `logs_ranges`, long series)."""
    fill_series_range: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Stretch generated series over their generated range ("auto": features on a log scale)."""
    match_marginals: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Map generated values onto the training values' distribution per class ("auto": as above)."""
    match_switches: bool = setting(True, Flag())
    """Where a class's values sit at levels with nothing between, switch between them as
    often and as long as the training series, each level steady and noisy (with the value map)."""
    match_texture: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Filter generated series to each class's step-to-step texture (`dgan.encoding.texture`;
    "auto": series of 100 steps or more)."""
    match_class_shares: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Generate each class at its training share (`dgan.encoding.class_shares`; "auto": any)."""
    match_standardization: bool = setting(True, Flag())
    """Where every training series has one mean and deviation, give generated ones them too."""
    log_scale: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Scale continuous variables by sign(x) * log10(1 + |x| / floor), the floor the 5% quantile
    of non-zero magnitudes: "auto" where they span over three orders (0.01 to 10,000 across
    classes), not waves around 0; True all, False none (as gretel)."""
    per_class_scaling: bool | str = setting("auto", Custom(per_class_scaling_problem))
    """Scale each series' level and spread within its class's range (a discrete attribute's
    value): "auto" where one attribute's classes set the levels (several sensors in one
    column), False never (as gretel), or that attribute's name. The plan says which."""
    length_attribute: bool = setting(False, Flag())
    """Variable-length data: each series' length is also a generated attribute (judged by the
    attribute critic, read by the LSTM) where it ends, not the generated end-of-series flag."""
    onset_attribute: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Generate each series' leading zero steps as an attribute (`dgan.encoding.onsets`)."""
    period_carrier: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Draw steady waves on a carrier at each series' generated period (`dgan.encoding.periods`;
    "auto": 8+ cycles of one period, median series), True every continuous feature, False none."""
    match_periods: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Map each generated period onto the training series' periods, quantile to quantile
    within its class, before the carrier draws it (`dgan.encoding.period_map`; "auto",
    True: where a carrier draws waves)."""
    match_centres: bool | str = setting("auto", OneOf((True, False, "auto")))
    """Move each generated wave onto the training series' centres (its mean over its
    amplitude), quantile to quantile within its class (`dgan.encoding.centre_map`; "auto",
    True: where a carrier draws waves)."""
    binary_encoder_cutoff: int = setting(150, PositiveInt())
    """Discrete variables with more categories than this use a binary code, not one-hot."""

    # --- Model initialization ---
    forget_bias: bool = setting(False, Flag())
    """Initialise LSTM forget-gate biases to 1 (TF1 LSTMCell behaviour)."""

    # --- Loss ---
    gradient_penalty_coef: float = setting(10.0, _NONNEGATIVE)
    """Weight of the WGAN gradient penalty of the main critic."""
    attribute_gradient_penalty_coef: float = setting(10.0, _NONNEGATIVE)
    """Weight of the WGAN gradient penalty of the attribute critic."""
    attribute_loss_coef: float = setting(1.0, _NONNEGATIVE)
    """Weight of the attribute critic's term in the generator loss."""

    # --- Training ---
    generator_learning_rate: float = setting(0.001, _POSITIVE)
    generator_beta1: float = setting(0.5, _BETA)
    discriminator_learning_rate: float = setting(0.001, _POSITIVE)
    discriminator_beta1: float = setting(0.5, _BETA)
    attribute_discriminator_learning_rate: float = setting(0.001, _POSITIVE)
    attribute_discriminator_beta1: float = setting(0.5, _BETA)
    batch_size: int = setting(1024, PositiveInt())
    """Examples per training batch. Unless you set it (1024 included), ``large_data="auto"``
    picks it from the data's size (`dgan.config.sizing`); ``large_data=False`` trains with
    gretel's 1024. Fewer examples than the batch: an epoch is one step (``DGAN.plan`` warns)."""
    epochs: int = setting(400, PositiveInt())
    """Passes over the training data. Unless you set it (400 included) or ``training_steps``,
    ``large_data="auto"`` trains for the ``training_steps`` it picks from the data's size."""
    training_steps: int | None = setting(None, PositiveInt(optional=True))
    """Train for this many optimizer steps (batches) instead of ``epochs``; the last epoch
    may be partial. None: ``epochs`` epochs, or the budget ``large_data="auto"`` picks."""
    training_minutes: float | None = setting(None, _OPTIONAL_MINUTES)
    """Stop at the first batch end (torchrun: the first check every ``log_every`` steps) after
    this many minutes, whatever the epochs or steps; counted over a resumed run's pieces."""
    discriminator_rounds: int = setting(1, _ROUNDS)
    """Critic updates per batch."""
    generator_rounds: int = setting(1, _ROUNDS)
    """Generator updates per batch."""

    # --- Differential privacy (docs/privacy.md; gretel's dp_enabled + dp_eps = dp_epsilon) ---
    dp_enabled: bool = setting(False, Flag())
    dp_eps: float = setting(1.0, _POSITIVE)
    dp_max_grad_norm: float = setting(1.0, _POSITIVE)  # each example's critic gradient norm
    dp_secure_mode: bool = setting(False, Flag())

    cuda: bool = setting(True, Flag())
    """Train on a CUDA device when one is available."""
    mixed_precision_training: bool = setting(False, Flag())
    """gretel's switch for mixed precision (fp16 autocast)."""

    # --- dgan additions ---
    seed: int | None = setting(None, Custom(seed_problem, optional=True))
    """Fixes all randomness; on CPU training is then bit-for-bit reproducible."""
    discriminator_num_layers: int = setting(5, _LAYERS)
    """Hidden layers of both critics (gretel hard-codes 5)."""
    discriminator_num_units: int = setting(200, PositiveInt())
    """Units per hidden layer of both critics (gretel hard-codes 200)."""
    log_every: int = setting(50, PositiveInt())
    """Steps between reads of the on-device loss accumulators (each read is a host sync)."""
    max_nan_fraction: float = setting(0.2, _FRACTION)
    """Examples whose continuous features are more than this fraction NaN are dropped."""
    max_consecutive_nans: int = setting(5, PositiveInt())
    """Examples with a longer run of NaNs in a continuous feature are dropped."""
    max_dropped_fraction: float = setting(0.5, _FRACTION)
    """If NaN repair would drop more than this fraction of examples, raise DataError."""

    # --- Precision (see docs/precision.md) ---
    precision: str | None = setting(None, _PRECISION)
    """"fp32", "fp16" (loss-scaled), "bf16" or "auto" (fp32 on every device: docs/precision.md).
    None: "fp16" if mixed_precision_training else "fp32"."""
    loss_scale: str | float = setting("dynamic", Custom(loss_scale_problem))
    """fp16 loss scaling: "dynamic", or a number for a static scale."""
    init_scale: float = setting(
        2.0**14,
        Real(
            (0, False),
            (MAX_INIT_SCALE, True),
            "a number > 0 and <= 2**16 (65536, torch's default start; each halving from a "
            "larger start skips a training step)",
        ),
    )
    """First dynamic loss scale; 2**16 overflows the gradient penalty's fp16 gradients."""
    growth_factor: float = setting(2.0, Real((1, False), None, "a finite number > 1"))
    """Dynamic scaling: multiply the scale by this after growth_interval clean steps."""
    backoff_factor: float = setting(0.5, Real((0, False), (1, False), "a number in (0, 1)"))
    """Dynamic scaling: multiply the scale by this after a step with inf/NaN gradients."""
    growth_interval: int = setting(2000, PositiveInt())
    """Dynamic scaling: clean steps before the scale grows."""
    max_grad_norm: float | None = setting(None, _OPTIONAL_POSITIVE)
    """Clip each network's gradient norm to this (measured after unscaling), or None."""
    gradient_penalty_precision: str = setting("fp32", OneOf(("fp32", "autocast")))
    """"fp32": the penalty's critic pass in full precision; "autocast": in the training
    precision (faster where 16-bit maths is native, less exact). The norm is fp32 in both."""
    divergence_guard: bool = setting(True, Flag())
    """Roll back to the last good state and continue one precision safer on NaN/inf."""

    # --- Quality levers (see docs/quality.md for what each did on the benchmark suite) ---
    gradient_penalty_norm: str = setting("example", OneOf(("example", "batch")))
    """"example": one gradient norm per example (WGAN-GP); "batch": one per batch, as gretel."""
    generator_ema_decay: float | None = setting(None, _DECAY)
    """Generate with an exponential moving average of the generator's weights, e.g. 0.999
    (the decay ramps up over the first steps); None: the trained weights (see large_data)."""
    feature_feedback: bool = setting(False, Flag())
    """Feed each LSTM step the values generated at the step before (DoppelGANger's code): groups
    of ``sample_len`` steps join smoothly; the LSTM runs a step at a time (see large_data)."""
    attribute_state: bool = setting(False, Flag())
    """The LSTM starts from a state made of the attributes, not zeros (the rule: 100+ steps)."""
    large_data: bool | str = setting("auto", OneOf((True, False, "auto")))
    """How the training settings follow the data's size. "auto" (the default): each
    setting of `dgan.config.sizing` you did not set (a value given equal to the default
    counts as set: ``batch_size``, the learning rates, ``generator_ema_decay``,
    ``feature_feedback``, the long-series critics and noise), and the budget unless you set
    ``epochs`` or ``training_steps``, is picked by one rule from the data's size and length
    (the plan names each pick); docs/quality.md measures it. True: the rule's settings at
    batch 128 (`LARGE_DATA_SETTINGS`) for the fields you did not set, trained for
    ``epochs``. False: gretel's settings at any size. Decided when training first sees the
    data: the trained model's config shows the settings used, with large_data True (the
    rule picked some) or False."""
    reuse_fakes: bool = setting(False, Flag())
    """Generate once per batch: the critic rounds train on these fakes and the first
    generator round backpropagates through them (as gretel-synthetics does), saving a
    generator forward pass per batch. False draws fresh noise for every round."""
    temporal_critic: bool = setting(False, Flag())
    """Train a third critic, 1-D convolutions over time, beside the MLP critics."""
    temporal_critic_loss_coef: float = setting(1.0, _LOSS_WEIGHT)
    """Weight of the temporal critic's term in the generator loss."""
    temporal_critic_num_units: int = setting(64, PositiveInt())
    """Channels of the temporal critic's convolutions."""
    envelope_critic: bool | str = setting("auto", OneOf((True, False, "auto")))
    """A critic of the attributes and envelopes (log spreads) alone; "auto": with a carrier."""
    envelope_critic_loss_coef: float = setting(1.0, _LOSS_WEIGHT)
    """Weight of the envelope critic's term in the generator loss."""
    spectral_critic: bool = setting(False, Flag())
    """The critic also reads each feature's magnitude spectrum: how strong each period is in
    a series, wherever it starts (a daily cycle where the data has none)."""
    change_critic: bool = setting(False, Flag())
    """The critic also reads each feature's step changes sorted by size (a jump, wherever)."""
    projection_critic: bool = setting(False, Flag())
    """The critic's score adds an embedding of the discrete attributes times its last hidden
    layer (a projection critic: what looks real can differ per class)."""
    bridge_seams: bool = setting(False, Flag())
    """Each LSTM step's continuous values start where the step before left off (the line
    through its last ``bridge_width`` values, one value on), through an offset that fades
    out over the ``sample_len`` values it generates; without it, series can jump every
    ``sample_len`` steps. No effect with a ``sample_len`` under 3."""
    bridge_width: int = setting(2, PositiveInt())
    """How many values at each end of an LSTM step the bridge fits its lines to (at most
    ``sample_len - 1``); 2: the last value plus the last change."""

    # --- Checkpoints (see dgan.storage.checkpoint) ---
    checkpoint_dir: str | None = setting(None, Custom(checkpoint_dir_problem, optional=True))
    """Directory for training checkpoints (model files plus what exact resume needs);
    None writes none. Resume with ``train_numpy(..., resume_from=checkpoint_dir)``."""
    checkpoint_every: int = setting(10, PositiveInt())
    """Write a checkpoint every this many epochs (and always after the last one)."""
    checkpoint_every_minutes: float | None = setting(None, _OPTIONAL_POSITIVE)
    """Also write one at the first epoch end at least this many minutes after the last."""
    checkpoint_keep: int = setting(3, PositiveInt())
    """Keep the newest this many checkpoints; older ones are deleted."""

    # --- Differential privacy (see docs/privacy.md) ---
    dp_epsilon: float | None = setting(None, _OPTIONAL_POSITIVE)
    """Train with differential privacy at this epsilon (DP-SGD on the critics); None: off."""
    dp_delta: float | None = setting(None, Real((0, False), (1, False), "None or in (0, 1)", True))
    """The delta of (epsilon, delta); None: a tenth of 1 / (number of series)."""
    public_values: dict | None = setting(None, Custom(public_values_problem, optional=True))
    """{variable: [low, high] (continuous) or [categories] (discrete)}, given, not read from
    the data (needed under differential privacy; LONG tables: the time column's grid too)."""

    _given: InitVar[Iterable[str] | None] = None
    """Private: the fields set (`dgan.config.given`); a call records what it passes."""

    def __post_init__(self, _given: Iterable[str] | None) -> None:
        coerce_inputs(self)
        if isinstance(self.checkpoint_dir, os.PathLike):  # a Path is kept as its text
            self.checkpoint_dir = os.fspath(self.checkpoint_dir)
        known = {f.name for f in fields(self)}
        record = _given if isinstance(_given, (list, tuple, set, frozenset)) else [None]
        valid = all(isinstance(name, str) and name in known for name in record)
        self._given = frozenset(record) if valid else frozenset()
        problems = [] if valid else [f"{GIVEN} must list DGANConfig fields, got {_given!r}."]
        raise_all(problems + self._problems(), ParameterError, "DGANConfig")

    def _problems(self) -> list[str]:
        """Every field's own check (declared with the field), then the checks across fields."""
        checks = [(f.name, f.metadata["check"]) for f in fields(self)]
        found = [c.problem(name, getattr(self, name), field_default(name)) for name, c in checks]
        problems = [problem for problem in found if problem]
        return problems + length_problems(self) + privacy_problems(self)

    @property
    def fields_set(self) -> frozenset[str]:
        """The fields set: passed when the config was made (whatever their values), settled
        for the data's size, or holding a value other than gretel's default (assigned
        later, say). The others show their defaults and `resolved_for` may pick them.

        Example:
            >>> sorted(DGANConfig(max_sequence_len=4, sample_len=2, batch_size=1024).fields_set)
            ['batch_size', 'max_sequence_len', 'sample_len']
        """
        changed = {f.name for f in fields(self) if getattr(self, f.name) != field_default(f.name)}
        return self._given | changed

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

    @property
    def dp_target_epsilon(self) -> float | None:
        """``dp_epsilon``, or gretel's ``dp_eps`` if ``dp_enabled``; None: no privacy.

        >>> DGANConfig(max_sequence_len=4, sample_len=2, dp_enabled=True).dp_target_epsilon
        1.0
        """
        given = self.dp_epsilon is not None or not self.dp_enabled
        return self.dp_epsilon if given else self.dp_eps

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a dict usable as ``DGANConfig(**config.to_dict())``, with
        the record of the fields set under ``"_given"`` (`fields_set`, kept that way).

        Example:
            >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
            >>> config.to_dict()["sample_len"], config.to_dict()["_given"]
            (2, ['max_sequence_len', 'sample_len'])
        """
        return {**asdict(self), GIVEN: sorted(self.fields_set)}

    def to_json_dict(self) -> dict[str, Any]:
        """Like `to_dict`, with enums as their names so the result is JSON-serializable.

        Example:
            >>> DGANConfig(max_sequence_len=4, sample_len=2).to_json_dict()["normalization"]
            'ZERO_ONE'
        """
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        named = {k: (v.name if isinstance(v, Enum) else v) for k, v in values.items()}
        return {**named, GIVEN: sorted(self.fields_set)}

    @classmethod
    def gretel(cls, **fields: Any) -> DGANConfig:
        """A config that trains as gretel-synthetics' DGAN does; ``fields`` as usual.

        dgan's defaults already match gretel's except where docs/quality.md measured a
        reason to differ; this undoes those: the gradient penalty takes one norm over the
        whole batch, one generator pass per batch serves the critic and generator rounds,
        the same settings for every data size (no large-data settings), no generator
        weight average or critic beside the main ones, one linear range per continuous variable,
        values decoded and filtered as generated, no onsets or carrier, fp16 scaling from 2**16.

        Example:
            >>> config = DGANConfig.gretel(max_sequence_len=20, sample_len=5)
            >>> config.gradient_penalty_norm, config.generator_ema_decay
            ('batch', None)
        """
        gretel_choices = dict(
            log_scale=False,
            per_class_scaling=False,
            fill_series_range=False,
            match_marginals=False,
            match_texture=False,
            match_class_shares=False,
            match_standardization=False,
            match_periods=False,
            match_centres=False,
            gradient_penalty_norm="batch",
            generator_ema_decay=None,
            reuse_fakes=True,
            large_data=False,
            temporal_critic=False,
            onset_attribute=False,
            period_carrier=False,
            envelope_critic=False,
            init_scale=2.0**16,
        )
        return cls(**{**gretel_choices, **fields})

    @classmethod
    def for_large_data(cls, **fields: Any) -> DGANConfig:
        """The benchmark suite's best settings for thousands of series; ``fields`` win.

        More, smaller steps: batch 128, all three learning rates 1e-4, sampling from a
        0.999 moving average of the generator's weights, and feature feedback
        (docs/quality.md has their scores). ``large_data="auto"`` (the default) picks them
        by itself from 1,000 series on; this forces them at any size.

        Example:
            >>> config = DGANConfig.for_large_data(max_sequence_len=24, sample_len=4)
            >>> config.batch_size, config.generator_learning_rate, config.feature_feedback
            (128, 0.0001, True)
        """
        return cls(**{**LARGE_DATA_SETTINGS, "large_data": True, **fields})

    def resolved_for(self, n_series: int) -> DGANConfig:
        """This config as training on ``n_series`` series uses it: ``large_data`` decided
        (True or False) and the settings it implies in the fields not set
        (`dgan.config.sizing.resolve`). A new object; this one is unchanged.

        Example:
            >>> config = DGANConfig(max_sequence_len=24, sample_len=4)
            >>> [(c.batch_size, c.training_steps) for c in map(config.resolved_for, (64, 5000))]
            [(16, 10000), (128, 16000)]
            >>> mine = DGANConfig(max_sequence_len=24, sample_len=4, batch_size=1024, epochs=400)
            >>> picked = mine.resolved_for(64)
            >>> picked.batch_size, picked.epochs, picked.training_steps, picked.feature_feedback
            (1024, 400, None, True)
        """
        settled = resolve(self, n_series)
        if self.dp_target_epsilon is None:
            return settled
        return private_settings(self, settled, n_series)

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> DGANConfig:
        """Build a config from `to_json_dict` output (or a TOML/JSON config file's table).

        Unknown keys are an error that names them, so typos in config files are caught.
        The fields given are set (`fields_set`), unless ``data`` holds the record itself.

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
        known = {f.name for f in fields(cls)} | {GIVEN}  # GIVEN: the record of fields set
        unknown = sorted(set(data) - known)
        if unknown:
            raise ParameterError(
                f"Unknown DGANConfig field(s) {unknown}; valid fields are {sorted(known)}."
            )
        return cls(**data)


def field_default(name: str) -> Any:
    """gretel's default of the `DGANConfig` field ``name`` (None for one without a default).

    Example: ``field_default("batch_size")`` is 1024.
    """
    f: Field = DGANConfig.__dataclass_fields__[name]
    return None if f.default is MISSING else f.default
