"""Checks and normalises users' training arrays before anything else touches them.

`validate_training_arrays` collects every problem and raises once; it never modifies
the caller's arrays: it returns the features as `SeriesRows` (floats for continuous
variables, objects for discrete ones) and new attribute arrays. Float features of one
length are not copied: the rows are a read-only view of the caller's array, so a
million series cost no second copy; everything downstream makes new arrays. Values themselves (NaN,
inf, non-numeric values in continuous variables) are checked by
`dgan.tabular.missing.check_finite`, sequence lengths by `too_long_problem` (which
`dgan.tabular.frames` uses too), so that each check lives in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dgan.config import OutputType
from dgan.errors import DataError, ParameterError, SequenceLengthError, raise_all
from dgan.series import SeriesRows
from dgan.tabular.messages import SHOW, float_values, preview
from dgan.tabular.missing import check_finite


@dataclass
class TrainingArrays:
    """Validated copies of the user's data, ready for encoding."""

    features: SeriesRows  # N series of (T_i, F); floats, or objects if any discrete
    feature_types: list[OutputType]
    attributes: np.ndarray | None  # (N, A); float64, or object if any discrete
    attribute_types: list[OutputType] | None
    feature_names: Sequence[str | int] | None = None  # for messages; None: "feature 0", ...
    attribute_names: Sequence[str | int] | None = None
    example_names: Sequence[str] | None = None  # for messages; None: by index


def infer_types(columns: Sequence[np.ndarray]) -> list[OutputType]:
    """Numbers are continuous; strings, bools and other objects are discrete (gretel rule).

    Example:
        >>> infer_types([np.array([1.5, 2.0]), np.array(["a", "b"], dtype=object)])
        [<OutputType.CONTINUOUS: 1>, <OutputType.DISCRETE: 0>]
        >>> infer_types([np.array([True, 2.5], dtype=object)])  # a bool among numbers
        [<OutputType.DISCRETE: 0>]
    """
    return [
        OutputType.CONTINUOUS
        if col.dtype.kind in "fiu" or float_values(col) is not None  # numbers at a glance
        else OutputType.DISCRETE
        for col in columns
    ]


def too_long_problem(
    lengths, max_sequence_len: int, labels: Sequence[str] | None = None, *, wide: bool = False
) -> str | None:
    """The message for series longer than ``max_sequence_len``, or None if there are none.

    The one check of series lengths, for arrays and frames alike. ``labels`` name the
    examples ("'sensor-3'", "chunk 2"); without them, indices are shown. ``wide``: the
    lengths are the time-step columns of a WIDE frame.

    Example:
        >>> too_long_problem([3, 6], 4)[:60]
        '1 example(s) are longer than max_sequence_len=4: 1 (6 rows).'
        >>> too_long_problem([3, 4], 4) is None
        True
    """
    lengths = np.asarray(lengths)
    too_long = np.flatnonzero(lengths > max_sequence_len)
    if not too_long.size:
        return None
    longest = int(lengths.max())
    if wide:
        return (
            f"The WIDE frame has {longest} time-step columns (feature_columns) but "
            f"max_sequence_len={max_sequence_len}; raise max_sequence_len to at least "
            f"{longest} (a multiple of sample_len), or pass fewer feature_columns."
        )
    named = ", ".join(
        f"{labels[k] if labels is not None else k} ({lengths[k]} rows)" for k in too_long[:SHOW]
    )
    more = f" and {too_long.size - SHOW} more" if too_long.size > SHOW else ""
    return (
        f"{too_long.size} example(s) are longer than max_sequence_len={max_sequence_len}: "
        f"{named}{more}. Raise max_sequence_len to at least {longest} (a multiple of "
        "sample_len), or split these series into shorter ones"
        + (" with their own example ids." if labels is not None else ".")
    )


def raise_length_problems(problems: list[str], error: type[DataError], what: str) -> None:
    """`raise_all`, as a `SequenceLengthError` when every problem is about lengths.

    gretel raises a ParameterError when data is longer than max_sequence_len, dgan a
    DataError; `SequenceLengthError` is both, so either ``except`` catches it.
    """
    if problems and all("max_sequence_len" in p for p in problems):
        error = SequenceLengthError
    raise_all(problems, error, what)


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


def _read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through (the caller's data stays theirs)."""
    view = array.view()
    view.flags.writeable = False
    return view


def _feature_list(
    features, max_len: int, problems: list[str], labels: Sequence[str] | None = None
) -> SeriesRows | None:
    if features is None:
        problems.append("features is None; pass an (examples, time, features) array.")
        return None
    if isinstance(features, SeriesRows):  # from a DataFrame: checked but for lengths
        if (problem := too_long_problem(features.lengths, max_len, labels)) is not None:
            problems.append(problem)
        return features
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
        return SeriesRows.from_padded(_read_only(features))  # a view, never written to
    if not isinstance(features, (list, tuple)) and not ragged:
        problems.append(
            f"features must be a 3-d numpy array or a list of 2-d arrays, got {type(features)}."
        )
        return None
    series = [np.asarray(f) for f in features]
    bad_ndim = [i for i, s in enumerate(series) if s.ndim != 2]
    if bad_ndim:
        problems.append(
            "every series must be a 2-d (time steps, features) array; examples "
            f"{preview(bad_ndim)} are not (use s.reshape(-1, 1) for a single feature)."
        )
        return None
    widths = {s.shape[1] for s in series}
    if len(widths) > 1:
        problems.append(
            f"series have different numbers of features {sorted(widths)}; "
            "every series needs the same feature columns."
        )
        return None
    rows = SeriesRows.from_list(series)  # one copy of every series
    if (problem := too_long_problem(rows.lengths, max_len, labels)) is not None:
        problems.append(problem)
    empty = np.flatnonzero(rows.lengths == 0).tolist()
    if empty:
        problems.append(f"examples {preview(empty)} have no time steps; drop them.")
    return rows


def validate_training_arrays(
    features,
    feature_types,
    attributes,
    attribute_types,
    max_sequence_len: int,
    feature_names: Sequence[str | int] | None = None,
    attribute_names: Sequence[str | int] | None = None,
    example_names: Sequence[str] | None = None,
) -> TrainingArrays:
    """Check the user's data; return it validated (see the module docstring) or raise one
    error listing all problems.

    The names only serve messages (also later ones, e.g. of missing-value repair).

    Example:
        >>> arrays = validate_training_arrays(np.zeros((2, 4, 1)), None, None, None, 4)
        >>> arrays.feature_types
        [<OutputType.CONTINUOUS: 1>]
    """
    problems: list[str] = []
    series = _feature_list(features, max_sequence_len, problems, example_names)
    if series is not None and len(series) < 2:
        problems.append(
            f"DGAN requires multiple examples to train, got {len(series)}: a GAN needs at "
            "least 2 examples to train (in practice hundreds); split long series into "
            "several shorter examples."
        )
        series = None
    n_features = series.width if series else 0
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
    error = ParameterError if _only_parameter(problems) else DataError
    raise_length_problems(problems, error, "input")

    feature_columns = [series.rows[:, i] for i in range(n_features)]
    problems += _value_type_problems(feature_columns, feature_names, "feature", feature_types)
    if feature_types is None:
        feature_types = infer_types(feature_columns)
    if attrs is not None:
        attribute_columns = [attrs[:, i] for i in range(attrs.shape[1])]
        problems += _value_type_problems(
            attribute_columns, attribute_names, "attribute", attribute_types
        )
        if attribute_types is None:
            attribute_types = infer_types(attribute_columns)
    raise_all(problems, DataError, "input")
    check_finite(  # also rejects non-numeric values in continuous variables
        attributes=attrs,
        attribute_types=attribute_types,
        features=series,
        feature_types=feature_types,
        attribute_names=attribute_names,
        feature_names=feature_names,
        example_names=example_names,
    )
    features_out = _convert_series(series, feature_types)
    if attrs is not None:
        attrs = _convert_attributes(attrs, attribute_types)
    return TrainingArrays(
        features_out,
        feature_types,
        attrs,
        attribute_types,
        feature_names,
        attribute_names,
        example_names,
    )


def _only_parameter(problems: list[str]) -> bool:
    return all("_types" in p for p in problems)


def _value_type_problems(columns, names, what: str, types) -> list[str]:
    """Values that numpy would silently coerce into something else, as problems.

    Complex numbers (the imaginary part would be lost), datetimes and time spans (they
    would become nanosecond counts), and, when types are inferred, a column of numbers
    with a few stray strings (it would become a discrete variable with one category per
    distinct number).
    """
    problems = []
    for j, values in enumerate(columns):
        name = f"{what} {names[j]!r}" if names is not None else f"{what} {j}"
        kinds = _value_kinds(values)
        if kinds & {"complex", "datetime", "timedelta"}:
            odd = ", ".join(sorted(kinds & {"complex", "datetime", "timedelta"}))
            problems.append(
                f"{name} holds {odd} values, which dgan does not model; convert them to real "
                "numbers first (e.g. .real and .imag as two features; datetimes as seconds "
                "since the series start, `(t - t[0]) / np.timedelta64(1, 's')`)."
            )
        elif types is None and "number" in kinds and "text" in kinds:
            strays = _stray_strings(values)
            numbers = len(values) - len(strays)
            if numbers > len(strays):
                problems.append(
                    f"{name} holds {numbers} numbers and {len(strays)} non-numeric value(s) "
                    f"({preview(sorted(set(map(repr, strays))), 3)}): inferred as discrete, it "
                    "would have one category per distinct number. Replace the stray values "
                    f"with numbers or NaN, or pass {what}_types with OutputType.DISCRETE for "
                    "it if it really is categorical."
                )
    return problems


def _value_kinds(values: np.ndarray) -> set[str]:
    kind = values.dtype.kind
    if kind == "c":
        return {"complex"}
    if kind == "M":
        return {"datetime"}
    if kind == "m":
        return {"timedelta"}
    if kind != "O":
        return set()
    inferred = pd.api.types.infer_dtype(values, skipna=False)  # one pass in C
    if inferred in ("integer", "floating", "mixed-integer-float"):
        return {"number"}
    if inferred == "boolean":
        return {"bool"}
    if inferred == "string":
        return {"number" if _is_number_text(t) else "text" for t in pd.unique(values)}
    kinds = set()
    texts = set()
    for v in values:
        if isinstance(v, str):
            texts.add(v)
        elif isinstance(v, (complex, np.complexfloating)):
            kinds.add("complex")
        elif isinstance(v, np.datetime64) or type(v).__name__ in ("Timestamp", "datetime", "date"):
            kinds.add("datetime")
        elif isinstance(v, np.timedelta64) or type(v).__name__ in ("Timedelta", "timedelta"):
            kinds.add("timedelta")
        elif isinstance(v, (bool, np.bool_)):
            kinds.add("bool")
        elif isinstance(v, (int, float, np.integer, np.floating)):
            kinds.add("number")
    for text in texts:  # each distinct string once
        kinds.add("number" if _is_number_text(text) else "text")
    return kinds


def _is_number_text(text: str) -> bool:
    return float_values(np.array([text])) is not None


def _stray_strings(values: np.ndarray) -> list[str]:
    texts = {v for v in values if isinstance(v, str)}
    odd = {t for t in texts if not _is_number_text(t)}
    return [v for v in values if isinstance(v, str) and v in odd]


def _convert_series(series: SeriesRows, types) -> SeriesRows:
    """Floats if every feature is continuous (float32 and float64 rows as they are, read
    only; other numbers as float64), else objects with floats in the continuous columns."""
    continuous = [i for i, t in enumerate(types) if t == OutputType.CONTINUOUS]
    rows = series.rows
    if len(continuous) == len(types):
        if rows.dtype not in (np.float32, np.float64):
            rows = rows.astype(np.float64)
        return series.with_rows(_read_only(rows))
    converted = rows.astype(object)
    for i in continuous:
        converted[:, i] = np.asarray(rows[:, i], dtype=np.float64)
    return series.with_rows(converted)


def _convert_attributes(attrs, types) -> np.ndarray:
    all_continuous = all(t == OutputType.CONTINUOUS for t in types)
    out = np.empty(attrs.shape, dtype=np.float64 if all_continuous else object)
    for i, t in enumerate(types):
        if t == OutputType.DISCRETE:
            out[:, i] = attrs[:, i]
        else:
            out[:, i] = np.asarray(attrs[:, i], dtype=np.float64)
    return out


def validate_condition_attributes(
    attributes, attribute_types: list[OutputType], attribute_names=None
) -> np.ndarray:
    """Check attribute values given to condition generation on; return a converted copy.

    Example:
        >>> validate_condition_attributes([[1.5]], [OutputType.CONTINUOUS])
        array([[1.5]])
    """
    attrs = np.array(attributes, dtype=object)
    if attrs.ndim != 2 or attrs.shape[1] != len(attribute_types) or attrs.shape[0] == 0:
        hint = " For one example use attributes[None, :]." if attrs.ndim == 1 else ""
        raise DataError(
            f"attributes to condition on must be a 2-d array of shape (n, "
            f"{len(attribute_types)}) with n >= 1: one row per example to generate, one "
            f"column per attribute the model was trained on. Got shape {attrs.shape}.{hint}"
        )
    check_finite(  # non-numeric, NaN and inf values to condition on
        attributes=attrs,
        attribute_types=attribute_types,
        attribute_names=attribute_names,
        conditioning=True,
    )
    return _convert_attributes(attrs, attribute_types)
