"""Columns that look like mistakes: the warnings of the training plan (`dgan.planning`)
about a table's columns, each with its fix.

A feature that never changes within a series (an attribute left out of the attribute
columns), whole-number codes read as continuous, and WIDE columns that look like a year
or an identifier rather than one time step of the feature.

Example:
    >>> distinct(np.array(["a", "b", None, "a"], dtype=object))
    3
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dgan.config import OutputType
from dgan.series import SeriesRows
from dgan.tabular.arrays import TrainingArrays
from dgan.tabular.layout import FrameLayout


def pooled_features(arrays: TrainingArrays) -> np.ndarray:
    """Every series' time steps stacked: a (total steps, features) array.

    Example:
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> arrays = validate_training_arrays(np.zeros((3, 4, 2)), None, None, None, 4)
        >>> pooled_features(arrays).shape
        (12, 2)
    """
    return arrays.features.rows


def distinct(values: np.ndarray) -> int:
    """How many distinct values (a missing value counts as one).

    Example:
        >>> distinct(np.array([1.0, 1.0, np.nan]))
        2
    """
    if values.dtype.kind in "iufb":  # numbers compare as numbers: no objects needed
        return int(pd.Series(values).nunique(dropna=False))
    return int(pd.Series(values, dtype=object).nunique(dropna=False))


def _constant_within(series: SeriesRows, j: int) -> bool:
    """Whether feature ``j`` holds one value (or only NaN) within every series."""
    values = series.rows[:, j]
    if values.dtype.kind != "f":  # objects: pandas compares them
        per_series = pd.Series(values).groupby(series.example_of_row())
        return bool(per_series.nunique(dropna=False).max() <= 1)
    first = series.per_row(values[series.starts])  # each series' first value, per row
    same = (values == first) | (np.isnan(values) & np.isnan(first))
    return bool(same.all())


def per_series_feature_warnings(arrays: TrainingArrays, names: list) -> list[str]:
    """Features that never change within a series but differ between series: attributes
    left out of the attribute columns, most likely (a site, a class, a device type).

    Example:
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> site = np.repeat([[1.0], [2.0], [3.0]], 4, axis=0).reshape(3, 4, 1)
        >>> arrays = validate_training_arrays(site, None, None, None, 4)
        >>> per_series_feature_warnings(arrays, ["site"])[0].split(":")[0]
        "feature 'site' never changes within a series (3 values across the 3 series)"
    """
    series = arrays.features
    lengths = series.lengths
    if len(lengths) < 2 or lengths.max(initial=0) < 2:
        return []
    pooled = pd.DataFrame(pooled_features(arrays))
    constant = pd.Series([_constant_within(series, j) for j in range(series.width)])
    warnings = []
    for j, name in enumerate(names):
        if not constant.iloc[j]:
            continue
        across = distinct(pooled.iloc[:, j].to_numpy())
        if across > 1:
            warnings.append(
                f"feature {name!r} never changes within a series ({across} values across the "
                f"{len(lengths)} series): it describes each series rather than following it "
                "over time; make it an attribute (attribute_columns), which the model learns "
                "as one value per series, in relation to the features."
            )
    return warnings


def few_integers(values: np.ndarray, most: int = 10) -> bool:
    """Whether ``values`` are whole numbers of 2 to ``most`` distinct values (codes or
    classes, most likely), among at least twice as many finite values.

    Example:
        >>> few_integers(np.arange(40) % 3), few_integers(np.arange(40.0) / 7)
        (True, False)
    """
    numbers = np.asarray(values, dtype=np.float64)
    numbers = numbers[np.isfinite(numbers)]
    head = numbers[:1000]  # most columns show fractions at once: no pass over all values
    if numbers.size < 2 * most or not np.all(head == np.round(head)):
        return False
    if not np.all(numbers == np.round(numbers)):
        return False
    return 1 < len(np.unique(numbers)) <= most


def wide_column_warnings(frame: pd.DataFrame, layout: FrameLayout) -> list[str]:
    """WIDE time-step columns that look like an identifier or a year, not a time step.

    Example:
        >>> from dgan.tabular.columns import Columns
        >>> from dgan.tabular.frames import dataframe_to_arrays
        >>> wide = pd.DataFrame({"year": np.arange(1990, 2010), "a": np.ones(20), "b": np.ones(20)})
        >>> layout = dataframe_to_arrays(wide, Columns(), 3).layout
        >>> wide_column_warnings(wide, layout)[0].split(",")[0]
        "WIDE column 'year' looks like a year"
    """
    columns = list(layout.feature_columns)
    if len(columns) < 2:
        return []
    numbers = {c: pd.to_numeric(frame[c], errors="coerce").to_numpy(np.float64) for c in columns}
    medians = {c: np.nanmedian(v) if np.isfinite(v).any() else np.nan for c, v in numbers.items()}
    warnings = []
    for c, values in numbers.items():
        finite = values[np.isfinite(values)]
        if finite.size < 2 or not np.all(finite == np.round(finite)):
            continue
        others = [m for k, m in medians.items() if k != c and np.isfinite(m)]
        typical = np.median(others) if others else np.nan
        if np.all((finite >= 1800) & (finite <= 2100)) and not 1800 <= typical <= 2100:
            looks = "a year"
        elif len(np.unique(finite)) == finite.size >= 10 and (
            np.all(np.diff(finite) > 0) or np.all(np.diff(finite) < 0)
        ):
            looks = "an identifier (distinct, sorted integers)"
        else:
            continue
        warnings.append(
            f"WIDE column {c!r} looks like {looks}, yet it is used as one time step of the "
            f"feature (its values {finite.min():.0f}..{finite.max():.0f}, other steps' "
            f"typical value {typical:.3g}); make it an attribute (attribute_columns) or "
            "list the time steps with feature_columns."
        )
    return warnings


MIN_EXAMPLES_PER_CATEGORY = 5
"""Discrete attributes with fewer examples per category than this get a warning."""


def column_kind_warnings(
    arrays: TrainingArrays, attribute_names: list, feature_names: list
) -> list[str]:
    """Warnings about columns whose kind looks wrong: a discrete attribute like an
    identifier or with too many categories for the data, whole-number codes read as
    continuous, a discrete feature like an identifier or free text.

    Example:
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> ids = np.arange(12, dtype=object)[:, None]
        >>> arrays = validate_training_arrays(
        ...     np.zeros((12, 2, 1)), None, ids, [OutputType.DISCRETE], 2)
        >>> column_kind_warnings(arrays, ["id"], ["x"])[0].split(":")[0]
        "attribute 'id' has a different value for every example, like an identifier"
    """
    warnings, n = [], len(arrays.features)
    for j, name in enumerate(attribute_names):
        if arrays.attribute_types[j] is not OutputType.DISCRETE:
            continue
        count = distinct(arrays.attributes[:, j])
        if count == n and n >= 10:
            warnings.append(
                f"attribute {name!r} has a different value for every example, like an "
                "identifier: the model cannot learn it; leave it out of attribute_columns "
                "(or make it the example_id_column)."
            )
        elif count * MIN_EXAMPLES_PER_CATEGORY > n:
            warnings.append(
                f"attribute {name!r} has {count} categories for {n} examples (fewer than "
                f"{MIN_EXAMPLES_PER_CATEGORY} per category): rare categories cannot be "
                "learned; merge them or leave the attribute out."
            )
    pooled = pooled_features(arrays)
    for role, names, types, matrix in [
        ("attribute", attribute_names, arrays.attribute_types or [], arrays.attributes),
        ("feature", feature_names, arrays.feature_types, pooled),
    ]:
        for j, name in enumerate(names):
            if types[j] is OutputType.CONTINUOUS and few_integers(matrix[:, j]):
                warnings.append(
                    f"{role} {name!r} is continuous but holds only a few whole numbers "
                    f"({distinct(matrix[:, j])} distinct): if they are codes or classes, "
                    "list it in discrete_columns."
                )
    for j, name in enumerate(feature_names):
        if arrays.feature_types[j] is not OutputType.DISCRETE:
            continue
        count, rows = distinct(pooled[:, j]), len(pooled)
        if count > 20 and count > rows / 2:
            warnings.append(
                f"feature {name!r} is discrete with {count} distinct values in {rows} rows: it "
                "looks like an identifier or free text, which the model cannot learn; leave "
                "it out (list the features with feature_columns)."
            )
    return warnings
