"""Where each series switches on, as a generated attribute (``onset_attribute``).

Series that sit at exactly 0 until something switches on (an appliance's current, a
sensor before its first reading) start with a run of zero steps of varied length. An
LSTM that must draw that run learns it badly: on simulated appliance series a fifth to
two fifths of the generated ones were on from their first step and the rest switched
on too early (docs/quality.md, "Where the switch-on falls"). So the run comes off each
training series before anything else is fitted, its length (the *onset*) becomes an
additional attribute that the attribute generator draws with the others, the networks
learn the series from their switch-on, and decoding puts the zeros back in front.

An onset is the number of leading steps where every feature is exactly 0, at most the
series' length less one (a series keeps at least one step). ``"auto"`` turns this on for
numeric series of varied lengths of which at least half start with `MIN_ONSET` or more
zero steps.
"""

from __future__ import annotations

import numpy as np

from dgan.encoding.encoded import encode_lengths
from dgan.errors import DataError
from dgan.series import SeriesRows

MIN_ONSET = 2
"""``"auto"``: a series starts off when its first this many steps are all 0."""
STARTING_OFF = 0.5
"""``"auto"``: the share of series that must start off."""


def series_onsets(features: SeriesRows) -> np.ndarray:
    """(N,) each series' leading steps where every feature is exactly 0 (int64), at most
    its length less one.

    Example:
        >>> rows = SeriesRows.from_list([np.array([[0.0], [0.0], [3.0], [0.0]]),
        ...                              np.array([[1.0], [0.0]]), np.zeros((3, 1))])
        >>> series_onsets(rows).tolist()
        [2, 0, 2]
    """
    if not len(features):
        return np.zeros(0, dtype=np.int64)
    step = features.step_of_row()
    on = (features.rows != 0).any(axis=1)
    first_on = np.where(on, step, np.iinfo(np.int64).max)
    first_on = np.minimum.reduceat(first_on, features.starts)  # no series is empty
    return np.minimum(first_on, features.lengths - 1).astype(np.int64)


def starts_off(setting: bool | str, features: SeriesRows, varied: bool) -> bool:
    """Whether ``features`` get their onsets as an attribute under ``setting`` (True,
    False or "auto"); ``varied``: whether the series differ in length. Raises DataError
    where True cannot be honoured.

    Example:
        >>> off = SeriesRows.from_list([np.r_[np.zeros(k), np.ones(4)][:, None] for k in (2, 5)])
        >>> starts_off("auto", off, varied=True), starts_off("auto", off, varied=False)
        (True, False)
    """
    if setting is False:
        return False
    numeric = np.issubdtype(features.rows.dtype, np.number)
    if setting is True:
        if not numeric or not varied:
            raise DataError(
                "onset_attribute=True needs numeric features and series of different lengths "
                f"(these have {'one length' if numeric else 'non-numeric features'}): the "
                "zeros it takes off the front of each series come back in front of generated "
                "ones, which then differ in length. Set onset_attribute='auto' or False."
            )
        return True
    if not numeric or not varied or not len(features):
        return False
    return bool((series_onsets(features) >= MIN_ONSET).mean() >= STARTING_OFF)


def strip_onsets(features: SeriesRows, onsets: np.ndarray) -> SeriesRows:
    """``features`` without each series' first ``onsets`` steps (a copy).

    Example:
        >>> rows = SeriesRows.from_list([np.array([[0.0], [2.0]]), np.array([[5.0]])])
        >>> strip_onsets(rows, np.array([1, 0])).rows.ravel().tolist()
        [2.0, 5.0]
    """
    keep = features.step_of_row() >= features.per_row(onsets)
    return SeriesRows(features.rows[keep], features.lengths - onsets)


def with_onsets(features: SeriesRows, onsets: np.ndarray, max_sequence_len: int) -> SeriesRows:
    """Each series after ``onsets`` zero steps, cut at ``max_sequence_len`` steps in all.

    Example:
        >>> rows = SeriesRows.from_list([np.array([[2.0], [3.0]]), np.array([[5.0]])])
        >>> [s.ravel().tolist() for s in with_onsets(rows, np.array([2, 0]), 3)]
        [[0.0, 0.0, 2.0], [5.0]]
    """
    onsets = np.minimum(onsets, max_sequence_len - 1)
    kept = np.minimum(features.lengths, max_sequence_len - onsets)
    lengths = onsets + kept
    out = np.zeros((int(lengths.sum()), features.width), dtype=features.rows.dtype)
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    step = features.step_of_row()
    taken = step < features.per_row(kept)
    out[(features.per_row(starts + onsets) + step)[taken]] = features.rows[taken]
    return SeriesRows(out, lengths)


def encode_onsets(onsets: np.ndarray, max_sequence_len: int, zero_one: bool) -> np.ndarray:
    """(N,) onsets in 0 .. max_sequence_len - 1 -> float32 in the attributes' output range,
    linear in the onset, fixed by ``max_sequence_len`` alone (as lengths are encoded).

    Example:
        >>> encode_onsets(np.array([0, 4, 8]), 9, zero_one=True).tolist()
        [0.0, 0.5, 1.0]
    """
    return encode_lengths(np.asarray(onsets) + 1, max_sequence_len, zero_one)


def onsets_from_unit(encoded: np.ndarray, max_sequence_len: int, zero_one: bool) -> np.ndarray:
    """The inverse of `encode_onsets` for generated values: the nearest whole onset within
    0 .. max_sequence_len - 1 (int64).

    Example:
        >>> onsets_from_unit(np.array([-0.2, 0.49, 0.51, 1.3]), 9, zero_one=True).tolist()
        [0, 4, 4, 8]
    """
    unit = np.asarray(encoded, np.float64)
    unit = unit if zero_one else (unit + 1) / 2
    steps = np.rint(np.clip(unit, 0, 1) * max(max_sequence_len - 1, 1))
    return np.clip(steps, 0, max_sequence_len - 1).astype(np.int64)
