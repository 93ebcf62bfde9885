"""`SeriesRows`: many series of different lengths as one array of rows.

A list of a million small arrays costs a Python object per series and a Python loop per
operation; `SeriesRows` holds the same data as one ``(sum T_i, F)`` array of rows, the
series one after the other, and their lengths. Checks, missing-value repair and encoding
work on whole columns of it (or on chunks of series, to bound temporary memory), and a
``(N, T, F)`` array becomes one without a copy.

It is also a sequence of per-series ``(T_i, F)`` views (``rows[k]``, ``len``,
iteration), so code that reads one series at a time still works, only slower.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

CHUNK_ROWS = 1 << 18
"""Rows per chunk where whole-data temporaries would cost several times the data."""


@dataclass(frozen=True, eq=False)
class SeriesRows(Sequence):
    """N series of F variables: ``rows`` (sum of lengths, F), series after series.

    Example:
        >>> data = SeriesRows.from_padded(np.arange(12.0).reshape(2, 3, 2))
        >>> len(data), data.lengths.tolist(), data[1][:, 0].tolist()
        (2, [3, 3], [6.0, 8.0, 10.0])
        >>> SeriesRows.from_list([np.zeros((1, 2)), np.ones((2, 2))]).starts.tolist()
        [0, 1]
    """

    rows: np.ndarray  # (R, F)
    lengths: np.ndarray  # (N,) int64, R = lengths.sum()
    starts: np.ndarray = field(init=False, repr=False)  # (N,) first row of each series

    def __post_init__(self) -> None:
        lengths = np.asarray(self.lengths, dtype=np.int64)
        object.__setattr__(self, "lengths", lengths)
        starts = np.zeros(len(lengths), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        object.__setattr__(self, "starts", starts)

    @classmethod
    def from_padded(cls, values: np.ndarray) -> SeriesRows:
        """``(N, T, F)`` series of one length; the rows are a view of ``values``."""
        n, t, f = values.shape
        return cls(values.reshape(n * t, f), np.full(n, t, dtype=np.int64))

    @classmethod
    def from_list(cls, series: Sequence[np.ndarray], dtype=None) -> SeriesRows:
        """``(T_i, F)`` arrays, copied into one array of rows."""
        lengths = np.fromiter((len(s) for s in series), dtype=np.int64, count=len(series))
        width = np.shape(series[0])[1] if len(series) else 0
        rows = np.concatenate(series, axis=0) if len(series) else np.empty((0, width))
        return cls(rows if dtype is None else rows.astype(dtype, copy=False), lengths)

    # ----- the sequence of series -------------------------------------------------------
    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, k):  # one series, as a view of the rows
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"series {k} of {len(self)}")
        start = self.starts[k]
        return self.rows[start : start + self.lengths[k]]

    def __iter__(self) -> Iterator[np.ndarray]:
        for start, length in zip(self.starts.tolist(), self.lengths.tolist(), strict=True):
            yield self.rows[start : start + length]

    # ----- shape ------------------------------------------------------------------------
    @property
    def width(self) -> int:
        """F, the variables per step."""
        return self.rows.shape[1]

    @property
    def one_length(self) -> int | None:
        """The length every series has, or None when they differ."""
        if not len(self):
            return None
        first = int(self.lengths[0])
        return first if (self.lengths == first).all() else None

    def example_of_row(self) -> np.ndarray:
        """(R,) the series each row belongs to.

        Example:
            >>> SeriesRows.from_list([np.zeros((1, 1)), np.zeros((2, 1))]).example_of_row().tolist()
            [0, 1, 1]
        """
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    def step_of_row(self) -> np.ndarray:
        """(R,) each row's time step within its series.

        Example:
            >>> SeriesRows.from_list([np.zeros((1, 1)), np.zeros((2, 1))]).step_of_row().tolist()
            [0, 0, 1]
        """
        return np.arange(len(self.rows), dtype=np.int64) - np.repeat(self.starts, self.lengths)

    def per_row(self, values: np.ndarray, axis: int = 0) -> np.ndarray:
        """Per-series ``values`` (N along ``axis``) repeated over each series' rows.

        Example:
            >>> SeriesRows.from_list([np.zeros((1, 1)), np.zeros((2, 1))]).per_row(
            ...     np.array([5, 7])).tolist()
            [5, 7, 7]
        """
        one = self.one_length  # one count repeats far faster than a count per series
        return np.repeat(values, self.lengths if one is None else one, axis=axis)

    # ----- new data ---------------------------------------------------------------------
    def take(self, keep: np.ndarray) -> SeriesRows:
        """The series where the bool mask ``keep`` is True, in order (a copy).

        Example:
            >>> data = SeriesRows.from_list([np.zeros((1, 1)), np.ones((2, 1))])
            >>> data.take(np.array([False, True])).rows.ravel().tolist()
            [1.0, 1.0]
        """
        return SeriesRows(self.rows[np.repeat(keep, self.lengths)], self.lengths[keep])

    def with_rows(self, rows: np.ndarray) -> SeriesRows:
        """The same series with other values (same number of rows), e.g. encoded ones.

        Example:
            >>> data = SeriesRows.from_list([np.zeros((1, 1)), np.zeros((2, 1))])
            >>> data.with_rows(np.arange(3.0)[:, None])[1].ravel().tolist()
            [1.0, 2.0]
        """
        if len(rows) != len(self.rows):
            raise ValueError(f"{len(rows)} rows for series of {len(self.rows)} rows in all")
        return SeriesRows(rows, self.lengths)

    def chunks(
        self, rows: int = CHUNK_ROWS, series: int | None = None
    ) -> Iterator[tuple[int, SeriesRows]]:
        """``(first series, SeriesRows)`` for consecutive groups of whole series of about
        ``rows`` rows each (at least one series), or of ``series`` series each where given
        (for work padded to the longest series, whose size the count sets); the rows are
        views.

        Example:
            >>> data = SeriesRows.from_padded(np.zeros((5, 2, 1)))
            >>> [(first, len(part)) for first, part in data.chunks(rows=4)]
            [(0, 2), (2, 2), (4, 1)]
            >>> [(first, len(part)) for first, part in data.chunks(series=3)]
            [(0, 3), (3, 2)]
        """
        n, k = len(self), 0
        ends = self.starts + self.lengths
        while k < n:
            if series is None:
                stop = int(np.searchsorted(ends, self.starts[k] + rows, side="right"))
            else:
                stop = k + series
            stop = min(n, max(stop, k + 1))
            first, last = self.starts[k], ends[stop - 1]
            yield k, SeriesRows(self.rows[first:last], self.lengths[k:stop])
            k = stop

    def padded(self, length: int, fill: float = 0.0) -> np.ndarray:
        """``(N, length, F)``, each series followed by ``fill`` (a view when all have
        ``length`` steps).

        Example:
            >>> data = SeriesRows.from_list([np.ones((1, 1)), np.ones((2, 1))])
            >>> data.padded(2)[:, :, 0].tolist()
            [[1.0, 0.0], [1.0, 1.0]]
        """
        if self.one_length == length:
            return self.rows.reshape(len(self), length, self.width)
        out = np.full((len(self), length, self.width), fill, dtype=self.rows.dtype)
        out[self.example_of_row(), self.step_of_row()] = self.rows
        return out


def as_series_rows(features: SeriesRows | Sequence[np.ndarray] | np.ndarray) -> SeriesRows:
    """``features`` as `SeriesRows`: itself, a view of an (N, T, F) array, or a copy of a
    list of (T_i, F) arrays.

    Example:
        >>> len(as_series_rows([np.zeros((2, 1)), np.zeros((3, 1))]))
        2
    """
    if isinstance(features, SeriesRows):
        return features
    if isinstance(features, np.ndarray) and features.ndim == 3:
        return SeriesRows.from_padded(features)
    return SeriesRows.from_list([np.asarray(f) for f in features])
