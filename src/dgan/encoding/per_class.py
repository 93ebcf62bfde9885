"""`PerClassTable`: numbers kept per mapped feature and class of one discrete attribute,
and their JSON form; what the value map (`ValueMarginals`) and the texture
(`SeriesTexture`) both read from the training data and save with the model."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


def series_classes(count: int, classes: np.ndarray | None) -> np.ndarray:
    """Each of ``count`` series' class index: ``classes`` as given, or all 0 where it is
    None (one class for all).

    Example:
        >>> series_classes(3, None).tolist(), series_classes(2, np.array([1, 0])).tolist()
        ([0, 0, 0], [1, 0])
    """
    return np.zeros(count, np.int64) if classes is None else np.asarray(classes)


class PerClassTable:
    """``features``: indices of the mapped (continuous) features; ``attribute``: index of
    the discrete attribute whose categories are the classes, or None for one class;
    ``real``: (len(features), classes, `WIDTH`) the training data's numbers, NaN for a
    class without them (saved as null).

    Example:
        >>> class Pairs(PerClassTable):
        ...     WIDTH = 2
        >>> table = Pairs([0], None, np.array([[[1.0, 2.0], [np.nan, np.nan]]]))
        >>> table.n_classes, table.to_json()["real"]
        (2, [[[1.0, 2.0], None]])
        >>> np.isnan(Pairs.from_json(table.to_json()).real[0, 1]).all()
        np.True_
    """

    WIDTH: ClassVar[int]
    """How many numbers each feature and class keeps."""

    def __init__(self, features: list[int], attribute: int | None, real: np.ndarray):
        self.features = list(features)
        self.attribute = attribute
        self.real = np.asarray(real, dtype=np.float64)

    @property
    def n_classes(self) -> int:
        return self.real.shape[1]

    def to_json(self) -> dict[str, Any]:
        return {
            "features": self.features,
            "attribute": self.attribute,
            # NaN (a class without values) is not JSON: None stands for it.
            "real": [[None if np.isnan(q[0]) else q.tolist() for q in per] for per in self.real],
        }

    @classmethod
    def from_json(cls, state: dict[str, Any], width: int | None = None):
        """The table ``to_json`` wrote; ``width``: numbers per entry, if not `WIDTH`."""
        width = cls.WIDTH if width is None else width
        real = [
            [np.full(width, np.nan) if q is None else np.asarray(q, float) for q in per]
            for per in state["real"]
        ]
        return cls(state["features"], state["attribute"], np.asarray(real, dtype=np.float64))
