"""Which fields of a `DGANConfig` were set, told apart from those left at gretel's defaults.

A dataclass alone cannot tell ``batch_size=1024`` passed from ``batch_size`` left out, yet
the settings that follow the data's size (`dgan.config.sizing`) must honour the first and
may choose the second. So a config keeps a record of the fields set, in its private
init-only field ``_given``, while every field still shows its value (gretel's default
when left out: ``DGANConfig(...).batch_size`` is 1024):

- a config made by a call (``DGANConfig(epochs=400, ...)``, a config file's table through
  `DGANConfig.from_json_dict`, the command line's flags) records the fields passed,
  whatever their values (`record_given`);
- a copy made by `dataclasses.replace` keeps the original's record (``replace`` passes
  every field to ``__init__``, and ``_given`` among them);
- `DGANConfig.to_dict` and ``to_json_dict`` write it as ``"_given"`` and reading them back
  keeps it, so a saved model says which fields were set;
- a config settled for the data's size (`settled`: `DGANConfig.resolved_for`, as a trained
  model holds it) counts the fields it settled as set: they are decided.

`DGANConfig.fields_set` adds every field whose value differs from its default (assigned
after the config was made, or changed by ``replace``), so nothing set is ever missed; a
field that ``replace`` sets to its default value counts as set only if it was before.

Example:
    >>> from dgan import DGANConfig
    >>> config = DGANConfig(max_sequence_len=4, sample_len=2, epochs=400)
    >>> config.epochs, "epochs" in config.fields_set, "batch_size" in config.fields_set
    (400, True, False)
    >>> import dataclasses
    >>> "epochs" in dataclasses.replace(config, seed=1).fields_set
    True
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, TypeVar

GIVEN = "_given"
"""The private init-only field that holds the record (and its key in `DGANConfig.to_dict`)."""

Config = TypeVar("Config")  # a DGANConfig: dgan.config.fields imports this module


def record_given(cls: type[Config]) -> type[Config]:
    """Wrap the ``__init__`` of the dataclass ``cls`` so that a call records the names of
    the fields it passes (positionally or by name) as ``_given``, unless it passes a
    record itself (as `dataclasses.replace` and ``from_json_dict`` of a saved config do).
    ``inspect.signature(cls)`` still shows the dataclass's own signature."""
    init = cls.__init__
    names = [f.name for f in dataclasses.fields(cls)]  # the order of the positional arguments

    @functools.wraps(init)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get(GIVEN) is None:  # a caller's own call: what it passed is set
            kwargs[GIVEN] = (*names[: len(args)], *(k for k in kwargs if k != GIVEN))
        init(self, *args, **kwargs)

    cls.__init__ = __init__
    return cls


def settled(config: Config, **changes: Any) -> Config:
    """A copy of ``config`` with ``changes``, which count as set: decided, so settling the
    copy again keeps them (e.g. training a loaded model on more data).

    Example:
        >>> from dgan import DGANConfig
        >>> config = settled(DGANConfig(max_sequence_len=4, sample_len=2), batch_size=1024)
        >>> config.batch_size, "batch_size" in config.fields_set
        (1024, True)
    """
    record = config.fields_set | changes.keys()
    return dataclasses.replace(config, **{GIVEN: record}, **changes)
