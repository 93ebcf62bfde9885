"""The training plan: what dgan will do with the data, before it trains (`make_plan`).

A `TrainingPlan` lists every column's role and type, the examples and their lengths, the
sequence settings, batch size, steps per epoch and epochs, the precision in effect and
why, the threads, and a time estimate from a few timed warm-up steps on a throwaway copy
of the model (the model itself, its weights and its random streams are not touched).
Its ``warnings`` name settings or columns that are likely mistakes, each with the fix.
``DGAN.plan`` builds one; ``dgan train`` prints it, ``dgan train --dry-run`` only that.

`suggested_batch_size` is the batch size ``dgan train`` uses when none is given.

Example:
    >>> import numpy as np
    >>> from dgan import DGAN, DGANConfig
    >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, batch_size=64, cuda=False))
    >>> plan = model.plan(np.random.default_rng(0).random((40, 4, 1)), warm_up_steps=0)
    >>> plan.steps_per_epoch, plan.warnings[0].split(":")[0]
    (1, 'batch_size 64 >= 40 examples')
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from dgan.config import DfStyle, DGANConfig, OutputType
from dgan.precision import (
    Precision,
    bf16_is_native,
    cpu_bf16_hardware,
    cpu_fp16_hardware,
    resolve_precision,
    runs_in_hardware,
)
from dgan.prepare import Checked, Source, prepare, repair_missing
from dgan.tabular.arrays import TrainingArrays
from dgan.tabular.layout import FrameLayout
from dgan.train.batch import Accumulators, Batch
from dgan.train.distributed import world_size
from dgan.train.trainer import Trainer

GRETEL_BATCH_SIZE = 1024
"""gretel's (and `DGANConfig`'s) default batch size."""
MIN_SUGGESTED_BATCH = 16
"""`suggested_batch_size` never goes below this."""
STEPS_PER_EPOCH_WANTED = 10
"""`suggested_batch_size` aims at about this many optimizer steps per epoch."""
MIN_EXAMPLES_PER_CATEGORY = 5
"""Attributes with fewer examples per category than this (on average) are warned about."""


def suggested_batch_size(n_examples: int) -> int:
    """The batch size for ``n_examples`` when none is given: the power of two nearest below
    n/10 (about 10 optimizer steps per epoch), at least 16 and at most gretel's 1024.

    With gretel's fixed 1024, 365 series train one step per epoch, which learns little.

    Example:
        >>> [suggested_batch_size(n) for n in (24, 365, 5000, 100_000)]
        [16, 32, 256, 1024]
    """
    target = max(n_examples / STEPS_PER_EPOCH_WANTED, 1.0)
    power = 2 ** math.floor(math.log2(target))
    return int(min(GRETEL_BATCH_SIZE, max(MIN_SUGGESTED_BATCH, power)))


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
    epochs: int
    precision: str
    precision_reason: str
    device: str
    threads: int
    large_data: bool = False  # trains with the large-data settings (DGANConfig.large_data)
    missing_values: str = ""  # what the repair of missing values does ("" when none are)
    epochs_done: int = 0  # resuming: epochs the checkpoint has trained (set by the caller)
    processes: int = 1  # under torchrun: the processes that train together
    seconds_per_step: float | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def estimated_seconds(self) -> float | None:
        """Seconds for the epochs left (all of them, unless resuming) at the warm-up's
        speed (None without a warm-up)."""
        if self.seconds_per_step is None:
            return None
        return self.seconds_per_step * self.steps_per_epoch * self.epochs_left

    @property
    def epochs_left(self) -> int:
        """Epochs still to train: all, unless a resumed run has trained some."""
        return max(0, self.epochs - self.epochs_done)

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
        if self.missing_values:
            lines.append(f"  {self.missing_values}")
        total_steps = self.steps_per_epoch * self.epochs
        for c in self.columns:
            kind = f"{c.kind}, {c.detail}" if c.detail else c.kind
            lines.append(f"  {c.name:<{width}}  {c.role:<10}  {kind}".rstrip())
        lines += [
            f"  max_sequence_len {self.max_sequence_len}, sample_len {self.sample_len} "
            f"({self.max_sequence_len // self.sample_len} LSTM steps)",
            f"  batch_size {self.batch_size}: {_count(self.steps_per_epoch, 'step')} per "
            f"epoch, {_count(self.epochs, 'epoch')} ({_count(total_steps, 'step')})",
            *(
                [
                    "  large-data settings: smaller batches, learning rates 1e-4, weight "
                    "average, feature feedback (large_data=False: gretel's)"
                ]
                if self.large_data
                else []
            ),
            *(
                [
                    f"  resuming after epoch {self.epochs_done}: "
                    f"{_count(self.epochs_left, 'epoch')} left "
                    f"({_count(self.epochs_left * self.steps_per_epoch, 'step')})"
                ]
                if self.epochs_done
                else []
            ),
            f"  precision {self.precision}: {self.precision_reason}",
            f"  device {self.device}, {_count(self.threads, 'CPU thread')}"
            if self.processes == 1
            else f"  device {self.device}, {self.processes} processes (torchrun) of "
            f"{_count(self.threads, 'CPU thread')} each",
        ]
        if self.seconds_per_step is not None:
            left = " for the epochs left" if self.epochs_done else ""
            together = f" of the {self.processes} processes" if self.processes > 1 else ""
            lines.append(
                f"  estimated time{left} {_duration(self.estimated_seconds)} "
                f"({self.seconds_per_step * 1000:.3g} ms per step in a warm-up{together})"
            )
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


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
    config = config.resolved_for(n)  # as training will: large_data decided by the data
    lengths = [len(f) for f in arrays.features]
    precision, reason = _precision(config, device)
    plan = TrainingPlan(
        columns=_columns(arrays, layout),
        n_examples=n,
        lengths=(min(lengths, default=0), max(lengths, default=0)),
        max_sequence_len=config.max_sequence_len,
        sample_len=config.sample_len,
        batch_size=config.batch_size,
        steps_per_epoch=max(1, math.ceil(n / config.batch_size)),
        epochs=config.epochs,
        precision=precision,
        precision_reason=reason,
        device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        threads=torch.get_num_threads(),
        large_data=bool(config.large_data),
        processes=world_size(),
    )
    plan.missing_values = repair_missing(arrays, config)[1]  # as training will repair them
    plan.warnings = _warnings(plan, arrays, layout, checked.frame)
    if warm_up_steps > 0:
        plan.seconds_per_step = _warm_up(config, checked, device, warm_up_steps)
    return plan


def _precision(config: DGANConfig, device: torch.device) -> tuple[str, str]:
    """The precision training will use on ``device``, and why."""
    requested = config.effective_precision
    precision = resolve_precision(requested, device)  # raises what training would raise
    if device.type == "cpu":
        fp16 = precision is Precision.FP16  # name the hardware the precision would use
        hardware = cpu_fp16_hardware() if fp16 else cpu_bf16_hardware()
        kind = "fp16" if fp16 else "bf16"
        cpu = f"this CPU has {hardware}" if hardware else f"this CPU has no {kind} hardware"
    else:
        native = bf16_is_native(device)
        cpu = "this GPU " + ("has native bf16" if native else "has no native bf16")
    if requested == Precision.AUTO.value:
        if device.type == "cpu":
            why = "'auto' on a CPU is fp32 (bf16 did not match its quality everywhere)"
        else:
            why = f"'auto' on a GPU: {cpu}"
        return precision.value, f"{why}; {cpu}" if device.type == "cpu" else why
    if config.precision is None:
        source = (
            "mixed_precision_training=True"
            if config.mixed_precision_training
            else ("the default (precision=None)")
        )
    else:
        source = f"precision={config.precision!r} was asked for"
    if precision is Precision.FP32:
        return precision.value, f"{source}; {cpu}"
    emulated = runs_in_hardware(precision, device) is False
    return precision.value, f"{source}; {cpu}" + (", so it is emulated (slow)" if emulated else "")


# ----------------------------------------------------------------------------- columns


def _names(arrays: TrainingArrays, layout: FrameLayout | None) -> tuple[list, list]:
    n_attributes = 0 if arrays.attributes is None else arrays.attributes.shape[1]
    if layout is not None:
        return list(layout.attribute_columns), list(layout.feature_names)
    return [f"attribute {j}" for j in range(n_attributes)], [
        f"feature {j}" for j in range(len(arrays.feature_types))
    ]


def _columns(arrays: TrainingArrays, layout: FrameLayout | None) -> list[ColumnPlan]:
    attribute_names, feature_names = _names(arrays, layout)
    columns = []
    for j, name in enumerate(attribute_names):
        values = arrays.attributes[:, j]
        columns.append(_column(str(name), "attribute", arrays.attribute_types[j], values))
    pooled = _pooled_features(arrays)
    for j, name in enumerate(feature_names):
        column = _column(str(name), "feature", arrays.feature_types[j], pooled[:, j])
        if layout is not None and layout.df_style is DfStyle.WIDE:
            column.detail += f"; {len(layout.feature_columns)} time-step columns"
        columns.append(column)
    if layout is not None and layout.example_id_column is not None:
        columns.append(ColumnPlan(str(layout.example_id_column), "example id", ""))
    if layout is not None and layout.time_column is not None:
        columns.append(ColumnPlan(str(layout.time_column), "time", "orders each series"))
    return columns


def _pooled_features(arrays: TrainingArrays) -> np.ndarray:
    if not arrays.features:
        return np.empty((0, len(arrays.feature_types)))
    return np.concatenate(arrays.features)


def _column(name: str, role: str, kind: OutputType, values: np.ndarray) -> ColumnPlan:
    if kind is OutputType.DISCRETE:
        count = _distinct(values)
        return ColumnPlan(name, role, "discrete", f"{count} categor{'y' if count == 1 else 'ies'}")
    numbers = np.asarray(values, dtype=np.float64)
    finite = numbers[np.isfinite(numbers)]
    detail = f"range {finite.min():.4g} .. {finite.max():.4g}" if finite.size else "no values"
    return ColumnPlan(name, role, "continuous", detail)


def _distinct(values: np.ndarray) -> int:
    return int(pd.Series(values, dtype=object).nunique(dropna=False))


# ----------------------------------------------------------------------------- warnings


def _warnings(
    plan: TrainingPlan,
    arrays: TrainingArrays,
    layout: FrameLayout | None,
    frame: pd.DataFrame | None,
) -> list[str]:
    warnings = []
    n = plan.n_examples
    if plan.batch_size >= n:
        warnings.append(
            f"batch_size {plan.batch_size} >= {n} examples: every epoch is a single "
            "optimizer step, which learns little; set batch_size to "
            f"{suggested_batch_size(n)} (about {STEPS_PER_EPOCH_WANTED} steps per epoch)."
        )
    attribute_names, feature_names = _names(arrays, layout)
    for j, name in enumerate(attribute_names):
        if arrays.attribute_types[j] is not OutputType.DISCRETE:
            continue
        count = _distinct(arrays.attributes[:, j])
        if count == n and n >= 10:
            warnings.append(
                f"attribute {name!r} has a different value for every example, like an "
                "identifier: the model cannot learn it; leave it out of attribute_columns "
                "(or make it the example_id_column)."
            )
        elif count * MIN_EXAMPLES_PER_CATEGORY > n:
            warnings.append(
                f"attribute {name!r} has {count} categories for {n} examples (fewer than "
                f"{MIN_EXAMPLES_PER_CATEGORY} per category): rare categories cannot be "
                "learned; merge them or leave the attribute out."
            )
    pooled = _pooled_features(arrays)
    for role, names, types, matrix in [
        ("attribute", attribute_names, arrays.attribute_types or [], arrays.attributes),
        ("feature", feature_names, arrays.feature_types, pooled),
    ]:
        for j, name in enumerate(names):
            if types[j] is OutputType.CONTINUOUS and _few_integers(matrix[:, j]):
                warnings.append(
                    f"{role} {name!r} is continuous but holds only a few whole numbers "
                    f"({_distinct(matrix[:, j])} distinct): if they are codes or classes, "
                    "list it in discrete_columns."
                )
    for j, name in enumerate(feature_names):
        if arrays.feature_types[j] is not OutputType.DISCRETE:
            continue
        count, rows = _distinct(pooled[:, j]), len(pooled)
        if count > 20 and count > rows / 2:
            warnings.append(
                f"feature {name!r} is discrete with {count} distinct values in {rows} rows: it "
                "looks like an identifier or free text, which the model cannot learn; leave "
                "it out (list the features with feature_columns)."
            )
    if layout is None or layout.df_style is not DfStyle.WIDE:  # WIDE: one feature per row
        warnings += _per_series_feature_warnings(arrays, feature_names)
    if frame is not None and layout is not None and layout.df_style is DfStyle.WIDE:
        warnings += _wide_column_warnings(frame, layout)
    if frame is not None and layout is not None and layout.time_column is not None:
        distinct = frame[layout.time_column].nunique()
        if distinct > plan.lengths[1]:
            warnings.append(
                f"the series have different times in time_column {layout.time_column!r} "
                f"({distinct} distinct values, at most {plan.lengths[1]} steps per series): "
                "generated series all get the times of the longest training example, which "
                "say where a row is in its series, not when it happened; keep calendar "
                "information that matters (month, weekday) in attributes or features."
            )
    return warnings


def _per_series_feature_warnings(arrays: TrainingArrays, names: list) -> list[str]:
    """Features that never change within a series but differ between series: attributes
    left out of the attribute columns, most likely (a site, a class, a device type).

    Example:
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> site = np.repeat([[1.0], [2.0], [3.0]], 4, axis=0).reshape(3, 4, 1)
        >>> arrays = validate_training_arrays(site, None, None, None, 4)
        >>> _per_series_feature_warnings(arrays, ["site"])[0].split(":")[0]
        "feature 'site' never changes within a series (3 values across the 3 series)"
    """
    lengths = [len(f) for f in arrays.features]
    if len(lengths) < 2 or max(lengths, default=0) < 2:
        return []
    pooled = pd.DataFrame(_pooled_features(arrays))
    per_series = pooled.groupby(np.repeat(np.arange(len(lengths)), lengths))
    constant = per_series.nunique(dropna=False).max(axis=0) <= 1
    warnings = []
    for j, name in enumerate(names):
        across = _distinct(pooled.iloc[:, j].to_numpy())
        if constant.iloc[j] and across > 1:
            warnings.append(
                f"feature {name!r} never changes within a series ({across} values across the "
                f"{len(lengths)} series): it describes each series rather than following it "
                "over time; make it an attribute (attribute_columns), which the model learns "
                "as one value per series, in relation to the features."
            )
    return warnings


def _few_integers(values: np.ndarray, most: int = 10) -> bool:
    numbers = np.asarray(values, dtype=np.float64)
    numbers = numbers[np.isfinite(numbers)]
    if numbers.size < 2 * most or not np.all(numbers == np.round(numbers)):
        return False
    return 1 < len(np.unique(numbers)) <= most


def _wide_column_warnings(frame: pd.DataFrame, layout: FrameLayout) -> list[str]:
    """WIDE time-step columns that look like an identifier or a year, not a time step."""
    columns = list(layout.feature_columns)
    if len(columns) < 2:
        return []
    numbers = {c: pd.to_numeric(frame[c], errors="coerce").to_numpy(np.float64) for c in columns}
    medians = {c: np.nanmedian(v) if np.isfinite(v).any() else np.nan for c, v in numbers.items()}
    warnings = []
    for c, values in numbers.items():
        finite = values[np.isfinite(values)]
        if finite.size < 2 or not np.all(finite == np.round(finite)):
            continue
        others = [m for k, m in medians.items() if k != c and np.isfinite(m)]
        typical = np.median(others) if others else np.nan
        if np.all((finite >= 1800) & (finite <= 2100)) and not 1800 <= typical <= 2100:
            looks = "a year"
        elif len(np.unique(finite)) == finite.size >= 10 and (
            np.all(np.diff(finite) > 0) or np.all(np.diff(finite) < 0)
        ):
            looks = "an identifier (distinct, sorted integers)"
        else:
            continue
        warnings.append(
            f"WIDE column {c!r} looks like {looks}, yet it is used as one time step of the "
            f"feature (its values {finite.min():.0f}..{finite.max():.0f}, other steps' "
            f"typical value {typical:.3g}); make it an attribute (attribute_columns) or "
            "list the time steps with feature_columns."
        )
    return warnings


# ----------------------------------------------------------------------------- warm-up


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
