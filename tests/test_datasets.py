"""The bundled demo dataset: what `dgan demo` and the docs rely on."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import pytest

from dgan.datasets import DEMO_COLUMNS, DEMO_MAX_SEQUENCE_LEN, load_demo
from dgan.errors import DataError

FEATURES = DEMO_COLUMNS["feature_columns"]
ATTRIBUTES = DEMO_COLUMNS["attribute_columns"]
ID = DEMO_COLUMNS["example_id_column"]
TIME = DEMO_COLUMNS["time_column"]
N_EXAMPLES = 48  # one per month, 2012-2015


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


def test_columns_are_exactly_the_declared_ones(demo):
    declared = [ID, *ATTRIBUTES, TIME, *FEATURES]
    assert list(demo.columns) == declared
    assert set(DEMO_COLUMNS["discrete_columns"]) <= set(ATTRIBUTES)


def test_shape_and_dtypes(demo):
    assert demo.shape == (N_EXAMPLES * DEMO_MAX_SEQUENCE_LEN, 2 + len(ATTRIBUTES) + len(FEATURES))
    assert demo[ID].map(type).eq(str).all()
    assert demo["month"].map(type).eq(str).all()
    assert pd.api.types.is_integer_dtype(demo[TIME])
    for name in FEATURES:
        assert pd.api.types.is_float_dtype(demo[name]), name


def test_no_missing_or_infinite_values(demo):
    assert not demo.isna().any().any()
    assert np.isfinite(demo[FEATURES].to_numpy()).all()


def test_every_example_has_the_declared_length_in_time_order(demo):
    expected_steps = list(range(1, DEMO_MAX_SEQUENCE_LEN + 1))
    for example_id, rows in demo.groupby(ID, sort=False):
        assert rows[TIME].tolist() == expected_steps, example_id
    # Sorted by (id, time): reshaping to (examples, steps, features) needs no pivot.
    assert demo[ID].is_monotonic_increasing
    cube = demo[FEATURES].to_numpy().reshape(N_EXAMPLES, DEMO_MAX_SEQUENCE_LEN, len(FEATURES))
    first = demo[demo[ID] == "2012-01"].sort_values(TIME)
    np.testing.assert_array_equal(cube[0], first[FEATURES].to_numpy())


def test_attributes_are_constant_within_each_example(demo):
    assert (demo.groupby(ID)[ATTRIBUTES].nunique() == 1).all().all()


def test_month_attribute_matches_the_example_and_classes_are_balanced(demo):
    per_example = demo.groupby(ID)["month"].first()
    month_number = per_example.index.str.slice(5, 7).astype(int)
    names = pd.to_datetime(month_number.astype(str), format="%m").strftime("%b")
    assert list(per_example) == list(names)
    assert per_example.value_counts().eq(4).all() and per_example.nunique() == 12


def test_values_are_physically_plausible(demo):
    # Catches a column swap or a unit change when the file is rebuilt.
    assert (demo["precipitation"] >= 0).all()
    assert (demo["wind"] >= 0).all()
    assert (demo["temp_min"] <= demo["temp_max"]).all()
    assert demo["temp_max"].between(-20, 45).all() and demo["temp_min"].between(-25, 40).all()
    # Seattle: July is warmer and drier than January.
    by_month = demo.groupby("month")[["temp_max", "precipitation"]].mean()
    assert by_month.loc["Jul", "temp_max"] > by_month.loc["Jan", "temp_max"] + 10
    assert by_month.loc["Jul", "precipitation"] < by_month.loc["Jan", "precipitation"]


def test_each_call_returns_an_independent_frame():
    first = load_demo()
    first.loc[:, "temp_max"] = 0.0
    assert load_demo()["temp_max"].ne(0.0).any()


def test_bundled_file_is_small_and_documented():
    data_dir = resources.files("dgan") / "data"
    data_file = data_dir / "seattle_weather_monthly.csv.gz"
    assert len(data_file.read_bytes()) < 300 * 1024
    readme = (data_dir / "README.md").read_text(encoding="utf-8")
    for must_mention in ("public domain", "NOAA", "vega_datasets", "0.9.0", "make_demo_dataset"):
        assert must_mention in readme, must_mention


def test_missing_bundled_file_raises_an_error_that_says_how_to_fix_it(monkeypatch):
    import dgan.datasets

    monkeypatch.setattr(dgan.datasets, "_DEMO_FILE", "no_such_file.csv.gz")
    with pytest.raises(DataError, match="reinstall dgan"):
        load_demo()
