"""The checks of `DGANConfig`'s fields, declared with each field (``field(metadata=...)``).

Every field carries one `Check` (`dgan.config.fields.setting` puts it there); a config is
valid when no field's check finds a problem and the checks across fields pass. Each
message names the field, says what it must be, shows what was given (cut short by
`short_repr`) and, where it helps, the default.

Example:
    >>> PositiveInt().problem("epochs", 0, 400)
    'epochs must be a positive integer, got 0; the default is 400.'
    >>> Real(low=(0, False)).problem("generator_learning_rate", -1.0, 0.001)
    'generator_learning_rate must be a finite number > 0, got -1.0; the default is 0.001.'
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import reprlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from dgan.config.enums import Normalization

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40

Bound = tuple[float, bool] | None
"""A bound of a real range: (value, inclusive), or None for no bound."""


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to a few dozen characters for messages, built in bounded time
    whatever the value's size.

    Example:
        >>> short_repr("x" * 1000)
        "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (1000 characters)"
        >>> short_repr(10**1000)
        'an integer of 3322 bits'
    """
    if is_int(value) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:40]!r}... ({len(value)} characters)"
    try:
        return _REPR.repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        return f"a {type(value).__name__}"


def is_int(value: Any) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def in_range(value: float, low: Bound, high: Bound) -> bool:
    """``value`` is finite and within the bounds."""
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range: not a usable rate or scale
        return False
    if not math.isfinite(value):
        return False
    if low is not None and not (value >= low[0] if low[1] else value > low[0]):
        return False
    return high is None or (value <= high[0] if high[1] else value < high[0])


class Check:
    """What one field's value must be. Subclasses say what is wrong, or None."""

    optional = False  # None is allowed too

    def problem(self, name: str, value: Any, default: Any) -> str | None:
        if value is None and self.optional:
            return None
        return self.find(name, value, default)

    def find(self, name: str, value: Any, default: Any) -> str | None:
        raise NotImplementedError


@dataclass(frozen=True)
class PositiveInt(Check):
    """An integer >= 1, and at most ``most`` where a larger value cannot be meant."""

    optional: bool = False
    most: int | None = None
    why_most: str = ""

    def find(self, name: str, value: Any, default: Any) -> str | None:
        if not is_int(value) or value < 1:
            return (
                f"{name} must be a positive integer, got {short_repr(value)}; "
                f"the default is {default!r}."
            )
        if self.most is not None and value > self.most:
            return (
                f"{name} must be at most {self.most:,}, got {short_repr(value)}"
                f"{self.why_most}; the default is {default!r}."
            )
        return None


@dataclass(frozen=True)
class Real(Check):
    """A finite number within bounds; ``rule`` says so in the message."""

    low: Bound = None
    high: Bound = None
    rule: str = ""
    optional: bool = False

    def find(self, name: str, value: Any, default: Any) -> str | None:
        if is_real(value) and in_range(value, self.low, self.high):
            return None
        note = " (a bool is not a number)" if isinstance(value, (bool, np.bool_)) else ""
        return (
            f"{name} must be {self.rule or self._rule()}, got {short_repr(value)}{note}; "
            f"the default is {default!r}."
        )

    def _rule(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>=' if self.low[1] else '>'} {self.low[0]:g}")
        if self.high is not None:
            parts.append(f"{'<=' if self.high[1] else '<'} {self.high[0]:g}")
        prefix = "None or " if self.optional else ""
        return f"{prefix}a finite number {' and '.join(parts)}".rstrip()


_FALSE_WORDS = frozenset({"false", "no", "off", "0", "n", "f", ""})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1", "y", "t"})


@dataclass(frozen=True)
class Flag(Check):
    """True or False; strings and None get a message that says why they are not."""

    def find(self, name: str, value: Any, default: Any) -> str | None:
        if isinstance(value, bool):
            return None
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
                f"default ({default})."
            )
        return f"{message}; use True or False (the default is {default})."


@dataclass(frozen=True)
class OneOf(Check):
    """One of a few values (compared by type and value: True is not 1)."""

    choices: tuple[Any, ...] = ()
    optional: bool = False
    text: str = ""  # how the message lists the choices; default "'a', 'b' or 'c'"

    def find(self, name: str, value: Any, default: Any) -> str | None:
        if any(type(value) is type(c) and value == c for c in self.choices):
            return None
        listed = self.text or _listed(self.choices)
        return f"{name} must be {listed}{' or None' if self.optional else ''}, got " + (
            f"{short_repr(value)}."
        )


@dataclass(frozen=True)
class Custom(Check):
    """A check written as a function of the value (None: fine, else the message)."""

    function: Any = None
    optional: bool = False

    def find(self, name: str, value: Any, default: Any) -> str | None:
        return self.function(name, value, default)


def checkpoint_dir_problem(name: str, value: Any, default: Any) -> str | None:
    """What is wrong with a ``checkpoint_dir``: a path holds no NUL character.

    Example:
        >>> checkpoint_dir_problem("checkpoint_dir", 3, None)
        'checkpoint_dir must be a directory path or None, got 3.'
    """
    if isinstance(value, str) and "\0" not in value:
        return None
    return f"{name} must be a directory path or None, got {short_repr(value)}."


def _listed(choices: tuple[Any, ...]) -> str:
    shown = [repr(c) for c in choices]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


# ----- checks of single fields and across fields -----------------------------------------
_DIVISOR_SCAN = 64  # divisors looked for: up to this and their cofactors (bounded work)


MAX_SEED = 2**63 - 2
"""The largest seed: torch seeds are 64-bit and dgan seeds stream k with ``2 * seed + k + 1``."""

FP16_MAX = 65504.0
"""The largest finite fp16 value: a static loss scale above it overflows every fp16 step."""
MAX_INIT_SCALE = 2.0**16
"""The largest first dynamic loss scale accepted (torch's default start). Each halving from
a larger start costs a skipped step."""
PRECISIONS = ("fp32", "fp16", "bf16", "auto")
MAX_LAYERS = MAX_ROUNDS = 100
"""The most hidden layers of a network, and critic or generator updates per batch: more
train no better, and each is work in every step (10**6 made ``--dry-run`` run for ever)."""


def seed_problem(name: str, value: Any, default: Any) -> str | None:
    """The problem with a seed, or None (`DGANConfig.seed`).

    Example:
        >>> seed_problem("seed", -1, None)[:40]
        'seed must be None or an integer from 0 t'
    """
    if is_int(value) and 0 <= value <= MAX_SEED:
        return None
    return (
        f"{name} must be None or an integer from 0 to 2**63 - 2 (torch's generators "
        f"take 64 bits and dgan derives one seed per stream), got {short_repr(value)}."
    )


def normalization_problem(name: str, value: Any, default: Any) -> str | None:
    """A `Normalization` member (a config file's name of one is converted before)."""
    if isinstance(value, Normalization):
        return None
    names = ", ".join(n.name for n in Normalization)
    return f"{name} must be one of {names}, got {short_repr(value)}."


def loss_scale_problem(name: str, value: Any, default: Any) -> str | None:
    """Why ``value`` is not a loss scale ('dynamic', or a static scale within fp16), else None.

    Example:
        >>> loss_scale_problem("init_scale", 1024.0, "dynamic") is None
        True
        >>> loss_scale_problem("init_scale", 1e9, "dynamic")[:48]
        "init_scale must be 'dynamic' or a number > 0 and"
    """
    if (isinstance(value, str) and value == "dynamic") or (
        is_real(value) and 0 < value <= FP16_MAX
    ):
        return None
    return (
        f"{name} must be 'dynamic' or a number > 0 and <= {FP16_MAX:g} (fp16's "
        "largest value: with a larger static scale every gradient of size 1 or more "
        "overflows fp16 and its step is skipped), got "
        f"{short_repr(value)}; use 'dynamic' unless you know the scale you need."
    )


def per_class_scaling_problem(name: str, value: Any, default: Any) -> str | None:
    """ "auto", False, or a discrete attribute's name (checked against the data when the
    encoder is fitted).

    Example:
        >>> per_class_scaling_problem("per_class_scaling", 1, "auto")[:60]
        "per_class_scaling must be 'auto', False or a discrete attrib"
    """
    if value is False or (isinstance(value, str) and value):
        return None
    return f"{name} must be 'auto', False or a discrete attribute's name, got {short_repr(value)}."


def divisibility_problem(length: int, sample_len: int) -> str:
    """The message for a sample_len that does not divide max_sequence_len, with a few
    divisors near sample_len; bounded work however large the numbers are.

    Example:
        >>> divisibility_problem(20, 7).split(";")[0]
        'max_sequence_len=20 is not divisible by sample_len=7'
    """
    small = [d for d in range(1, min(length, _DIVISOR_SCAN) + 1) if length % d == 0]
    divisors = {*small, *(length // d for d in small)}
    near = sorted(sorted(divisors, key=lambda d: abs(math.log(d / sample_len)))[:8])
    multiple = length + (-length % sample_len)
    return (
        f"max_sequence_len={length} is not divisible by sample_len={sample_len}; choose a "
        f"sample_len that divides it, e.g. one of {near}, or raise max_sequence_len to "
        f"{multiple}, a multiple of sample_len (series may be shorter than max_sequence_len)."
    )


def length_problems(config: Any) -> list[str]:
    """The checks across the length fields: ``sample_len`` divides ``max_sequence_len``,
    and one of ``epochs`` and ``training_steps`` sets the training length.

    Example:
        >>> from dgan import DGANConfig
        >>> length_problems(DGANConfig(max_sequence_len=4, sample_len=2))
        []
    """
    problems = []
    length, sample_len = config.max_sequence_len, config.sample_len
    if is_int(length) and is_int(sample_len) and sample_len > 0 and length % sample_len != 0:
        problems.append(divisibility_problem(length, sample_len))
    if config.training_steps is not None and "epochs" in config.fields_set:
        problems.append(
            f"epochs={short_repr(config.epochs)} and training_steps="
            f"{short_repr(config.training_steps)} both set the training length; set one "
            "of them (training_steps counts optimizer steps, epochs passes over the data)."
        )
    return problems


def public_values_problem(name: str, value: Any, default: Any) -> str | None:
    """What is wrong with ``public_values``: a dict from variable names to non-empty lists
    of JSON values ([low, high] for a continuous variable, the categories of a discrete
    one); whether each list fits its variable is checked against the data.

    Example:
        >>> public_values_problem("public_values", {"month": []}, None)[:50]
        "public_values['month'] must be a non-empty list of"
    """
    if not isinstance(value, dict):
        return (
            f"{name} must be None or a dict from variable names to [low, high] or a list of "
            f"categories, e.g. {{'temperature': [-30, 45], 'month': [1, 2, 3]}}, got "
            f"{short_repr(value)}."
        )
    for key, values in value.items():
        scalars = isinstance(values, (list, tuple)) and all(
            v is None or isinstance(v, (bool, int, float, str)) for v in values
        )
        if not isinstance(key, str) or not scalars or not values:
            return (
                f"{name}[{short_repr(key)}] must be a non-empty list of numbers, strings or "
                f"None ([low, high] or the categories) under a text key, got "
                f"{short_repr(values)}."
            )
    return None


def privacy_problems(config: Any) -> list[str]:
    """The checks across fields of a config with differential privacy on: the settings
    whose gradients do not split into one per example, or that dgan cannot honour.

    Example:
        >>> from dgan import DGANConfig
        >>> privacy_problems(DGANConfig(max_sequence_len=4, sample_len=2))
        []
    """
    epsilon = config.dp_target_epsilon
    problems = []
    if config.dp_enabled is True and config.dp_epsilon is not None and epsilon != config.dp_eps:
        problems.append(
            f"dp_enabled=True with dp_eps={config.dp_eps!r} and dp_epsilon="
            f"{config.dp_epsilon!r} ask for two epsilons; give one (dp_epsilon, or gretel's "
            "dp_enabled=True with dp_eps)."
        )
    if config.dp_secure_mode is True:
        problems.append(
            "dp_secure_mode=True is not supported: dgan draws the privacy noise from a "
            "generator seeded by the operating system's entropy, not a cryptographically "
            "secure one (docs/privacy.md); set dp_secure_mode=False."
        )
    if epsilon is None:
        return problems
    if config.gradient_penalty_norm == "batch":
        problems.append(
            "gradient_penalty_norm='batch' takes one norm over the whole batch, so the "
            "penalty's gradient does not split into one per example, as differential privacy "
            "needs; use gradient_penalty_norm='example' (the default)."
        )
    if config.reuse_fakes is True:
        problems.append(
            "reuse_fakes=True shares one generated batch between rounds, but a private run "
            "draws batches of random size (Poisson sampling); set reuse_fakes=False."
        )
    if config.match_marginals is True:
        problems.append(
            "match_marginals=True maps generated values onto quantiles of the training "
            "values, which a private run does not read from the data; set "
            "match_marginals='auto' (off under privacy) or False."
        )
    if config.match_texture is True:
        problems.append(
            "match_texture=True filters generated series to the training series' texture, "
            "which a private run does not read from the data; set match_texture='auto' (off "
            "under privacy) or False."
        )
    if config.match_class_shares is True:
        problems.append(
            "match_class_shares=True generates each class at its share of the training "
            "series, which a private run does not read from the data; set "
            "match_class_shares='auto' (off under privacy) or False."
        )
    if config.match_periods is True:
        problems.append(
            "match_periods=True maps generated periods onto the training series' periods, "
            "which a private run does not read from the data; set match_periods='auto' (off "
            "under privacy) or False."
        )
    if config.match_centres is True:
        problems.append(
            "match_centres=True moves generated waves onto the training series' centres, "
            "which a private run does not read from the data; set match_centres='auto' (off "
            "under privacy) or False."
        )
    return problems


def coerce_inputs(config: Any) -> None:
    """Convert ``config``'s input representations in place, without changing what was
    asked for: the enum's name as a string ("MINUSONE_ONE"), as config files carry it, and
    numpy scalars (np.int64 epochs, np.float32 rates, np.bool_ flags) as the Python values
    they hold, so the config compares, prints and saves to JSON like one built from
    literals. An unknown name is left for the checks to report.

    Example:
        >>> from dgan import DGANConfig
        >>> DGANConfig(max_sequence_len=np.int64(4), sample_len=2).max_sequence_len.__class__
        <class 'int'>
    """
    if isinstance(config.normalization, str):
        with contextlib.suppress(KeyError):
            config.normalization = Normalization[config.normalization.upper()]
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if isinstance(value, np.generic) and isinstance(value, (np.number, np.bool_)):
            setattr(config, f.name, value.item())
