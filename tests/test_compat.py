"""The gretel-synthetics API, called the way gretel users call it, end to end.

A user of ``gretel_synthetics.timeseries_dgan`` switches to dgan by changing the imports
only; everything below is written as such code is (keyword arguments gretel's names,
``DfStyle`` values, configs mutated before the model is built, ``model.pt`` files...).
Networks are kept small so that the module runs in seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dgan import DGAN, DfStyle, DGANConfig, OutputType, ProgressInfo
from dgan.errors import DataError, ParameterError
from tiny import TINY_NETWORKS


@pytest.fixture
def config() -> DGANConfig:
    return DGANConfig(
        max_sequence_len=20,
        sample_len=5,
        batch_size=10,
        epochs=1,
        cuda=False,
        seed=0,
        **TINY_NETWORKS,
    )


@pytest.fixture
def attribute_data(rng):
    n = 40
    attributes = np.concatenate((rng.random((n, 1)), rng.integers(0, 3, size=(n, 1))), axis=1)
    return attributes, [OutputType.CONTINUOUS, OutputType.DISCRETE]


@pytest.fixture
def feature_data(rng):
    n = 40
    features = np.concatenate((rng.integers(0, 4, size=(n, 20, 1)), rng.random((n, 20, 1))), axis=2)
    return features, [OutputType.DISCRETE, OutputType.CONTINUOUS]


def test_readme_numpy_usage(attribute_data, feature_data, config):
    attributes, attribute_types = attribute_data
    features, feature_types = feature_data
    progress: list[ProgressInfo] = []

    model = DGAN(config)
    model.train_numpy(
        attributes=attributes,
        features=features,
        attribute_types=attribute_types,
        feature_types=feature_types,
        progress_callback=progress.append,
    )
    synthetic_attributes, synthetic_features = model.generate_numpy(18)

    assert synthetic_attributes.shape == (18, 2)
    assert np.array(synthetic_features).shape == (18, 20, 2)
    assert set(synthetic_attributes[:, 1]) <= {0.0, 1.0, 2.0}
    assert set(np.array(synthetic_features)[:, :, 0].ravel()) <= {0, 1, 2, 3}
    assert progress[-1].frac_completed == 1.0  # the last batch done: all of them


def test_no_attributes_and_config_changed_before_building(feature_data, config):
    features, feature_types = feature_data
    config.epochs = 2  # gretel users adjust the config object before building the model
    config.use_attribute_discriminator = False
    model = DGAN(config=config)
    model.train_numpy(features=features, feature_types=feature_types)
    synthetic_attributes, synthetic_features = model.generate_numpy(5)

    assert synthetic_attributes is None
    assert np.array(synthetic_features).shape == (5, 20, 2)
    assert len(model.history) == 2 and model.is_built


def test_train_dataframe_wide(rng, config):
    n = 30
    df = pd.DataFrame(
        {
            "a1": rng.integers(0, 3, size=n),
            "a2": rng.random(n),
            "2022-01-01": rng.random(n),
            "2022-02-01": rng.random(n),
            "2022-03-01": rng.random(n),
            "2022-04-01": rng.random(n),
        }
    )
    config.max_sequence_len = 4
    config.sample_len = 1

    dg = DGAN(config=config)
    dg.train_dataframe(
        df=df, attribute_columns=["a1", "a2"], discrete_columns=["a1"], df_style=DfStyle.WIDE
    )
    synthetic_df = dg.generate_dataframe(5)

    assert synthetic_df.shape == (5, 6)
    assert list(synthetic_df.columns) == list(df.columns)
    assert synthetic_df.dtypes.to_dict() == df.dtypes.to_dict()  # a1 stays an int column
    assert set(synthetic_df["a1"]) <= {0, 1, 2}


def test_train_dataframe_long(rng, config):
    n = 30
    df = pd.DataFrame(
        {
            "example_id": np.repeat(range(n), 4),
            "a1": np.repeat(rng.integers(0, 3, size=n), 4),
            "a2": np.repeat(rng.random(n), 4),
            "f1": rng.random(4 * n),
            "f2": rng.random(4 * n),
        }
    )
    config.max_sequence_len = 4
    config.sample_len = 2

    dg = DGAN(config=config)
    dg.train_dataframe(
        df=df,
        attribute_columns=["a1", "a2"],
        example_id_column="example_id",
        discrete_columns=["a1"],
        df_style=DfStyle.LONG,
    )
    synthetic_df = dg.generate_dataframe(5)

    assert synthetic_df.shape == (5 * 4, 5)
    assert list(synthetic_df.columns) == list(df.columns)
    assert synthetic_df["example_id"].value_counts().tolist() == [4] * 5
    # Attributes are constant within each generated example.
    assert (synthetic_df.groupby("example_id")[["a1", "a2"]].nunique() == 1).all().all()


def test_long_with_float_example_ids_and_string_times(rng, config):
    n = 50
    df = pd.DataFrame(
        {
            "example_id": np.repeat(np.arange(10.0, 15.0, 0.5), repeats=5),
            "time": [str(x) for x in pd.date_range("2022-01-01", periods=n)],
            "f": rng.random(n),
        }
    )
    config.max_sequence_len = 5
    dg = DGAN(config=config)
    dg.train_dataframe(df, example_id_column="example_id", time_column="time", df_style="long")
    synthetic_df = dg.generate_dataframe(3)
    assert list(synthetic_df.columns) == ["example_id", "time", "f"]
    assert synthetic_df["example_id"].dtype == np.float64
    # Times are regenerated on the training grid (the first example's times).
    assert synthetic_df["time"].tolist()[:5] == df["time"].tolist()[:5]


@pytest.mark.parametrize("binary_encoder_cutoff", [150, 1])
def test_strings_round_trip_in_long_and_wide_frames(rng, config, binary_encoder_cutoff):
    categories = ["aa", "bb", "cc", "dd", "ee", ""]
    config.max_sequence_len = 5
    config.binary_encoder_cutoff = binary_encoder_cutoff

    long = pd.DataFrame(
        {
            "c": rng.choice(categories, 50),
            "n1": rng.random(50),
            "example_id": np.repeat(range(10), 5),
        }
    )
    dg = DGAN(config=config)
    dg.train_dataframe(df=long, example_id_column="example_id", df_style=DfStyle.LONG)
    synthetic = dg.generate_dataframe(5)
    assert len(synthetic) == 25 and set(synthetic["c"]) <= set(categories)
    assert synthetic["c"].dtype == long["c"].dtype

    wide = pd.DataFrame(rng.random((30, 5)))
    wide["attribute"] = rng.choice(categories, 30)
    dg = DGAN(config=config)
    dg.train_dataframe(df=wide, attribute_columns=["attribute"], df_style=DfStyle.WIDE)
    synthetic = dg.generate_dataframe(20)
    assert synthetic.shape == (20, 6) and set(synthetic["attribute"]) <= set(categories)


def test_numpy_array_of_strings(rng, config):
    n = 50
    features = np.stack(
        [rng.choice(["aa", "bb", "cc"], n), rng.random(n), rng.random(n)], axis=1
    ).reshape(-1, 5, 3)  # every value a string, numbers included
    config.max_sequence_len = 5
    dg = DGAN(config=config)
    dg.train_numpy(features=features)
    synthetic_attributes, synthetic_features = dg.generate_numpy(5)

    assert synthetic_attributes is None
    values = np.array(synthetic_features)
    assert values.shape == (5, 5, 3)
    assert set(values[:, :, 0].ravel()) <= {"aa", "bb", "cc"}
    assert all(isinstance(v, float) for v in values[:, :, 1:].ravel())  # numbers as numbers


def test_nans_are_interpolated_or_refused(rng, config):
    n = 40
    features = np.concatenate(
        (rng.integers(0, 4, size=(n, 20, 1)), rng.random((n, 20, 1)), rng.random((n, 20, 1))),
        axis=2,
    )
    features[11, 3, 1] = features[25:30, 17, 1] = np.nan  # sparse: interpolated
    features[5:8, 2:4, 2] = np.nan  # short runs: interpolated
    features[30:34, 4:12, 2] = np.nan  # long runs: dropped
    types = [OutputType.DISCRETE, OutputType.CONTINUOUS, OutputType.CONTINUOUS]
    dg = DGAN(config=config)
    dg.train_numpy(features=features, feature_types=types)
    _, synthetic_features = dg.generate_numpy(20)
    assert not np.isnan(np.array(synthetic_features, dtype=float)).any()

    wide = pd.DataFrame({f"2022-{m:02d}-01": rng.random(n) for m in range(1, 5)})
    wide["2022-02-01"] = np.nan
    config.max_sequence_len, config.sample_len = 4, 1
    with pytest.raises(DataError, match="NaN"):
        DGAN(config=config).train_dataframe(df=wide, df_style=DfStyle.WIDE)

    long = pd.DataFrame({"example_id": np.repeat(range(n), 4), "f1": rng.random(4 * n)})
    long.loc[[0, 50, 90], "f1"] = np.nan
    dg = DGAN(config=config)
    dg.train_dataframe(df=long, example_id_column="example_id", df_style=DfStyle.LONG)
    assert not dg.generate_dataframe(n).isna().any().any()


def test_variable_length_long_frame(rng, config):
    lengths = rng.integers(2, 5, size=30)
    df = pd.DataFrame(
        {
            "example_id": np.repeat(np.arange(30), lengths),
            "f": rng.random(lengths.sum()),
        }
    )
    config.max_sequence_len, config.sample_len = 4, 1
    dg = DGAN(config=config)
    dg.train_dataframe(df, example_id_column="example_id", df_style=DfStyle.LONG)
    noise = dict(
        attribute_noise=dg.attribute_noise_func(10), feature_noise=dg.feature_noise_func(10)
    )
    synthetic_df = dg.generate_dataframe(**noise)
    _, series = dg.generate_numpy(**noise)
    # One row per generated step: the frame keeps each series' own length.
    rows = synthetic_df.groupby("example_id", sort=False).size()
    assert rows.tolist() == [len(s) for s in series]
    np.testing.assert_allclose(synthetic_df["f"], np.concatenate(series)[:, 0])

    too_long = pd.DataFrame({"example_id": np.repeat([0, 1], [4, 6]), "f": rng.random(10)})
    with pytest.raises(DataError, match=r"longer than max_sequence_len=4: 1 \(6 rows\)"):
        DGAN(config=config).train_dataframe(
            too_long, example_id_column="example_id", df_style=DfStyle.LONG
        )


def test_save_and_load(attribute_data, feature_data, config, tmp_path):
    attributes, attribute_types = attribute_data
    features, feature_types = feature_data
    config.attribute_noise_dim = config.feature_noise_dim = 25
    dg = DGAN(config=config)
    dg.train_numpy(
        attributes=attributes,
        features=features,
        attribute_types=attribute_types,
        feature_types=feature_types,
    )

    n = 25
    attribute_noise = dg.attribute_noise_func(n)
    feature_noise = dg.feature_noise_func(n)
    expected_attributes, expected_features = dg.generate_numpy(
        attribute_noise=attribute_noise, feature_noise=feature_noise
    )
    file_name = str(tmp_path / "model.pt")
    dg.save(file_name)
    loaded_dg = DGAN.load(file_name)
    attributes, features = loaded_dg.generate_numpy(
        attribute_noise=attribute_noise, feature_noise=feature_noise
    )
    np.testing.assert_allclose(attributes, expected_attributes)
    np.testing.assert_allclose(features, expected_features)
    assert type(dg.load(file_name)) is DGAN  # gretel code also calls load on an instance


def test_save_and_load_dataframe(rng, config, tmp_path):
    df = pd.DataFrame(
        {
            "a1": rng.integers(0, 3, size=6),
            "2022-01-01": rng.random(6),
            "2022-02-01": rng.random(6),
            "2022-03-01": rng.random(6),
        }
    )
    config.max_sequence_len, config.sample_len = 3, 1
    dg = DGAN(config=config)
    dg.train_dataframe(df=df, attribute_columns=["a1"], discrete_columns=["a1"])
    file_name = str(tmp_path / "model.pt")
    dg.save(file_name)
    synthetic_df = DGAN.load(file_name).generate_dataframe(10)
    assert list(synthetic_df.columns) == list(df.columns)
    assert synthetic_df.dtypes.to_dict() == df.dtypes.to_dict()


def test_errors_are_catchable_as_builtin_exceptions(rng, config):
    with pytest.raises(RuntimeError):
        DGAN(config).generate_numpy(1)  # not trained yet
    with pytest.raises(ValueError, match="at least 2 examples"):
        DGAN(config).train_numpy(features=rng.random((1, 20, 2)))
    with pytest.raises(ValueError, match="max_sequence_len"):
        DGAN(config).train_numpy(features=rng.random((10, 25, 2)))
    df = pd.DataFrame({"a1": [1, 2], "t0": [0.1, 0.2], "t1": [0.3, 0.4]})
    with pytest.raises(ParameterError, match=r"both attribute_columns and feature_columns"):
        DGAN(config).train_dataframe(df, attribute_columns=["a1"], feature_columns=["a1", "t0"])
    long = pd.DataFrame({"example_id": [0, 0, 1, 1], "f": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(ParameterError, match="example_id_column='example_id' must not"):
        DGAN(config).train_dataframe(
            long, example_id_column="example_id", discrete_columns=["example_id"], df_style="long"
        )


def test_long_without_example_id_is_split_into_whole_chunks(rng, config):
    # gretel's auto-split: the generated frame has the training columns and, as gretel's,
    # an "example_id" column last numbering the series (max_sequence_len rows each).
    n = 40
    df = pd.DataFrame(
        {
            "date": pd.date_range(start="1/1/2018", periods=3 * n + 2),
            "f1": rng.random(3 * n + 2),
            "f2": rng.random(3 * n + 2),
        }
    )
    config.max_sequence_len, config.sample_len = 6, 2
    dg = DGAN(config=config)
    dg.train_dataframe(df=df, df_style=DfStyle.LONG, time_column="date")
    assert not dg.encoder.variable_length  # the 2 rows left over are not a short series

    synthetic_df = dg.generate_dataframe(5)
    assert synthetic_df.shape == (6 * 5, 4)
    assert list(synthetic_df.columns) == ["date", "f1", "f2", "example_id"]
    assert synthetic_df["example_id"].tolist() == [i for i in range(5) for _ in range(6)]
    assert synthetic_df["date"].tolist() == df["date"].tolist()[:6] * 5

    for rows, error in [(5, "fewer than max_sequence_len=6"), (9, "at least 2 examples")]:
        with pytest.raises(DataError, match=error):
            DGAN(config=config).train_dataframe(df.head(rows), time_column="date", df_style="long")


def test_gretel_error_phrases_and_classes(rng, config):
    # What gretel-synthetics' own tests match, followed by dgan's fix text.
    with pytest.raises(DataError, match="multiple examples to train") as error:
        DGAN(config).train_numpy(features=rng.random((1, 20, 2)))
    assert "split long series" in str(error.value)
    with pytest.raises(ParameterError, match="max_sequence_len"):  # gretel's class...
        DGAN(config).train_numpy(features=rng.random((10, 25, 2)))
    with pytest.raises(DataError, match="max_sequence_len"):  # ...and dgan's
        DGAN(config).train_numpy(features=[rng.random((25, 2)), rng.random((5, 2))])

    long = pd.DataFrame({"example_id": [0, 0, 1, 1], "t": [0, 1, 0, 1], "f": [1.0, 2, 3, 4]})
    cases = [
        (dict(discrete_columns=["example_id"]), ParameterError, "any other column lists"),
        (dict(time_column="example_id"), ParameterError, "values cannot be the same"),
        (dict(attribute_columns=["f"], feature_columns=["f"]), ParameterError, "not have overlap"),
    ]
    for kwargs, error_class, phrase in cases:
        with pytest.raises(error_class, match=phrase):
            DGAN(config).train_dataframe(
                long, **{"example_id_column": "example_id", **kwargs}, df_style="long"
            )
    varying = long.assign(a=["x", "y", "z", "z"])
    with pytest.raises(DataError, match="not constant within each example"):
        DGAN(config).train_dataframe(
            varying, example_id_column="example_id", attribute_columns=["a"], df_style="long"
        )
    config.max_sequence_len, config.sample_len = 6, 2
    with pytest.raises(DataError, match="requires max_sequence_len"):
        DGAN(config).train_dataframe(long[["f"]], df_style="long")
    one_and_a_bit = pd.DataFrame({"f": rng.random(8)})  # one whole chunk and 2 rows
    with pytest.raises(DataError, match="multiple examples to train"):
        DGAN(config).train_dataframe(one_and_a_bit, df_style="long")


def test_train_dataframe_long_attribute_mismatch_nans(rng, config):
    """gretel-synthetics' own test: an example whose attribute is blank in some rows and a
    value in others. dgan explains the blank cells; gretel's phrase stays in the message
    (before: the explanation replaced it, and gretel's test failed)."""
    df = pd.DataFrame(
        {"example_id": np.repeat(np.arange(10), repeats=5), "a": "foo", "f": rng.random(50)}
    )
    df.loc[0:5, "a"] = np.nan  # rows 0-5: all of example 0 and the first row of example 1
    config.max_sequence_len = 5
    with pytest.raises(DataError, match="not constant within each example") as error:
        DGAN(config).train_dataframe(
            df, example_id_column="example_id", attribute_columns=["a"], df_style="long"
        )
    assert "is missing (a blank cell) in some rows of example(s) 1" in str(error.value)


@pytest.mark.parametrize("style", [DfStyle.LONG, "long"])
def test_long_auto_split_with_attributes_speaks_gretels_words(style):
    df = pd.DataFrame({"kind": ["a", "b"] * 6, "value": np.arange(12.0)})
    model = DGAN(DGANConfig(max_sequence_len=3, sample_len=1, epochs=1, cuda=False))
    with pytest.raises(ParameterError, match="auto-splitting not available"):
        model.train_dataframe(df, attribute_columns=["kind"], df_style=style, progress_bar=False)
    assert not model.is_built


def test_auto_split_example_ids_continue_across_generation_chunks(rng, config, tmp_path):
    from dgan.cli.chunked import write_generated

    df = pd.DataFrame({"f1": rng.random(60), "f2": rng.random(60)})
    config.max_sequence_len, config.sample_len = 6, 2
    model = DGAN(config=config)
    model.train_dataframe(df=df, df_style=DfStyle.LONG, progress_bar=False)
    series, rows = write_generated(model, tmp_path / "out.csv", n=5, chunk_size=2)
    out = pd.read_csv(tmp_path / "out.csv")
    assert (series, rows) == (5, 30)
    assert out["example_id"].tolist() == [i for i in range(5) for _ in range(6)]
