"""Generated series standardized as every training series is.

Many published series collections are standardized series by series (the UCR and UEA
archives: each series has mean 0 and standard deviation 1). The generator cannot know
that: its series come out with spreads around 1, and the spread alone tells every one of
them from the real ones (docs/quality.md, "Standardized series kept"). `Standardized`
finds, per continuous feature, whether every training series has the same mean and the
same standard deviation (to `TOLERANCE` of that deviation; population or sample
deviation, whichever is the same everywhere), and if so rescales each generated series
to exactly them, last in decoding: the shape of each series stays as generated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dgan.series import SeriesRows

TOLERANCE = 1e-5
"""How far, relative to the common standard deviation, each series' mean and deviation
may be from all others' and still count as the same (values read from text with 8
decimals, or stored in float32, differ by about 1e-7)."""


def _moments(rows: SeriesRows, column: int, ddof: int) -> tuple[np.ndarray, np.ndarray]:
    """(N,) each series' mean and standard deviation of ``column`` (``ddof`` 0 or 1)."""
    x = rows.rows[:, column].astype(np.float64)
    n = rows.lengths.astype(np.float64)
    mean = np.add.reduceat(x, rows.starts) / n
    squares = np.add.reduceat((x - rows.per_row(mean)) ** 2, rows.starts)
    return mean, np.sqrt(squares / np.maximum(n - ddof, 1.0))


class Standardized:
    """``moments``: {feature index: (mean, standard deviation, ddof)} that every training
    series of that continuous feature has.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> series = [rng.normal(size=(n, 1)) for n in (10, 20, 30)]
        >>> z = [(x - x.mean()) / x.std(ddof=1) for x in series]
        >>> kept = Standardized.fit(SeriesRows.from_list(z), [0])
        >>> kept.moments[0][2]  # lengths differ: only the sample deviation is 1 in all
        1
        >>> out = kept.apply(SeriesRows.from_list([3.0 * x + 2.0 for x in series]))
        >>> np.allclose(out.rows, np.concatenate(z))  # rescaled, shapes kept
        True
        >>> Standardized.fit(SeriesRows.from_list(series), [0]) is None  # not standardized
        True
    """

    def __init__(self, moments: dict[int, tuple[float, float, int]]):
        self.moments = moments

    @classmethod
    def fit(cls, features: SeriesRows, continuous: list[int]) -> Standardized | None:
        """The continuous features whose training series all share one mean and one
        nonzero deviation, or None where there are none (or fewer than two series, or a
        series of one step)."""
        if len(features) < 2 or features.lengths.min() < 2:
            return None
        moments = {}
        for i in continuous:
            for ddof in (0, 1):
                mean, deviation = _moments(features, i, ddof)
                scale = float(np.median(deviation))
                if not (np.isfinite(scale) and scale > 0):
                    break
                if np.ptp(mean) <= TOLERANCE * scale and np.ptp(deviation) <= TOLERANCE * scale:
                    moments[i] = (float(np.median(mean)), scale, ddof)
                    break
        return cls(moments) if moments else None

    def unlike(self, features: SeriesRows) -> list[int]:
        """The kept features of which some series of ``features`` (data to continue
        training on) do not have the kept mean and deviation.

        Example:
            >>> kept = Standardized({0: (0.0, 1.0, 1)})
            >>> kept.unlike(SeriesRows.from_padded(np.array([[[1.0], [-1.0]], [[0.0], [2.0]]])))
            [0]
        """
        unlike = []
        for i, (mean, deviation, ddof) in self.moments.items():
            own_mean, own_deviation = _moments(features, i, ddof)
            off = np.maximum(np.abs(own_mean - mean), np.abs(own_deviation - deviation))
            if (off > TOLERANCE * deviation).any():
                unlike.append(i)
        return unlike

    def apply(self, features: SeriesRows) -> SeriesRows:
        """``features`` with each series of each kept feature rescaled to its mean and
        deviation; a flat series, or one of one step, is set to the mean."""
        rows = features.rows.copy()
        for i, (mean, deviation, ddof) in self.moments.items():
            own_mean, own_deviation = _moments(features, i, ddof)
            usable = (own_deviation > 0) & (features.lengths > ddof)
            gain = np.where(usable, deviation / np.where(usable, own_deviation, 1.0), 0.0)
            centred = rows[:, i] - features.per_row(own_mean)
            rows[:, i] = mean + centred * features.per_row(gain)
        return features.with_rows(rows)

    def to_json(self) -> dict[str, Any]:
        return {"moments": [[i, *m] for i, m in sorted(self.moments.items())]}

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> Standardized:
        return cls({int(i): (float(m), float(s), int(d)) for i, m, s, d in state["moments"]})
