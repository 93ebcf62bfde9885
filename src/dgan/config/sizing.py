"""Settings that follow the training data's size: one rule for every number of series.

At the defaults (``large_data="auto"``) dgan trains with more, smaller steps than
gretel's settings, sampling from a moving average of the generator's weights, with
feature feedback, for a budget of optimizer steps chosen from the data's size:

* ``batch_size``: the power of two nearest below an eighth of the series, between
  `MIN_BATCH` and `MAX_BATCH` (8 or more steps per epoch; 16 for 64 series, 32 for 256,
  128 from 1,024 on);
* learning rates 1e-4, ``generator_ema_decay=0.999``, ``feature_feedback=True``, and for
  series of `LONG_SERIES` steps or more ``spectral_critic``, ``length_attribute``,
  ``projection_critic``, ``attribute_state``, ``bridge_seams`` over a ``bridge_width`` of
  an eighth of ``sample_len`` and a ``feature_noise_dim`` of ``sample_len``
  (`long_series_settings`);
* ``training_steps``: what `DEFAULT_EPOCHS` epochs take at that batch size, but at least
  `MIN_STEPS` and at most `MAX_STEPS` optimizer steps: small data gets more passes, large
  data fewer than 400 (a million series would otherwise train for days); long series get
  more (`length_factor`: in proportion to the length from `LONG_SERIES` steps on, up to
  `MAX_LENGTH_FACTOR` times as many).

The rule sets each of those fields that the user did not set (`DGANConfig.fields_set`: a
value given equal to gretel's default counts as set, and is honoured), and the budget
unless ``epochs`` or ``training_steps`` is set; the budget follows the batch size in
effect, the user's or the rule's. `resolve` (`DGANConfig.resolved_for`) applies it when
training first sees the data; the measurements behind it are in docs/quality.md
("Settings by data size").

Example:
    >>> rule = size_settings(256)
    >>> rule["batch_size"], rule["training_steps"], rule["generator_learning_rate"]
    (32, 10000, 0.0001)
    >>> size_settings(3661)["training_steps"]  # 400 epochs of 29 steps
    11600
    >>> size_settings(256, length=427)["training_steps"]  # long series: four times as many
    40000
    >>> size_settings(256, length=427, sample_len=61)["feature_noise_dim"]
    61
"""

from __future__ import annotations

import math
from typing import Any

from dgan.config.given import Config, settled
from dgan.errors import ParameterError

DEFAULT_EPOCHS = 400
"""gretel's (and `DGANConfig`'s) default number of epochs."""
MIN_BATCH, MAX_BATCH = 16, 128
"""The smallest and largest batch the rule picks."""
SERIES_PER_STEP = 8
"""The rule's batch is the power of two nearest below n / this (about this many steps per
epoch)."""
MIN_STEPS, MAX_STEPS = 10_000, 20_000
"""The budget the rule picks: at least and at most this many optimizer steps."""
LONG_SERIES, MAX_LENGTH_FACTOR = 100, 4.0
"""From `LONG_SERIES` steps on the budget grows in proportion to the series' length, up to
`MAX_LENGTH_FACTOR` times as many steps: on series of 427 and 799 steps each doubling of
the budget scored better in every seed measured (docs/quality.md, "Long real series");
the benchmark windows (24 to 28 steps) are untouched."""
SMALL_DATA = 1_000
"""Below this many series the plan says what to expect and what to try: the measured
quality (docs/quality.md) is still short of what thousands of series reach."""
SIZE_SETTINGS: dict[str, Any] = {
    "generator_learning_rate": 1e-4,
    "discriminator_learning_rate": 1e-4,
    "attribute_discriminator_learning_rate": 1e-4,
    "generator_ema_decay": 0.999,
    "feature_feedback": True,
}
"""The settings the rule picks at every size (beside the batch size and the budget)."""
LONG_SERIES_SETTINGS: dict[str, Any] = {
    "spectral_critic": True,
    "length_attribute": True,
    "projection_critic": True,
    "attribute_state": True,
    "bridge_seams": True,
}
"""What the rule adds for series of `LONG_SERIES` steps or more, beside the feature noise
(`long_series_settings`): a critic that also reads each feature's spectrum (on the long
sensors every class came out with the same daily cycle without it; docs/quality.md, "A
critic that sees periods"), where lengths vary each series' length as a generated
attribute (without it generated sensors ran long and faded toward their end;
docs/quality.md, "Where generated long series end"), and a critic whose score reads the
discrete attributes through a projection (without it a real series scored with another
class's label lost little score, and generated series took other classes' shapes;
docs/quality.md, "A critic that reads the class"; nothing changes without a discrete
attribute), the feature LSTM started from a state made of the attributes (without it a
class's slow shape over the whole series, a laptop's drift, was not drawn once ten classes
shared the generator; docs/quality.md, "The LSTM's first state from the class"), and each
LSTM step's values joined to the step before's (without it generated
series jumped at every ``sample_len`` boundary; docs/quality.md, "Seams bridged")."""
FEATURE_NOISE_DIM = 10
"""gretel's (and `DGANConfig`'s) ``feature_noise_dim``: the least the rule gives."""
BRIDGE_SHARE = 8
"""The rule's ``bridge_width`` is ``sample_len // BRIDGE_SHARE`` (an eighth of each LSTM
step's values), at least `DGANConfig`'s 2."""
LARGE_DATA_SETTINGS: dict[str, Any] = {"batch_size": MAX_BATCH, **SIZE_SETTINGS}
"""``large_data=True`` (`DGANConfig.for_large_data`): the rule's settings at its largest
batch, at any size, trained for ``epochs``."""


GRETEL_BATCH_SIZE = 1024
"""gretel's (and `DGANConfig`'s) default batch size."""
MIN_SUGGESTED_BATCH = 16
"""`suggested_batch_size` never goes below this."""
STEPS_PER_EPOCH_WANTED = 10
"""`suggested_batch_size` aims at about this many optimizer steps per epoch."""


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


def size_batch(n_series: int) -> int:
    """The rule's batch size for ``n_series`` series.

    Example:
        >>> [size_batch(n) for n in (40, 64, 256, 1000, 1024, 10**6)]
        [16, 16, 32, 64, 128, 128]
    """
    target = max(n_series / SERIES_PER_STEP, 1.0)
    return int(min(MAX_BATCH, max(MIN_BATCH, 2 ** math.floor(math.log2(target)))))


def length_factor(length: int) -> float:
    """How many times the budget long series get: ``length`` / `LONG_SERIES`, between 1
    and `MAX_LENGTH_FACTOR`.

    Example:
        >>> [length_factor(n) for n in (24, 100, 250, 400, 1344)]
        [1.0, 1.0, 2.5, 4.0, 4.0]
    """
    return min(MAX_LENGTH_FACTOR, max(1.0, length / LONG_SERIES))


def size_steps(n_series: int, batch_size: int, length: int = 0) -> int:
    """The rule's budget: `DEFAULT_EPOCHS` epochs of ``batch_size`` batches, within
    [`MIN_STEPS`, `MAX_STEPS`], times `length_factor` for series of ``length`` steps.

    Example:
        >>> size_steps(64, 16), size_steps(3661, 128), size_steps(10**6, 128)
        (10000, 11600, 20000)
        >>> size_steps(284, 32, length=799)
        40000
    """
    per_epoch = max(1, math.ceil(n_series / batch_size))
    steps = min(MAX_STEPS, max(MIN_STEPS, DEFAULT_EPOCHS * per_epoch))
    return round(steps * length_factor(length))


def budget_words(length: int) -> str:
    """How the rule picked the budget for series of ``length`` steps, for the plan.

    Example:
        >>> budget_words(427).split("; ")[0]
        "400 epochs' steps, at least 10,000 and at most 20,000, x4 for series of 427 steps"
    """
    factor = length_factor(length)
    longer = f", x{factor:g} for series of {length:,} steps" * (factor > 1)
    return (
        f"{DEFAULT_EPOCHS} epochs' steps, at least {MIN_STEPS:,} and at most {MAX_STEPS:,}"
        f"{longer}; set epochs or training_steps to choose"
    )


def size_settings(n_series: int, length: int = 0, sample_len: int = 1) -> dict[str, Any]:
    """Every setting the rule picks for ``n_series`` series of ``length`` steps generated
    ``sample_len`` steps at a time (see the module docstring)."""
    batch = size_batch(n_series)
    steps = size_steps(n_series, batch, length)
    rule = length_settings(length, sample_len)
    return {"batch_size": batch, **rule, "training_steps": steps}


def length_settings(length: int, sample_len: int = 1) -> dict[str, Any]:
    """The settings the rule picks beside the batch size and budget, for series of
    ``length`` steps generated ``sample_len`` steps at a time: `SIZE_SETTINGS`, and
    `long_series_settings` from `LONG_SERIES` on.

    Example:
        >>> "spectral_critic" in length_settings(24), length_settings(427)["spectral_critic"]
        (False, True)
        >>> length_settings(427)["length_attribute"]  # used where lengths vary
        True
    """
    if length < LONG_SERIES:
        return dict(SIZE_SETTINGS)
    return {**SIZE_SETTINGS, **long_series_settings(sample_len)}


def long_series_settings(sample_len: int) -> dict[str, Any]:
    """`LONG_SERIES_SETTINGS`, one number of feature noise for each time step an LSTM step
    generates (``sample_len``, at least `FEATURE_NOISE_DIM`), and a bridge fitted to an
    eighth of each step's values (`BRIDGE_SHARE`, at least 2). With gretel's 10 numbers of
    noise, the 47 values an LSTM step generates on the long sensors varied as 10 numbers
    do: generated wind fell into calm, smooth stretches and pressure faded toward its end
    (docs/quality.md, "Feature noise per value"). Bridged over 2 values, the pig's
    200-value steps jumped at their third-last value, which steered the next step's start
    (docs/quality.md, "A wider bridge").

    Example:
        >>> [long_series_settings(n)["feature_noise_dim"] for n in (47, 4)]
        [47, 10]
        >>> [long_series_settings(n)["bridge_width"] for n in (200, 47, 4)]
        [25, 5, 2]
    """
    return {
        **LONG_SERIES_SETTINGS,
        "feature_noise_dim": max(FEATURE_NOISE_DIM, sample_len),
        "bridge_width": max(2, sample_len // BRIDGE_SHARE),
    }


def resolve(config: Config, n_series: int) -> Config:
    """``config`` settled for training on ``n_series`` series (`DGANConfig.resolved_for`):
    with ``large_data="auto"`` the rule's value in each sized field not set and, unless
    ``epochs`` or ``training_steps`` is set, the rule's budget at the batch size in effect
    (``large_data`` then True, or False when the user set everything); with True or False,
    `apply_large_data`. The settled fields count as set (`dgan.config.given.settled`).

    Example:
        >>> from dgan import DGANConfig
        >>> mine = DGANConfig(max_sequence_len=4, sample_len=2, batch_size=1024)
        >>> settled_config = resolve(mine, 256)
        >>> settled_config.batch_size, settled_config.training_steps, settled_config.large_data
        (1024, 10000, True)
    """
    if config.large_data != "auto":
        return apply_large_data(config, bool(config.large_data))
    chosen = config.fields_set
    rule = {
        "batch_size": size_batch(n_series),
        **length_settings(config.max_sequence_len, config.sample_len),
    }
    picked = {name: value for name, value in rule.items() if name not in chosen}
    if not chosen & {"epochs", "training_steps"}:  # the length is the user's when set
        batch = picked.get("batch_size", config.batch_size)
        picked["training_steps"] = size_steps(n_series, batch, config.max_sequence_len)
    return settled(config, large_data=bool(picked), **picked)


def apply_large_data(config: Config, use: bool) -> Config:
    """``config`` settled with ``large_data=use``: when True, with `LARGE_DATA_SETTINGS` in
    the fields not set (trained for ``epochs``); when False, gretel's settings as they are.

    Example:
        >>> from dgan import DGANConfig
        >>> forced = apply_large_data(DGANConfig(max_sequence_len=4, sample_len=2), True)
        >>> forced.batch_size, forced.feature_feedback, forced.training_steps
        (128, True, None)
    """
    changes: dict[str, Any] = {"large_data": use}
    if use:
        chosen = config.fields_set
        lengths = length_settings(config.max_sequence_len, config.sample_len)
        rule = {**LARGE_DATA_SETTINGS, **lengths}
        changes |= {k: v for k, v in rule.items() if k not in chosen}
    return settled(config, **changes)


DELTA_PER_SERIES = 0.1
"""Differential privacy's default delta is this over the number of series (below 1/n:
a delta of 1/n would allow a mechanism that publishes one whole series)."""


def default_delta(n_series: int) -> float:
    """The delta of a private run that sets none: a tenth of 1 / ``n_series``.

    Example:
        >>> default_delta(1000)
        0.0001
    """
    return DELTA_PER_SERIES / max(n_series, 1)


def private_settings(config: Config, settled_config: Config, n_series: int) -> Config:
    """``config`` settled for ``n_series`` series (``settled_config``, `resolve`) as a
    private run uses it: delta set (`default_delta` when not given). The size rule may not
    choose the batch size or the training length from the number of series, since they set
    the noise: a ParameterError naming the fix (the learning rates and the rest are the
    same at any size).

    Example:
        >>> from dgan import DGANConfig
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2, dp_epsilon=4.0,
        ...                     batch_size=32, training_steps=100)
        >>> config.resolved_for(500).dp_delta
        0.0002
    """
    chosen = config.fields_set
    sized = bool({"batch_size"} - chosen) or not chosen & {"epochs", "training_steps"}
    if config.large_data == "auto" and sized:
        raise ParameterError(
            "dp_epsilon is set, and large_data='auto' would pick the batch size and the "
            "training length from the number of series; under differential privacy they set "
            "the noise, so choose them: give batch_size and training_steps (or epochs), e.g. "
            "large_data=True, batch_size=64, training_steps=5000 (the large-data learning "
            "rates), or large_data=False for gretel's settings."
        )
    if settled_config.dp_delta is not None:
        return settled_config
    return settled(settled_config, dp_delta=default_delta(n_series))
