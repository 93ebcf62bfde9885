"""Choosing ``max_sequence_len`` and ``sample_len`` from the data when they are not set.

``max_sequence_len`` is the longest series (LONG: the most rows of one example id;
WIDE: the number of feature columns), found with `dgan.tabular.frames.series_lengths` without
converting the frame. ``sample_len`` is the divisor of ``max_sequence_len`` that brings
the number of LSTM steps (``max_sequence_len / sample_len``) closest to
`TARGET_LSTM_STEPS` on a log scale, ties going to the smaller ``sample_len``.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [0] * 28 + [1] * 20, "x": range(48)})
    >>> settings = {}
    >>> from dgan.tabular.columns import Columns
    >>> infer_lengths(df, Columns(example_id_column="id", df_style="long"), settings)
    ['max_sequence_len=28 (the longest example)', 'sample_len=2 (14 LSTM steps)']
    >>> settings
    {'max_sequence_len': 28, 'sample_len': 2}
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from dgan.tabular.columns import Columns
from dgan.tabular.frames import series_lengths

TARGET_LSTM_STEPS = 10
"""`choose_sample_len` aims for about this many LSTM steps per series."""


def choose_sample_len(max_sequence_len: int, target_steps: int = TARGET_LSTM_STEPS) -> int:
    """The divisor of ``max_sequence_len`` giving the LSTM about ``target_steps`` steps.

    Closest on a log scale (14 steps and 7 steps are about as far from 10); ties go to
    the smaller sample_len, i.e. more and finer LSTM steps.

    Example:
        >>> [choose_sample_len(n) for n in (1, 12, 20, 23, 28, 100, 1000)]
        [1, 1, 2, 1, 2, 10, 100]
    """
    divisors = _divisors(max_sequence_len)
    return min(divisors, key=lambda d: (abs(math.log(max_sequence_len / d / target_steps)), d))


def _divisors(n: int) -> list[int]:
    """The divisors of n in O(sqrt(n)) time."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def infer_lengths(df: pd.DataFrame, columns: Columns, settings: dict[str, Any]) -> list[str]:
    """Fill in ``max_sequence_len`` and ``sample_len`` in ``settings`` where unset.

    ``columns`` says how to read ``df`` (`dgan.tabular.columns.Columns`). Returns what
    was inferred and why, one note per setting (empty when both were set).

    Raises:
        ParameterError: a LONG frame without example ids and no ``max_sequence_len``.
    """
    notes = []
    if settings.get("max_sequence_len") is None:
        lengths = series_lengths(df, columns)
        settings["max_sequence_len"] = max(int(lengths.max()) if lengths.size else 1, 1)
        why = "the longest example" if columns.is_long else "the number of feature columns"
        notes.append(f"max_sequence_len={settings['max_sequence_len']} ({why})")
    if settings.get("sample_len") is None:
        settings["sample_len"] = choose_sample_len(settings["max_sequence_len"])
        steps = settings["max_sequence_len"] // settings["sample_len"]
        notes.append(f"sample_len={settings['sample_len']} ({steps} LSTM steps)")
    return notes
