"""The feature judge (dgan.metrics.features, dgan.metrics.judge) and the verdict rules that
keep a classifier that learned nothing from reading as "close to real" (dgan.metrics.verdict).

The data imitates what people see in long real recordings: series that sit at 0 until a
switch-on, jump, then oscillate, in classes whose amplitudes differ 1000x.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dgan.cli.summary import metrics_table
from dgan.metrics import SeriesData, evaluate
from dgan.metrics.distances import class_shares, comparison_scale, marginal_distances
from dgan.metrics.features import CONTINUOUS_FEATURES, feature_tables
from dgan.metrics.judge import class_shapes, detection_score, forest_tstr
from dgan.metrics.standard_error import (
    accuracy_standard_error,
    auc_standard_error,
    ratio_standard_error,
)
from dgan.metrics.verdict import (
    CLOSE,
    DIFFERENT,
    FAR,
    NOT_MEASURED,
    judge,
    not_measured,
    outlearned,
)

CLASSES = {"fan": 0.01, "lamp": 1.0, "heater": 10.0}  # amplitude of each class


def appliances(rng, n=120, flat_start=True, scale_by_class=True, switch=None):
    """Series of 100-300 steps: 0 until a switch-on (a fifth to a third of the way in), a
    jump, then a decaying transient over an oscillation; the class sets the amplitude."""
    names = list(CLASSES)
    labels = rng.choice(names, size=n) if switch is None else np.array(switch)
    series = []
    for label in labels:
        length = int(rng.integers(100, 300))
        t = np.arange(length)
        on = int(length * rng.uniform(0.2, 0.33)) if flat_start else 0
        wave = np.sin(2 * np.pi * t / rng.uniform(8, 12)) * (1 + 2 * np.exp(-(t - on) / 20))
        x = np.where(t >= on, wave + 1.5, 0.0) + 0.02 * rng.normal(size=length)
        series.append((x * (CLASSES[label] if scale_by_class else 1.0))[:, None])
    return SeriesData.from_arrays(series, labels[:, None].astype(object),
                                  attribute_names=["kind"], attribute_discrete=[True])  # fmt: skip


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


def test_features_of_a_series_do_not_depend_on_the_other_series_in_its_table(rng):
    """Padding to the longest series of a table must not leak into a series' features (it
    did: the periodogram's grid followed the table's longest series, and two halves of the
    same real data were told apart with AUC 0.78)."""
    data = appliances(rng, n=20)
    whole, part = feature_tables(data, data.subset([3, 4]), catch22=False)  # real side alike
    np.testing.assert_allclose(part.values, whole.values[[3, 4]])


def test_features_see_the_flat_start_the_jump_and_the_period(rng):
    on = appliances(rng, n=30)
    off = appliances(rng, n=30, flat_start=False)
    table, other = feature_tables(on, off, catch22=False)

    def column(t, what):
        return np.median(t.values[:, t.names.index(f"feature_0: {what}")])

    flat = "flat start (share of steps before the first move)"
    assert 0.15 < column(table, flat) < 0.35 and column(other, flat) < 0.05
    assert column(table, "largest jump (share of the range)") > 0.3
    assert 0.9 < 10 ** column(table, "dominant period (log10 steps)") < 12.5
    assert len([n for n in table.names if n.startswith("feature_0: ")]) == len(CONTINUOUS_FEATURES)


def test_detection_tells_missing_flat_starts_and_wrong_class_scales_apart(rng):
    real = appliances(rng)
    assert detection_score(real, appliances(rng), n_seeds=1)["score"] < 0.7
    no_start = detection_score(real, appliances(rng, flat_start=False), n_seeds=1)
    assert no_start["score"] > 0.9
    assert "flat start" in " ".join(t["feature"] for t in no_start["telling_features"][:3])
    one_scale = detection_score(real, appliances(rng, scale_by_class=False), n_seeds=1)
    assert one_scale["score"] > 0.9
    worst = one_scale["per_class"]["classes"]
    assert worst[0]["class"] in ("fan", "heater")  # the classes whose scale is off


def test_forest_tstr_reports_the_accuracies_beside_the_majority_class(rng):
    real = appliances(rng, n=150)
    result = forest_tstr(real, appliances(rng, n=150), "kind", n_seeds=1)
    assert result["real_accuracy"] > 0.9 and result["synthetic_accuracy"] > 0.9
    assert 0.2 < result["majority_class_accuracy"] < 0.5
    assert result["skill"] > 0.8 and result["score"] == pytest.approx(
        result["synthetic_accuracy"] / result["real_accuracy"]
    )
    # Synthetic series with the classes' scales mixed up teach the wrong thing.
    mixed = appliances(rng, n=150, switch=rng.permutation(appliances(rng, 150).attributes[:, 0]))
    shuffled_labels = SeriesData.from_arrays(
        mixed.features, rng.permutation(mixed.attributes), attribute_names=["kind"],
        attribute_discrete=[True],
    )  # fmt: skip
    assert forest_tstr(real, shuffled_labels, "kind", n_seeds=1)["skill"] < 0.4


def test_a_tstr_whose_real_trained_classifier_cannot_beat_the_majority_is_not_measured():
    """TSTR read as a ratio when the real-data classifier itself barely beats guessing (0.25
    against 0.13 on the appliance data) measures nothing."""
    entry = {"score": 0.9, "std": 0.0, "better": "higher", "task": "classification",
             "real_accuracy": 0.25, "majority_class_accuracy": 0.22, "skill": 0.5,
             "n_test": 160, "target": "kind"}  # fmt: skip
    assert judge(entry, None, "tstr") == NOT_MEASURED
    assert "does not beat the majority class" in not_measured("tstr", entry)
    entry.update(real_accuracy=0.9, skill=0.9)
    assert judge(entry, None, "tstr") == CLOSE
    entry.update(skill=0.2)
    assert judge(entry, None, "tstr") == FAR


def periodic(rng, periods, n=150):
    """Classes told apart by their period alone (at levels 1000x apart, as in
    `appliances`), each series at a random phase."""
    labels = rng.choice(list(CLASSES), size=n)
    series = []
    for label in labels:
        t = np.arange(int(rng.integers(100, 300)))
        wave = np.sin(2 * np.pi * t / periods[label] + rng.uniform(0, 2 * np.pi))
        series.append(((wave + 2 + 0.1 * rng.normal(size=len(t))) * CLASSES[label])[:, None])
    return SeriesData.from_arrays(series, labels[:, None].astype(object),
                                  attribute_names=["kind"], attribute_discrete=[True])  # fmt: skip


def test_class_shapes_name_a_series_drawn_with_another_class_shape(rng):
    """Synthetic series at their class's level but with another class's period: the class
    shares are right and the levels tell the classes apart, but a forest that learned each
    class's shape from real series names them wrong (sensors: humidity drawn like
    irradiance)."""
    periods = {"fan": 6, "lamp": 15, "heater": 40}
    real = periodic(rng, periods)
    held_out = class_shapes(real, periodic(rng, periods), "kind", n_seeds=2)
    assert held_out["real_accuracy"] > 0.9 and held_out["skill"] > 0.8
    assert judge(held_out, None, "class_shapes") == CLOSE
    swapped = {"fan": 40, "lamp": 6, "heater": 15}
    wrong = class_shapes(real, periodic(rng, swapped), "kind", n_seeds=2)
    assert wrong["synthetic_accuracy"] < 0.2 and wrong["skill"] < 0
    assert judge(wrong, None, "class_shapes") == FAR
    assert {c["class"] for c in wrong["per_class"]["classes"]} == set(CLASSES)
    assert max(c["synthetic_accuracy"] for c in wrong["per_class"]["classes"]) < 0.2
    assert min(c["real_accuracy"] for c in wrong["per_class"]["classes"]) > 0.8
    table = metrics_table({"class_shapes": {**wrong, "verdict": FAR}})
    assert "named right least often against real" in table and "held-out real ones" in table
    one_class_lost = {**held_out, "verdict": CLOSE, "per_class": {"classes": [
        {"class": "fan", "synthetic_accuracy": 0.3, "real_accuracy": 0.9}]}}  # fmt: skip
    assert "fan 0.30 (real 0.90)" in metrics_table({"class_shapes": one_class_lost})
    assert "least often" not in metrics_table({"class_shapes": {**held_out, "verdict": CLOSE}})
    # Classes told apart by their level alone have no shape to name: measured nothing.
    scale_only = class_shapes(appliances(rng), appliances(rng), "kind", n_seeds=2)
    assert judge(scale_only, None, "class_shapes") == NOT_MEASURED
    assert "have their class's shape" in not_measured("class_shapes", scale_only)


def test_a_classifier_below_chance_is_not_measured_never_close():
    """A real-vs-synthetic GRU at 0.44 accuracy learned nothing (or the wrong way round):
    that was read as 'indistinguishable'."""
    gru = {"score": 0.06, "std": 0.0, "accuracy": 0.44, "better": "lower"}
    assert judge(gru, {"score": 0.02, "std": 0.0}, "discriminative") == NOT_MEASURED
    forest = {"score": 0.3, "std": 0.02, "better": "lower"}
    assert judge(forest, {"score": 0.5, "std": 0.02}, "detection") == NOT_MEASURED
    assert judge({**forest, "score": 0.95}, {"score": 0.5, "std": 0.02}, "detection") == FAR


def test_a_gru_at_chance_beside_a_forest_that_tells_the_sides_apart_is_not_measured(
    monkeypatch,
):
    """On a simulated power set the GRU scored 0.47 accuracy (a score of 0.05, "close to
    real") beside a detection forest at AUC 0.97: its silence was shown as a verdict."""
    at_chance = {"score": 0.03, "accuracy": 0.47, "n_per_side": 90, "better": "lower"}
    module = sys.modules["dgan.metrics.evaluate"]  # dgan.metrics.evaluate: the function
    monkeypatch.setattr(module, "discriminative_score", lambda *args, **kwargs: dict(at_chance))
    rng = np.random.default_rng(7)  # its own: the module's rng feeds the tests after it
    real = appliances(rng, n=90)
    told_apart = evaluate(real, appliances(rng, n=90, flat_start=False), n_seeds=1)
    assert told_apart["detection"]["verdict"] == FAR
    gru = told_apart["discriminative"]
    assert gru["verdict"] == NOT_MEASURED and "detection forest" in gru["not_measured"]
    assert "discriminative" in told_apart["verdict"]["not_measured"]
    assert "discriminative: not measured: it scored 0.47" in metrics_table(told_apart)
    # Where the forest sees nothing either, or the GRU sees something, the GRU's row stands.
    assert outlearned({"detection": {"score": 0.52, "verdict": CLOSE},
                       "discriminative": {"verdict": CLOSE}}) is None  # fmt: skip
    assert outlearned({"detection": {"score": 0.8, "verdict": FAR},
                       "discriminative": {"verdict": FAR}}) is None  # fmt: skip
    assert "ROC AUC 0.80, noticeably different" in outlearned(
        {"detection": {"score": 0.8, "verdict": DIFFERENT}, "discriminative": {"verdict": CLOSE}}
    )


def test_class_shares_flag_a_missing_class_but_not_sampling_noise(rng):
    real = appliances(rng, n=300)
    labels = real.attributes.copy()
    labels[labels[:, 0] == "fan", 0] = "lamp"  # never generates the quietest class
    missing = SeriesData.from_arrays(real.features, labels, attribute_names=["kind"],
                                     attribute_discrete=[True])  # fmt: skip
    result = class_shares(real, missing)
    assert result["score"] == 0.0 and result["short"][0]["category"] == "fan"
    assert judge(result, None, "classes") == FAR
    halves = class_shares(real.subset(np.arange(150)), real.subset(np.arange(150, 300)))
    assert halves["score"] == 1.0 and judge(halves, None, "classes") == CLOSE


def test_a_rare_class_below_half_its_share_is_shown_even_when_too_few_to_score():
    """10 of 284 real series, 2 of 284 synthetic: a fifth of its share, which a two-sample
    test cannot tell from chance at so few series; it is not scored, but the console says
    so instead of staying silent."""

    def table(rare: int) -> SeriesData:
        kinds = np.array([["rare"]] * rare + [["common"]] * (284 - rare), dtype=object)
        return SeriesData.from_arrays(np.zeros((284, 3, 1)), kinds, attribute_names=["kind"],
                                      attribute_discrete=[True])  # fmt: skip

    result = class_shares(table(10), table(2))
    assert result["score"] == 1.0 and result["short"] == []
    assert [c["category"] for c in result["unsure"]] == ["rare"]
    assert result["unsure"][0]["ratio"] == pytest.approx(0.2)
    lines = [x for x in metrics_table({"classes": result}).splitlines() if x.startswith("classes:")]
    assert len(lines) == 1 and "too few series to tell" in lines[0] and "kind=rare" in lines[0]
    assert class_shares(table(10), table(10))["unsure"] == []


def test_marginals_compare_values_that_span_orders_of_magnitude_on_a_log_scale(rng):
    real = appliances(rng)
    assert comparison_scale(np.concatenate(real.feature_column("feature_0"))).name == "log"
    quiet_wrong = [x.copy() for x in real.features]
    for x, label in zip(quiet_wrong, real.attributes[:, 0], strict=True):
        if label == "fan":
            x *= 50  # the quiet class 50x too loud: invisible in units of the loud class
    result = marginal_distances(
        real,
        SeriesData.from_arrays(
            quiet_wrong, real.attributes, attribute_names=["kind"], attribute_discrete=[True]
        ),
    )
    assert result["features"]["feature_0"]["scale"] == "log"
    assert result["features"]["feature_0"]["value"] > 0.2


@pytest.mark.parametrize("case", ["held_out", "no_flat_start"])
def test_evaluate_agrees_with_the_feature_judge(rng, case):
    """Held-out real series are close to real; series without the flat start and jump that
    a forest tells apart with AUC > 0.9 are never 'close to real'."""
    real = appliances(rng, n=160)
    other = appliances(rng, n=160, flat_start=case == "held_out")
    result = evaluate(real, other, n_seeds=1)
    if case == "held_out":
        assert result["verdict"]["verdict"] == CLOSE, result["verdict"]
    else:
        assert result["detection"]["score"] > 0.9
        assert result["detection"]["verdict"] == FAR
        assert result["verdict"]["verdict"] == FAR


def test_series_of_one_step_get_features_and_a_judge():
    """A generated series may end after its first step (it crashed the judge)."""
    rng = np.random.default_rng(3)
    series = [rng.normal(size=(int(n), 1)) for n in rng.integers(1, 4, 40)]
    series[0] = series[0][:1]
    data = SeriesData.from_arrays(series)
    table, _ = feature_tables(data, data, catch22=False)
    assert np.isfinite(table.values[0, : len(CONTINUOUS_FEATURES) - 6]).all()
    assert detection_score(data, data, n_seeds=1)["score"] is not None


def random_walks(seed: int, n: int = 180, length: int = 12) -> SeriesData:
    """Short random walks, all from one distribution: any two subsets are real vs real."""
    steps = np.random.default_rng(seed).normal(size=(n, length, 1))  # its own generator
    return SeriesData.from_arrays(steps.cumsum(axis=1))


@pytest.mark.parametrize("seed", [4, 8])
def test_held_out_real_series_are_close_to_real_with_one_seed(seed):
    """`dgan evaluate --seeds 1` read held-out real series as "noticeably different": one
    seed gave every learned metric a spread of 0, so no noise, and a detection AUC of 0.53
    against 0.35 for the real halves (90 series a side, these seeds) was a gap of 0.18
    beyond the 0.10 margin. With one seed the spread is the sampling standard error."""
    walks = random_walks(seed)
    result = evaluate(walks.subset(np.arange(90)), walks.subset(np.arange(90, 180)),
                      seed=seed, n_seeds=1)  # fmt: skip
    detection = result["detection"]
    assert detection["score"] - detection["baseline"]["score"] > 0.1  # the case above
    assert detection["verdict"] == CLOSE, (detection["score"], detection["baseline"])
    # Never shown as a spread over seeds: the JSON and the console say what the ± is.
    assert detection["std"] == pytest.approx(auc_standard_error(detection["score"], 90, 90))
    for entry in (detection, detection["baseline"], result["discriminative"],
                  result["discriminative"]["baseline"]):  # fmt: skip
        assert entry["std_from"] == "sampling" and entry["std"] > 0
    assert result["autocorrelation"]["std_from"] == "one seed"  # no known error: 0, said so
    assert "1 seed, so ± is a sampling standard error" in metrics_table(result)


def test_the_standard_error_of_a_roc_auc_is_its_spread_over_samples():
    """Hanley & McNeil's standard error: a value computed by hand, and the spread of the
    AUC over 3000 samples of the same two normal populations (60 and 40 scores)."""
    # A = 0.8: Q1 = 0.8/1.2, Q2 = 1.28/1.8; (0.16 + 49 (Q1 - 0.64) + 49 (Q2 - 0.64)) / 2500
    assert auc_standard_error(0.8, 50, 50) == pytest.approx(0.0445022, abs=1e-6)
    rng = np.random.default_rng(11)  # its own: the module's rng feeds the tests after it
    real, synthetic = rng.normal(size=(3000, 60)), rng.normal(1.0, size=(3000, 40))
    aucs = (synthetic[:, None, :] > real[:, :, None]).mean(axis=(1, 2))  # Mann-Whitney
    assert auc_standard_error(aucs.mean(), 60, 40) == pytest.approx(aucs.std(), rel=0.1)
    assert accuracy_standard_error(0.7, 100) == pytest.approx(np.sqrt(0.21 / 100))


def test_one_seed_of_the_class_forests_carries_binomial_errors_to_the_skill():
    """TSTR and the class shapes are read by their skill; with one seed its noise is the
    binomial error of the accuracies behind it, not 0."""
    rng = np.random.default_rng(21)  # its own: the module's rng feeds the tests after it

    def walks(n: int) -> SeriesData:  # two kinds a forest names about 3 times in 4
        kinds = rng.choice(["calm", "wild"], size=n)
        wild = (kinds == "wild")[:, None, None]
        steps = rng.normal(size=(n, 12, 1)) * np.where(wild, 1.6, 1.0)
        steps += wild * 0.3 * np.sin(np.arange(12))[None, :, None]
        return SeriesData.from_arrays(
            steps.cumsum(axis=1), kinds[:, None].astype(object),
            attribute_names=["kind"], attribute_discrete=[True],
        )  # fmt: skip

    real, other = walks(80), walks(80)
    tstr = forest_tstr(real, other, "kind", n_seeds=1)
    shapes = class_shapes(real, other, "kind", n_seeds=1)
    for entry, n_synthetic in ((tstr, tstr["n_test"]), (shapes, 80)):
        s, r = entry["synthetic_accuracy"], entry["real_accuracy"]
        s_se = accuracy_standard_error(s, n_synthetic)
        r_se = accuracy_standard_error(r, entry["n_test"])
        assert entry["std_from"] == "sampling"
        assert entry["std"] == pytest.approx(ratio_standard_error(s, s_se, r, r_se))
    s, r, m = (tstr[f"{k}_accuracy"] for k in ("synthetic", "real", "majority_class"))
    s_se, r_se = (accuracy_standard_error(a, tstr["n_test"]) for a in (s, r))
    skill_se = ratio_standard_error(s - m, s_se, r - m, r_se)  # the majority's rate fixed
    assert tstr["skill_std"] == pytest.approx(skill_se) and skill_se > 0.1


def test_with_three_seeds_the_noise_is_still_the_spread_over_seeds():
    """The sampling errors stand in for one seed only: with three, every std (and so every
    verdict) is the spread over the seeds, as before."""
    walks = random_walks(5, n=120)
    result = evaluate(walks.subset(np.arange(60)), walks.subset(np.arange(60, 120)), n_seeds=3)
    for name in ("detection", "discriminative", "tstr", "autocorrelation", "marginals"):
        for entry in (result[name], result[name].get("baseline")):
            if entry is not None and entry.get("score") is not None:
                assert entry["std_from"] == "seeds", name
                assert entry["std"] == pytest.approx(np.std(entry["per_seed"])), name
    own = np.random.default_rng(22)  # its own: the module's rng feeds the tests after it
    real, other = appliances(own, n=60), appliances(own, n=60)
    for entry in (forest_tstr(real, other, "kind", n_seeds=3),
                  detection_score(real, other, n_seeds=3)):  # fmt: skip
        assert entry["std_from"] == "seeds"
        assert entry["std"] == pytest.approx(np.std(entry["per_seed"]))
