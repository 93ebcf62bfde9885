"""Choosing ``max_sequence_len`` and ``sample_len`` from the data when they are not set.

``max_sequence_len`` is the longest series (LONG: the most rows of one example id;
WIDE: the number of feature columns), found with `dgan.tabular.frames.series_lengths` without
converting the frame. ``sample_len`` is the divisor of ``max_sequence_len`` that brings
the number of LSTM steps (``max_sequence_len / sample_len``) closest to
`TARGET_LSTM_STEPS` on a log scale, ties going to the smaller ``sample_len``. Where the
series vary in length and the longest has no divisor giving `STEPS_BAND` steps (797
steps, a prime: one LSTM step of 797 or 797 of one), the inferred ``max_sequence_len``
is rounded up to a multiple of a ``sample_len`` that does (800 = 10 x 80): generated
series end at their own lengths, so a few steps of room cost nothing, where one LSTM
step for a whole series costs most of what the LSTM is for. A ``sample_len`` the user set
rounds the inferred ``max_sequence_len`` up the same way (998 with 50: 1,000); series of
one length are never padded.

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
STEPS_BAND = (4, 25)
"""LSTM steps an inferred ``sample_len`` may give before variable-length series get a
rounded-up ``max_sequence_len`` instead (`padded_lengths`)."""


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


def padded_lengths(longest: int, target_steps: int = TARGET_LSTM_STEPS) -> tuple[int, int]:
    """``(max_sequence_len, sample_len)`` for series of up to ``longest`` steps whose
    lengths vary: ``longest`` itself with `choose_sample_len` where that gives
    `STEPS_BAND` LSTM steps, else ``longest`` rounded up to a multiple of the
    ``sample_len`` that gives about ``target_steps``.

    Example:
        >>> padded_lengths(799), padded_lengths(797), padded_lengths(113)
        ((799, 47), (800, 80), (120, 12))
    """
    sample_len = choose_sample_len(longest, target_steps)
    if STEPS_BAND[0] <= longest // sample_len <= STEPS_BAND[1]:
        return longest, sample_len
    sample_len = max(1, math.ceil(longest / target_steps))
    return math.ceil(longest / sample_len) * sample_len, sample_len


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
    infer_sample_len = settings.get("sample_len") is None
    if settings.get("max_sequence_len") is None:
        lengths = series_lengths(df, columns)
        longest = max(int(lengths.max()) if lengths.size else 1, 1)
        why = "the longest example" if columns.is_long else "the number of feature columns"
        settings["max_sequence_len"] = longest
        given = settings.get("sample_len")
        if lengths.size and lengths.min() < longest:  # lengths vary: room costs nothing
            if infer_sample_len:
                settings["max_sequence_len"], settings["sample_len"] = padded_lengths(longest)
                if settings["max_sequence_len"] != longest:
                    low, high = STEPS_BAND
                    why = (
                        f"the longest example, {longest}, rounded up to a multiple of "
                        f"sample_len: no divisor of {longest} gives {low} to {high} LSTM steps"
                    )
            elif isinstance(given, int) and given > 0 and longest % given:
                # The user chose the LSTM step; the room follows it (the config's check
                # would otherwise stop them over a length they never set).
                settings["max_sequence_len"] = math.ceil(longest / given) * given
                why = (
                    f"the longest example, {longest}, rounded up to a multiple of the "
                    f"given sample_len {given}"
                )
        notes.append(f"max_sequence_len={settings['max_sequence_len']} ({why})")
    if infer_sample_len:
        if settings.get("sample_len") is None:
            settings["sample_len"] = choose_sample_len(settings["max_sequence_len"])
        steps = settings["max_sequence_len"] // settings["sample_len"]
        plural = "" if steps == 1 else "s"
        notes.append(f"sample_len={settings['sample_len']} ({steps} LSTM step{plural})")
    return notes
