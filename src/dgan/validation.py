"""Checks and normalises users' training arrays before anything else touches them.

`validate_training_arrays` collects every problem and raises once; it never modifies
the caller's arrays: it returns new ones (floats for continuous variables, objects for
discrete ones) that the rest of the package may use freely.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dgan.config import OutputType
from dgan.errors import DataError, ParameterError, raise_all


@dataclass
class TrainingArrays:
    """Validated copies of the user's data, ready for encoding."""

    features: list[np.ndarray]  # N arrays of (T_i, F); float64, or object if any discrete
    feature_types: list[OutputType]
    attributes: np.ndarray | None  # (N, A); float64, or object if any discrete
    attribute_types: list[OutputType] | None


def _where(mask: np.ndarray, limit: int = 5) -> str:
    """'examples [3, 17, ...]' for the first rows where ``mask`` (N, ...) holds."""
    rows = np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1))
    shown = ", ".join(str(r) for r in rows[:limit])
    more = f", ... ({len(rows)} in all)" if len(rows) > limit else ""
    return f"example{'s' if len(rows) > 1 else ''} [{shown}{more}]"


def _as_float(values: np.ndarray) -> np.ndarray | None:
    """Values as float64, or None when some value is not a number."""
    if values.dtype == bool:
        return None
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def infer_types(columns: Sequence[np.ndarray]) -> list[OutputType]:
    """Numbers are continuous; strings, bools and other objects are discrete (gretel rule).

    Example:
        >>> infer_types([np.array([1.5, 2.0]), np.array(["a", "b"], dtype=object)])
        [<OutputType.CONTINUOUS: 1>, <OutputType.DISCRETE: 0>]
    """
    return [
        OutputType.CONTINUOUS if _as_float(col) is not None else OutputType.DISCRETE
        for col in columns
    ]


def _check_types(types, count: int, what: str, problems: list[str]) -> list[OutputType] | None:
    if types is None:
        return None
    try:
        types = [t if isinstance(t, OutputType) else OutputType[str(t).upper()] for t in types]
    except KeyError:
        problems.append(
            f"{what}_types must hold OutputType.CONTINUOUS or OutputType.DISCRETE values, "
            f"got {list(types)!r}."
        )
        return None
    if len(types) != count:
        problems.append(
            f"{what}_types has {len(types)} entries but the data has {count} {what}s; "
            f"give one OutputType per {what}."
        )
        return None
    return types


def _feature_list(features, max_len: int, problems: list[str]) -> list[np.ndarray] | None:
    if features is None:
        problems.append("features is None; pass an (examples, time, features) array.")
        return None
    # A ragged list given as np.array(list) is a 1-d object array: treat it as a list.
    ragged = isinstance(features, np.ndarray) and features.ndim == 1 and features.dtype == object
    if isinstance(features, np.ndarray) and not ragged:
        if features.ndim != 3:
            hint = " For a single feature use features[:, :, None]." if features.ndim == 2 else ""
            problems.append(
                f"features must be 3-d (examples, time steps, features), got {features.ndim}-d "
                f"shape {features.shape}.{hint}"
            )
            return None
        if features.shape[1] != max_len:
            problems.append(
                f"features have {features.shape[1]} time steps but max_sequence_len={max_len}; "
                "set max_sequence_len to the series length, or pass a list of (time, features) "
                "arrays for variable-length series."
            )
            return None
        return [np.array(f) for f in features]  # copies: the caller's array is never touched
    if not isinstance(features, (list, tuple)) and not ragged:
        problems.append(
            f"features must be a 3-d numpy array or a list of 2-d arrays, got {type(features)}."
        )
        return None
    series = [np.array(f) for f in features]
    bad_ndim = [i for i, s in enumerate(series) if s.ndim != 2]
    if bad_ndim:
        problems.append(
            f"every series must be a 2-d (time steps, features) array; examples {bad_ndim[:5]} "
            "are not (use s.reshape(-1, 1) for a single feature)."
        )
        return None
    widths = {s.shape[1] for s in series}
    if len(widths) > 1:
        problems.append(
            f"series have different numbers of features {sorted(widths)}; "
            "every series needs the same feature columns."
        )
        return None
    too_long = [i for i, s in enumerate(series) if len(s) > max_len]
    if too_long:
        longest = max(len(series[i]) for i in too_long)
        problems.append(
            f"{len(too_long)} series are longer than max_sequence_len={max_len} (the longest "
            f"has {longest} steps, e.g. examples {too_long[:5]}); raise max_sequence_len or "
            "split those series."
        )
    empty = [i for i, s in enumerate(series) if len(s) == 0]
    if empty:
        problems.append(f"examples {empty[:5]} have no time steps; drop them.")
    return series


def validate_training_arrays(
    features,
    feature_types,
    attributes,
    attribute_types,
    max_sequence_len: int,
) -> TrainingArrays:
    """Check the user's data; return validated copies or raise one error listing all.

    Example:
        >>> arrays = validate_training_arrays(np.zeros((2, 4, 1)), None, None, None, 4)
        >>> arrays.feature_types
        [<OutputType.CONTINUOUS: 1>]
    """
    problems: list[str] = []
    series = _feature_list(features, max_sequence_len, problems)
    if series is not None and len(series) < 2:
        problems.append(
            f"got {len(series)} example(s); a GAN needs at least 2 examples to train "
            "(in practice hundreds)."
        )
        series = None
    n_features = series[0].shape[1] if series else 0
    feature_types = _check_types(feature_types, n_features, "feature", problems) if series else None

    attrs = None
    if attributes is not None:
        attrs = np.array(attributes)  # a copy
        if attrs.ndim != 2:
            hint = " For a single attribute use attributes[:, None]." if attrs.ndim == 1 else ""
            problems.append(
                f"attributes must be 2-d (examples, attributes), got shape {attrs.shape}.{hint}"
            )
            attrs = None
        elif series is not None and attrs.shape[0] != len(series):
            problems.append(
                f"attributes have {attrs.shape[0]} rows but features have {len(series)} "
                "examples; pass one attribute row per example."
            )
            attrs = None
    attribute_types = (
        _check_types(attribute_types, attrs.shape[1], "attribute", problems)
        if attrs is not None
        else None
    )
    raise_all(problems, DataError if not _only_parameter(problems) else ParameterError, "input")

    stacked = np.concatenate(series, axis=0)  # (sum T_i, F)
    if feature_types is None:
        feature_types = infer_types([stacked[:, i] for i in range(n_features)])
    features_out = _convert_series(series, feature_types, problems)
    if attrs is not None:
        if attribute_types is None:
            attribute_types = infer_types([attrs[:, i] for i in range(attrs.shape[1])])
        attrs = _convert_attributes(attrs, attribute_types, problems)
    raise_all(problems, DataError, "input")
    return TrainingArrays(features_out, feature_types, attrs, attribute_types)


def _only_parameter(problems: list[str]) -> bool:
    return all("_types" in p for p in problems)


def _convert_series(series, types, problems) -> list[np.ndarray]:
    all_continuous = all(t == OutputType.CONTINUOUS for t in types)
    out = []
    for s in series:
        as_float = _as_float(s) if all_continuous else None
        out.append(as_float if as_float is not None else np.array(s, dtype=object))
    for i, t in enumerate(types):
        if t != OutputType.CONTINUOUS:
            continue
        values = [_as_float(s[:, i]) for s in out]
        if any(v is None for v in values):
            problems.append(
                f"feature {i} is declared continuous but holds non-numeric values; "
                "declare it OutputType.DISCRETE or convert it to numbers."
            )
            continue
        infinite = np.array([np.isinf(v).any() for v in values])
        if infinite.any():
            problems.append(
                f"feature {i} has infinite values in {_where(infinite)}; replace or drop them."
            )
        for s, v in zip(out, values, strict=True):
            s[:, i] = v
    return out


def _convert_attributes(attrs, types, problems) -> np.ndarray:
    all_continuous = all(t == OutputType.CONTINUOUS for t in types)
    out = np.empty(attrs.shape, dtype=np.float64 if all_continuous else object)
    for i, t in enumerate(types):
        if t == OutputType.DISCRETE:
            out[:, i] = attrs[:, i]
            continue
        values = _as_float(attrs[:, i])
        if values is None:
            problems.append(
                f"attribute {i} is declared continuous but holds non-numeric values; "
                "declare it OutputType.DISCRETE or convert it to numbers."
            )
            continue
        if np.isnan(values).any():
            problems.append(
                f"attribute {i} is continuous and has NaN in {_where(np.isnan(values))}; fill "
                "or drop those examples, or declare the attribute discrete (NaN becomes a "
                "category)."
            )
        if np.isinf(values).any():
            problems.append(
                f"attribute {i} has infinite values in {_where(np.isinf(values))}; "
                "replace or drop them."
            )
        out[:, i] = values
    return out
