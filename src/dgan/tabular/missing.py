"""Unusable values: the checks for them and the repair of missing ones.

* `check_finite` rejects, in one error, NaN in continuous attributes, +/-inf anywhere and
  non-numeric values in continuous variables (the one place where that is checked).
  NaN in a discrete variable is a category.
* `repair_missing_values` interpolates short NaN gaps in continuous features and drops
  examples with too many, within the thresholds set in `DGANConfig`.

Both name the column and the examples (indices) concerned, and never modify their input.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from dgan.config import OutputType
from dgan.errors import DataError, ParameterError, raise_all
from dgan.tabular.messages import ColumnName, examples_text, float_values, variable_name

logger = logging.getLogger(__name__)


def repair_missing_values(
    features: Sequence[np.ndarray],
    continuous_feature_indices: Sequence[int],
    *,
    max_nan_fraction: float,
    max_consecutive_nans: int,
    max_dropped_fraction: float,
    feature_names: Sequence[ColumnName] | None = None,
    example_names: Sequence[str] | None = None,
) -> tuple[list[np.ndarray], np.ndarray, str]:
    """Interpolate short NaN gaps in continuous features; drop examples with too many.

    An example is dropped when, in any continuous feature, it is entirely NaN, more than
    ``max_nan_fraction`` of its steps are NaN, or it has a run of more than
    ``max_consecutive_nans`` NaNs. Other NaNs are filled by linear interpolation between
    the neighbouring valid values (the nearest valid value at the edges). NaN in
    discrete features is left alone: it is a category.

    Returns:
        ``(repaired, kept, summary)``: ``repaired`` holds the kept examples only, in
        order (examples without NaN are the input arrays themselves, repaired ones are
        copies); ``kept`` is a bool array over the input examples (use it to filter the
        attributes); ``summary`` says what was done, in one line: how many values were
        interpolated in which features and how, and which examples were dropped and why
        ("" when no continuous feature has a NaN). The input arrays are never modified.
        Drops are logged as a warning, naming the examples by ``example_names`` (e.g.
        "'sensor-3'") or else by index, and the features.

    Raises:
        DataError: more than ``max_dropped_fraction`` of the examples would be dropped,
            or none would be left; the message says how many, why, and what to raise.

    Example:
        >>> x = np.array([[1.0], [np.nan], [3.0]])
        >>> repaired, kept, _ = repair_missing_values(
        ...     [x], [0], max_nan_fraction=0.5, max_consecutive_nans=1, max_dropped_fraction=0.5
        ... )
        >>> repaired[0].ravel().tolist(), kept.tolist()
        ([1.0, 2.0, 3.0], [True])
        >>> _.split(", linearly")[0]
        'missing values: 1 interpolated in 1 of 1 examples (feature 0: 1)'
    """
    continuous = list(continuous_feature_indices)
    names = variable_name(feature_names, "feature")
    kept = np.ones(len(features), dtype=bool)
    dropped: dict[str, list[int]] = {"all_nan": [], "fraction": [], "run": []}
    culprits: dict[str, set[int]] = {reason: set() for reason in dropped}  # feature indices
    repaired: list[np.ndarray] = []
    n_repaired = 0
    filled = np.zeros(len(continuous), dtype=np.int64)  # values interpolated per feature
    for i, example in enumerate(features):
        # Continuous values are numbers: check_finite has vetted them (validation does).
        values = np.asarray(np.asarray(example)[:, continuous], dtype=np.float64)
        missing = np.isnan(values)  # (T_i, C)
        if not missing.any():
            repaired.append(example)
            continue
        reason, columns = _drop_reason(missing, max_nan_fraction, max_consecutive_nans)
        if reason is not None:
            kept[i] = False
            dropped[reason].append(i)
            culprits[reason].update(continuous[j] for j in columns)
            continue
        fixed = np.array(example, copy=True)
        fixed[:, continuous] = _interpolate(values, missing)
        repaired.append(fixed)
        n_repaired += 1
        filled += missing.sum(axis=0)

    n, n_dropped = len(features), int((~kept).sum())
    why = _drop_reasons_text(
        dropped,
        {reason: [names(j) for j in sorted(c)] for reason, c in culprits.items()},
        example_names,
        max_nan_fraction,
        max_consecutive_nans,
    )
    if n and (n_dropped / n > max_dropped_fraction or n_dropped == n):
        too_many = (
            f"more than max_dropped_fraction={max_dropped_fraction}"
            if n_dropped / n > max_dropped_fraction
            else "leaving none to train on"
        )
        raise DataError(
            f"Missing-value repair would drop {n_dropped} of {n} examples ({n_dropped / n:.0%}), "
            f"{too_many}: {why}. To interpolate "
            f"instead of dropping, raise max_nan_fraction (now {max_nan_fraction}) or "
            f"max_consecutive_nans (now {max_consecutive_nans}); to accept the loss, raise "
            "max_dropped_fraction; or fill the NaNs in your data before training."
        )
    if not n_repaired and not n_dropped:
        return repaired, kept, ""
    per_feature = ", ".join(
        f"{names(j)}: {k}" for j, k in zip(continuous, filled, strict=True) if k
    )
    done = []
    if n_repaired:
        done.append(
            f"{int(filled.sum())} interpolated in {n_repaired} of {n} examples ({per_feature}), "
            "linearly between the neighbouring steps of each series (the nearest value at its "
            "ends)"
        )
    if n_dropped:
        done.append(f"{n_dropped} of {n} examples dropped: {why}")
    summary = f"missing values: {'; '.join(done)}."
    if n_dropped:
        logger.warning(summary)
    elif n_repaired:
        logger.info(summary)
    return repaired, kept, summary


def _drop_reason(
    missing: np.ndarray, max_nan_fraction: float, max_run: int
) -> tuple[str | None, np.ndarray]:
    """Why an example with NaN mask ``missing`` (T, C) must be dropped (or None), and
    the columns (indices into C) that make it so."""
    runs = np.array([_longest_run(missing[:, j]) for j in range(missing.shape[1])])
    checks = [
        ("all_nan", missing.all(axis=0)),
        ("fraction", missing.mean(axis=0) > max_nan_fraction),
        ("run", runs > max_run),
    ]
    for reason, bad in checks:
        if bad.any():
            return reason, np.flatnonzero(bad)
    return None, np.empty(0, dtype=int)


def _longest_run(mask: np.ndarray) -> int:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - starts).max(initial=0))


def _interpolate(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Linear interpolation over time of each column; edges take the nearest valid value."""
    out = values.copy()
    steps = np.arange(len(values))
    for j in np.flatnonzero(missing.any(axis=0)):
        gap, valid = missing[:, j], ~missing[:, j]
        out[gap, j] = np.interp(steps[gap], steps[valid], values[valid, j])
    return out


def _drop_reasons_text(
    dropped: dict[str, list[int]],
    columns: dict[str, list[str]],
    example_names: Sequence[str] | None,
    max_nan_fraction,
    max_run,
) -> str:
    texts = {  # what is wrong, given the feature(s) it is wrong in
        "all_nan": lambda where: f"{where} entirely NaN",
        "fraction": lambda where: (
            f"{where} NaN in more than max_nan_fraction={max_nan_fraction} of the steps"
        ),
        "run": lambda where: f"a run of more than max_consecutive_nans={max_run} NaNs in {where}",
    }
    return ", ".join(
        f"{len(indices)} with {texts[reason](' or '.join(columns[reason]))} "
        f"({examples_text(indices, example_names)})"
        for reason, indices in dropped.items()
        if indices
    )


def check_finite(
    *,
    attributes: np.ndarray | None = None,
    attribute_types: Sequence[OutputType] | None = None,
    features: Sequence[np.ndarray] | None = None,
    feature_types: Sequence[OutputType] | None = None,
    attribute_names: Sequence[ColumnName] | None = None,
    feature_names: Sequence[ColumnName] | None = None,
    example_names: Sequence[str] | None = None,
    conditioning: bool = False,
) -> None:
    """Raise one DataError for every unusable value in attributes and features.

    Problems: NaN in a continuous attribute (it cannot be repaired like a time series),
    +/-inf anywhere, non-numeric values in a continuous variable. NaN in features is left
    to `repair_missing_values`; NaN in discrete variables is a category. Examples are
    named by ``example_names`` (e.g. "'sensor-3'"), or else by index. With
    ``conditioning`` the attributes are values to condition generation on, and the
    messages give the fixes that apply to those.
    """
    problems = []
    if attributes is not None:
        attributes = np.asarray(attributes)
        _check_types_given("attribute", attribute_types, attributes.shape[1])
        names = variable_name(attribute_names, "attribute")
        for j, kind in enumerate(attribute_types):
            problems += _column_problems(
                attributes[:, j], kind, names(j), None, example_names, conditioning
            )
    if features is not None and len(features):
        rows = np.concatenate([np.asarray(f) for f in features])  # (sum T_i, F)
        _check_types_given("feature", feature_types, rows.shape[1])
        names = variable_name(feature_names, "feature")
        example_of_row = np.repeat(np.arange(len(features)), [len(f) for f in features])
        for j, kind in enumerate(feature_types):
            problems += _column_problems(rows[:, j], kind, names(j), example_of_row, example_names)
    raise_all(problems, DataError, "the training data")


def _non_numeric(values) -> str:
    """The first few values of a column that are not numbers, for messages."""
    odd = [v for v in np.asarray(values, dtype=object).ravel() if float_values([v]) is None]
    shown = ", ".join(repr(v) for v in odd[:3])
    return f"e.g. {shown}" + (f"; {len(odd)} in all" if len(odd) > 3 else "")


def _check_types_given(kind: str, types, n_columns: int) -> None:
    if types is None or len(types) != n_columns:
        raise ParameterError(
            f"check_finite needs one {kind}_types entry per {kind} column: {n_columns} "
            f"column(s), got {types!r}."
        )


def _column_problems(
    values,
    kind: OutputType,
    name: str,
    example_of_row,
    example_names: Sequence[str] | None = None,
    conditioning: bool = False,
) -> list[str]:
    """Problems of one attribute column (``example_of_row`` None) or feature column."""
    is_attribute = example_of_row is None
    if kind is OutputType.CONTINUOUS:
        numbers = float_values(values)
        if numbers is None:
            if conditioning:
                return [
                    f"{name} was continuous in training, but the values to condition on are "
                    "not all numbers; give numbers."
                ]
            return [
                f"Continuous {name} holds non-numeric values ({_non_numeric(values)}); convert "
                "them to numbers or declare it discrete (discrete_columns / OutputType.DISCRETE)."
            ]
        infinite = np.isinf(numbers)
        # NaN in features is repair_missing_values' business; in attributes it is fatal.
        nan = np.isnan(numbers) if is_attribute else np.zeros_like(infinite)
    else:  # discrete: NaN is a category, but a float infinity is surely a mistake
        infinite = np.fromiter(
            (isinstance(v, (float, np.floating)) and math.isinf(v) for v in values),
            dtype=bool,
            count=len(values),
        )
        nan = np.zeros_like(infinite)
    fix_inf = (
        "replace it with finite values (or NaN, which is repaired in continuous features) "
        "or drop those examples"
    )
    fix_nan = (
        "continuous attributes cannot be missing: fill them (e.g. with DataFrame.fillna), "
        "drop those examples, or list the column in discrete_columns so that missing is a "
        "category"
    )
    if conditioning:
        fix_inf = fix_nan = (
            "a continuous attribute to condition on needs a finite number in every row "
            "(ideally within its training range)"
        )
    checks = [(infinite, "+/-inf", fix_inf), (nan, "NaN", fix_nan)]
    problems = []
    for mask, label, fix in checks:
        if not mask.any():
            continue
        if is_attribute:
            examples = np.flatnonzero(mask)
            which = examples_text(examples, example_names, "indices")
            where = f"in {examples.size} example(s) ({which})"
        else:
            examples = np.unique(example_of_row[mask])
            which = examples_text(examples, example_names, "indices")
            where = f"at {int(mask.sum())} time step(s) in {examples.size} example(s) ({which})"
        problems.append(f"{name} is {label} {where}; {fix}.")
    return problems
