"""Tests of dgan.tabular.missing: non-finite checks and missing-value repair."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from dgan.config import OutputType
from dgan.errors import DataError
from dgan.tabular.arrays import validate_training_arrays
from dgan.tabular.missing import check_finite, repair_missing_values

C, D = OutputType.CONTINUOUS, OutputType.DISCRETE
REPAIR_DEFAULTS = dict(max_nan_fraction=0.5, max_consecutive_nans=2, max_dropped_fraction=0.5)


def test_repair_interpolates_short_gaps_exactly_and_leaves_inputs_alone():
    example = np.array(
        [[np.nan, "a"], [1.0, np.nan], [np.nan, "b"], [np.nan, "a"], [4.0, "b"], [np.nan, "a"]],
        dtype=object,
    )
    clean = np.array([[1.0, "a"]] * 6, dtype=object)
    before = example.copy()
    repaired, kept, summary = repair_missing_values(
        [example, clean], [0], max_nan_fraction=0.7, max_consecutive_nans=2, max_dropped_fraction=0
    )
    assert repaired[0][:, 0].tolist() == [1.0, 1.0, 2.0, 3.0, 4.0, 4.0]
    assert repaired[0][1, 1] is np.nan  # discrete NaN is a category, not repaired
    assert repaired[1].tolist() == clean.tolist()  # unchanged (a copy: one array of rows)
    assert kept.tolist() == [True, True]
    assert summary == (
        "missing values: 4 interpolated in 1 of 2 examples (feature 0: 4), linearly between "
        "the neighbouring steps of each series (the nearest value at its ends)."
    )
    nothing_missing = repair_missing_values(
        [clean], [0], max_nan_fraction=0.7, max_consecutive_nans=2, max_dropped_fraction=0
    )
    assert nothing_missing[2] == ""
    pd.testing.assert_frame_equal(pd.DataFrame(example), pd.DataFrame(before))


def test_repair_drops_examples_by_reason_and_logs_counts(caplog):
    ok = np.arange(10.0)[:, None]
    gap = ok.copy()
    gap[[2, 7]] = np.nan  # repaired
    all_nan = np.full((10, 1), np.nan)
    many = ok.copy()
    many[::2] = np.nan  # 50% NaN, no run longer than 1
    run = ok.copy()
    run[3:6] = np.nan  # run of 3 > 2
    short = np.array([[1.0], [np.nan]])  # variable length: 50% of its 2 steps
    features = [ok, gap, all_nan, many, run, ok, ok, ok, short]
    with caplog.at_level(logging.WARNING, logger="dgan.tabular"):
        repaired, kept, summary = repair_missing_values(
            features, [0], max_nan_fraction=0.4, max_consecutive_nans=2, max_dropped_fraction=0.5
        )
    assert kept.tolist() == [True, True, False, False, False, True, True, True, False]
    assert len(repaired) == 5 and repaired[1][:, 0].tolist() == list(np.arange(10.0))
    assert "2 interpolated in 1 of 9 examples" in summary and "4 of 9 examples dropped" in summary
    assert "1 with feature 0 entirely NaN (examples [2])" in summary
    assert "2 with feature 0 NaN in more than max_nan_fraction=0.4 of the steps" in summary
    assert "(examples [3, 8])" in summary
    assert "1 with a run of more than max_consecutive_nans=2 NaNs in feature 0 (examples [4])" in (
        summary
    )
    assert summary in caplog.text


def test_repair_names_the_features_and_examples_it_drops():
    ok = np.ones((4, 2))
    bad_speed = ok.copy()
    bad_speed[:, 1] = np.nan
    features = [ok, bad_speed, ok, ok]
    _, kept, summary = repair_missing_values(
        features,
        [0, 1],
        **REPAIR_DEFAULTS,
        feature_names=["heading", "speed"],
        example_names=["'a'", "'b'", "'c'", "'d'"],
    )
    assert kept.tolist() == [True, False, True, True]
    assert "1 with feature 'speed' entirely NaN ('b')" in summary
    assert "heading" not in summary


def test_repair_raises_when_too_many_examples_would_be_dropped():
    bad = np.full((4, 2), np.nan)
    good = np.ones((4, 2))
    with pytest.raises(DataError) as error:
        repair_missing_values(
            [bad, bad, good], [0, 1], **REPAIR_DEFAULTS, feature_names=["speed", "heading"]
        )
    message = str(error.value)
    assert "drop 2 of 3 examples (67%)" in message
    assert "max_dropped_fraction=0.5" in message and "raise max_nan_fraction" in message


def test_repair_raises_when_no_example_is_left_even_if_all_may_be_dropped():
    with pytest.raises(DataError, match="drop 1 of 1 examples \\(100%\\), leaving none"):
        repair_missing_values(
            [np.full((3, 1), np.nan)],
            [0],
            max_nan_fraction=0.5,
            max_consecutive_nans=2,
            max_dropped_fraction=1.0,
        )


def test_check_finite_reports_inf_and_nan_with_names_and_indices():
    attributes = np.array([[1.0, "x"], [np.nan, np.nan], [np.inf, "y"]], dtype=object)
    features = [np.array([[1.0], [np.nan]]), np.array([[-np.inf], [np.inf], [0.0]])]
    with pytest.raises(DataError) as error:
        check_finite(
            attributes=attributes,
            attribute_types=[C, D],
            features=features,
            feature_types=[C],
            attribute_names=["age", "city"],
            feature_names=["speed"],
        )
    message = str(error.value)
    assert "3 problems" in message
    assert "attribute 'age' is +/-inf in 1 example(s) (indices [2])" in message
    assert "attribute 'age' is NaN in 1 example(s) (indices [1])" in message
    assert "DataFrame.fillna" in message
    assert "feature 'speed' is +/-inf at 2 time step(s) in 1 example(s) (indices [1])" in message
    assert "city" not in message  # NaN in a discrete attribute is a category


def test_check_finite_accepts_clean_data_and_flags_inf_in_discrete_values():
    check_finite(attributes=np.array([[1.0, np.nan]], dtype=object), attribute_types=[C, D])
    with pytest.raises(DataError, match="feature 0 is \\+/-inf"):
        check_finite(features=[np.array([["a"], [np.inf]], dtype=object)], feature_types=[D])


# ----------------------------------------- values numpy would coerce without a word


@pytest.mark.parametrize(
    ("column", "pattern"),
    [
        (np.arange(8) + 1j, r"feature 0 holds complex values.*\.real and \.imag"),
        (
            np.datetime64("2024-01-01") + np.arange(8),
            r"feature 0 holds datetime values.*seconds since the series start",
        ),
        (np.arange(8).astype("timedelta64[s]"), r"feature 0 holds timedelta values"),
        (
            np.array([1.5, 2.5, 3.5, 4.5, "oops", 6.5, 7.5, 8.5], dtype=object),
            r"feature 0 holds 7 numbers and 1 non-numeric value\(s\) \(\[\"'oops'\"\]\).*"
            r"Replace the stray values.*feature_types with OutputType.DISCRETE",
        ),
    ],
)
def test_numpy_values_that_would_be_silently_coerced_are_refused(column, pattern):
    features = np.empty((4, 2, 1), dtype=column.dtype)
    features[:, :, 0] = column.reshape(4, 2)
    with pytest.raises(DataError, match=pattern):
        validate_training_arrays(features, None, None, None, 2)


def test_declared_discrete_strings_and_all_text_columns_are_still_accepted():
    strays = np.array([[[1.5], ["x"]], [[2.5], [3.5]]], dtype=object)
    arrays = validate_training_arrays(strays, [OutputType.DISCRETE], None, None, 2)
    assert arrays.feature_types == [OutputType.DISCRETE]
    words = np.array([[["a"], ["b"]], [["c"], ["a"]]], dtype=object)
    assert validate_training_arrays(words, None, None, None, 2).feature_types == [
        OutputType.DISCRETE
    ]


def test_non_numeric_continuous_values_are_one_check_with_one_message():
    attributes = np.array([[1.0], ["big"]], dtype=object)
    with pytest.raises(DataError, match=r"Continuous attribute 0 holds non-numeric.*'big'"):
        check_finite(attributes=attributes, attribute_types=[C])
    with pytest.raises(DataError, match=r"Continuous attribute 0 holds non-numeric.*'big'"):
        validate_training_arrays(np.zeros((2, 2, 1)), None, attributes, [OutputType.CONTINUOUS], 2)
