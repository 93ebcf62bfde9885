"""Encode whole datasets between users' values and the networks' representation.

`DataEncoder` combines one per-variable encoder (variables.py) per attribute and
feature, and adds DoppelGANger's two extras:

* per-example scaling: each continuous feature of each series is rescaled to the full
  range, and its midpoint and half-range (in the globally scaled space) become generated
  "additional attributes" (`range_encoders`: the half-range on a log scale where asked);
* the generation flag: for variable-length data, two extra feature columns one-hot
  encode "series continues" / "series ends here"; steps after the end are all zero.
  `series_ends` is the one rule for where a generated series ends. With
  ``length_attribute`` the length is also the last additional attribute (`encode_lengths`):
  generated with the others, it sets where the generator ends each series;
* with ``onset_attribute`` each series' leading zero steps come off before anything is
  fitted, and their count is the very last additional attribute (`dgan.encoding.onsets`);
* with ``period_carrier`` each carried feature's dominant frequency, and in the "series"
  form its noise floor, are additional attributes after the ranges
  (`dgan.encoding.periods`).

Everything has an exact inverse and a JSON-native state (models are saved without pickle).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dgan.config import Normalization, OutputType
from dgan.encoding.additional_layout import AdditionalLayout
from dgan.encoding.centre_map import CentreMap
from dgan.encoding.class_shares import ClassShares

# series_ends: this module's API
from dgan.encoding.encoded import (
    EncodedData,
    encode_lengths,
    flag_lengths,
    series_ends,
    varies_in_length,
)
from dgan.encoding.encoder_state import encoder_arguments, encoder_state
from dgan.encoding.example_scaling import (
    fills_range,
    from_series_range,
    range_encoders,
    series_ranges,
    to_series_range,
)
from dgan.encoding.groups import GroupRanges
from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.onsets import (
    encode_onsets,
    onsets_from_unit,
    series_onsets,
    starts_off,
    strip_onsets,
)
from dgan.encoding.period_map import PeriodMap
from dgan.encoding.periods import (
    HARMONICS,
    carried_features,
    gate_sample,
    held_harmonics,
    period_attributes,
)
from dgan.encoding.standardized import Standardized
from dgan.encoding.switch_on import median_switch_ons
from dgan.encoding.texture import SeriesTexture
from dgan.encoding.training_maps import fit_training_maps
from dgan.encoding.variables import (  # re-exported: the encoders are part of this module's API
    BITS,
    SIGMOID,
    SOFTMAX,
    TANH,
    ContinuousEncoder,
    DiscreteEncoder,
    OutputSlice,
    VariableEncoder,
    all_numeric,
    class_codes,
    encoder_from_json,
    fit_variables,
    inverse_columns,
    output_slices,
    output_type,
    transform_columns,
    variable_names,
    variable_settings,
)
from dgan.series import SeriesRows, as_series_rows

__all__ = [
    "BITS",
    "SIGMOID",
    "SOFTMAX",
    "TANH",
    "ContinuousEncoder",
    "DataEncoder",
    "DiscreteEncoder",
    "EncodedData",
    "OutputSlice",
    "encoder_from_json",
    "series_ends",
]


class DataEncoder(AdditionalLayout):
    """Encode whole datasets: attributes (N, A) and features (list of (T_i, F) arrays).

    Example:
        >>> from dgan import DGANConfig
        >>> config = DGANConfig(max_sequence_len=3, sample_len=1)
        >>> features = [np.array([[0.0], [1.0], [2.0]]), np.array([[4.0], [2.0], [0.0]])]
        >>> enc = DataEncoder.fit(config, features, [OutputType.CONTINUOUS], None, None)
        >>> data = enc.transform(features, None)
        >>> data.features.shape, data.additional_attributes.shape
        ((2, 3, 1), (2, 2))
        >>> np.allclose(enc.inverse(data)[1][1], features[1])
        True
    """

    def __init__(
        self,
        attribute_encoders: list[VariableEncoder] | None,
        feature_encoders: list[VariableEncoder],
        additional_encoders: list[ContinuousEncoder] | None,
        max_sequence_len: int,
        variable_length: bool,
        normalization: Normalization,
        groups: GroupRanges | None = None,
        fill_range: bool | str = False,
        marginals: ValueMarginals | None = None,
        length_attribute: bool = False,
        texture: SeriesTexture | None = None,
        class_shares: ClassShares | None = None,
        standardized: Standardized | None = None,
        onset_attribute: bool = False,
        period_features: list[int] | None = None,
        period_harmonics: int = HARMONICS,
        period_waveform: str = "series",
        period_map: PeriodMap | None = None,
        centre_map: CentreMap | None = None,
    ):
        self.attribute_encoders = attribute_encoders
        self.feature_encoders = feature_encoders
        self.additional_encoders = additional_encoders
        self.max_sequence_len = max_sequence_len
        self.variable_length = variable_length
        self.normalization = normalization
        # Per-class ranges of the example-scaling attributes (groups.py), or None.
        self.groups = groups
        # Whether decoding stretches each series over its generated range (`fills_range`).
        self.fill_range = fill_range
        # The training values' distribution that generated values are mapped onto, or None.
        self.marginals = marginals
        # The training series' texture that generated series are filtered to, or None.
        self.texture = texture
        # The training classes' shares that generation keeps, or None.
        self.class_shares = class_shares
        # The mean and deviation every training series has, per feature, or None.
        self.standardized = standardized
        # Whether each series' length is the last additional attribute (variable length only).
        self.length_attribute = length_attribute and variable_length
        # Whether each series' leading zero steps are taken off and generated as a count.
        self.onset_attribute = onset_attribute
        # The features drawn on a carrier at each series' own period, each with its
        # frequency as an additional attribute after the ranges ([] for none), and the
        # carrier's form: its harmonics and how they move (`periods.WAVEFORMS`).
        self.period_features = list(period_features or [])
        self.period_harmonics, self.period_waveform = period_harmonics, period_waveform
        # The training series' periods that generated ones are mapped onto, or None.
        self.period_map = period_map
        # The training series' centres that generated waves are moved onto, or None.
        self.centre_map = centre_map
        # Each carried feature's median switch-on, where training starts (`switch_on`): not saved.
        self.period_switch_ons = None
        self.continuous_features = [
            i for i, e in enumerate(feature_encoders) if isinstance(e, ContinuousEncoder)
        ]

    # ----- layout ---------------------------------------------------------------------
    @property
    def attribute_slices(self) -> list[OutputSlice] | None:
        return None if self.attribute_encoders is None else output_slices(self.attribute_encoders)

    @property
    def feature_slices(self) -> list[OutputSlice]:
        slices = output_slices(self.feature_encoders)
        if self.variable_length:
            start = sum(e.width for e in self.feature_encoders)
            slices.append(OutputSlice(start, 2, SOFTMAX))
        return slices

    @property
    def generation_flag_column(self) -> int | None:
        """Column of the 'continues' flag (the 'ends' flag is the next one), or None."""
        if not self.variable_length:
            return None
        return sum(e.width for e in self.feature_encoders)

    @property
    def attribute_types(self) -> list[OutputType] | None:
        """Each attribute's `OutputType` (the encoders are the one record of it), or None."""
        if self.attribute_encoders is None:
            return None
        return [output_type(e) for e in self.attribute_encoders]

    @property
    def feature_types(self) -> list[OutputType]:
        """Each feature's `OutputType`."""
        return [output_type(e) for e in self.feature_encoders]

    @property
    def numeric_attributes(self) -> bool:
        """Whether every attribute is a number (continuous, or numeric categories)."""
        return self.attribute_encoders is not None and all_numeric(self.attribute_encoders)

    @property
    def numeric_features(self) -> bool:
        """Whether every feature is a number (continuous, or numeric categories)."""
        return all_numeric(self.feature_encoders)

    @property
    def attribute_dim(self) -> int:
        return sum(s.width for s in self.attribute_slices or [])

    @property
    def feature_dim(self) -> int:
        return sum(s.width for s in self.feature_slices)

    # ----- fitting --------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        config: Any,
        features: SeriesRows | list[np.ndarray],
        feature_types: list[OutputType],
        attributes: np.ndarray | None,
        attribute_types: list[OutputType] | None,
        feature_names: Sequence[Any] | None = None,
        attribute_names: Sequence[Any] | None = None,
    ) -> DataEncoder:
        """Learn every encoder from validated training data (see `model.py`).

        Separate steps, each on whole columns: the variables' ranges and categories
        (`fit_variables`), whether series differ in length, the example scaling's ranges of
        midpoints and half-ranges, and their per-class ranges (`GroupRanges.choose`). The
        names (e.g. DataFrame columns; default "feature 0", ...) name the variables in
        error messages, also after the model is saved and loaded.
        """
        features = as_series_rows(features)
        varied = varies_in_length(features.lengths, config.max_sequence_len)
        onset_attribute = starts_off(config.onset_attribute, features, varied)
        if onset_attribute:  # everything is fitted on the series from their switch-on
            features = strip_onsets(features, series_onsets(features))
        settings = variable_settings(config)
        feature_names = variable_names(feature_names, "feature", len(feature_types))
        feature_encoders = fit_variables(feature_types, feature_names, features.rows, settings)
        attribute_encoders = None
        if attributes is not None:
            attribute_names = variable_names(attribute_names, "attribute", len(attribute_types))
            attribute_encoders = fit_variables(
                attribute_types, attribute_names, attributes, settings
            )
        encoder = cls(
            attribute_encoders,
            feature_encoders,
            None,
            config.max_sequence_len,
            varied,
            config.normalization,
            fill_range=config.fill_series_range,
            length_attribute=config.length_attribute,
            onset_attribute=onset_attribute,
        )
        continuous = encoder.continuous_features
        sample = gate_sample(features)  # each feature's frequencies computed once on it
        encoder.period_features = carried_features(config.period_carrier, sample, continuous)
        if carried := encoder.period_features:  # the harmonics and switch-ons the data holds
            encoder.period_harmonics = held_harmonics(sample, carried)
            encoder.period_switch_ons = median_switch_ons(sample, carried, feature_encoders)
        if config.apply_example_scaling and encoder.continuous_features:
            mid, half = encoder._midpoints_and_half_ranges(features)
            names = [str(feature_names[i]) for i in encoder.continuous_features]
            encoder.additional_encoders = range_encoders(config, names, mid, half)
            encoder.groups = GroupRanges.choose(
                config.per_class_scaling,
                encoder._encode_ranges(mid, half),
                {} if attributes is None else class_codes(attribute_encoders, attributes),
                config.normalization,
            )
        group = None if encoder.groups is None else encoder.groups.attribute
        maps = fit_training_maps(
            config,
            features,
            attributes,
            attribute_encoders,
            feature_encoders,
            group,
            carried=encoder.period_features,
            sample=sample,
        )
        for key, fitted in maps.items():  # each of `TRAINING_MAPS`, or None
            setattr(encoder, key, fitted)
        return encoder

    def _encode_ranges(self, mid: np.ndarray, half: np.ndarray) -> np.ndarray:
        """(N, 2C) the example-scaling attributes (midpoint, half-range per continuous
        feature) as their global encoders scale them."""
        parts = []
        for j in range(len(self.continuous_features)):
            parts.append(self.additional_encoders[2 * j].transform(mid[:, j]))
            parts.append(self.additional_encoders[2 * j + 1].transform(half[:, j]))
        return np.stack(parts, axis=1).astype(np.float32)

    def class_of(self, attributes: np.ndarray | None, attribute: int | None) -> np.ndarray | None:
        """Each example's class: its category index of discrete attribute ``attribute``
        (the per-class ranges' or `ValueMarginals`'), or None for None (one class)."""
        codes = None if attribute is None else self.attribute_encoders[attribute].codes
        return None if codes is None else codes(attributes[:, attribute])

    def _scaled_continuous(self, rows: np.ndarray) -> np.ndarray:
        """(C, R) globally scaled continuous features of ``rows`` (R, F), a feature a row
        (so that reductions over a series' steps read contiguous memory)."""
        scaled = np.empty((len(self.continuous_features), len(rows)), dtype=np.float64)
        for j, i in enumerate(self.continuous_features):
            scaled[j] = self.feature_encoders[i].transform(rows[:, i])  # float32 values
        return scaled

    def _midpoints_and_half_ranges(self, features: SeriesRows) -> tuple[np.ndarray, ...]:
        """(N, C) midpoints and half-ranges of each series' globally scaled features."""
        n, c = len(features), len(self.continuous_features)
        mid, half = np.empty((n, c)), np.empty((n, c))
        for first, part in features.chunks():
            series = slice(first, first + len(part))
            mid[series], half[series] = series_ranges(part, self._scaled_continuous(part.rows))
        return mid, half

    # ----- transform ------------------------------------------------------------------
    def transform(
        self, features: SeriesRows | list[np.ndarray], attributes: np.ndarray | None
    ) -> EncodedData:
        """Encode validated data (every series no longer than max_sequence_len).

        Whole columns at a time, in chunks of series, straight into the one output array.
        """
        features, onsets = as_series_rows(features), None
        if self.onset_attribute:
            features = strip_onsets(features, onsets := series_onsets(features))
        n, t_max = len(features), self.max_sequence_len
        encoded = np.zeros((n, t_max, self.feature_dim), dtype=np.float32)
        scaling = self.additional_encoders is not None
        if scaling:
            c = len(self.continuous_features)
            mid, half = np.empty((n, c)), np.empty((n, c))
        for first, part in features.chunks():
            series = slice(first, first + len(part))
            target = encoded[series]
            direct = part.one_length == t_max and not self.variable_length
            block = self._encode_rows(
                part.rows, target.reshape(len(part.rows), -1) if direct else None
            )
            if scaling:
                z = self._scaled_continuous(part.rows)  # (R_chunk, C)
                mid[series], half[series] = series_ranges(part, z)
                self._scale_examples(block, part, z, mid[series], half[series])
            if direct:
                continue  # written in place
            if part.one_length == t_max:
                target[:, :, : block.shape[1]] = block.reshape(len(part), t_max, -1)
            else:
                target[part.example_of_row(), part.step_of_row(), : block.shape[1]] = block
        if self.variable_length:
            flag = self.generation_flag_column
            lengths = features.lengths
            steps = np.arange(t_max)
            encoded[:, :, flag] = steps < (lengths - 1)[:, None]  # continues
            encoded[np.arange(n), lengths - 1, flag + 1] = 1.0  # ends here
        additional = None
        if scaling:
            additional = self._encode_ranges(mid, half)
            if self.groups is not None:
                additional = self.groups.to_class(
                    additional, self.class_of(attributes, self.groups.attribute)
                )
        zero_one = self.normalization == Normalization.ZERO_ONE
        # the periods (and floors), the length, then the onset, after the ranges
        counts = period_attributes(
            features, self.period_features, t_max, zero_one, self.period_floors
        )
        if self.length_attribute:
            counts.append(encode_lengths(features.lengths, t_max, zero_one))
        if onsets is not None:
            counts.append(encode_onsets(onsets, t_max, zero_one))
        if counts:
            additional = np.column_stack([*([] if additional is None else [additional]), *counts])
        lengths = features.lengths.copy()
        return EncodedData(self.transform_attributes(attributes, n), additional, encoded, lengths)

    def _encode_rows(self, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(R, F_enc) every feature's encoding of ``rows`` (R, F), without the flag; into
        ``out`` when given."""
        slices = output_slices(self.feature_encoders)
        if out is None:
            out = np.empty((len(rows), sum(s.width for s in slices)), dtype=np.float32)
        for i, (enc, s) in enumerate(zip(self.feature_encoders, slices, strict=True)):
            col = enc.transform(rows[:, i])
            out[:, s.start : s.start + s.width] = col[:, None] if col.ndim == 1 else col
        return out

    def _scale_examples(self, block, part: SeriesRows, z, mid, half) -> None:
        """Rescale each series' continuous columns of ``block`` to the full range, in
        place, given their globally scaled values ``z`` (C, R) and ranges (N, C)."""
        unit = to_series_range(part, z, mid, half)
        if self.normalization != Normalization.ZERO_ONE:
            unit *= 2
            unit -= 1
        starts = [s.start for s in output_slices(self.feature_encoders)]
        for j, i in enumerate(self.continuous_features):
            block[:, starts[i]] = unit[j]

    def transform_attributes(self, attributes: np.ndarray | None, n: int) -> np.ndarray | None:
        """(n, A_enc) the encoded attributes, or None without attributes."""
        if self.attribute_encoders is None:
            return None
        return transform_columns(self.attribute_encoders, attributes, n)

    # ----- inverse --------------------------------------------------------------------
    def lengths_from_flags(self, features: np.ndarray) -> np.ndarray:
        """Series lengths: up to and including the first step where `series_ends`."""
        return flag_lengths(features, self.generation_flag_column)

    def onsets(self, data: EncodedData) -> np.ndarray | None:
        """(N,) the zero steps to put before each decoded series (`with_onsets`), or None."""
        if not self.onset_attribute:
            return None
        column = data.additional_attributes[:, self.onset_column]
        zero_one = self.normalization == Normalization.ZERO_ONE
        return onsets_from_unit(column, self.max_sequence_len, zero_one)

    def inverse(self, data: EncodedData) -> tuple[np.ndarray | None, list[np.ndarray]]:
        """Decode to (attributes (N, A) or None, list of (T_i, F) feature arrays)."""
        attributes, features = self.inverse_rows(data)
        return attributes, list(features)

    def inverse_rows(self, data: EncodedData) -> tuple[np.ndarray | None, SeriesRows]:
        """Decode to (attributes (N, A) or None, the series as one `SeriesRows`), whole
        columns at a time (`inverse` lists the series).

        Example:
            >>> from dgan import DGANConfig
            >>> config = DGANConfig(max_sequence_len=3, sample_len=1)
            >>> features = [np.array([[0.0], [1.0], [2.0]]), np.array([[4.0], [2.0]])]
            >>> enc = DataEncoder.fit(config, features, [OutputType.CONTINUOUS], None, None)
            >>> rows = enc.inverse_rows(enc.transform(features, None))[1]
            >>> rows.lengths.tolist(), np.allclose(rows[1], features[1])
            ([3, 2], True)
        """
        n = data.features.shape[0]
        attributes = None
        if self.attribute_encoders is not None:
            attributes = inverse_columns(
                self.attribute_encoders, self.attribute_slices, data.attributes, (n,)
            )
        lengths = self.lengths_from_flags(data.features)
        feats = data.features.astype(np.float64)
        if self.additional_encoders is not None:
            starts = [s.start for s in output_slices(self.feature_encoders)]
            ranges = data.additional_attributes[:, : len(self.additional_encoders)]
            if self.groups is not None:  # from each class's range back to the column's
                ranges = self.groups.from_class(
                    ranges, self.class_of(attributes, self.groups.attribute)
                )
            zero_one = self.normalization == Normalization.ZERO_ONE
            for j, i in enumerate(self.continuous_features):
                mid = self.additional_encoders[2 * j].inverse(ranges[:, 2 * j])
                half = self.additional_encoders[2 * j + 1].inverse(ranges[:, 2 * j + 1])
                fill = fills_range(self.fill_range, self.feature_encoders[i].log_floor is not None)
                k = starts[i]
                feats[:, :, k] = from_series_range(
                    feats[:, :, k], mid, half, zero_one, fill, lengths
                )
        decoded = inverse_columns(
            self.feature_encoders, output_slices(self.feature_encoders), feats, feats.shape[:2]
        )  # (N, T, F)
        if (lengths == decoded.shape[1]).all():
            return attributes, SeriesRows.from_padded(decoded)
        within = np.arange(decoded.shape[1]) < lengths[:, None]  # (N, T) steps kept
        return attributes, SeriesRows(decoded[within], lengths)

    # ----- state ----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return encoder_state(self)

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> DataEncoder:
        return cls(**encoder_arguments(state))
