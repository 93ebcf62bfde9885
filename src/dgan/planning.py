"""The training plan: what dgan will do with the data, before it trains (`make_plan`).

A `TrainingPlan` lists every column's role and type, the examples and their lengths, the
sequence settings, batch size, steps per epoch and epochs, the precision in effect and
why, the threads, and a time estimate from a few timed warm-up steps on a throwaway copy
of the model (the model itself, its weights and its random streams are not touched).
Its ``warnings`` name settings or columns that are likely mistakes, each with the fix.
``DGAN.plan`` builds one; ``dgan train`` prints it, ``dgan train --dry-run`` only that.

Example:
    >>> import numpy as np
    >>> from dgan import DGAN, DGANConfig
    >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, batch_size=64, epochs=10,
    ...                         cuda=False))
    >>> plan = model.plan(np.random.default_rng(0).random((40, 4, 1)), warm_up_steps=0)
    >>> plan.steps_per_epoch, plan.warnings[0].split(":")[0]
    (1, 'batch_size 64 >= 40 examples')
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from dgan.config import DfStyle, DGANConfig, OutputType
from dgan.config.sizing import (
    FEATURE_NOISE_DIM,
    LONG_SERIES,
    SMALL_DATA,
    STEPS_PER_EPOCH_WANTED,
    budget_words,
    length_settings,
    suggested_batch_size,
)
from dgan.encoding.encoded import varies_in_length
from dgan.encoding.example_scaling import fills_range
from dgan.encoding.marginals import matches_marginals, one_distribution
from dgan.encoding.standardized import Standardized
from dgan.encoding.texture import matches_texture
from dgan.encoding.variables import log_floor
from dgan.precision import precision_and_why
from dgan.prepare import Checked, Source, fit_encoder, prepare, repair_missing
from dgan.privacy.public import privacy_plan
from dgan.tabular.arrays import TrainingArrays
from dgan.tabular.layout import FrameLayout
from dgan.tabular.suspicious import (
    column_kind_warnings,
    distinct,
    per_series_feature_warnings,
    pooled_features,
    wide_column_warnings,
)
from dgan.train.batch import Accumulators, Batch
from dgan.train.distributed import world_size
from dgan.train.loop import Budget
from dgan.train.trainer import Trainer


@dataclass
class ColumnPlan:
    """One column (or, in WIDE tables, the time-step columns of the feature)."""

    name: str
    role: str  # "attribute", "feature", "example id", "time"
    kind: str  # "discrete", "continuous" or "" (id and time columns)
    detail: str = ""  # "3 categories", "range -1.2 .. 4"


@dataclass
class TrainingPlan:
    """What training will do; ``str(plan)`` is the text ``dgan train`` prints."""

    columns: list[ColumnPlan]
    n_examples: int
    lengths: tuple[int, int]  # shortest, longest
    max_sequence_len: int
    sample_len: int
    batch_size: int
    steps_per_epoch: int
    epochs: int  # epochs of the budget (the last one may be partial)
    steps: int  # optimizer steps of the budget
    budget_reason: str  # where the budget comes from
    precision: str
    precision_reason: str
    device: str
    threads: int
    large_data: bool = False  # settings picked for the data's size (DGANConfig.large_data)
    settings_reason: str = ""  # which settings large_data picked, and why
    small_data: str = ""  # with few series: what to expect and what to try ("" otherwise)
    minutes: float | None = None  # the time budget (training_minutes)
    missing_values: str = ""  # what the repair of missing values does ("" when none are)
    steps_done: int = 0  # resuming: optimizer steps its run has trained (set by the caller)
    seconds_done: float = 0.0  # resuming: seconds trained before, counted by the time budget
    processes: int = 1  # under torchrun: the processes that train together
    privacy: str = ""  # differential privacy: target, noise, sampling ("" without)
    seconds_per_step: float | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def estimated_seconds(self) -> float | None:
        """Seconds for the steps left at the warm-up's speed, within the time budget."""
        if self.seconds_per_step is None:
            return None
        seconds = self.seconds_per_step * self.steps_left
        left = self.seconds_left
        return seconds if left is None else min(seconds, left)

    @property
    def seconds_left(self) -> float | None:
        """What is left of the time budget (None without one), a resumed run's past included."""
        if self.minutes is None:
            return None
        return max(0.0, 60 * self.minutes - self.seconds_done)

    @property
    def epochs_left(self) -> int:
        """Epochs still to train (a partial one counts): all, unless a resumed run trained some."""
        return max(0, self.epochs - self.steps_done // self.steps_per_epoch)

    @property
    def steps_left(self) -> int:
        """Optimizer steps still to train: all, unless a resumed run has trained some."""
        return max(0, self.steps - self.steps_done)

    def to_json_dict(self) -> dict[str, Any]:
        """The plan as JSON-native values."""
        return {
            **dataclasses.asdict(self),
            "lengths": list(self.lengths),
            "estimated_seconds": self.estimated_seconds,
            "epochs_left": self.epochs_left,
        }

    def __str__(self) -> str:
        width = max(len(c.name) for c in self.columns) if self.columns else 0
        shortest, longest = self.lengths
        lengths = f"length {longest}" if shortest == longest else f"lengths {shortest}..{longest}"
        lines = ["training plan:", f"  {self.n_examples} examples, {lengths}"]
        resumed = self.steps_done > 0
        if self.missing_values:
            lines.append(f"  {self.missing_values}")
        for c in self.columns:
            kind = f"{c.kind}, {c.detail}" if c.detail else c.kind
            lines.append(f"  {c.name:<{width}}  {c.role:<10}  {kind}".rstrip())
        lines += [
            f"  max_sequence_len {self.max_sequence_len}, sample_len {self.sample_len} "
            f"({self.max_sequence_len // self.sample_len} LSTM steps)",
            f"  batch_size {self.batch_size}: {_count(self.steps_per_epoch, 'step')} per "
            f"epoch; training {_count(self.steps, 'step')} ({_epochs(self)}): "
            f"{self.budget_reason}",
            *([f"  settings: {self.settings_reason}"] if self.settings_reason else []),
            # said when a run starts; a resumed run has said it
            *([f"  small data: {self.small_data}"] if self.small_data and not resumed else []),
            *([f"  {_resuming(self)}"] if resumed else []),
            *([f"  differential privacy: {self.privacy}"] if self.privacy else []),
            f"  precision {self.precision}: {self.precision_reason}",
            f"  device {self.device}, {_count(self.threads, 'CPU thread')}"
            if self.processes == 1
            else f"  device {self.device}, {self.processes} processes (torchrun) of "
            f"{_count(self.threads, 'CPU thread')} each",
        ]
        if self.seconds_per_step is not None:
            left = " for the epochs left" if self.steps_done else ""
            together = f" of the {self.processes} processes" if self.processes > 1 else ""
            capped = self.minutes is not None and self.estimated_seconds == self.seconds_left
            lines.append(
                f"  estimated time{left} {_duration(self.estimated_seconds)} "
                f"({self.seconds_per_step * 1000:.3g} ms per step in a warm-up{together}"
                + ("; the time budget stops it)" if capped else ")")
            )
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _resuming(plan: TrainingPlan) -> str:
    """Where a resumed run goes on ("resuming after epoch 2 and 3 of 5 steps: ..."), and
    which clock its time budget reads."""
    whole, rest = divmod(plan.steps_done, plan.steps_per_epoch)
    where = f"epoch {whole}" + (f" and {rest} of {plan.steps_per_epoch} steps" if rest else "")
    line = (
        f"resuming after {where}: {_count(plan.epochs_left, 'epoch')} left "
        f"({_count(plan.steps_left, 'step')})"
    )
    if plan.minutes is None:
        return line
    return (
        f"{line}; the time budget of {plan.minutes:g} min counts the whole run's training: "
        f"{_duration(plan.seconds_done)} before this resume, {_duration(plan.seconds_left)} left"
    )


def _epochs(plan: TrainingPlan) -> str:
    whole, rest = divmod(plan.steps, plan.steps_per_epoch)
    return _count(whole, "epoch") + (f" and {rest} of {plan.steps_per_epoch} steps" if rest else "")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.2g} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def make_plan(
    config: DGANConfig,
    source: Source,
    *,
    warm_up_steps: int = 3,
    device: torch.device | None = None,
) -> TrainingPlan:
    """The `TrainingPlan` of training a model with ``config`` on ``source``.

    ``source`` is the data as `dgan.prepare` takes it (a `FrameSource` or an
    `ArraySource`); it is checked as training would check it (the errors are the same).
    ``warm_up_steps`` training steps (after one untimed step) time a throwaway trainer
    built like the real one; 0 skips the estimate.
    """
    device = device or torch.device("cuda" if config.cuda and torch.cuda.is_available() else "cpu")
    checked = source.check(config.max_sequence_len)
    arrays, layout = checked.arrays, checked.layout
    n = len(arrays.features)
    asked, config = config, config.resolved_for(n)  # as training will settle it
    lengths = arrays.features.lengths.tolist()
    precision, reason = precision_and_why(config, device)
    budget = Budget.of(config, n)
    plan = TrainingPlan(
        columns=_columns(arrays, layout, config),
        n_examples=n,
        lengths=(min(lengths, default=0), max(lengths, default=0)),
        max_sequence_len=config.max_sequence_len,
        sample_len=config.sample_len,
        batch_size=config.batch_size,
        steps_per_epoch=budget.steps_per_epoch,
        epochs=budget.epochs,
        steps=budget.steps,
        budget_reason=_budget_reason(asked, config, n),
        precision=precision,
        precision_reason=reason,
        device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        threads=torch.get_num_threads(),
        large_data=bool(config.large_data),
        settings_reason=_settings_reason(asked, config, arrays.features.lengths, _classed(arrays)),
        small_data=_small_data(n),
        minutes=config.training_minutes,
        processes=world_size(),
    )
    plan.privacy = privacy_plan(config, checked, budget.steps)  # "" without privacy
    repaired, plan.missing_values = repair_missing(arrays, config)  # as training will
    _note_fitted(plan.columns, config, repaired)
    in_epochs = config.training_steps is None  # the budget: epochs, not optimizer steps
    plan.warnings = _warnings(plan, arrays, layout, checked.frame, in_epochs)
    if warm_up_steps > 0:
        plan.seconds_per_step = _warm_up(config, checked, device, warm_up_steps)
    return plan


def _budget_reason(asked: DGANConfig, config: DGANConfig, n: int) -> str:
    """Where the training length comes from, in words (with the time budget)."""
    if asked.training_steps is not None:
        why = f"training_steps={asked.training_steps}"
    elif config.training_steps is not None:
        why = f"picked for {n:,} series ({budget_words(config.max_sequence_len)})"
    else:
        why = f"epochs={config.epochs}"
    if config.training_minutes is not None:
        why += f", stopping after {config.training_minutes:g} min at most"
    return why


def _settings_reason(
    asked: DGANConfig, config: DGANConfig, lengths: np.ndarray, classed: bool
) -> str:
    """Which settings follow the data's size (large_data), or "" when none do; ``classed``:
    the data has a discrete attribute (the projection critic reads nothing else)."""
    if not config.large_data:
        return ""
    n, varied = len(lengths), varies_in_length(lengths, config.max_sequence_len)
    how = "picked for" if asked.large_data == "auto" else "large_data=True for"
    rule = length_settings(config.max_sequence_len, config.sample_len)
    picked = [name for name in rule if name not in asked.fields_set]
    rates = [name for name in picked if name.endswith("learning_rate")]
    words = [f"learning rates {config.generator_learning_rate:g}"] if len(rates) == 3 else []
    words += [f"{name} {getattr(config, name):g}" for name in rates if len(rates) < 3]
    said = {
        "generator_ema_decay": f"generator weight average {config.generator_ema_decay}",
        "feature_feedback": f"feature feedback {'on' if config.feature_feedback else 'off'}",
        "spectral_critic": f"a critic of spectra too (series of {LONG_SERIES}+ steps)",
        "length_attribute": "each series' length generated as an attribute" if varied else "",
        "projection_critic": "a critic that reads the discrete attributes" if classed else "",
        "bridge_seams": (
            f"no jumps where LSTM steps meet (every {config.sample_len} steps)"
            if config.sample_len >= 3
            else ""
        ),
        "feature_noise_dim": (
            f"{config.feature_noise_dim} numbers of feature noise per LSTM step (one per time "
            "step it generates)"
            if config.feature_noise_dim > FEATURE_NOISE_DIM
            else ""
        ),
    }
    words += [word for name, word in said.items() if name in picked and word]
    mine = sorted(asked.fields_set & {"batch_size", *rule})
    return (
        f"{how} {n:,} series: {', '.join(words) or 'the batch size and budget only'}"
        + (f"; yours: {', '.join(mine)}" if mine else "")
        + " (large_data=False: gretel's)"
    )


def _small_data(n: int) -> str:
    """What a user with few series can expect, and what to try ("" from `SMALL_DATA` on);
    one line, which a resumed run's plan leaves out (the run that started said it)."""
    if n >= SMALL_DATA:
        return ""
    return (
        f"{n:,} series, so the result is easier to tell from real than with thousands; "
        "more series help most, a longer budget (training_steps, training_minutes) can; "
        "check with dgan evaluate (README: 'Settings that follow the data's size')"
    )


# ----------------------------------------------------------------------------- columns


def _names(arrays: TrainingArrays, layout: FrameLayout | None) -> tuple[list, list]:
    if layout is not None:
        return list(layout.attribute_columns), list(layout.feature_names)
    n_attributes = 0 if arrays.attributes is None else arrays.attributes.shape[1]
    features = range(len(arrays.feature_types))
    return [f"attribute {j}" for j in range(n_attributes)], [f"feature {j}" for j in features]


def _classed(arrays: TrainingArrays) -> bool:
    """Whether the data has a discrete attribute (classes to scale, share and read by)."""
    return OutputType.DISCRETE in (arrays.attribute_types or [])


def _columns(
    arrays: TrainingArrays, layout: FrameLayout | None, config: DGANConfig
) -> list[ColumnPlan]:
    log_scale = config.log_scale if config.apply_feature_scaling else False
    fill = config.fill_series_range if config.apply_example_scaling else False
    match = config.match_marginals if config.dp_target_epsilon is None else False
    classed = _classed(arrays)
    texture = config.match_texture if config.dp_target_epsilon is None else False
    filtered = matches_texture(texture, config.max_sequence_len, LONG_SERIES)
    decoding = (fill, match, one_distribution(classed, len(arrays.features)), filtered)
    attribute_names, feature_names = _names(arrays, layout)
    columns = []
    for j, name in enumerate(attribute_names):
        kind, values = arrays.attribute_types[j], arrays.attributes[:, j]
        columns.append(_column(str(name), "attribute", kind, values, log_scale))
    pooled = pooled_features(arrays)
    for j, name in enumerate(feature_names):
        kind = arrays.feature_types[j]
        column = _column(str(name), "feature", kind, pooled[:, j], log_scale, decoding)
        if layout is not None and layout.df_style is DfStyle.WIDE:
            column.detail += f"; {len(layout.feature_columns)} time-step columns"
        columns.append(column)
    if layout is not None and layout.example_id_column is not None:
        columns.append(ColumnPlan(str(layout.example_id_column), "example id", ""))
    if layout is not None and layout.time_column is not None:
        columns.append(ColumnPlan(str(layout.time_column), "time", "orders each series"))
    return columns


STANDARDIZED = "generated series standardized as every training series is (match_standardization)"
OWN_RANGES = "each class gets its own range of series levels (per_class_scaling)"
KEPT_SHARES = "each class generated at its share of the training series (match_class_shares)"
"""What the plan says on the line of a feature standardized series by series, of the
attribute whose classes get levels of their own, and of the one whose shares are kept."""


def _note_fitted(columns: list[ColumnPlan], config: DGANConfig, arrays: TrainingArrays) -> None:
    """Say, as the encoder's fit on the repaired ``arrays`` decides them, which features'
    series are standardized, which attribute's classes get levels of their own and which
    one's shares are kept; a private encoder reads none of it."""
    if config.dp_target_epsilon is not None:
        return
    continuous = [j for j, kind in enumerate(arrays.feature_types) if kind is OutputType.CONTINUOUS]
    kept = Standardized.fit(arrays.features, continuous) if config.match_standardization else None
    lines = [c for c in columns if c.role == "feature"]
    for j in [] if kept is None else kept.moments:
        lines[j].detail += f"; {STANDARDIZED}"
    scaling, discrete = config.per_class_scaling, _classed(arrays)
    if not (scaling is True or (discrete and (scaling == "auto" or config.match_class_shares))):
        return
    encoder = fit_encoder(config, arrays)
    lines = [c for c in columns if c.role == "attribute"]
    if encoder.groups is not None:
        lines[encoder.groups.attribute].detail += f"; {OWN_RANGES}"
    if encoder.class_shares is not None:
        lines[encoder.class_shares.attribute].detail += f"; {KEPT_SHARES}"


def _column(
    name: str,
    role: str,
    kind: OutputType,
    values: np.ndarray,
    log_scale: bool | str,
    decoding: tuple = (False, False, False, False),  # as the encoder: fill, match, whole, texture
) -> ColumnPlan:
    if kind is OutputType.DISCRETE:
        count = distinct(values)
        return ColumnPlan(name, role, "discrete", f"{count} categor{'y' if count == 1 else 'ies'}")
    numbers = np.asarray(values, dtype=np.float64)
    finite = numbers[np.isfinite(numbers)]
    detail = f"range {finite.min():.4g} .. {finite.max():.4g}" if finite.size else "no values"
    # As the encoder decides it (`ContinuousEncoder.fit`), said where it applies.
    floor = None if log_scale is False else log_floor(finite, always=log_scale is True)
    if floor is not None:
        detail += f"; log scale (log_scale), below {floor:.3g} linear"
    if fills_range(decoding[0], floor is not None):
        detail += "; generated series fill their range (fill_series_range)"
    if matches_marginals(decoding[1], floor is not None, decoding[2]):
        detail += "; generated values take the data's distribution (match_marginals)"
    if decoding[3]:
        detail += "; generated series take the data's texture per class (match_texture)"
    return ColumnPlan(name, role, "continuous", detail)


# ----------------------------------------------------------------------------- warnings


def _warnings(
    plan: TrainingPlan,
    arrays: TrainingArrays,
    layout: FrameLayout | None,
    frame: pd.DataFrame | None,
    in_epochs: bool = True,
) -> list[str]:
    warnings = []
    n = plan.n_examples
    # One-step epochs learn little when the budget is in epochs (large_data=True or False,
    # epochs given); a budget in steps trains as many whatever the epochs.
    if plan.batch_size >= n and in_epochs and suggested_batch_size(n) < plan.batch_size:
        warnings.append(
            f"batch_size {plan.batch_size} >= {n} examples: every epoch is a single "
            "optimizer step, which learns little; set batch_size to "
            f"{suggested_batch_size(n)} (about {STEPS_PER_EPOCH_WANTED} steps per epoch)."
        )
    attribute_names, feature_names = _names(arrays, layout)
    warnings += column_kind_warnings(arrays, attribute_names, feature_names)
    if layout is None or layout.df_style is not DfStyle.WIDE:  # WIDE: one feature per row
        warnings += per_series_feature_warnings(arrays, feature_names)
    if frame is not None and layout is not None and layout.df_style is DfStyle.WIDE:
        warnings += wide_column_warnings(frame, layout)
    if frame is not None and layout is not None and layout.time_column is not None:
        times = frame[layout.time_column].nunique()
        if times > plan.lengths[1]:
            warnings.append(
                f"the series have different times in time_column {layout.time_column!r} "
                f"({times} distinct values, at most {plan.lengths[1]} steps per series): "
                "generated series all get the times of the longest training example, which "
                "say where a row is in its series, not when it happened; keep calendar "
                "information that matters (month, weekday) in attributes or features."
            )
    return warnings


def _warm_up(config: DGANConfig, data: Checked, device: torch.device, steps: int) -> float:
    """Seconds per training step of a throwaway trainer built like the real one. Under
    torchrun it trains with the other processes, as training will (each on its shard of
    the batch, with the all-reduces), so every process must plan, as every one trains."""
    prepared = prepare(data, config)
    trainer = Trainer.create(prepared.config, prepared.encoder, device)
    collective = trainer.join_processes(prepared.encoded)  # None in one process
    data = Batch.from_encoded(prepared.encoded, device)
    accumulators = Accumulators(device)
    size = min(prepared.config.batch_size, len(data))
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        for step in range(steps + 1):  # the first step pays one-off setup: not timed
            if step == 1:
                _synchronize(device)
                start = time.perf_counter()
            index = torch.randperm(len(data), device=device, generator=trainer.rng)[:size]
            if collective is None:
                trainer.train_step(data.take(index), accumulators)
            else:
                trainer.train_step(data.take(collective.shard(index)), accumulators, size)
        _synchronize(device)
    return (time.perf_counter() - start) / steps


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
