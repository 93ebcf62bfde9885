"""Per-class ranges of the example-scaling attributes (each series' level and spread).

Example scaling (encoder.py) makes each series' midpoint and half-range generated
attributes, scaled to the range of the whole column. Where classes sit orders of magnitude
apart (pressure near 1,000 hPa, aerosol depth near 0.1, in one ``value`` column), one
class's levels fill a sliver of that range: an error of 1% of the column's range moves
pressure by 10% and shrinks its day-to-day spread to nothing, and the critic barely sees
it. `GroupRanges` rescales each example's midpoint and half-range once more, to the range
its class (the value of one discrete attribute) spans, so that the generator places a
series within its class and the critic sees errors at the class's own resolution.

`GroupRanges.choose` picks the discrete attribute whose classes explain most of the
variance of some feature's midpoints or half-ranges, and only when they explain most of
it: where classes share one scale, nothing changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dgan.config import Normalization
from dgan.errors import ParameterError

# Classes must explain at least this share of the variance of the (globally scaled)
# midpoints or half-ranges of some feature, corrected for the number of classes, to get
# ranges of their own; and hold this many series on average (a class of one series would pin its
# level to the one seen).
MIN_EXPLAINED = 0.5
MIN_MEAN_CLASS_SIZE = 10
# Each class's range is widened by this share of its own span on each side (never beyond
# the column's): generated levels may go a little past the ones seen, as fresh series of the
# class would. MIN_SPAN of the column's range is only there so that a class whose series all
# share one level keeps a range to divide by. A floor of 1% of the column once widened the
# range of a class four decades below the column's loudest nearly 300-fold, to 30 times its
# series' half-range, and its waves came out off their centre by a third of it
# (docs/quality.md, "A class's own range of levels").
MARGIN = 0.1
MIN_SPAN = 1e-6


def explained_variance(values: np.ndarray, codes: np.ndarray, n_groups: int) -> float:
    """Adjusted share of the variance of ``values`` (N, K) between the groups ``codes``
    (N,), in the column where it is largest (1: the groups explain everything there; 0 or
    below: no more than chance anywhere). One feature of several may be the one whose
    level the classes set.

    Example:
        >>> codes = np.array([0, 0, 1, 1])
        >>> round(explained_variance(np.array([[0.1], [0.2], [0.8], [0.9]]), codes, 2), 3)
        0.97
        >>> explained_variance(np.array([[0.1], [0.9], [0.1], [0.9]]), codes, 2) < 0
        True
    """
    n = len(values)
    if n - n_groups < 1 or n_groups < 2:
        return float("-inf")
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    sums = np.zeros((n_groups, values.shape[1]))
    np.add.at(sums, codes, values)
    means = sums / np.maximum(counts, 1.0)[:, None]
    within = ((values - means[codes]) ** 2).sum(axis=0)
    total = ((values - values.mean(axis=0)) ** 2).sum(axis=0)
    within_variance = within / (n - n_groups)
    total_variance = total / (n - 1)
    shares = np.where(
        total_variance > 0,
        1.0 - within_variance / np.where(total_variance > 0, total_variance, 1.0),
        0.0,
    )
    return float(shares.max())


def _to_unit(encoded: np.ndarray, normalization: Normalization) -> np.ndarray:
    """Encoded values in the normalization's range -> [0, 1]."""
    return encoded if normalization == Normalization.ZERO_ONE else (encoded + 1.0) / 2.0


def _from_unit(unit: np.ndarray, normalization: Normalization) -> np.ndarray:
    """The inverse of `_to_unit`."""
    return unit if normalization == Normalization.ZERO_ONE else unit * 2.0 - 1.0


class GroupRanges:
    """Each class's range of the example-scaling attributes, and the maps into and out of it.

    ``attribute``: index of the discrete attribute whose categories are the classes;
    ``low``/``high``: (G, K) each class's range of the K example-scaling attributes, in
    the unit interval of their global scaling.

    Example:
        >>> ranges = GroupRanges(0, "sensor", np.array([[0.0], [0.5]]), np.array([[0.1], [1.0]]),
        ...                      Normalization.ZERO_ONE)
        >>> codes = np.array([0, 1])
        >>> inside = ranges.to_class(np.array([[0.05], [0.75]]), codes)
        >>> inside.ravel().tolist()
        [0.5, 0.5]
        >>> ranges.from_class(inside, codes).ravel().round(6).tolist()
        [0.05, 0.75]
    """

    def __init__(
        self,
        attribute: int,
        name: str,
        low: np.ndarray,
        high: np.ndarray,
        normalization: Normalization,
    ):
        self.attribute = attribute
        self.name = name
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.normalization = normalization

    @classmethod
    def choose(
        cls,
        setting: bool | str,
        encoded: np.ndarray,
        class_codes: dict[int, tuple[str, np.ndarray, int]],
        normalization: Normalization,
    ) -> GroupRanges | None:
        """The ranges for the attribute ``setting`` asks for, or None.

        ``encoded``: (N, K) the example-scaling attributes as encoded; ``class_codes``:
        for each discrete attribute's index, its name, every example's category index and
        the number of categories. ``setting`` "auto" picks the attribute that explains the
        most variance if it explains at least `MIN_EXPLAINED` and its classes hold
        `MIN_MEAN_CLASS_SIZE` series on average; False never; an attribute's name always
        uses that one.

        Example:
            >>> codes = {0: ("sensor", np.repeat([0, 1], 10), 2)}
            >>> levels = np.r_[np.full(10, 0.01), np.full(10, 0.9)] + np.arange(20) * 1e-3
            >>> levels = levels[:, None]  # (N, K=1)
            >>> GroupRanges.choose("auto", levels, codes, Normalization.ZERO_ONE).name
            'sensor'
            >>> GroupRanges.choose(False, levels, codes, Normalization.ZERO_ONE) is None
            True
        """
        if setting is False or encoded.shape[1] == 0:
            return None
        unit = _to_unit(encoded.astype(np.float64), normalization)
        if setting == "auto":
            best, best_share = None, MIN_EXPLAINED  # none where no attribute is discrete
            for index, (_, codes, n_groups) in class_codes.items():
                if len(unit) < MIN_MEAN_CLASS_SIZE * n_groups:
                    continue
                share = explained_variance(unit, codes, n_groups)
                if share >= best_share:
                    best, best_share = index, share
            if best is None:
                return None
        else:
            named = [i for i, (name, _, _) in class_codes.items() if name == setting]
            if not named:
                known = [name for name, _, _ in class_codes.values()]
                raise ParameterError(
                    f"per_class_scaling={setting!r} names no discrete attribute; the discrete "
                    f"attributes are {known}. Name one of them, or use 'auto' or False."
                )
            best = named[0]
        name, codes, n_groups = class_codes[best]
        low = np.full((n_groups, unit.shape[1]), np.inf)
        high = np.full((n_groups, unit.shape[1]), -np.inf)
        np.minimum.at(low, codes, unit)
        np.maximum.at(high, codes, unit)
        empty = ~np.isfinite(low)  # a category with no series: the whole range
        low[empty], high[empty] = 0.0, 1.0
        span = np.maximum(high - low, MIN_SPAN)
        middle = (high + low) / 2.0
        low = np.clip(middle - span * (0.5 + MARGIN), 0.0, None)
        high = np.clip(middle + span * (0.5 + MARGIN), None, 1.0)
        return cls(best, name, low, high, normalization)

    def to_class(self, encoded: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """(N, K) encoded example-scaling attributes -> the same within each class's range."""
        unit = _to_unit(encoded, self.normalization)
        low, high = self.low[codes], self.high[codes]
        inside = (unit - low) / (high - low)
        return _from_unit(inside, self.normalization).astype(np.float32)

    def from_class(self, encoded: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The inverse of `to_class` (generated values stay within the class's range)."""
        unit = _to_unit(np.asarray(encoded, dtype=np.float64), self.normalization)
        inside = np.clip(unit, 0.0, 1.0)
        low, high = self.low[codes], self.high[codes]
        return _from_unit(low + inside * (high - low), self.normalization)

    def to_json(self) -> dict[str, Any]:
        return {
            "attribute": self.attribute,
            "name": self.name,
            "low": self.low.tolist(),
            "high": self.high.tolist(),
            "normalization": self.normalization.name,
        }

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> GroupRanges:
        return cls(
            state["attribute"],
            state["name"],
            np.array(state["low"], dtype=np.float64),
            np.array(state["high"], dtype=np.float64),
            Normalization[state["normalization"]],
        )
