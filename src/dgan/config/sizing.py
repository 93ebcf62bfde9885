"""Settings that follow the training data's size: one rule for every number of series.

At the defaults (``large_data="auto"``) dgan trains with more, smaller steps than
gretel's settings, sampling from a moving average of the generator's weights, with
feature feedback, for a budget of optimizer steps chosen from the data's size:

* ``batch_size``: the power of two nearest below an eighth of the series, between
  `MIN_BATCH` and `MAX_BATCH` (8 or more steps per epoch; 16 for 64 series, 32 for 256,
  128 from 1,024 on);
* learning rates 1e-4, ``generator_ema_decay=0.999``, ``feature_feedback=True``;
* ``training_steps``: what `DEFAULT_EPOCHS` epochs take at that batch size, but at least
  `MIN_STEPS` and at most `MAX_STEPS` optimizer steps: small data gets more passes, large
  data fewer than 400 (a million series would otherwise train for days).

`DGANConfig.resolved_for` applies the rule to a config when training first sees the data;
the measurements behind it are in docs/quality.md ("Settings by data size").

Example:
    >>> rule = size_settings(256)
    >>> rule["batch_size"], rule["training_steps"], rule["generator_learning_rate"]
    (32, 10000, 0.0001)
    >>> size_settings(3661)["training_steps"]  # 400 epochs of 29 steps
    11600
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

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
LARGE_DATA_SETTINGS: dict[str, Any] = {"batch_size": MAX_BATCH, **SIZE_SETTINGS}
"""``large_data=True`` (`DGANConfig.for_large_data`): the rule's settings at its largest
batch, at any size, trained for ``epochs``."""


def size_batch(n_series: int) -> int:
    """The rule's batch size for ``n_series`` series.

    Example:
        >>> [size_batch(n) for n in (40, 64, 256, 1000, 1024, 10**6)]
        [16, 16, 32, 64, 128, 128]
    """
    target = max(n_series / SERIES_PER_STEP, 1.0)
    return int(min(MAX_BATCH, max(MIN_BATCH, 2 ** math.floor(math.log2(target)))))


def size_steps(n_series: int, batch_size: int) -> int:
    """The rule's budget: `DEFAULT_EPOCHS` epochs of ``batch_size`` batches, within
    [`MIN_STEPS`, `MAX_STEPS`].

    Example:
        >>> size_steps(64, 16), size_steps(3661, 128), size_steps(10**6, 128)
        (10000, 11600, 20000)
    """
    per_epoch = max(1, math.ceil(n_series / batch_size))
    return int(min(MAX_STEPS, max(MIN_STEPS, DEFAULT_EPOCHS * per_epoch)))


def size_settings(n_series: int) -> dict[str, Any]:
    """Every setting the rule picks for ``n_series`` series (see the module docstring)."""
    batch = size_batch(n_series)
    return {"batch_size": batch, **SIZE_SETTINGS, "training_steps": size_steps(n_series, batch)}


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


def private_settings(settled: Any, n_series: int, *, picked: bool) -> Any:
    """A config settled for ``n_series`` (``settled``) as a private run uses it: delta set
    (`default_delta` when not given). ``picked``: the settings came from the size rule,
    which reads the data's size to choose the batch and the budget, which set the noise:
    a ParameterError naming the fix, since a private run takes them from the user.

    Example:
        >>> from dgan import DGANConfig
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2, dp_epsilon=4.0, batch_size=32)
        >>> config.resolved_for(500).dp_delta
        0.0002
    """
    if picked and settled.large_data:
        raise ParameterError(
            "dp_epsilon is set, and large_data='auto' would pick the batch size and the "
            "training length from the number of series; under differential privacy they set "
            "the noise, so choose them: give batch_size and training_steps (or epochs), e.g. "
            "large_data=True, batch_size=64, training_steps=5000 (the large-data learning "
            "rates), or large_data=False for gretel's settings."
        )
    if settled.dp_delta is not None:
        return settled
    return dataclasses.replace(settled, dp_delta=default_delta(n_series))
