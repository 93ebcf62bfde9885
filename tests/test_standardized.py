"""match_standardization: where every training series has one mean and one standard
deviation (standardized series by series), generated series get them too
(dgan.encoding.standardized, applied last in dgan.sampling)."""

import numpy as np
import pytest

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.standardized import TOLERANCE, Standardized
from dgan.errors import DataError
from dgan.series import SeriesRows
from model_files import assert_named_when_broken, rewritten
from tiny import tiny_config


def _standardized(x: np.ndarray, ddof: int) -> np.ndarray:
    return (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, ddof=ddof, keepdims=True)


def _moments(rows: SeriesRows, ddof: int) -> tuple[np.ndarray, np.ndarray]:
    series = [np.asarray(s[:, 0], dtype=np.float64) for s in rows]
    return np.array([s.mean() for s in series]), np.array([s.std(ddof=ddof) for s in series])


@pytest.mark.parametrize("ddof", [0, 1])
def test_fit_finds_the_common_mean_and_deviation_and_which_deviation(rng, ddof):
    # Series of different lengths: only the deviation used to standardize is the same
    # in every series, so fit must find which one.
    series = [_standardized(rng.normal(size=(1, n, 1)), ddof)[0] * 2.0 + 5.0 for n in (7, 12, 30)]
    kept = Standardized.fit(SeriesRows.from_list(series), [0])
    mean, deviation, found = kept.moments[0]
    assert found == ddof and mean == pytest.approx(5.0) and deviation == pytest.approx(2.0)


def test_fit_keeps_only_the_standardized_features(rng):
    x = rng.normal(size=(6, 20, 3))
    x[..., 1] = _standardized(x[..., 1:2], 0)[..., 0]
    x[..., 2] = 3.0  # every series flat at one value: no deviation to keep
    assert set(Standardized.fit(SeriesRows.from_padded(x), [0, 1, 2]).moments) == {1}
    assert Standardized.fit(SeriesRows.from_padded(x), [0, 2]) is None
    # Deviations apart by more than the tolerance are not one deviation.
    z = _standardized(x[..., :1], 0)
    z[0] *= 1.0 + 10 * TOLERANCE
    assert Standardized.fit(SeriesRows.from_padded(z), [0]) is None
    # One series, or a series of one step, says nothing about the others.
    assert Standardized.fit(SeriesRows.from_padded(z[1:2]), [0]) is None
    one_step = SeriesRows.from_list([z[1], z[2], z[3][:1]])
    assert Standardized.fit(one_step, [0]) is None


@pytest.mark.parametrize("ddof", [0, 1])
def test_apply_rescales_each_series_and_keeps_its_shape(rng, ddof):
    kept = Standardized({0: (1.5, 0.5, ddof)})
    lengths = [9, 4, 13]
    x = [rng.normal(size=(n, 2)) * 7.0 - 3.0 for n in lengths] + [np.full((5, 2), 4.0)]
    rows = SeriesRows.from_list(x)
    out = kept.apply(rows)
    mean, deviation = _moments(out, ddof)
    np.testing.assert_allclose(mean, 1.5)
    np.testing.assert_allclose(deviation, [0.5, 0.5, 0.5, 0.0])  # the flat one: at the mean
    for a, b in zip(x[:3], list(out)[:3], strict=True):  # the same shape, rescaled
        assert np.corrcoef(a[:, 0], b[:, 0])[0, 1] == pytest.approx(1.0)
        np.testing.assert_array_equal(a[:, 1], b[:, 1])  # another feature: untouched
    assert rows.rows[0, 0] == x[0][0, 0]  # the rows given are not changed
    assert Standardized.from_json(kept.to_json()).moments == kept.moments


def _z_data(rng, n=24, length=12):
    return _standardized(np.cumsum(rng.normal(size=(n, length, 1)), axis=1), 1)


def test_generated_series_are_standardized_as_the_training_ones(rng, tmp_path):
    data = _z_data(rng)
    config = tiny_config(max_sequence_len=12, sample_len=3, epochs=2)
    model = DGAN(config)
    model.train_numpy(data, feature_types=[OutputType.CONTINUOUS], progress_bar=False)
    assert set(model.encoder.standardized.moments) == {0}
    _, features = model.generate_numpy(40)
    series = SeriesRows.from_list(features)
    mean, deviation = _moments(series, 1)
    np.testing.assert_allclose(mean, 0.0, atol=1e-9)
    np.testing.assert_allclose(deviation, 1.0)
    # Saved and loaded, the model keeps it and generates the same.
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.encoder.standardized.moments == model.encoder.standardized.moments
    # Off (as gretel), series keep the spreads the generator gives them.
    plain = DGAN(
        tiny_config(max_sequence_len=12, sample_len=3, epochs=2, match_standardization=False)
    )
    plain.train_numpy(data, feature_types=[OutputType.CONTINUOUS], progress_bar=False)
    assert plain.encoder.standardized is None
    _, deviation = _moments(SeriesRows.from_list(plain.generate_numpy(40)[1]), 1)
    assert np.ptp(deviation) > 1e-3
    assert DGANConfig.gretel(max_sequence_len=12, sample_len=3).match_standardization is False


def test_a_model_file_from_before_decodes_as_generated_and_a_broken_one_is_named(rng, tmp_path):
    model = DGAN(tiny_config(max_sequence_len=12, sample_len=3))
    model.train_numpy(_z_data(rng), feature_types=[OutputType.CONTINUOUS], progress_bar=False)
    path = model.save(tmp_path / "old.dgan")
    with rewritten(path) as (_, state):
        del state["encoder"]["standardized"]
    assert DGAN.load(path).encoder.standardized is None
    for broken in ([[0, 0.0, -1.0, 1]], [[1, 0.0, 1.0, 1]], [[0, 0.0, 1.0, 2]], []):
        where = "encoder.standardized.moments"
        assert_named_when_broken(model, tmp_path / "broken.dgan", where, broken)


def test_the_plan_says_which_features_are_standardized(rng):
    data = np.concatenate([_z_data(rng), rng.normal(size=(24, 12, 1))], axis=2)
    types = [OutputType.CONTINUOUS, OutputType.CONTINUOUS]
    config = tiny_config(max_sequence_len=12, sample_len=3)
    plan = DGAN(config).plan(data, feature_types=types, warm_up_steps=0)
    first, second = (c for c in plan.columns if c.role == "feature")
    assert first.detail.endswith(
        "generated series standardized as every training series is (match_standardization)"
    )
    assert "match_standardization" not in second.detail
    # with a class, the plan reads the same from the encoder's whole fit
    classes = np.arange(24)[:, None] % 2
    plan = DGAN(config).plan(
        data, attributes=classes, attribute_types=[OutputType.DISCRETE],
        feature_types=types, warm_up_steps=0,
    )  # fmt: skip
    first, second = (c for c in plan.columns if c.role == "feature")
    assert "match_standardization" in first.detail and "match_standardization" not in second.detail
    config = tiny_config(max_sequence_len=12, sample_len=3, match_standardization=False)
    plan = DGAN(config).plan(data, feature_types=types, warm_up_steps=0)
    assert not any("match_standardization" in c.detail for c in plan.columns)


def test_training_on_goes_on_only_with_series_standardized_alike(rng):
    model = DGAN(tiny_config(max_sequence_len=12, sample_len=3))
    model.train_numpy(_z_data(rng), feature_types=[OutputType.CONTINUOUS], progress_bar=False)
    model.train_numpy(_z_data(rng), progress_bar=False)  # standardized alike: trains on
    raw = np.cumsum(rng.normal(size=(24, 12, 1)), axis=1)
    with pytest.raises(DataError, match=r"standardized to mean 0 and deviation .*standardize them"):
        model.train_numpy(raw, progress_bar=False)


def test_the_plan_says_what_training_does_where_a_series_is_dropped(rng):
    data = _z_data(rng)
    data[0] = np.nan  # a series with no values: dropped before the encoder is fitted
    config = tiny_config(max_sequence_len=12, sample_len=3)
    types = [OutputType.CONTINUOUS]
    plan = DGAN(config).plan(data, feature_types=types, warm_up_steps=0)
    model = DGAN(config)
    model.train_numpy(data, feature_types=types, progress_bar=False)
    said = any("match_standardization" in c.detail for c in plan.columns)
    assert said and model.encoder.standardized is not None
