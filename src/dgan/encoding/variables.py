"""Per-variable encoders: one attribute column or one feature channel each.

* `ContinuousEncoder` scales to [0, 1] or [-1, 1] (the `Normalization`), or passes the
  values through when feature scaling is off (then they must already lie in range). A
  variable whose values span orders of magnitude is scaled on a signed log scale first
  (`dgan.encoding.log_scale`): on a linear scale its quiet series are rounding errors of
  its loud ones.
* `DiscreteEncoder` learns the categories (any hashable values: numbers, strings, bools;
  NaN/None is one more category) and encodes them one-hot, or as binary bits when there
  are more categories than ``binary_encoder_cutoff``.

Every encoder has an exact inverse and a JSON-native state (`to_json`/`from_json`), as
models are saved without pickle. `encoding.DataEncoder` combines them for a dataset.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dgan.config import Normalization, OutputType
from dgan.encoding.log_scale import from_log, scale_floor, to_log
from dgan.errors import DataError, SerializationError, raise_all

# Activation kinds the generator's fused output head applies to a slice of its output.
SIGMOID, TANH, SOFTMAX, BITS = "sigmoid", "tanh", "softmax", "bits"


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

    ``log_scale``: "auto" scales values that span orders of magnitude on the signed log
    scale `to_log` before the range, waves around 0 excepted (`scale_floor` decides when
    fitting), True always, False never (gretel's encoding). ``min`` and ``max`` stay in the
    variable's own units.

    Example:
        >>> enc = ContinuousEncoder(Normalization.ZERO_ONE).fit(np.array([2.0, 4.0, 6.0]))
        >>> enc.transform(np.array([2.0, 6.0]))
        array([0., 1.], dtype=float32)
        >>> enc.inverse(np.array([0.5], dtype=np.float32))
        array([4.])
        >>> wide = ContinuousEncoder(Normalization.ZERO_ONE).fit(np.geomspace(0.01, 1e4, 50))
        >>> wide.log_floor is not None  # six orders of magnitude: a log scale
        True
        >>> wide.transform(np.array([0.1, 10.0, 1000.0])).round(2)  # evenly spaced, not 0, 0, 0.1
        array([0.11, 0.46, 0.82], dtype=float32)
    """

    def __init__(
        self,
        normalization: Normalization,
        apply_scaling: bool = True,
        name: str = "",
        log_scale: bool | str = "auto",
    ):
        self.normalization = normalization
        self.apply_scaling = apply_scaling
        self.name = name
        self.log_scale = log_scale
        self.min: float | None = None
        self.max: float | None = None
        self.log_floor: float | None = None

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
        values = np.asarray(values)
        if values.dtype not in (np.float32, np.float64):  # float32 to float64 is exact
            values = values.astype(np.float64)
        missing = np.isnan(values)
        if missing.any():
            values = values[~missing]
        if values.size == 0:
            raise DataError(f"Variable {self.name!r} has no values to learn a range from.")
        self.min, self.max = float(values.min()), float(values.max())
        if self.apply_scaling:
            self.log_floor = scale_floor(values, self.log_scale)
        if not self.apply_scaling and (self.min < self.low or self.max > 1.0):
            raise DataError(
                f"Variable {self.name!r} spans [{self.min:g}, {self.max:g}] but "
                f"apply_feature_scaling=False requires values in [{self.low:g}, 1]; "
                "set apply_feature_scaling=True or rescale the data."
            )
        return self

    def transform(self, values: np.ndarray) -> np.ndarray:
        unit = np.array(values, dtype=np.float64)  # a copy, worked on in place
        if not self.apply_scaling:
            return unit.astype(np.float32)
        low, high = self.min, self.max
        if self.log_floor is not None:
            unit = to_log(unit, self.log_floor)
            low, high = (float(v) for v in to_log(np.array([low, high]), self.log_floor))
        # Halves keep the arithmetic finite for data spanning the whole float64 range.
        half_span = high / 2 - low / 2
        if half_span > 0:
            unit /= 2
            unit -= low / 2
            unit /= half_span
        else:
            unit *= 0.0
        if self.normalization != Normalization.ZERO_ONE:  # as _from_unit
            unit *= 2.0
            unit -= 1.0
        return unit.astype(np.float32)

    def inverse(self, encoded: np.ndarray) -> np.ndarray:
        encoded = np.asarray(encoded, dtype=np.float64)
        if not self.apply_scaling:
            return encoded
        unit = self._to_unit(encoded)
        if self.log_floor is None:
            return (1.0 - unit) * self.min + unit * self.max  # finite wherever min, max are
        low, high = to_log(np.array([self.min, self.max]), self.log_floor)
        return from_log((1.0 - unit) * low + unit * high, self.log_floor)

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
            "log_scale": self.log_scale,
            "log_floor": self.log_floor,
        }

    @classmethod
    def from_json(cls, state: dict[str, Any]) -> ContinuousEncoder:
        # Files from before the log scale hold neither key: they encoded linearly.
        log_scale = state.get("log_scale", False)
        enc = cls(
            Normalization[state["normalization"]], state["apply_scaling"], state["name"], log_scale
        )
        enc.min, enc.max = state["min"], state["max"]
        enc.log_floor = state.get("log_floor")
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
        groups = _groups(values)
        if groups is None:
            scalars = (_to_json_scalar(v) for v in np.asarray(values, dtype=object).ravel())
        else:
            codes, representatives = groups
            scalars = [_to_json_scalar(v) for v in representatives]
            scalars += [None] if (codes < 0).any() else []
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
        groups = _groups(values)
        if groups is None:
            objects = np.asarray(values, dtype=object).ravel()
            groups = np.arange(objects.size), objects
        codes, representatives = groups
        keys = [_category_key(_to_json_scalar(v)) for v in representatives]
        if (codes < 0).any():
            keys.append(None)  # code -1: missing
        unknown = sorted({str(k) for k in keys if k not in self._index})
        if unknown:
            raise DataError(
                f"Variable {self.name!r} has values never seen in training: {unknown[:10]}; "
                f"known categories are {[str(c) for c in self.categories[:20]]}. Use only "
                "those: a trained model cannot learn new categories."
            )
        index = np.array([self._index[k] for k in keys], dtype=np.int64)
        return index[codes].reshape(np.shape(values))

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

# Kinds of object columns (pandas' infer_dtype, missing values aside) in which values are
# equal exactly when their categories' dictionary keys are: a hash table groups them as
# the dictionary would (unlike 1 and True, or 0.0 and -0.0, which it merges).
_HASHABLE_KINDS = ("string", "integer", "boolean")


def _groups(values) -> tuple[np.ndarray, np.ndarray] | None:
    """Equal values grouped in one vectorised pass: ``(codes, representatives)`` with
    code -1 for missing values (None, NaN), or None where only a value-by-value pass
    groups them as `DiscreteEncoder`'s dictionary does.

    Example:
        >>> codes, values = _groups(np.array(["b", "a", None, "b"], dtype=object))
        >>> codes.tolist(), values.tolist()
        ([0, 1, -1, 0], ['b', 'a'])
        >>> _groups(np.array([1, True], dtype=object)) is None  # 1 and True differ here
        True
    """
    values = np.asarray(values)
    flat = values.ravel()
    kind = flat.dtype.kind
    if kind in "US":
        representatives, codes = np.unique(flat, return_inverse=True)
        return codes.reshape(-1), representatives
    if kind in "iub" or (flat.dtype == np.float64 and not (np.signbit(flat) & (flat == 0)).any()):
        return pd.factorize(flat)  # NaN: code -1, missing
    if kind != "O" or pd.api.types.infer_dtype(flat, skipna=True) not in _HASHABLE_KINDS:
        return None
    codes, representatives = pd.factorize(flat)
    missing = codes < 0
    if missing.any() and not all(_is_missing(v) for v in flat[missing]):
        return None  # pd.NA, NaT, ...: categories of their own here, missing to pandas
    return codes, representatives


def output_type(encoder: VariableEncoder) -> OutputType:
    if isinstance(encoder, ContinuousEncoder):
        return OutputType.CONTINUOUS
    return OutputType.DISCRETE


def all_numeric(encoders: Sequence[VariableEncoder]) -> bool:
    return all(isinstance(e, ContinuousEncoder) or e.numeric for e in encoders)


def variable_names(names: Sequence[Any] | None, kind: str, count: int) -> list[str]:
    """Display names of ``count`` variables: the given ones, or "feature 0", ..."""
    if names is None:
        return [f"{kind} {i}" for i in range(count)]
    return [str(name) for name in names]


def encoder_from_json(state: dict[str, Any]) -> VariableEncoder:
    kinds = {"continuous": ContinuousEncoder, "discrete": DiscreteEncoder}
    if state.get("type") not in kinds:
        raise SerializationError(f"Unknown encoder type {state.get('type')!r} in model file.")
    return kinds[state["type"]].from_json(state)


def class_codes(encoders, values: np.ndarray) -> dict[int, tuple[str, np.ndarray, int]]:
    """Each discrete variable's name, category index per row of ``values`` (rows,
    variables) and category count, by the variable's position.

    Example:
        >>> enc = DiscreteEncoder(150, "c").fit(np.array(["a", "b"], dtype=object))
        >>> class_codes([enc], np.array([["b"], ["a"]], dtype=object))[0][1].tolist()
        [1, 0]
    """
    return {
        i: (enc.name, enc.codes(values[:, i]), len(enc.categories))
        for i, enc in enumerate(encoders or [])
        if isinstance(enc, DiscreteEncoder)
    }


def variable_settings(config: Any) -> dict[str, Any]:
    """The config fields `make_encoder` reads, by name.

    Example:
        >>> from dgan import DGANConfig
        >>> sorted(variable_settings(DGANConfig(max_sequence_len=4, sample_len=2)))
        ['apply_feature_scaling', 'binary_encoder_cutoff', 'log_scale', 'normalization']
    """
    names = ("normalization", "apply_feature_scaling", "binary_encoder_cutoff", "log_scale")
    return {name: getattr(config, name) for name in names}


def fit_variables(
    kinds: Sequence[OutputType], names: Sequence[str], values: np.ndarray, settings: dict
) -> list[VariableEncoder]:
    """One encoder per column of ``values`` (rows, variables), fitted on the whole column:
    the range of a continuous variable, the categories of a discrete one. ``settings``
    holds the config fields `make_encoder` reads.

    Example:
        >>> settings = {"normalization": Normalization.ZERO_ONE, "apply_feature_scaling": True,
        ...             "binary_encoder_cutoff": 150}
        >>> values = np.array([[1.0, "a"], [3.0, "b"]], dtype=object)
        >>> [type(e).__name__ for e in fit_variables(
        ...     [OutputType.CONTINUOUS, OutputType.DISCRETE], ["x", "y"], values, settings)]
        ['ContinuousEncoder', 'DiscreteEncoder']
    """
    return [
        make_encoder(kind, names[i], settings).fit(values[:, i]) for i, kind in enumerate(kinds)
    ]


def make_encoder(kind: OutputType, name: str, config_like: dict[str, Any]) -> VariableEncoder:
    if kind == OutputType.CONTINUOUS:
        return ContinuousEncoder(
            config_like["normalization"],
            config_like["apply_feature_scaling"],
            name,
            config_like.get("log_scale", "auto"),
        )
    return DiscreteEncoder(config_like["binary_encoder_cutoff"], name)


def output_slices(encoders: Sequence[VariableEncoder]) -> list[OutputSlice]:
    out, start = [], 0
    for enc in encoders:
        out.append(OutputSlice(start, enc.width, enc.activation))
        start += enc.width
    return out


def inverse_columns(encoders, slices, encoded: np.ndarray, lead_shape: tuple) -> np.ndarray:
    """Decode each variable's columns of ``encoded`` (..., width): (*lead_shape, variables),
    float64 where every variable is continuous, else object (categories keep their type).

    Example:
        >>> enc = ContinuousEncoder(Normalization.ZERO_ONE, True, "x").fit(np.array([0.0, 4.0]))
        >>> inverse_columns([enc], output_slices([enc]), np.array([[0.25]]), (1,)).tolist()
        [[1.0]]
    """
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


def transform_columns(encoders, values: np.ndarray, n: int) -> np.ndarray:
    """(n, width) every variable's encoding of ``values`` (n, variables), float32; the
    problems of all variables (unknown categories) in one DataError.

    Example:
        >>> enc = ContinuousEncoder(Normalization.ZERO_ONE, True, "x").fit(np.array([0.0, 4.0]))
        >>> transform_columns([enc], np.array([[1.0], [4.0]]), 2).ravel().tolist()
        [0.25, 1.0]
    """
    columns, problems = [], []
    for i, enc in enumerate(encoders):
        try:
            col = enc.transform(values[:, i])
        except DataError as e:  # unknown categories: report every variable at once
            problems.append(str(e))
            continue
        columns.append(col[:, None] if col.ndim == 1 else col)
    raise_all(problems, DataError, "the attributes")
    return np.concatenate(columns, axis=1).reshape(n, -1).astype(np.float32)
