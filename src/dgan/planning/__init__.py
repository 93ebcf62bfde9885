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
from dgan.encoding.onsets import MIN_ONSET, series_onsets, starts_off, strip_onsets
from dgan.encoding.period_map import matches_periods
from dgan.encoding.periods import (
    GateSample,
    carried_features,
    gate_sample,
    series_frequencies,
    series_noise_floors,
)
from dgan.planning.columns import (
    ColumnPlan,
    classed,
    column_names,
    describe_columns,
    note_fitted,
)
from dgan.planning.options import your_settings
from dgan.precision import precision_and_why
from dgan.prepare import Checked, Source, prepare, repair_missing
from dgan.privacy.public import privacy_plan
from dgan.tabular.arrays import TrainingArrays
from dgan.tabular.layout import FrameLayout
from dgan.tabular.suspicious import (
    column_kind_warnings,
    per_series_feature_warnings,
    wide_column_warnings,
)
from dgan.train.batch import Accumulators, Batch
from dgan.train.distributed import world_size
from dgan.train.loop import Budget
from dgan.train.trainer import Trainer


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
    yours: str = ""  # settings given that no other line shows (`your_settings`)
    small_data: str = ""  # with few series: what to expect and what to try ("" otherwise)
    minutes: float | None = None  # the time budget (training_minutes)
    missing_values: str = ""  # what the repair of missing values does ("" when none are)
    onsets: str = ""  # the leading zero steps generated as an attribute ("" when not)
    periods: str = ""  # the features drawn on a carrier at each series' period ("" when none)
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
        if self.onsets:
            lines.append(f"  {self.onsets}")
        if self.periods:
            lines.append(f"  {self.periods}")
        for c in self.columns:
            kind = f"{c.kind}, {c.detail}" if c.detail else c.kind
            lines.append(f"  {c.name:<{width}}  {c.role:<10}  {kind}".rstrip())
        lines += [
            f"  max_sequence_len {self.max_sequence_len}, sample_len {self.sample_len} "
            f"({_count(self.max_sequence_len // self.sample_len, 'LSTM step')})",
            f"  batch_size {self.batch_size}: {_count(self.steps_per_epoch, 'step')} per "
            f"epoch; training {_count(self.steps, 'step')} ({_epochs(self)}): "
            f"{self.budget_reason}",
            *([f"  settings: {self.settings_reason}"] if self.settings_reason else []),
            *([f"  yours: {self.yours}"] if self.yours else []),
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
    # the settings line names the rule's fields the user set
    rule = length_settings(config.max_sequence_len, config.sample_len) if config.large_data else {}
    repaired, missing = repair_missing(arrays, config)  # as training will, the encoder's fit too
    repaired, onsets = _from_onsets(repaired, config)  # what the encoder fits on
    sample = gate_sample(repaired.features)  # where the encoder reads the periods
    carried = _carried(repaired, config, sample)
    plan = TrainingPlan(
        columns=describe_columns(repaired, layout, config, carried),
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
        settings_reason=_settings_reason(asked, config, arrays, bool(onsets or carried)),
        yours=your_settings(asked, said=rule),
        small_data=_small_data(n),
        minutes=config.training_minutes,
        processes=world_size(),
        missing_values=missing,
        onsets=onsets,
        periods=_periods(repaired, layout, config, carried, sample),
    )
    plan.privacy = privacy_plan(config, checked, budget.steps)  # "" without privacy
    note_fitted(plan.columns, config, repaired)
    in_epochs = config.training_steps is None  # the budget: epochs, not optimizer steps
    plan.warnings = _warnings(plan, arrays, layout, checked.frame, in_epochs)
    if warm_up_steps > 0:
        plan.seconds_per_step = _warm_up(config, checked, device, warm_up_steps)
    return plan


def _from_onsets(arrays: TrainingArrays, config: DGANConfig) -> tuple[TrainingArrays, str]:
    """``arrays`` from each series' switch-on where the encoder takes the leading zero
    steps off (`dgan.encoding.onsets`), and the plan's line saying so ("" where not)."""
    what = "taken off and generated as an attribute (onset_attribute)"
    if config.dp_target_epsilon is not None:  # "auto" would read the values: off; True is
        on = config.onset_attribute is True  # checked with the other public parts
        return arrays, f"onsets: each series' leading zero steps {what}" if on else ""
    features = arrays.features
    varied = varies_in_length(features.lengths, config.max_sequence_len)
    if not starts_off(config.onset_attribute, features, varied):
        return arrays, ""
    onsets = series_onsets(features)
    line = (
        f"onsets: each series' leading zero steps ({onsets.min()}..{onsets.max()}; "
        f"{(onsets >= MIN_ONSET).sum():,} of {len(onsets):,} series start with {MIN_ONSET} or "
        f"more) {what}"
    )
    return dataclasses.replace(arrays, features=strip_onsets(features, onsets)), line


def _carried(arrays: TrainingArrays, config: DGANConfig, sample: GateSample) -> list[int]:
    """The features the encoder will draw on a carrier (`dgan.encoding.periods`);
    ``arrays`` as the encoder fits them, ``sample`` their `gate_sample`."""
    kinds = arrays.feature_types
    continuous = [i for i, kind in enumerate(kinds) if kind == OutputType.CONTINUOUS]
    if config.dp_target_epsilon is not None:  # "auto" would read the values: off
        return continuous if config.period_carrier is True else []
    return carried_features(config.period_carrier, sample, continuous)


def _periods(
    arrays: TrainingArrays,
    layout: FrameLayout | None,
    config: DGANConfig,
    carried: list[int],
    sample: GateSample,
) -> str:
    """The plan's line on the ``carried`` features, drawn on a carrier at each series' own
    period (`dgan.encoding.periods`), "" where none is. Its medians are read from
    ``sample``, the series the encoder reads its own from (`gate_sample`), so that the
    line costs the same for a million series as for four thousand."""
    private = config.dp_target_epsilon is not None
    if not carried:
        return ""
    names = column_names(arrays, layout)[1]
    words = []
    for i in carried:
        said = repr(names[i])
        if not private:
            frequency, share = series_frequencies(sample, i)
            floor = np.nanmedian(series_noise_floors(sample, i))
            said += (
                f" (median period {1 / np.nanmedian(frequency):.3g} steps, "
                f"{np.nanmedian(share):.0%} of the power there, a noise floor of "
                f"{floor:.2%} of the wave)"
            )
        words.append(said)
    critic = config.envelope_critic is not False  # "auto" trains it beside a carrier
    mapped = not private and matches_periods(config.match_periods, True)
    centred = not private and matches_periods(config.match_centres, True)
    return (
        f"periods: {', '.join(words)} drawn as waves at each series' own generated period, "
        "not by the LSTM's head (period_carrier)"
        + ("; an envelope critic beside the others (envelope_critic)" if critic else "")
        + ("; generated periods mapped onto the training series' (match_periods)" if mapped else "")
        + ("; generated waves moved onto the training centres (match_centres)" if centred else "")
    )


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
    asked: DGANConfig, config: DGANConfig, arrays: TrainingArrays, onsets_or_periods: bool
) -> str:
    """Which settings follow the data's size (large_data), or "" when none do;
    ``onsets_or_periods``: whether the encoder makes each series' onset or its carried
    periods additional attributes."""
    if not config.large_data:
        return ""
    by_class = classed(arrays)  # a discrete attribute: the projection critic reads nothing else
    lengths = arrays.features.lengths
    n, varied = len(lengths), varies_in_length(lengths, config.max_sequence_len)
    # attributes, or the additional ones the encoder makes (example scaling's ranges of
    # continuous features, a varied length, onsets, carried periods), make the first state
    ranges = config.apply_example_scaling and OutputType.CONTINUOUS in arrays.feature_types
    extra = ranges or (config.length_attribute and varied) or onsets_or_periods
    attributed = bool(arrays.attribute_types) or extra
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
        "projection_critic": "a critic that reads the discrete attributes" if by_class else "",
        "attribute_state": "each series' LSTM started from its attributes" if attributed else "",
        "bridge_seams": (
            f"no jumps where LSTM steps meet (every {config.sample_len} steps)"
            if config.sample_len >= 3
            else ""
        ),
        "bridge_width": (
            f"the join fitted to {config.bridge_width} values each side"
            if config.bridge_seams and config.sample_len >= 3 and config.bridge_width > 2
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
    attribute_names, feature_names = column_names(arrays, layout)
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
    prepared = prepare(data, config, device=device)
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
