"""Generated periods mapped onto the training series' periods (`match_periods`).

A carrier draws each series' wave at the frequency the attribute generator makes of its
noise (`dgan.networks.carrier`). That generator learns the spread of the frequencies only
roughly: on the oscillating simulation one class's periods came out 5% long, and a judge
of whole series reads a period at once (docs/quality.md, "The centre and the band, each
alone; a switch-on that decays too slowly; periods mapped at generation"). `PeriodMap`
keeps `QUANTILES` quantiles of the training series' frequencies, each carried feature's,
on the carrier's own scale: the unit in [0, 1] that runs on a log scale from
`periods.lowest_frequency` to 0.5 cycles a step (`periods.encode_frequencies`).
Generation reads the same quantiles of the generator's own units from its calibration
sample (`Sampler.calibration`) and the carrier maps each generated unit, quantile to
quantile, onto the training ones before it draws the wave (`Carrier.angles`). Pooled over
classes: a class whose periods sit apart keeps them apart, since the map is monotone.
The LSTM still reads the frequency as generated; only the wave drawn at it moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dgan.encoding.marginals import PROBABILITIES, QUANTILES
from dgan.encoding.periods import encode_frequencies, gate_sample, series_frequencies
from dgan.series import SeriesRows

__all__ = ["QUANTILES", "PeriodMap", "interpolate", "matches_periods"]


def matches_periods(setting: bool | str, carried: bool) -> bool:
    """Whether generated periods are mapped onto the training ones (`match_periods`):
    where a carrier draws waves, for True and "auto"; never for False. A private run's
    encoder never reads the periods (`dgan.privacy.public`).

    Example:
        >>> matches_periods("auto", True), matches_periods("auto", False)
        (True, False)
        >>> matches_periods(False, True)
        False
    """
    return carried and setting in (True, "auto")


class PeriodMap:
    """``real``: (C, `QUANTILES`) each carried feature's quantiles of the training series'
    frequencies as units in [0, 1] (`periods.encode_frequencies`).

    Example:
        >>> t = np.arange(400.0)
        >>> rows = SeriesRows.from_list(
        ...     [np.sin(2 * np.pi * t / p)[:, None] for p in (8.0, 10.0, 16.0)])
        >>> periods = PeriodMap.fit(rows, [0], 400)
        >>> periods.real.shape
        (1, 1001)
        >>> own = periods.quantiles(np.array([[0.2], [0.3], [0.4]]))
        >>> mapped = periods.apply(torch.tensor([[0.2], [0.4]]), own)
        >>> torch.allclose(mapped[:, 0], torch.tensor(periods.real[0, [0, -1]]).float())
        True
    """

    def __init__(self, real: np.ndarray):
        self.real = np.asarray(real, dtype=np.float64)

    @classmethod
    def fit(cls, features: SeriesRows, columns: list[int], max_sequence_len: int) -> PeriodMap:
        """The quantiles of the frequencies of ``columns`` (the carried features) in the
        training ``features``' `gate_sample`, as the carrier's units; a series with no
        period counts at the lowest frequency, as its attribute encodes it."""
        sample = gate_sample(features)
        units = np.stack(
            [
                encode_frequencies(series_frequencies(sample, i)[0], max_sequence_len, True)
                for i in columns
            ],
            axis=1,
        )
        return cls(cls.quantiles(units))

    @staticmethod
    def quantiles(units: np.ndarray) -> np.ndarray:
        """(C, `QUANTILES`) the quantiles of ``units`` (N, C), each column's."""
        return np.quantile(np.asarray(units, dtype=np.float64), PROBABILITIES, axis=0).T

    def apply(self, units: torch.Tensor, own: np.ndarray) -> torch.Tensor:
        """``units`` (B, C) mapped from the generator's own quantiles ``own`` (C,
        `QUANTILES`) onto the training ones, linearly between them, held at the ends."""
        knots = torch.as_tensor(own, dtype=units.dtype, device=units.device)
        values = torch.as_tensor(self.real, dtype=units.dtype, device=units.device)
        return interpolate(units.T.contiguous(), knots, values).T

    def to_json(self) -> dict[str, Any]:
        return {"real": self.real.tolist()}

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> PeriodMap:
        return cls(np.asarray(state["real"], dtype=np.float64))


def interpolate(x: torch.Tensor, knots: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Each row of ``x`` (C, B) through the piecewise linear map of its row of ``knots``
    (C, Q), non-decreasing, onto ``values`` (C, Q); held at the first and last value
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
