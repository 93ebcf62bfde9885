"""How error messages name columns, examples and lists, and how values become floats.

One home for what the input checks (`dgan.tabular.frames`, `dgan.tabular.arrays`,
`dgan.tabular.missing`) share, so that every message names things the same way.

Example:
    >>> preview(range(8))
    '[0, 1, 2, 3, 4, ...] (8 in all)'
    >>> variable_name(["speed"], "feature")(0)
    "feature 'speed'"
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ColumnName = str | int
"""Column names must survive JSON (the model file stores them), so only str and int."""

SHOW = 5
"""How many offending examples, rows or columns a message names."""


def plain(name: Any) -> Any:
    """Column names and labels as plain Python values (numpy ints -> int).

    Example:
        >>> plain(np.int64(3)), plain("a")
        (3, 'a')
    """
    return name.item() if isinstance(name, np.generic) else name


class Labels(Sequence):
    """How messages name each example, written only when a message names one: a million
    series need no million strings up front.

    Example:
        >>> labels = Labels(np.array([7, 9]), lambda v: f"id {v!r}")
        >>> len(labels), labels[1], labels.subset(np.array([True, False]))[0]
        (2, 'id 9', 'id 7')
    """

    def __init__(self, values, label: Callable[[Any], str]):
        self._values, self._label = values, label  # an array or a pandas Index (Timestamps)

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        return self._label(plain(self._values[k]))

    def subset(self, keep: np.ndarray) -> Labels:
        """The labels where the bool mask ``keep`` is True."""
        return Labels(self._values[keep], self._label)


def preview(items, limit: int = SHOW) -> str:
    """'[1, 2, 3, ...] (12 in all)'-style list for messages.

    Example:
        >>> preview([1, 2])
        '[1, 2]'
    """
    items = [plain(i) for i in items]
    if len(items) <= limit:
        return str(items)
    return f"{str(items[:limit])[:-1]}, ...] ({len(items)} in all)"


def examples_text(indices, example_names=None, noun: str = "examples") -> str:
    """ "examples [3, 7]" (by index, after ``noun``) or "'a', 'b'" (by name) for messages.

    Example:
        >>> examples_text([0, 2]), examples_text([0, 2], ["'x'", "'y'", "'z'"])
        ('examples [0, 2]', "'x', 'z'")
    """
    if example_names is None:
        return f"{noun} {preview(indices)}"
    named = [example_names[i] for i in indices]
    more = f", ... ({len(named)} in all)" if len(named) > SHOW else ""
    return f"{', '.join(named[:SHOW])}{more}"


def variable_name(names: Sequence[ColumnName] | None, kind: str) -> Callable[[int], str]:
    """A function giving the display name of variable j: "feature 'speed'" or "feature 2".

    Example:
        >>> variable_name(None, "attribute")(2)
        'attribute 2'
    """
    return lambda j: f"{kind} {names[j]!r}" if names is not None else f"{kind} {j}"


def float_values(values) -> np.ndarray | None:
    """``values`` as a float64 array, or None when some value is not a real number.

    Bools are not numbers here (they are categories, as in a bool array), nor are
    complex numbers, datetimes or time spans: converting them would silently lose
    information (the imaginary part) or change the meaning (nanoseconds since 1970).

    Example:
        >>> float_values(np.array([1, 2])).tolist(), float_values(np.array(["a"]))
        ([1.0, 2.0], None)
        >>> float_values(np.array([True, 2.5], dtype=object)) is None
        True
    """
    values = np.asarray(values)
    if values.dtype.kind in "bcmMUS":  # bool, complex, timedelta, datetime, bytes/str
        if values.dtype.kind in "US":
            return _parse_floats(values)
        return None
    if values.dtype == object and any(_not_a_real_number(v) for v in values.flat):
        return None
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None


def _parse_floats(values: np.ndarray) -> np.ndarray | None:
    """Numbers written as text (a numpy array of strings), or None."""
    try:
        return values.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        return None


def _not_a_real_number(value: Any) -> bool:
    return isinstance(
        value,
        (bool, np.bool_, complex, np.complexfloating, np.datetime64, np.timedelta64),
    ) or type(value).__name__ in ("Timestamp", "Timedelta", "datetime", "timedelta", "date")
