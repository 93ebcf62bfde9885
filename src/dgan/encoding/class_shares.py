"""Generated series drawn at each class's share of the training series.

The attribute generator learns the classes' shares only roughly, and a rare class is
what it gets least right: it can come out at a fraction of its share, or not at all
(docs/quality.md, "Class shares kept"). `ClassShares` keeps each class's share of the
training series (the categories of one discrete attribute); generation draws attribute
noise for `POOL` times the series asked for, reads the class the attribute generator
makes of each, and keeps, in the order drawn, the first ones of each class up to its
quota (`quotas`: the shares of the series asked for, rounded by largest remainder). Each
kept series is what the generator makes of its noise, so within a class nothing changes
but how many. A class the attribute generator makes too rarely to fill its quota from the
pool (on many small classes it can drop one altogether) takes the next series drawn, with
their class set to it: they are generated from the attributes the attribute generator
made of their noise and that class, as attributes asked for are (`DGAN.generate_numpy`'s
``attributes``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

POOL = 8
"""Attribute noise drawn per series asked for, to choose from."""


def matches_class_shares(setting: bool | str, classed: bool) -> bool:
    """Whether generation keeps the training classes' shares (`match_class_shares`):
    where there is a discrete attribute, for True and "auto"; never for False.

    Example:
        >>> matches_class_shares("auto", True), matches_class_shares("auto", False)
        (True, False)
    """
    return classed and setting in (True, "auto")


class ClassShares:
    """``attribute``: index of the discrete attribute whose categories are the classes;
    ``shares``: (classes,) each one's share of the training series.

    Example:
        >>> shares = ClassShares.fit(0, np.array([0, 0, 0, 1, 1, 2]), 3)
        >>> shares.quotas(4).tolist()  # 2, 1.33, 0.67 rounded to sum to 4
        [2, 1, 1]
        >>> pool = np.array([0, 0, 0, 0, 1, 0, 2, 1])  # classes of the pool's series
        >>> [a.tolist() for a in shares.choose(pool, 4)]  # the first two 0s, 1 and 2
        [[0, 1, 4, 6], [-1, -1, -1, -1]]
        >>> [a.tolist() for a in shares.choose(np.array([0, 0, 0, 1, 0]), 4)]  # no 2
        [[0, 1, 2, 3], [-1, -1, 2, -1]]
    """

    def __init__(self, attribute: int, shares: np.ndarray):
        self.attribute = attribute
        self.shares = np.asarray(shares, dtype=np.float64)

    @classmethod
    def fit(cls, attribute: int, classes: np.ndarray, n_classes: int) -> ClassShares:
        """The shares of ``classes`` (each training series' category index)."""
        counts = np.bincount(np.asarray(classes, dtype=np.int64), minlength=n_classes)
        return cls(attribute, counts / max(counts.sum(), 1))

    def quotas(self, n: int) -> np.ndarray:
        """(classes,) how many of ``n`` series each class gets: its share of ``n``, the
        places left by rounding down going to the largest remainders (ties: the first)."""
        exact = self.shares * n
        quotas = np.floor(exact).astype(np.int64)
        left = n - int(quotas.sum())
        order = np.argsort(-(exact - quotas), kind="stable")
        quotas[order[:left]] += 1
        return quotas

    def choose(self, pool_classes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(chosen, given)``: (n,) indices into a pool of series (``pool_classes``: each
        one's class), in the pool's order, the first of each class up to its `quotas`;
        where a class has too few, the next ones not yet kept, and for each of those
        ``given`` names the short class it is to be generated as (-1 for the series kept as
        drawn)."""
        pool_classes = np.asarray(pool_classes, dtype=np.int64)
        quotas = self.quotas(n)
        rank = np.zeros(len(pool_classes), dtype=np.int64)  # how many of its class before
        for c in range(len(quotas)):
            mine = pool_classes == c
            rank[mine] = np.arange(int(mine.sum()))
        known = (pool_classes >= 0) & (pool_classes < len(quotas))
        keep = known & (rank < quotas[np.clip(pool_classes, 0, len(quotas) - 1)])
        kept = np.bincount(pool_classes[keep], minlength=len(quotas))
        missing = np.repeat(np.arange(len(quotas)), quotas - kept)  # a class per place left
        extra = np.flatnonzero(~keep)[: len(missing)]  # the next series drawn take them
        keep[extra] = True
        chosen = np.flatnonzero(keep)
        given = np.full(len(chosen), -1, dtype=np.int64)
        given[np.searchsorted(chosen, extra)] = missing[: len(extra)]
        return chosen, given

    def to_json(self) -> dict[str, Any]:
        return {"attribute": self.attribute, "shares": self.shares.tolist()}

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> ClassShares:
        return cls(state["attribute"], np.asarray(state["shares"], dtype=np.float64))
