"""Tests of dgan.metrics: every metric scores a perfect copy best and broken data worse."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dgan.errors import DataError, ParameterError
from dgan.metrics import (
    METRIC_DESCRIPTIONS,
    SeriesData,
    attribute_feature_relation,
    autocorrelation_distance,
    check_same_columns,
    discriminative_score,
    evaluate,
    factorize_pair,
    feature_correlation_distance,
    judge_memorisation,
    marginal_distances,
    mean_autocorrelation,
    memorisation,
    total_variation_distance,
    train_synthetic_test_real,
    wasserstein_1d,
)
from dgan.metrics.learned import _encode_pair  # the one private helper tested: memory bound
from dgan.metrics.memorisation import COPIES, NO_COPYING, SOME

CONTINUOUS = ["level", "flow"]


# --- ways to break data, each aimed at what one metric measures ----------------------


def _replace(data: SeriesData, features=None, attributes=None) -> SeriesData:
    return SeriesData(
        features=data.features if features is None else features,
        feature_names=data.feature_names,
        feature_discrete=data.feature_discrete,
        attributes=data.attributes if attributes is None else attributes,
        attribute_names=data.attribute_names,
        attribute_discrete=data.attribute_discrete,
    )


def _noise(data: SeriesData, rng: np.random.Generator) -> SeriesData:
    """Same shapes, unrelated values: Gaussian continuous values, uniform categories."""
    pooled = {name: np.concatenate(data.feature_column(name)) for name in CONTINUOUS}
    features = []
    for x in data.features:
        y = x.copy()
        for j, name in enumerate(CONTINUOUS):
            y[:, j] = rng.normal(pooled[name].mean(), pooled[name].std(), size=len(x))
        y[:, 2] = rng.choice(np.array(["high", "low"], dtype=object), size=len(x))
        features.append(y)
    attributes = data.attributes.copy()
    attributes[:, 0] = rng.choice(
        np.array(["calm", "wavy", "spiky"], dtype=object), data.n_examples
    )
    attributes[:, 1] = rng.normal(5.0, 1.0, size=data.n_examples)
    return _replace(data, features, attributes)


def _time_shuffled(data: SeriesData, rng: np.random.Generator) -> SeriesData:
    """Each series' steps in random order: marginals kept, temporal structure gone."""
    return _replace(data, features=[x[rng.permutation(len(x))] for x in data.features])


def _attributes_shuffled(data: SeriesData, rng: np.random.Generator) -> SeriesData:
    """Attributes dealt to the wrong series: every marginal kept, the relation gone."""
    return _replace(data, attributes=data.attributes[rng.permutation(data.n_examples)])


def _decorrelated(data: SeriesData, rng: np.random.Generator) -> SeriesData:
    """'flow' shuffled in time within each series, so it no longer tracks 'level'."""
    features = []
    for x in data.features:
        y = x.copy()
        y[:, 1] = x[rng.permutation(len(x)), 1]
        features.append(y)
    return _replace(data, features=features)


# --- the container --------------------------------------------------------------------


def test_series_data_lists_every_problem_with_its_fix():
    with pytest.raises(DataError) as info:
        SeriesData(
            features=[np.zeros((3, 2)), np.zeros((4, 3))],
            feature_names=["a", "a"],
            feature_discrete=[False],
            attributes=np.zeros((3, 1)),
            attribute_names=["b"],
            attribute_discrete=[False],
        )
    message = str(info.value)
    assert "problems with the SeriesData" in message
    assert "feature_discrete has 1" in message and "one True/False per feature" in message
    assert "Duplicate feature names ['a']" in message
    assert "Example 1 has 3 feature columns" in message
    assert "attributes has 3 rows for 2 examples" in message


def test_series_data_rejects_text_and_nan_in_continuous_columns():
    features = [np.array([[1.0, "x"], [np.nan, "y"]], dtype=object)]
    with pytest.raises(DataError, match="mark it discrete"):
        SeriesData(features, ["speed", "mode"], [False, False])
    with pytest.raises(DataError, match="impute or drop"):
        SeriesData(features, ["speed", "mode"], [False, True])


def test_series_data_needs_attributes_when_it_has_attribute_names():
    with pytest.raises(DataError, match="attributes is None"):
        SeriesData([np.zeros((2, 1))], ["a"], [False], None, ["b"], [True])


def test_from_arrays_infers_discrete_columns_and_applies_lengths():
    features = np.empty((2, 4, 2), dtype=object)
    features[..., 0] = 1.5
    features[..., 1] = "on"
    attributes = np.array([[1.0, "x"], [2.0, "y"]], dtype=object)
    data = SeriesData.from_arrays(features, attributes, lengths=[4, 2])
    assert data.feature_discrete == [False, True]
    assert data.attribute_discrete == [False, True]
    assert data.lengths.tolist() == [4, 2]


def test_columns_must_match_between_real_and_synthetic(metrics_toy_data):
    real = metrics_toy_data(20)
    renamed = SeriesData(
        real.features,
        ["level", "flow", "mode"],
        real.feature_discrete,
        real.attributes,
        real.attribute_names,
        real.attribute_discrete,
    )
    with pytest.raises(DataError, match="same columns"):
        check_same_columns(real, renamed)
    with pytest.raises(DataError, match="same columns"):
        evaluate(real, renamed)


# --- numeric helpers --------------------------------------------------------------------


def test_wasserstein_matches_known_values_and_scipy(metrics_rng):
    assert wasserstein_1d(np.array([0.0]), np.array([3.0])) == 3.0
    assert wasserstein_1d(np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 2.0])) == 0.0
    import scipy.stats as scipy_stats  # a test dependency (pyproject's "test" extra)

    u, v = metrics_rng.normal(size=57), metrics_rng.exponential(size=31)
    assert wasserstein_1d(u, v) == pytest.approx(scipy_stats.wasserstein_distance(u, v))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=20),
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=20),
    st.floats(-1e3, 1e3),
)
def test_wasserstein_is_a_symmetric_shift_aware_distance(u, v, shift):
    u, v = np.array(u), np.array(v)
    assert wasserstein_1d(u, v) == pytest.approx(wasserstein_1d(v, u), abs=1e-9)
    assert wasserstein_1d(u, v) >= 0
    assert wasserstein_1d(u, u + shift) == pytest.approx(abs(shift), rel=1e-6, abs=1e-6)


def test_categories_are_shared_across_sides_and_types():
    real = np.array(["a", 1, None], dtype=object)
    synthetic = np.array([1.0, "1", float("nan"), "new"], dtype=object)
    real_codes, synth_codes, labels = factorize_pair(real, synthetic)
    assert labels[real_codes[1]] == 1 and synth_codes[0] == real_codes[1]  # 1 == 1.0
    assert synth_codes[1] != real_codes[1]  # the string "1" is another category
    assert labels[real_codes[2]] == labels[synth_codes[2]] == "<missing>"
    assert total_variation_distance(np.array(["a", "a"]), np.array(["b", "b"])) == 1.0
    assert total_variation_distance(real, real) == 0.0


def test_mean_autocorrelation_matches_a_direct_computation(metrics_rng):
    series = [metrics_rng.normal(size=n).cumsum() for n in (5, 9, 12)]
    series.append(np.full(7, 3.0))  # constant: no autocorrelation, must be left out

    def direct(x, k):
        y = x - x.mean()
        return (y[:-k] * y[k:]).sum() / (y * y).sum()

    expected = [np.mean([direct(x, k) for x in series[:3] if len(x) > k]) for k in range(1, 12)]
    np.testing.assert_allclose(mean_autocorrelation(series), expected, atol=1e-10)
    assert np.isnan(mean_autocorrelation(series, max_lag=14)[12:]).all()


# --- every metric: a copy scores best, broken data clearly worse -----------------------


def test_distribution_metrics_score_a_copy_perfectly(metrics_toy_data):
    real = metrics_toy_data()
    for metric in (
        marginal_distances,
        autocorrelation_distance,
        attribute_feature_relation,
        feature_correlation_distance,
    ):
        assert metric(real, real)["score"] == pytest.approx(0.0, abs=1e-12), metric.__name__


def test_metrics_tell_fresh_samples_from_broken_data(metrics_toy_data, metrics_rng):
    real, fresh = metrics_toy_data(), metrics_toy_data()
    cases = {
        marginal_distances: _noise(real, metrics_rng),
        autocorrelation_distance: _time_shuffled(real, metrics_rng),
        attribute_feature_relation: _attributes_shuffled(real, metrics_rng),
        feature_correlation_distance: _decorrelated(real, metrics_rng),
    }
    for metric, broken in cases.items():
        fresh_score, broken_score = metric(real, fresh)["score"], metric(real, broken)["score"]
        # A second sample of the same process is close; the broken data is far.
        assert broken_score > 3 * fresh_score, (metric.__name__, fresh_score, broken_score)


def test_marginals_report_each_variable_and_sequence_lengths(metrics_toy_data):
    real = metrics_toy_data(60)
    short = _replace(real, features=[x[: max(1, len(x) // 2)] for x in real.features])
    result = marginal_distances(real, short)
    assert set(result["features"]) == {"level", "flow", "state"}
    assert result["features"]["state"]["distance"] == "total_variation"
    assert result["attributes"]["scale"]["distance"] == "wasserstein_1_in_real_std"
    assert result["sequence_length"] > 0.3
    assert marginal_distances(real, real)["sequence_length"] == 0.0


def test_discriminative_score_separates_noise_from_a_copy(metrics_toy_data, metrics_rng):
    real = metrics_toy_data(100)
    same = discriminative_score(real, real)
    noisy = discriminative_score(real, _noise(real, metrics_rng))
    assert len(same["per_seed"]) == 3 and same["std"] >= 0
    assert same["score"] < 0.15
    assert noisy["score"] > 0.35


def test_discriminative_score_is_reproducible_and_leaves_global_state_alone(metrics_toy_data):
    real = metrics_toy_data(60)
    torch.manual_seed(123)
    threads = torch.get_num_threads()
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    first = discriminative_score(real, real, seed=7, n_seeds=1)
    assert torch.rand(1) == expected_next  # the caller's torch RNG stream is untouched
    assert torch.get_num_threads() == threads
    assert discriminative_score(real, real, seed=7, n_seeds=1) == first


def test_tstr_classification_drops_when_attributes_are_shuffled(metrics_toy_data, metrics_rng):
    real = metrics_toy_data(150)
    same = train_synthetic_test_real(real, real)
    broken = train_synthetic_test_real(real, _attributes_shuffled(real, metrics_rng))
    assert same["task"] == "classification" and same["target"] == "kind"
    assert same["real_accuracy"] > same["majority_class_accuracy"] + 0.2  # the task is learnable
    assert same["score"] > 0.9
    # Trained on shuffled attributes, it learns little beyond the most common class.
    assert broken["synthetic_accuracy"] < same["majority_class_accuracy"] + 0.15
    assert broken["score"] < 0.75


def test_tstr_next_step_without_discrete_attributes(metrics_rng):
    def ar1(n: int, phi: float) -> SeriesData:
        x = np.zeros((n, 16, 1))
        for t in range(1, 16):
            x[:, t] = phi * x[:, t - 1] + metrics_rng.normal(size=(n, 1))
        return SeriesData.from_arrays(x, feature_names=["value"])

    real = ar1(120, 0.95)
    same = train_synthetic_test_real(real, real)
    wrong = train_synthetic_test_real(real, ar1(120, -0.95))
    assert same["task"] == "next_step"
    assert same["score"] > 0.9
    assert wrong["score"] < 0.6
    assert wrong["synthetic_mae"] > wrong["real_mae"]


def test_tstr_rejects_a_target_that_is_not_a_discrete_attribute(metrics_toy_data):
    real = metrics_toy_data(20)
    with pytest.raises(ParameterError, match="choose one of \\['kind'\\]"):
        train_synthetic_test_real(real, real, target_attribute="scale")
    with pytest.raises(ParameterError, match="not a discrete attribute"):
        evaluate(real, real, target_attribute="nope")


# --- the entry point ------------------------------------------------------------------------


def test_evaluate_returns_plain_json_with_a_reading_for_every_metric(metrics_toy_evaluation):
    _, _, result = metrics_toy_evaluation
    json.dumps(result, allow_nan=False)  # no numpy types, no NaN
    assert set(result) == {"info", "verdict", "memorisation", *METRIC_DESCRIPTIONS}
    assert result["info"] == {"n_real": 60, "n_synthetic": 50, "seed": 0}
    assert "memorisation" not in result["verdict"]["counted"]  # its own verdict
    assert result["memorisation"]["verdict"] in (NO_COPYING, SOME, COPIES)
    for name in METRIC_DESCRIPTIONS:
        assert isinstance(result[name]["score"], float), name
        assert result[name]["better"] in ("lower", "higher")
        assert ("lower is better" in METRIC_DESCRIPTIONS[name]) == (
            result[name]["better"] == "lower"
        )


# ----- memorisation -------------------------------------------------------------------------
def test_memorisation_tells_copies_from_fresh_draws_of_the_same_distribution(metrics_toy_data):
    """Series drawn afresh are near-copies about as often as real series of each other (the
    5% quantile); series copied from the training data, with a little noise, always are."""
    train, fresh = metrics_toy_data(300), metrics_toy_data(300)  # two draws
    noisy = [x.copy() for x in train.features]
    for x in noisy:
        x[:, 0] = x[:, 0].astype(float) + 1e-3  # the continuous feature, nudged
    copies = _replace(train, features=noisy)
    fresh_result, copied = memorisation(train, fresh), memorisation(train, copies)
    assert fresh_result["score"] < 0.15 and fresh_result["median_distance_ratio"] > 0.8
    assert copied["score"] == 1.0 and copied["median_distance_ratio"] < 0.1
    assert judge_memorisation(copied, {"score": 0.05, "std": 0.01}) == COPIES
    assert judge_memorisation(fresh_result, {"score": 0.05, "std": 0.01}) == NO_COPYING


def test_memorisation_finds_copies_of_the_loudest_class_when_classes_are_decades_apart():
    """Classes 100 times apart: on the values' own scale every quiet series sits near 0, so
    the closest real pairs are quiet ones and a loud series copied with 1% noise looked
    farther off than they (a third of the series copied read 0.8%). Compared on the
    marginals' log scale, each class keeps its detail."""
    rng = np.random.default_rng(0)
    amplitudes = np.repeat([0.01, 1.0, 100.0], 40)[:, None, None]

    def draw() -> np.ndarray:
        steps = np.arange(64)[None, :, None]
        wave = np.sin(
            2 * np.pi * steps / rng.uniform(8, 20, (120, 1, 1)) + rng.uniform(0, 6, (120, 1, 1))
        )
        return amplitudes * (wave + 0.3 * rng.normal(size=(120, 64, 1)))

    train, fresh = draw(), draw()
    loud = amplitudes[:, 0, 0] == 100.0
    copied = fresh.copy()
    copied[loud] = train[loud] * (1 + 0.01 * rng.normal(size=train[loud].shape))
    real = SeriesData.from_arrays(train)
    assert memorisation(real, SeriesData.from_arrays(fresh))["score"] < 0.05
    assert memorisation(real, SeriesData.from_arrays(copied))["score"] >= loud.mean()


def test_memorisation_compares_a_continuous_attribute_decades_apart_on_the_log_scale():
    """Series alike but for a continuous attribute in three classes 100 times apart: on its
    own scale every quiet value sits near 0, so copies of loud values (to a millionth)
    looked no nearer than quiet neighbours (0.07 flagged, against the copied third)."""
    rng = np.random.default_rng(0)
    level = np.repeat([0.01, 1.0, 100.0], 40)

    def draw() -> np.ndarray:
        return (level * np.exp(rng.uniform(-0.5, 0.5, 120)))[:, None]

    alike = np.ones((120, 8, 1))
    train, fresh = draw(), draw()
    loud = level == 100.0
    copied = fresh.copy()
    copied[loud] = train[loud] * (1 + 1e-6 * rng.normal(size=(loud.sum(), 1)))
    real = SeriesData.from_arrays(alike, train)
    assert memorisation(real, SeriesData.from_arrays(alike, fresh))["score"] < 0.05
    assert memorisation(real, SeriesData.from_arrays(alike, copied))["score"] >= loud.mean()


def test_memorisation_does_not_count_averages_of_real_series_as_copies():
    """A series halfway between two training series is nearer to each than real series are
    to each other, but it copies neither: the nearest-to-second-nearest ratio tells."""
    rng = np.random.default_rng(0)
    train = SeriesData.from_arrays(rng.normal(size=(200, 8, 2)))
    stacked = np.stack(train.features)
    averages = SeriesData.from_arrays((stacked[0::2] + stacked[1::2]) / 2)
    result = memorisation(train, averages)
    assert result["median_distance_ratio"] < 0.9  # close to the training series...
    assert result["score"] < 0.1  # ...but no single one is copied


def test_evaluate_reports_memorisation_of_copied_series(metrics_toy_data):
    train = metrics_toy_data(120)
    result = evaluate(train, train, n_seeds=1)
    assert result["memorisation"]["score"] == 1.0
    assert result["memorisation"]["baseline"]["score"] < 0.2
    assert result["memorisation"]["verdict"] == COPIES


def test_memorisation_handles_variable_lengths_and_too_little_data():
    rng = np.random.default_rng(0)
    series = [rng.normal(size=(int(n), 1)) for n in rng.integers(2, 9, 50)]
    data = SeriesData.from_arrays(series)
    assert memorisation(data, data)["score"] == 1.0
    assert memorisation(data.subset(np.arange(2)), data)["score"] is None


def test_memorisation_counts_verbatim_copies_when_training_series_repeat():
    """With 5% of training series twinned, the distances among training series reach 0 at
    the 5% quantile: a generator returning its training set verbatim must still score 1."""
    rng = np.random.default_rng(0)
    stacked = rng.normal(size=(200, 8, 2))
    stacked[190:] = stacked[:10]  # ten series appear twice
    train = SeriesData.from_arrays(stacked)
    result = memorisation(train, train)
    assert result["score"] == 1.0
    assert result["n_distinct_train"] == 190 and result["threshold"] > 0
    fresh = memorisation(train, SeriesData.from_arrays(rng.normal(size=(200, 8, 2))))
    assert fresh["score"] < 0.15


def test_memorisation_searches_every_training_series_however_many():
    """A verbatim copier of more series than max_examples is a copier: only the synthetic
    side is sampled, each sampled series searched against all training series."""
    rng = np.random.default_rng(1)
    train = SeriesData.from_arrays(rng.normal(size=(3000, 4, 1)))
    result = memorisation(train, train, max_examples=500)
    assert result["score"] == 1.0
    assert result["n_train"] == 3000 and result["n_synthetic"] == 500


def test_evaluate_checks_copies_against_every_real_series_not_its_sample():
    rng = np.random.default_rng(2)
    real = SeriesData.from_arrays(rng.normal(size=(2000, 4, 1)))
    result = evaluate(real, real, n_seeds=1, max_examples=100, baseline=False)
    assert result["memorisation"]["score"] == 1.0  # was about max_examples / n
    assert result["memorisation"]["n_train"] == 2000


def test_evaluate_tolerates_categories_present_on_one_side_only(metrics_toy_data):
    real = metrics_toy_data(40)
    attributes = real.attributes.copy()
    attributes[attributes[:, 0] == "spiky", 0] = "novel"  # synthetic lacks spiky, has novel
    features = [x.copy() for x in real.features]
    features[0][:, 2] = 7  # a number among the strings of a discrete feature
    synthetic = _replace(real, features=features, attributes=attributes)
    before = copy.deepcopy((real.features, real.attributes, synthetic.features, attributes))
    result = evaluate(real, synthetic, n_seeds=1)  # one seed: what is checked is not spread
    relation = result["attribute_feature_relation"]["per_attribute"]["kind"]
    assert relation["missing_categories"] == ["spiky"]
    assert result["marginals"]["attributes"]["kind"]["value"] > 0
    after = (real.features, real.attributes, synthetic.features, synthetic.attributes)
    assert repr(after) == repr(before)  # the caller's arrays are untouched


def test_evaluate_without_attributes_skips_what_needs_them(metrics_rng):
    real = SeriesData.from_arrays(metrics_rng.normal(size=(30, 8, 1)).cumsum(axis=1))
    result = evaluate(real, real, max_examples=25, n_seeds=1)
    assert result["info"]["n_real"] == 25
    assert result["attribute_feature_relation"]["score"] is None
    assert "discrete attribute" in result["attribute_feature_relation"]["reason"]
    assert result["feature_correlation"]["score"] is None  # one feature: no pairs
    assert result["tstr"]["task"] == "next_step"
    json.dumps(result, allow_nan=False)


def test_many_categories_are_pooled_for_the_classifiers(metrics_rng):
    ids = np.array([f"id{i}" for i in range(500)], dtype=object)
    features = np.empty((40, 6, 2), dtype=object)
    features[..., 0] = metrics_rng.normal(size=(40, 6))
    features[..., 1] = metrics_rng.choice(ids, size=(40, 6))
    attributes = metrics_rng.choice(ids, size=(40, 1))
    data = SeriesData.from_arrays(features, attributes)
    real_enc, _ = _encode_pair(data, data)
    assert real_enc.steps.shape[2] <= 1 + 50  # continuous + capped one-hot, not 500 wide
    assert real_enc.static["attribute_0"].shape[1] <= 50
    result = train_synthetic_test_real(data, data)  # target classes are not pooled
    assert result["task"] == "classification"
    if result["score"] is None:  # 500 classes in 40 series: nothing to learn, and it says so
        assert result["real_accuracy"] == 0 and "no baseline" in result["reason"]
        assert "choose another" not in result["reason"]  # there is no other attribute


def test_tstr_without_a_baseline_suggests_another_target_only_where_there_is_one(metrics_rng):
    features = metrics_rng.normal(size=(30, 6, 1))
    # A category per series: the held-out series' categories are never seen in training,
    # so the model trained on real data predicts none of them right.
    unique = np.array([f"s{i}" for i in range(30)], dtype=object)[:, None]
    alone = train_synthetic_test_real(*[SeriesData.from_arrays(features, unique)] * 2)
    assert alone["real_accuracy"] == 0 and alone["score"] is None
    assert alone["reason"] == (
        "Trained on 21 real series, the model predicts none of the 9 held-out series' "
        "'attribute_0' right: no baseline to compare with."
    )
    assert "choose another" not in alone["reason"]
    kinds = np.where(np.arange(30) % 2 == 0, "a", "b").astype(object)[:, None]
    both = SeriesData.from_arrays(features, np.hstack([unique, kinds]))
    result = train_synthetic_test_real(both, both, target_attribute="attribute_0")
    assert result["reason"].endswith("; choose another target_attribute ('attribute_1').")
