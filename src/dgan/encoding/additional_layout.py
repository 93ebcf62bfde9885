"""Where each additional attribute sits (`DataEncoder`'s layout of them).

After the example-scaling attributes (a midpoint and a half-range per continuous
feature, `range_encoders`) come, each one column in the attributes' output range: every
carried feature's frequency, then, in the "series" form, every carried feature's noise
floor (`dgan.encoding.periods`), the length (``length_attribute``), and the onset
(``onset_attribute``), last.
"""

from __future__ import annotations

from dgan.config import Normalization
from dgan.encoding.variables import SIGMOID, TANH, OutputSlice, output_slices


class AdditionalLayout:
    """The additional attributes' columns, read from a `DataEncoder`'s settings
    (``additional_encoders``, ``normalization``, ``period_features``, ``period_waveform``,
    ``length_attribute``, ``onset_attribute``).

    Example:
        >>> from dgan.config import Normalization
        >>> layout = AdditionalLayout()
        >>> layout.additional_encoders, layout.normalization = None, Normalization.ZERO_ONE
        >>> layout.period_features, layout.period_waveform = [0], "series"
        >>> layout.length_attribute, layout.onset_attribute = True, True
        >>> layout.period_columns, layout.floor_columns, layout.length_column, layout.onset_column
        ([0], [1], 2, 3)
    """

    @property
    def additional_slices(self) -> list[OutputSlice] | None:
        slices = (
            None if self.additional_encoders is None else output_slices(self.additional_encoders)
        )
        zero_one = self.normalization == Normalization.ZERO_ONE
        # the periods (and floors), the length, then the onset, after the ranges
        carried = len(self.period_features) * (1 + self.period_floors)
        for _ in range(carried + self.length_attribute + self.onset_attribute):
            start = sum(s.width for s in slices or [])
            slices = [*(slices or []), OutputSlice(start, 1, SIGMOID if zero_one else TANH)]
        return slices

    @property
    def length_column(self) -> int | None:
        """Column of the length among the additional attributes (``length_attribute``)."""
        if not self.length_attribute:
            return None
        return self.additional_dim - 1 - self.onset_attribute

    @property
    def period_floors(self) -> bool:
        """Whether each carried feature's noise floor is an additional attribute too."""
        return self.period_waveform == "series"

    @property
    def period_columns(self) -> list[int]:
        """Columns of the carried features' frequencies among the additional attributes."""
        last = self.additional_dim - self.onset_attribute - self.length_attribute
        first = last - len(self.period_features) * (1 + self.period_floors)
        return list(range(first, first + len(self.period_features)))

    @property
    def floor_columns(self) -> list[int]:
        """Columns of the carried features' noise floors ([] but in the "series" form)."""
        if not self.period_floors:
            return []
        last = self.additional_dim - self.onset_attribute - self.length_attribute
        return list(range(last - len(self.period_features), last))

    @property
    def onset_column(self) -> int | None:
        """Column of the onset among the additional attributes (``onset_attribute``)."""
        return self.additional_dim - 1 if self.onset_attribute else None

    @property
    def additional_dim(self) -> int:
        return sum(s.width for s in self.additional_slices or [])
