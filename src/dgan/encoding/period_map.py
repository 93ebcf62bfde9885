"""Generated periods mapped onto the training series' periods (`match_periods`).

A carrier draws each series' wave at the frequency the attribute generator makes of its
noise (`dgan.networks.carrier`). That generator learns the spread of the frequencies only
roughly: on the oscillating simulation one class's periods came out 5% long, and a judge
of whole series reads a period at once (docs/quality.md, "Periods mapped at generation,
per class"). `PeriodMap` keeps, per class (the categories of one discrete attribute, as
the value map's), `QUANTILES` quantiles of the training series' frequencies, each
carried feature's, on the carrier's own scale: the unit in [0, 1] that runs on a log scale from
`periods.lowest_frequency` to 0.5 cycles a step (`periods.encode_frequencies`).
Generation reads the same quantiles of the generator's own units per class from its
calibration sample (`Sampler.calibration`), and the carrier maps each generated unit,
quantile to quantile within its series' class, onto the training ones before it draws
the wave (`Carrier.angles`). Pooled over classes, the generator's own mix of classes
(which generation at the classes' shares does not keep) would carry one class's
periods into another's. The LSTM still reads the frequency as generated; only the wave
drawn at it moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dgan.encoding.marginals import QUANTILES, quantiles_of
from dgan.encoding.periods import encode_frequencies, gate_sample, series_frequencies
from dgan.series import SeriesRows

__all__ = [
    "MIN_CLASS_SERIES",
    "QUANTILES",
    "PeriodMap",
    "class_quantiles",
    "interpolate",
    "matches_periods",
]

MIN_CLASS_SERIES = 20
"""A class's quantiles are read from this many of its series at least; from fewer, the
quantiles of all classes' series stand in."""


def matches_periods(setting: bool | str, carried: bool) -> bool:
    """Whether generated periods are mapped onto the training ones (`match_periods`),
    and with ``setting`` `match_centres`, generated waves onto the training centres
    (`dgan.encoding.centre_map`): where a carrier draws waves, for True and "auto"; never
    for False. A private run's encoder never reads either (`dgan.privacy.public`).

    Example:
        >>> matches_periods("auto", True), matches_periods("auto", False)
        (True, False)
        >>> matches_periods(False, True)
        False
    """
    return carried and setting in (True, "auto")


class PeriodMap:
    """``attribute``: index of the discrete attribute whose categories are the classes
    (None: one class); ``real``: (K, C, `QUANTILES`) each class's quantiles of each
    carried feature's training frequencies as units in [0, 1]
    (`periods.encode_frequencies`).

    Example:
        >>> t = np.arange(400.0)
        >>> rows = SeriesRows.from_list(
        ...     [np.sin(2 * np.pi * t / p)[:, None] for p in (8.0, 10.0, 16.0)])
        >>> periods = PeriodMap.fit(rows, [0], 400)
        >>> periods.real.shape  # one class, one feature
        (1, 1, 1001)
        >>> own = PeriodMap.quantiles(np.array([[0.2], [0.3], [0.4]]), None, 1)
        >>> mapped = periods.apply(torch.tensor([[0.2], [0.4]]), None, own)
        >>> torch.allclose(mapped[:, 0], torch.tensor(periods.real[0, 0, [0, -1]]).float())
        True
    """

    def __init__(self, attribute: int | None, real: np.ndarray):
        self.attribute = attribute
        self.real = np.asarray(real, dtype=np.float64)

    @property
    def n_classes(self) -> int:
        return self.real.shape[0]

    @classmethod
    def fit(
        cls,
        features: SeriesRows,
        columns: list[int],
        max_sequence_len: int,
        attribute: int | None = None,
        classes: np.ndarray | None = None,
        n_classes: int = 1,
    ) -> PeriodMap:
        """The quantiles of the frequencies of ``columns`` (the carried features) per
        class (``classes``: each series' category index of ``attribute``; None: one
        class) in the training ``features``' evenly spaced `periods.gate_sample`, as
        the carrier's units; a series with no period counts at the lowest frequency, as
        its attribute encodes it."""
        sample = gate_sample(features)
        units = np.stack(
            [
                encode_frequencies(series_frequencies(sample, i)[0], max_sequence_len, True)
                for i in columns
            ],
            axis=1,
        )
        return cls(attribute, cls.quantiles(units, sample.classes(classes), n_classes))

    @staticmethod
    def quantiles(units: np.ndarray, classes: np.ndarray | None, n_classes: int) -> np.ndarray:
        """(K, C, `QUANTILES`) each class's quantiles of ``units`` (N, C): `class_quantiles`."""
        return class_quantiles(units, classes, n_classes)

    def apply(
        self, units: torch.Tensor, classes: torch.Tensor | None, own: np.ndarray
    ) -> torch.Tensor:
        """``units`` (B, C) mapped, each within its series' class (``classes``, (B,);
        None: one class), from the generator's own quantiles ``own`` (K, C, `QUANTILES`)
        onto the training ones, linearly between them, held at the ends."""
        batch, carried = units.shape
        if classes is None:
            classes = torch.zeros(batch, dtype=torch.long, device=units.device)
        classes = classes.clamp(0, self.n_classes - 1)
        knots = torch.as_tensor(own, dtype=units.dtype, device=units.device)[classes]
        values = torch.as_tensor(self.real, dtype=units.dtype, device=units.device)[classes]
        rows = batch * carried  # one row of knots per series and feature
        mapped = interpolate(
            units.reshape(rows, 1), knots.reshape(rows, -1), values.reshape(rows, -1)
        )
        return mapped.reshape(batch, carried)

    def to_json(self) -> dict[str, Any]:
        return {"attribute": self.attribute, "real": self.real.tolist()}

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> PeriodMap:
        return cls(state["attribute"], np.asarray(state["real"], dtype=np.float64))


def class_quantiles(values: np.ndarray, classes: np.ndarray | None, n_classes: int) -> np.ndarray:
    """(K, C, `QUANTILES`) each class's quantiles of ``values`` (N, C), each column's
    (``classes``: each row's class index; None: one class); a class with fewer than
    `MIN_CLASS_SERIES` series takes all classes' quantiles.

    Example:
        >>> values = np.arange(40.0)[:, None]
        >>> q = class_quantiles(values, np.arange(40) >= 20, 2)
        >>> q.shape, q[0, 0, [0, -1]].tolist(), q[1, 0, [0, -1]].tolist()
        ((2, 1, 1001), [0.0, 19.0], [20.0, 39.0])
    """
    values = np.asarray(values, dtype=np.float64)
    pooled = quantiles_of(values).T
    out = np.repeat(pooled[None], n_classes, axis=0)
    if classes is not None:
        for k in range(n_classes):
            mine = values[np.asarray(classes) == k]
            if len(mine) >= MIN_CLASS_SERIES:
                out[k] = quantiles_of(mine).T
    return out


def interpolate(x: torch.Tensor, knots: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Each row of ``x`` (R, B) through the piecewise linear map of its row of ``knots``
    (R, Q), non-decreasing, onto ``values`` (R, Q); held at the first and last value
    outside the knots; where knots repeat, the first of them is taken.

    Example:
        >>> knots = torch.tensor([[0.0, 0.5, 0.5, 1.0]])
        >>> values = torch.tensor([[0.0, 0.2, 0.4, 1.0]])
        >>> x = torch.tensor([[-1.0, 0.25, 0.75, 2.0]])
        >>> interpolate(x, knots, values).double().numpy().round(3).tolist()
        [[0.0, 0.1, 0.7, 1.0]]
    """
    last = knots.shape[1] - 1
    right = torch.searchsorted(knots, x).clamp(1, last)
    left = right - 1
    x0, x1 = knots.gather(1, left), knots.gather(1, right)
    y0, y1 = values.gather(1, left), values.gather(1, right)
    share = ((x - x0) / (x1 - x0).clamp_min(torch.finfo(x.dtype).tiny)).clamp(0, 1)
    return y0 + share * (y1 - y0)
