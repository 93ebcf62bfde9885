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
import pandas as pd

from dgan.config import OutputType
from dgan.errors import DataError, ParameterError, raise_all
from dgan.series import SeriesRows, as_series_rows
from dgan.tabular.messages import ColumnName, examples_text, float_values, variable_name

logger = logging.getLogger(__name__)


def repair_missing_values(
    features: SeriesRows | Sequence[np.ndarray],
    continuous_feature_indices: Sequence[int],
    *,
    max_nan_fraction: float,
    max_consecutive_nans: int,
    max_dropped_fraction: float,
    feature_names: Sequence[ColumnName] | None = None,
    example_names: Sequence[str] | None = None,
) -> tuple[SeriesRows, np.ndarray, str]:
    """Interpolate short NaN gaps in continuous features; drop examples with too many.

    An example is dropped when, in any continuous feature, it is entirely NaN, more than
    ``max_nan_fraction`` of its steps are NaN, or it has a run of more than
    ``max_consecutive_nans`` NaNs. Other NaNs are filled by linear interpolation between
    the neighbouring valid values (the nearest valid value at the edges). NaN in
    discrete features is left alone: it is a category.

    Returns:
        ``(repaired, kept, summary)``: ``repaired`` holds the kept examples only, in
        order (`SeriesRows`: the input's rows themselves when nothing was missing, else a
        copy); ``kept`` is a bool array over the input examples (use it to filter the
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
    features = as_series_rows(features)
    continuous = list(continuous_feature_indices)
    names = variable_name(feature_names, "feature")
    kept = np.ones(len(features), dtype=bool)
    dropped: dict[str, list[int]] = {"all_nan": [], "fraction": [], "run": []}
    culprits: dict[str, set[int]] = {reason: set() for reason in dropped}  # feature indices
    filled = np.zeros(len(continuous), dtype=np.int64)  # values interpolated per feature
    # Continuous values are numbers: check_finite has vetted them (validation does).
    affected = _examples_with_nan(features, continuous)  # (N,) bool
    part = features.take(affected)  # only these series are looked at again
    values = np.asarray(part.rows[:, continuous], dtype=np.float64)  # (R_part, C)
    missing = np.isnan(values)
    reasons, bad = _drop_reasons(part, missing, max_nan_fraction, max_consecutive_nans)
    where = np.flatnonzero(affected)
    for r, reason in enumerate(dropped):
        hit = reasons == r
        kept[where[hit]] = False
        dropped[reason] = where[hit].tolist()
        culprits[reason].update(continuous[j] for j in np.flatnonzero(bad[hit, r].any(axis=0)))
    repair = reasons < 0  # affected series that are kept
    n_repaired = int(repair.sum())
    repaired = features
    if n_repaired:
        rows_to_fix = np.repeat(repair, part.lengths)
        filled = missing[rows_to_fix].sum(axis=0)
        fixed = _interpolate(part.take(repair), values[rows_to_fix], missing[rows_to_fix])
        dtype = object if features.rows.dtype == object else np.float64
        rows = features.rows.astype(dtype)  # a copy: the caller's arrays stay as they are
        rows_of = np.repeat(affected, features.lengths)
        target = np.flatnonzero(rows_of)[rows_to_fix]
        for j, i in enumerate(continuous):
            rows[target, i] = fixed[:, j]
        repaired = features.with_rows(rows)
    if not kept.all():
        repaired = repaired.take(kept)

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


def _examples_with_nan(features: SeriesRows, continuous: list[int]) -> np.ndarray:
    """(N,) whether each series has a NaN in a continuous feature (a column at a time)."""
    row_has_nan = np.zeros(len(features.rows), dtype=bool)
    for i in continuous:
        column = features.rows[:, i]
        row_has_nan |= np.isnan(column if column.dtype.kind == "f" else column.astype(float))
    affected = np.zeros(len(features), dtype=bool)
    rows = np.flatnonzero(row_has_nan)
    affected[np.searchsorted(features.starts, rows, side="right") - 1] = True
    return affected


def _drop_reasons(
    part: SeriesRows, missing: np.ndarray, max_nan_fraction: float, max_run: int
) -> tuple[np.ndarray, np.ndarray]:
    """Why each series of ``part`` must be dropped, given its NaN mask ``missing``
    (R, C): ``(reason, bad)``, the index of the first reason in ("all_nan", "fraction",
    "run") that applies (-1: none), and (N, 3, C) which columns make each reason apply."""
    n, c = len(part), missing.shape[1]
    bad = np.zeros((n, 3, c), dtype=bool)
    if n == 0:
        return np.empty(0, dtype=np.int64), bad
    counts = np.add.reduceat(missing, part.starts, axis=0, dtype=np.int64)  # (N, C)
    lengths = part.lengths[:, None]
    bad[:, 0] = counts == lengths
    bad[:, 1] = counts / lengths > max_nan_fraction  # the fraction of NaN steps
    bad[:, 2] = _longest_runs(part, missing) > max_run
    applies = bad.any(axis=2)  # (N, 3)
    reason = np.where(applies.any(axis=1), applies.argmax(axis=1), -1)
    return reason, bad


def _longest_runs(part: SeriesRows, missing: np.ndarray) -> np.ndarray:
    """(N, C) the longest run of consecutive NaNs in each series and column."""
    n, c = len(part), missing.shape[1]
    longest = np.zeros((n, c), dtype=np.int64)
    first_row = np.zeros(len(missing), dtype=bool)
    first_row[part.starts] = True
    for j in range(c):
        m = missing[:, j]
        begins = m & (first_row | ~np.roll(m, 1))  # a run starts: NaN after a value or a start
        run = np.cumsum(begins) - 1  # (R,) the run each NaN belongs to
        sizes = np.bincount(run[m], minlength=int(begins.sum()))
        series = np.searchsorted(part.starts, np.flatnonzero(begins), side="right") - 1
        np.maximum.at(longest[:, j], series, sizes)
    return longest


def _interpolate(part: SeriesRows, values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Linear interpolation over time of each column within each series, as `np.interp`
    computes it; steps before the first or after the last valid value take that value."""
    out = values.copy()
    index = np.arange(len(values))
    first = np.repeat(part.starts, part.lengths)  # (R,) the first row of each row's series
    last = first + np.repeat(part.lengths, part.lengths) - 1
    for j in np.flatnonzero(missing.any(axis=0)):
        gap = missing[:, j]
        before = np.maximum.accumulate(np.where(gap, -1, index))[gap]  # last valid row
        after = np.minimum.accumulate(np.where(gap, len(values), index)[::-1])[::-1][gap]
        lo, hi = first[gap], last[gap]
        has_before, has_after = before >= lo, after <= hi
        x = index[gap].astype(np.float64)
        y0 = values[np.where(has_before, before, 0), j]
        y1 = values[np.where(has_after, after, 0), j]
        x0, x1 = before.astype(np.float64), after.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            slope = (y1 - y0) / (x1 - x0)
            inner = slope * (x - x0) + y0
            again = np.isnan(inner)  # np.interp's fallbacks for overflowing slopes
            inner[again] = (slope * (x - x1) + y1)[again]
            same = np.isnan(inner) & (y0 == y1)
            inner[same] = y0[same]
        out[gap, j] = np.where(has_before, np.where(has_after, inner, y0), y1)
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
        features = as_series_rows(features)
        _check_types_given("feature", feature_types, features.width)
        names = variable_name(feature_names, "feature")

        def examples_of(rows: np.ndarray) -> np.ndarray:  # the series holding these rows
            return np.unique(np.searchsorted(features.starts, rows, side="right") - 1)

        for j, kind in enumerate(feature_types):
            column = features.rows[:, j]
            problems += _column_problems(column, kind, names(j), examples_of, example_names)
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


def _holds_no_floats(values: np.ndarray) -> bool:
    """Whether an object column holds only strings, integers or bools (missing aside)."""
    kind = pd.api.types.infer_dtype(values, skipna=True)
    return values.dtype == object and kind in ("string", "integer", "boolean")


def _column_problems(
    values,
    kind: OutputType,
    name: str,
    examples_of,
    example_names: Sequence[str] | None = None,
    conditioning: bool = False,
) -> list[str]:
    """Problems of one attribute column (``examples_of`` None) or feature column
    (``examples_of(rows)``: the examples that hold those rows)."""
    is_attribute = examples_of is None
    if kind is OutputType.CONTINUOUS:
        # Float columns as they are: a float32 value is infinite exactly when it is in float64.
        numbers = values if values.dtype.kind == "f" else float_values(values)
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
    elif values.dtype.kind in "iubUS" or _holds_no_floats(values):  # no infinity in them
        infinite = np.zeros(len(values), dtype=bool)
    elif values.dtype.kind == "f":
        infinite = np.isinf(values)
    else:  # discrete: NaN is a category, but a float infinity is surely a mistake
        infinite = np.fromiter(
            (isinstance(v, (float, np.floating)) and math.isinf(v) for v in values),
            dtype=bool,
            count=len(values),
        )
    if kind is not OutputType.CONTINUOUS:
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
            examples = examples_of(np.flatnonzero(mask))
            which = examples_text(examples, example_names, "indices")
            where = f"at {int(mask.sum())} time step(s) in {examples.size} example(s) ({which})"
        problems.append(f"{name} is {label} {where}; {fix}.")
    return problems
