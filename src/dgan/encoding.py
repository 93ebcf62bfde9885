"""Encoders between users' values and the networks' internal representation.

Each variable (one attribute column or one feature channel) has one encoder:

* `ContinuousEncoder` scales to [0, 1] or [-1, 1] (the `Normalization`), or passes the
  values through when feature scaling is off (then they must already lie in range).
* `DiscreteEncoder` learns the categories (any hashable values: numbers, strings, bools;
  NaN/None is one more category) and encodes them one-hot, or as binary bits when there
  are more categories than ``binary_encoder_cutoff``.

`DataEncoder` combines them for a whole dataset and adds DoppelGANger's two extras:

* per-example scaling: each continuous feature of each series is rescaled to the full
  range, and its midpoint and half-range (in the globally scaled space) become generated
  "additional attributes";
* the generation flag: for variable-length data, two extra feature columns one-hot
  encode "series continues" / "series ends here"; steps after the end are all zero.

Every encoder has an exact inverse and a JSON-native state (`to_json`/`from_json`), as
models are saved without pickle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dgan.config import Normalization, OutputType
from dgan.errors import DataError, SerializationError, raise_all

# Activation kinds the generator's fused output head applies to a slice of its output.
SIGMOID, TANH, SOFTMAX, BITS = "sigmoid", "tanh", "softmax", "bits"


def series_ends(continues, ends):
    """Where a series ends: the generation flag's "ends" output is at least "continues".

    The one end-of-series rule, used by the generator (which zeroes every step after
    the end) and by the decoder (which cuts each series there). A tie ends the series.
    Works element-wise on numpy arrays and torch tensors alike.

    Example:
        >>> series_ends(np.array([0.9, 0.5, 0.2]), np.array([0.1, 0.5, 0.8])).tolist()
        [False, True, True]
    """
    return ends >= continues


@dataclass(frozen=True)
class OutputSlice:
    """A contiguous block of encoded columns and the activation that produces it."""

    start: int
    width: int
    activation: str


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _to_json_scalar(value: Any) -> Any:
    """Python-native version of a category value (numpy scalars -> int/float/bool/str)."""
    if _is_missing(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int, float, str)):
        return value
    # Datetimes, Decimals, ...: keep their text form; frames restore column dtypes.
    return str(value)


def _category_key(value: Any) -> Any:
    """Dictionary key of a category: True and 1 (or False and 0) stay distinct."""
    return ("bool", value) if isinstance(value, bool) else value


class ContinuousEncoder:
    """Scale one continuous variable to the normalization range and back.

    Example:
        >>> enc = ContinuousEncoder(Normalization.ZERO_ONE).fit(np.array([2.0, 4.0, 6.0]))
        >>> enc.transform(np.array([2.0, 6.0]))
        array([0., 1.], dtype=float32)
        >>> enc.inverse(np.array([0.5], dtype=np.float32))
        array([4.])
    """

    def __init__(self, normalization: Normalization, apply_scaling: bool = True, name: str = ""):
        self.normalization = normalization
        self.apply_scaling = apply_scaling
        self.name = name
        self.min: float | None = None
        self.max: float | None = None

    @property
    def width(self) -> int:
        return 1

    @property
    def activation(self) -> str:
        return SIGMOID if self.normalization == Normalization.ZERO_ONE else TANH

    @property
    def low(self) -> float:
        return 0.0 if self.normalization == Normalization.ZERO_ONE else -1.0

    def fit(self, values: np.ndarray) -> ContinuousEncoder:
        values = np.asarray(values, dtype=np.float64)
        values = values[~np.isnan(values)]
        if values.size == 0:
            raise DataError(f"Variable {self.name!r} has no values to learn a range from.")
        self.min, self.max = float(values.min()), float(values.max())
        if not self.apply_scaling and (self.min < self.low or self.max > 1.0):
            raise DataError(
                f"Variable {self.name!r} spans [{self.min:g}, {self.max:g}] but "
                f"apply_feature_scaling=False requires values in [{self.low:g}, 1]; "
                "set apply_feature_scaling=True or rescale the data."
            )
        return self

    def transform(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        if not self.apply_scaling:
            return values.astype(np.float32)
        # Halves keep the arithmetic finite for data spanning the whole float64 range.
        half_span = self.max / 2 - self.min / 2
        unit = (values / 2 - self.min / 2) / half_span if half_span > 0 else 0.0 * values
        return self._from_unit(unit).astype(np.float32)

    def inverse(self, encoded: np.ndarray) -> np.ndarray:
        encoded = np.asarray(encoded, dtype=np.float64)
        if not self.apply_scaling:
            return encoded
        unit = self._to_unit(encoded)
        return (1.0 - unit) * self.min + unit * self.max  # finite wherever min, max are

    def outside_range(self, values: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
        """Which values lie outside the fitted range widened by ``tolerance`` spans.

        Example:
            >>> enc = ContinuousEncoder(Normalization.ZERO_ONE).fit(np.array([0.0, 10.0]))
            >>> enc.outside_range(np.array([-5.0, 5.0, 25.0]), tolerance=1.0).tolist()
            [False, False, True]
        """
        values = np.asarray(values, dtype=np.float64)
        margin = tolerance * (self.max / 2 - self.min / 2) * 2
        with np.errstate(invalid="ignore"):
            return (values < self.min - margin) | (values > self.max + margin)

    def _from_unit(self, unit: np.ndarray) -> np.ndarray:
        return unit if self.normalization == Normalization.ZERO_ONE else unit * 2.0 - 1.0

    def _to_unit(self, encoded: np.ndarray) -> np.ndarray:
        return encoded if self.normalization == Normalization.ZERO_ONE else (encoded + 1.0) / 2.0

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "continuous",
            "name": self.name,
            "normalization": self.normalization.name,
            "apply_scaling": self.apply_scaling,
            "min": self.min,
            "max": self.max,
        }

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> ContinuousEncoder:
        enc = cls(Normalization[state["normalization"]], state["apply_scaling"], state["name"])
        enc.min, enc.max = state["min"], state["max"]
        return enc


class DiscreteEncoder:
    """Encode one discrete variable one-hot, or as binary bits above the cutoff.

    Categories are whatever values the data holds (NaN and None are one category).

    Example:
        >>> enc = DiscreteEncoder(binary_encoder_cutoff=150).fit(np.array(["b", "a", "b"]))
        >>> enc.categories
        ['a', 'b']
        >>> enc.transform(np.array(["b"]))
        array([[0., 1.]], dtype=float32)
        >>> enc.inverse(np.array([[0.9, 0.1]]))
        array(['a'], dtype=object)
    """

    def __init__(self, binary_encoder_cutoff: int, name: str = ""):
        self.binary_encoder_cutoff = binary_encoder_cutoff
        self.name = name
        self.categories: list[Any] = []
        self._index: dict[Any, int] = {}

    @property
    def binary(self) -> bool:
        return len(self.categories) > self.binary_encoder_cutoff

    @property
    def width(self) -> int:
        if self.binary:
            return max(1, math.ceil(math.log2(len(self.categories))))
        return len(self.categories)

    @property
    def activation(self) -> str:
        return BITS if self.binary else SOFTMAX

    @property
    def numeric(self) -> bool:
        """Whether every category is a number (or missing); bools are not numbers here."""
        return all(
            c is None or (isinstance(c, (int, float)) and not isinstance(c, bool))
            for c in self.categories
        )

    def fit(self, values: np.ndarray) -> DiscreteEncoder:
        scalars = (_to_json_scalar(v) for v in np.asarray(values, dtype=object).ravel())
        unique = {_category_key(v): v for v in scalars}
        if not unique:
            raise DataError(f"Variable {self.name!r} has no values to learn categories from.")
        has_missing = unique.pop(None, ...) is not ...
        present = list(unique.values())
        try:
            ordered = sorted(present)
            if len({type(v) for v in present}) > 1:
                raise TypeError  # e.g. False and 0: sort by type too, for a stable order
        except TypeError:  # mixed types, e.g. 1 and "a": order by type, then text
            ordered = sorted(present, key=lambda v: (type(v).__name__, str(v)))
        self._set_categories([*ordered, None] if has_missing else ordered)
        return self

    def _set_categories(self, categories: list[Any]) -> None:
        self.categories = categories
        self._index = {_category_key(c): i for i, c in enumerate(categories)}

    def codes(self, values: np.ndarray) -> np.ndarray:
        """Category index of each value; unknown values are a DataError listing them."""
        flat = [_category_key(_to_json_scalar(v)) for v in np.asarray(values, dtype=object).ravel()]
        unknown = sorted({str(v) for v in flat if v not in self._index})
        if unknown:
            raise DataError(
                f"Variable {self.name!r} has values never seen in training: {unknown[:10]}; "
                f"known categories are {[str(c) for c in self.categories[:20]]}. Use only "
                "those: a trained model cannot learn new categories."
            )
        return np.array([self._index[v] for v in flat], dtype=np.int64).reshape(np.shape(values))

    def transform(self, values: np.ndarray) -> np.ndarray:
        codes = self.codes(values)
        if self.binary:
            bits = (codes[..., None] >> np.arange(self.width)) & 1
            return bits.astype(np.float32)
        return np.eye(len(self.categories), dtype=np.float32)[codes]

    def inverse(self, encoded: np.ndarray) -> np.ndarray:
        encoded = np.asarray(encoded)
        if self.binary:
            bits = (encoded > 0.5).astype(np.int64)
            codes = (bits << np.arange(self.width)).sum(axis=-1)
            codes = np.minimum(codes, len(self.categories) - 1)
        else:
            codes = encoded.argmax(axis=-1)
        lookup = np.empty(len(self.categories), dtype=object)
        lookup[:] = self.categories
        return lookup[codes]

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "discrete",
            "name": self.name,
            "binary_encoder_cutoff": self.binary_encoder_cutoff,
            "categories": self.categories,
        }

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> DiscreteEncoder:
        enc = cls(state["binary_encoder_cutoff"], state["name"])
        enc._set_categories(list(state["categories"]))
        return enc


VariableEncoder = ContinuousEncoder | DiscreteEncoder


def _output_type(encoder: VariableEncoder) -> OutputType:
    if isinstance(encoder, ContinuousEncoder):
        return OutputType.CONTINUOUS
    return OutputType.DISCRETE


def _all_numeric(encoders: Sequence[VariableEncoder]) -> bool:
    return all(isinstance(e, ContinuousEncoder) or e.numeric for e in encoders)


def _names(names: Sequence[Any] | None, kind: str, count: int) -> list[str]:
    """Display names of ``count`` variables: the given ones, or "feature 0", ..."""
    if names is None:
        return [f"{kind} {i}" for i in range(count)]
    return [str(name) for name in names]


def encoder_from_json(state: dict[str, Any]) -> VariableEncoder:
    kinds = {"continuous": ContinuousEncoder, "discrete": DiscreteEncoder}
    if state.get("type") not in kinds:
        raise SerializationError(f"Unknown encoder type {state.get('type')!r} in model file.")
    return kinds[state["type"]].from_json(state)


def _make_encoder(kind: OutputType, name: str, config_like: dict[str, Any]) -> VariableEncoder:
    if kind == OutputType.CONTINUOUS:
        return ContinuousEncoder(
            config_like["normalization"], config_like["apply_feature_scaling"], name
        )
    return DiscreteEncoder(config_like["binary_encoder_cutoff"], name)


def _slices(encoders: Sequence[VariableEncoder]) -> list[OutputSlice]:
    out, start = [], 0
    for enc in encoders:
        out.append(OutputSlice(start, enc.width, enc.activation))
        start += enc.width
    return out


@dataclass
class EncodedData:
    """A dataset in the networks' representation (float32), before moving to a device.

    ``attributes`` and ``additional_attributes`` are None when the model has none
    (absence is decided when the encoder is built, never NaN-filled).
    """

    attributes: np.ndarray | None  # (N, A_enc)
    additional_attributes: np.ndarray | None  # (N, 2 * continuous features)
    features: np.ndarray  # (N, T, F_enc), zero after each series' end
    lengths: np.ndarray  # (N,) int64


class DataEncoder:
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
    ):
        self.attribute_encoders = attribute_encoders
        self.feature_encoders = feature_encoders
        self.additional_encoders = additional_encoders
        self.max_sequence_len = max_sequence_len
        self.variable_length = variable_length
        self.normalization = normalization
        self.continuous_features = [
            i for i, e in enumerate(feature_encoders) if isinstance(e, ContinuousEncoder)
        ]

    # ----- layout ---------------------------------------------------------------------
    @property
    def attribute_slices(self) -> list[OutputSlice] | None:
        return None if self.attribute_encoders is None else _slices(self.attribute_encoders)

    @property
    def additional_slices(self) -> list[OutputSlice] | None:
        return None if self.additional_encoders is None else _slices(self.additional_encoders)

    @property
    def feature_slices(self) -> list[OutputSlice]:
        slices = _slices(self.feature_encoders)
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
        return [_output_type(e) for e in self.attribute_encoders]

    @property
    def feature_types(self) -> list[OutputType]:
        """Each feature's `OutputType`."""
        return [_output_type(e) for e in self.feature_encoders]

    @property
    def numeric_attributes(self) -> bool:
        """Whether every attribute is a number (continuous, or numeric categories)."""
        return self.attribute_encoders is not None and _all_numeric(self.attribute_encoders)

    @property
    def numeric_features(self) -> bool:
        """Whether every feature is a number (continuous, or numeric categories)."""
        return _all_numeric(self.feature_encoders)

    @property
    def attribute_dim(self) -> int:
        return sum(s.width for s in self.attribute_slices or [])

    @property
    def additional_dim(self) -> int:
        return sum(s.width for s in self.additional_slices or [])

    @property
    def feature_dim(self) -> int:
        return sum(s.width for s in self.feature_slices)

    # ----- fitting --------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        config: Any,
        features: list[np.ndarray],
        feature_types: list[OutputType],
        attributes: np.ndarray | None,
        attribute_types: list[OutputType] | None,
        feature_names: Sequence[Any] | None = None,
        attribute_names: Sequence[Any] | None = None,
    ) -> DataEncoder:
        """Learn every encoder from validated training data (see `model.py`).

        The names (e.g. DataFrame columns; default "feature 0", ...) name the variables
        in error messages, also after the model is saved and loaded.
        """
        settings = {
            "normalization": config.normalization,
            "apply_feature_scaling": config.apply_feature_scaling,
            "binary_encoder_cutoff": config.binary_encoder_cutoff,
        }
        stacked = np.concatenate(features, axis=0)  # (sum T_i, F)
        feature_names = _names(feature_names, "feature", len(feature_types))
        feature_encoders = [
            _make_encoder(kind, feature_names[i], settings).fit(stacked[:, i])
            for i, kind in enumerate(feature_types)
        ]
        attribute_encoders = None
        if attributes is not None:
            attribute_names = _names(attribute_names, "attribute", len(attribute_types))
            attribute_encoders = [
                _make_encoder(kind, attribute_names[i], settings).fit(attributes[:, i])
                for i, kind in enumerate(attribute_types)
            ]
        lengths = np.array([len(f) for f in features])
        variable_length = bool((lengths != config.max_sequence_len).any())
        encoder = cls(
            attribute_encoders,
            feature_encoders,
            None,
            config.max_sequence_len,
            variable_length,
            config.normalization,
        )
        if config.apply_example_scaling and encoder.continuous_features:
            mid, half = encoder._midpoints_and_half_ranges(features)
            encoder.additional_encoders = []
            for j, i in enumerate(encoder.continuous_features):
                for part, values in (("midpoint", mid[:, j]), ("half-range", half[:, j])):
                    # Always scaled: midpoints and half-ranges are internal quantities.
                    enc = ContinuousEncoder(
                        config.normalization, True, f"{feature_names[i]} {part}"
                    )
                    encoder.additional_encoders.append(enc.fit(values))
        return encoder

    def mismatch_problems(
        self, features: list[np.ndarray], attributes: np.ndarray | None
    ) -> list[str]:
        """Why data given to continue training does not fit these encoders ([] if it does).

        Continued training must see the variables the encoders were fitted on: the same
        number of features and attributes, fixed-length series for a fixed-length model,
        and continuous values within the fitted range widened by one range (further out
        the networks' output activations cannot represent them).

        Example:
            >>> from dgan import DGANConfig
            >>> config = DGANConfig(max_sequence_len=2, sample_len=1)
            >>> enc = DataEncoder.fit(config, [np.zeros((2, 1)), np.ones((2, 1))],
            ...                       [OutputType.CONTINUOUS], None, None)
            >>> enc.mismatch_problems([np.zeros((2, 2))], None)[0][:44]
            'The model was trained on 1 feature(s); this '
        """
        fix = "train a new DGAN on this data, or continue with data shaped like the first"
        problems = []
        n_features = len(self.feature_encoders)
        widths = {f.shape[1] for f in features}
        if widths != {n_features}:
            problems.append(
                f"The model was trained on {n_features} feature(s); this data has "
                f"{sorted(widths)}: {fix}."
            )
        n_attributes = 0 if self.attribute_encoders is None else len(self.attribute_encoders)
        given = 0 if attributes is None else attributes.shape[1]
        if given != n_attributes:
            problems.append(
                f"The model was trained on {n_attributes} attribute(s); this data has {given}: "
                f"{fix}."
            )
        if not self.variable_length and any(len(f) != self.max_sequence_len for f in features):
            problems.append(
                "The model was trained on series of one length "
                f"({self.max_sequence_len}); this data has shorter ones, which it would pad "
                f"with zeros as if they were data: {fix}."
            )
        if problems:
            return problems
        stacked = np.concatenate(features, axis=0)
        columns = [("feature", e, stacked[:, i]) for i, e in enumerate(self.feature_encoders)]
        if attributes is not None:
            columns += [
                ("attribute", e, attributes[:, i]) for i, e in enumerate(self.attribute_encoders)
            ]
        for kind, enc, values in columns:
            if isinstance(enc, ContinuousEncoder) and enc.apply_scaling:
                far = enc.outside_range(values.astype(np.float64), tolerance=1.0)
                if far.any():
                    problems.append(
                        f"{kind} {enc.name!r} has {int(far.sum())} value(s) far outside the "
                        f"range the model was fitted on [{enc.min:g}, {enc.max:g}]: {fix}."
                    )
        return problems

    def _scaled_continuous(self, series: np.ndarray) -> np.ndarray:
        """(T, C) globally scaled continuous features of one series."""
        return np.stack(
            [self.feature_encoders[i].transform(series[:, i]) for i in self.continuous_features],
            axis=1,
        ).astype(np.float64)

    def _midpoints_and_half_ranges(self, features: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        scaled = [self._scaled_continuous(f) for f in features]
        lo = np.stack([s.min(axis=0) for s in scaled])  # (N, C)
        hi = np.stack([s.max(axis=0) for s in scaled])
        return (hi + lo) / 2.0, (hi - lo) / 2.0

    # ----- transform ------------------------------------------------------------------
    def transform(self, features: list[np.ndarray], attributes: np.ndarray | None) -> EncodedData:
        """Encode validated data (every series no longer than max_sequence_len)."""
        n, t_max = len(features), self.max_sequence_len
        lengths = np.array([len(f) for f in features], dtype=np.int64)
        encoded = np.zeros((n, t_max, self.feature_dim), dtype=np.float32)
        additional = None
        if self.additional_encoders is not None:
            mid, half = self._midpoints_and_half_ranges(features)
        for k, series in enumerate(features):
            length = len(series)
            columns = []
            for i, enc in enumerate(self.feature_encoders):
                col = enc.transform(series[:, i])
                columns.append(col[:, None] if col.ndim == 1 else col)
            block = np.concatenate(columns, axis=1)
            if self.additional_encoders is not None:
                lo, span = mid[k] - half[k], 2.0 * half[k]  # (C,)
                z = self._scaled_continuous(series)  # (T_k, C)
                # A constant series has no range: put it mid-range, the half-range is 0.
                unit = np.where(span > 0, (z - lo) / np.where(span > 0, span, 1.0), 0.5)
                scaled = unit if self.normalization == Normalization.ZERO_ONE else unit * 2 - 1
                starts = [s.start for s in _slices(self.feature_encoders)]
                for j, i in enumerate(self.continuous_features):
                    block[:, starts[i]] = scaled[:, j]
            encoded[k, :length, : block.shape[1]] = block
            if self.variable_length:
                flag = self.generation_flag_column
                encoded[k, : length - 1, flag] = 1.0  # continues
                encoded[k, length - 1, flag + 1] = 1.0  # ends here
        if self.additional_encoders is not None:
            parts = []
            for j in range(len(self.continuous_features)):
                parts.append(self.additional_encoders[2 * j].transform(mid[:, j]))
                parts.append(self.additional_encoders[2 * j + 1].transform(half[:, j]))
            additional = np.stack(parts, axis=1).astype(np.float32)
        return EncodedData(self.transform_attributes(attributes, n), additional, encoded, lengths)

    def transform_attributes(self, attributes: np.ndarray | None, n: int) -> np.ndarray | None:
        if self.attribute_encoders is None:
            return None
        columns, problems = [], []
        for i, enc in enumerate(self.attribute_encoders):
            try:
                col = enc.transform(attributes[:, i])
            except DataError as e:  # unknown categories: report every attribute at once
                problems.append(str(e))
                continue
            columns.append(col[:, None] if col.ndim == 1 else col)
        raise_all(problems, DataError, "the attributes")
        return np.concatenate(columns, axis=1).reshape(n, -1).astype(np.float32)

    # ----- inverse --------------------------------------------------------------------
    def lengths_from_flags(self, features: np.ndarray) -> np.ndarray:
        """Series lengths: up to and including the first step where `series_ends`."""
        n, t_max = features.shape[:2]
        if not self.variable_length:
            return np.full(n, t_max, dtype=np.int64)
        flag = self.generation_flag_column
        ends = series_ends(features[:, :, flag], features[:, :, flag + 1])  # (N, T)
        ends[:, -1] = True
        return ends.argmax(axis=1).astype(np.int64) + 1

    def inverse(self, data: EncodedData) -> tuple[np.ndarray | None, list[np.ndarray]]:
        """Decode to (attributes (N, A) or None, list of (T_i, F) feature arrays)."""
        n = data.features.shape[0]
        attributes = None
        if self.attribute_encoders is not None:
            attributes = self._inverse_columns(
                self.attribute_encoders, self.attribute_slices, data.attributes, (n,)
            )
        lengths = self.lengths_from_flags(data.features)
        feats = data.features.astype(np.float64)
        if self.additional_encoders is not None:
            feats = feats.copy()
            starts = [s.start for s in _slices(self.feature_encoders)]
            for j, i in enumerate(self.continuous_features):
                mid = self.additional_encoders[2 * j].inverse(data.additional_attributes[:, 2 * j])
                half = self.additional_encoders[2 * j + 1].inverse(
                    data.additional_attributes[:, 2 * j + 1]
                )
                half = np.maximum(half, 0.0)  # a generated negative half-range means zero
                col = feats[:, :, starts[i]]
                unit = col if self.normalization == Normalization.ZERO_ONE else (col + 1) / 2
                # Back to the globally scaled space, which spans the normalization range by
                # construction: a generated midpoint +/- half-range may overshoot it (e.g.
                # negative rainfall), so clip there. The feature encoder does the rest.
                z = (mid - half)[:, None] + unit * (2.0 * half)[:, None]
                low = 0.0 if self.normalization == Normalization.ZERO_ONE else -1.0
                feats[:, :, starts[i]] = np.clip(z, low, 1.0)
        decoded = self._inverse_columns(
            self.feature_encoders, _slices(self.feature_encoders), feats, feats.shape[:2]
        )  # (N, T, F)
        return attributes, [decoded[k, : lengths[k]] for k in range(n)]

    @staticmethod
    def _inverse_columns(encoders, slices, encoded, lead_shape) -> np.ndarray:
        columns = [
            enc.inverse(
                encoded[..., s.start]
                if isinstance(enc, ContinuousEncoder)
                else encoded[..., s.start : s.start + s.width]
            )
            for enc, s in zip(encoders, slices, strict=True)
        ]
        if all(isinstance(e, ContinuousEncoder) for e in encoders):
            return np.stack(columns, axis=-1).astype(np.float64)
        out = np.empty((*lead_shape, len(encoders)), dtype=object)
        for i, col in enumerate(columns):
            out[..., i] = col
        return out

    # ----- state ----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "attribute_encoders": None
            if self.attribute_encoders is None
            else [e.to_json() for e in self.attribute_encoders],
            "feature_encoders": [e.to_json() for e in self.feature_encoders],
            "additional_encoders": None
            if self.additional_encoders is None
            else [e.to_json() for e in self.additional_encoders],
            "max_sequence_len": self.max_sequence_len,
            "variable_length": self.variable_length,
            "normalization": self.normalization.name,
        }

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> DataEncoder:
        def many(key):
            return None if state[key] is None else [encoder_from_json(s) for s in state[key]]

        return cls(
            many("attribute_encoders"),
            many("feature_encoders"),
            many("additional_encoders"),
            state["max_sequence_len"],
            state["variable_length"],
            Normalization[state["normalization"]],
        )
