"""The benchmark harness: result structure, sane values, machine info and the JSON file."""

import datetime as dt
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from dgan import DGANConfig
from dgan.train.trainer import Trainer

# The harness is benchmark tooling, kept out of the package: import it from benchmarks/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from consumption_data import APPLIANCES, LENGTH, consumption_table
from group_halves import halves
from harness import (
    json_safe,
    machine_info,
    synthetic_workload,
    time_training,
    write_result,
)
from oscillating_data import CLASSES, oscillating_table

_ITEM = torch.Tensor.item


def _config(**kw) -> DGANConfig:
    base = dict(
        max_sequence_len=6,
        sample_len=3,
        batch_size=16,
        cuda=False,
        seed=0,
        attribute_num_units=8,
        feature_num_units=8,
        discriminator_num_units=8,
        discriminator_num_layers=2,
    )
    return DGANConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def bench_workload():
    return synthetic_workload(16, length=6, n_features=2, seed=0)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_time_training_reports_positive_finite_numbers(bench_workload, precision):
    attributes, features, types = bench_workload
    result = time_training(
        _config(precision=precision),
        features,
        attributes,
        types,
        warmup_steps=1,
        timed_steps=2,
        windows=2,
        device="cpu",
    )
    assert result["status"] == "ok"
    assert result["precision"] == precision and result["device"] == "cpu"
    assert result["examples_per_batch"] == 16 and result["timed_steps"] == 2
    assert len(result["window_seconds"]) == 2
    for key in ("seconds_per_batch", "examples_per_s", "peak_memory_bytes"):
        assert math.isfinite(result[key]) and result[key] > 0, key
    assert result["examples_per_s"] == pytest.approx(16 / result["seconds_per_batch"])
    assert result["peak_memory_bytes"] >= result["baseline_memory_bytes"] > 0
    assert result["skipped_steps"] == 0 and result["nonfinite_losses"] == 0
    assert all(math.isfinite(v) for v in result["mean_losses"].values())
    json.dumps(result, allow_nan=False)  # JSON-ready as it is


def test_time_training_counts_the_tensor_reads_of_dgan_in_the_window(bench_workload, monkeypatch):
    """A read of a device value by dgan's code (a host sync on a GPU) is counted on every
    device, in the timed window only; a plain step reads none (docs/design.md, decision 2)."""
    attributes, features, types = bench_workload
    run = dict(warmup_steps=1, timed_steps=3, device="cpu")
    clean = time_training(_config(), features, attributes, types, **run)
    step = Trainer.train_step

    def reading_step(self, batch, acc):
        step(self, batch, acc)
        acc.skipped_steps()  # dgan's own deliberate host sync, here inside each step

    monkeypatch.setattr(Trainer, "train_step", reading_step)
    reading = time_training(_config(), features, attributes, types, **run)
    assert clean["tensor_reads_in_window"] == 0 and clean["tensor_read_sites"] == []
    assert reading["tensor_reads_in_window"] == 3  # not the build's or the burn-in's
    assert reading["tensor_read_sites"][0].startswith("item at ")
    assert "train/batch.py" in reading["tensor_read_sites"][0]
    assert torch.Tensor.item is _ITEM  # the reads are put back as they were


def test_time_training_does_not_change_the_callers_config(bench_workload):
    attributes, features, types = bench_workload
    config = _config()
    time_training(config, features, attributes, types, warmup_steps=0, timed_steps=1)
    assert config.epochs == 400 and config.cuda is False


def test_machine_info_names_the_software():
    info = machine_info()
    assert info["torch"] and info["cpu_count"] >= 1 and info["torch_threads"] >= 1
    assert isinstance(info["gpus"], list)
    assert info["git_commit"] is None or len(info["git_commit"]) == 40


def test_write_result_names_the_file_and_writes_strict_json(tmp_path):
    result = {"machine": {"torch": "x"}, "value": float("nan"), "rows": [1.5, float("inf")]}
    path = write_result(result, "precision", "cpu", tmp_path, date=dt.date(2024, 5, 17))
    assert path == tmp_path / "precision-cpu-2024-05-17.json"
    assert json.loads(path.read_text()) == {
        "machine": {"torch": "x"},
        "value": None,
        "rows": [1.5, None],
    }
    assert json_safe({"a": (1, 2)}) == {"a": [1, 2]}


def test_group_halves_keep_each_group_whole_and_every_series_once():
    groups = [f"g{i // 3}" for i in range(24)]  # 8 groups of 3 series
    table = pd.DataFrame(
        {
            "example_id": [i for i in range(24) for _ in range(2)],
            "step": [0, 1] * 24,
            "value": [float(i) for i in range(24) for _ in range(2)],  # the series' own id
            "g": [g for g in groups for _ in range(2)],
        }
    )
    parts = halves(table, "g", seed=1)
    for pair in (("groups-a", "groups-b"), ("random-a", "random-b")):
        seen = [set(parts[p]["value"]) for p in pair]
        assert not seen[0] & seen[1] and seen[0] | seen[1] == set(map(float, range(24)))
    in_a = {groups[int(v)] for v in parts["groups-a"]["value"]}
    in_b = {groups[int(v)] for v in parts["groups-b"]["value"]}
    assert not in_a & in_b and len(in_a) == len(in_b) == 4  # whole groups, half each side
    for part in parts.values():  # renumbered from 0, two steps each, the group dropped
        assert sorted(part["example_id"].unique()) == list(range(part["example_id"].nunique()))
        assert "g" not in part.columns and len(part) == 2 * part["example_id"].nunique()


def test_oscillating_series_start_off_and_oscillate_at_their_class_period():
    table = oscillating_table(per_class=3, seed=2)
    for _, series in table.groupby("example_id"):
        values = series["value"].to_numpy()
        period, amplitude = CLASSES[series["appliance"].iloc[0]]
        on = int(np.argmax(values != 0))  # the switch-on: everything before it is exactly 0
        assert 0.04 * len(values) <= on <= 0.31 * len(values)
        steady = values[on + 120 :]  # the transient has decayed by then (40-step constant)
        power = np.abs(np.fft.rfft(steady - steady.mean())) ** 2
        found = len(steady) / (np.argmax(power[1:]) + 1)
        assert abs(found / period - 1) < 0.15  # the class's: each draw's 5%, the bins' spacing
        assert 0.5 < np.abs(steady).max() / amplitude < 2.0


def test_consumption_series_keep_their_class_scale_and_switch_between_states():
    """The simulated power readings: every series full length and never below 0; classes
    orders of magnitude apart; the switching classes sit at standby most of the time and
    jump far above it; the steady ones never do."""
    table = consumption_table(per_class=3, seed=1)
    assert sorted(table["appliance"].unique()) == sorted(APPLIANCES)
    peaks, jumps, standby = {}, {}, {}
    for name, part in table.groupby("appliance"):
        for _, series in part.groupby("example_id"):
            x = series["value"].to_numpy()
            assert len(x) == LENGTH and (x >= 0).all()
            peaks.setdefault(name, []).append(x.max())
            jumps.setdefault(name, []).append(np.abs(np.diff(x)).max() / x.mean())
            standby.setdefault(name, []).append(np.mean(x < 0.1 * x.max()))
    assert max(peaks["charger"]) < 10 and min(peaks["coffee"] + peaks["microwave"]) > 900
    for name in ("coffee", "microwave", "printer"):
        assert min(jumps[name]) > 5 and min(standby[name]) > 0.5
    for name in ("hifi", "laptop"):
        assert max(jumps[name]) < 1 and max(standby[name]) == 0


def test_oscillating_variants_change_what_they_name():
    """`oscillating_checks.py variants` judges the set against these: without the
    transient the first cycles after the switch-on are as loud as the steady ones; more
    noise is rougher; the defaults draw the set itself."""
    assert oscillating_table(per_class=2, seed=4).equals(
        oscillating_table(per_class=2, seed=4, transient=1.0, noise=0.01, wobble=0.0, swell=0.0)
    )
    for transient, low, high in ((1.0, 1.45, 2.1), (0.0, 0.9, 1.1)):
        table = oscillating_table(per_class=2, seed=4, transient=transient)
        for _, series in table.groupby("example_id"):
            values = series["value"].to_numpy()
            on = np.abs(values[int(np.argmax(values != 0)) :])
            # the first half-period of the slowest class (48 steps) against the steady part
            assert low < on[:24].max() / on[200:].max() < high
    rough = oscillating_table(per_class=2, seed=4, noise=0.1)["value"].diff().diff().abs()
    smooth = oscillating_table(per_class=2, seed=4)["value"].diff().diff().abs()
    assert rough.mean() > 2 * smooth.mean()
    # The first series draws as the set's does, but for its period's swing.
    wobbly = oscillating_table(per_class=2, seed=4, wobble=0.05).query("example_id == 0")
    first = oscillating_table(per_class=2, seed=4).query("example_id == 0")
    assert len(wobbly) == len(first) and not np.allclose(wobbly["value"], first["value"])
    assert np.abs(wobbly["value"]).max() < 1.05 * np.abs(first["value"]).max()


def test_the_shape_check_reads_a_swelling_amplitude():
    """`oscillating_checks.py shape`'s amplitude variation: the noise's size on the set, a
    swing's on the `swell` variant (a sine of depth 0.25 varies by about 0.25 / sqrt 2)."""
    from oscillating_checks import _series, shape_of

    steady = shape_of(_series(oscillating_table(per_class=4, seed=3)), 100)
    swelling = shape_of(_series(oscillating_table(per_class=4, seed=3, swell=0.25)), 100)
    for cls in CLASSES:
        assert steady["amplitude_variation"][cls] < 0.03
        assert 0.12 < swelling["amplitude_variation"][cls] < 0.25
    # Each LSTM step at an amplitude of its own: the variance lies between the steps.
    table = oscillating_table(per_class=4, seed=3)
    ids = table["example_id"].to_numpy()
    place = table.groupby("example_id").cumcount().to_numpy()
    on = table.loc[table["value"] != 0].groupby("example_id")["step"].min().to_numpy()[ids]
    step_of = np.where(place >= on, (place - on) // 100, -1)
    gain = np.random.default_rng(0).uniform(0.5, 1.5, (ids.max() + 1, 20))[ids, step_of]
    stepped = table.assign(value=table["value"] * np.where(step_of >= 0, gain, 1.0))
    assert steady["amplitude_variance_between_steps"]["fan"] < 0.3
    assert shape_of(_series(stepped), 100)["amplitude_variance_between_steps"]["fan"] > 0.9


def test_the_shape_check_reads_a_phase_that_breaks_at_each_seam():
    """`oscillating_checks.py shape`'s period correlation: a wave that goes on across the
    LSTM steps' seams correlates as well there as mid-step; one whose phase jumps at each
    seam does not, and only there."""
    from oscillating_checks import _series, shape_of

    steady = shape_of(_series(oscillating_table(per_class=4, seed=3)), 100)
    rng = np.random.default_rng(0)
    t = np.arange(900)
    jumps = np.cumsum(rng.uniform(0.5, 1.5, (8, 9)) * np.pi, axis=1)  # 1/4-3/4 cycle a seam
    broken = [
        (np.r_[0.0, np.sin(2 * np.pi * t / 24 + jumps[i, t // 100])], "fridge") for i in range(8)
    ]
    breaks = shape_of(broken, 100)["period_correlation_across"]
    for cls in CLASSES:
        assert steady["period_correlation_across"]["at_the_seam"][cls] > 0.9
        assert steady["period_correlation_across"]["mid_step"][cls] > 0.9
    assert breaks["mid_step"]["fridge"] > 0.99 and breaks["at_the_seam"]["fridge"] < 0.0


def test_the_critic_probe_scores_real_altered_and_swapped_inputs_on_the_critics_scale():
    """`critic_probe.py` on a small trained model: every entry it documents, finite, and
    the same on a second run with the same seed."""
    from critic_probe import probe
    from dgan import DGAN

    table = oscillating_table(per_class=3, seed=1).groupby("example_id").head(40)
    model = DGAN(_config(max_sequence_len=40, sample_len=10, epochs=2))
    model.train_dataframe(
        table, attribute_columns=["appliance"], example_id_column="example_id",
        time_column="step", df_style="long", progress_bar=False,
    )  # fmt: skip
    out = probe(model, table, seed=0)
    assert (out["series"], out["lstm_steps"]) == (9, 4)
    assert len(out["real_altered"]) == 6
    assert set(out["real_with_the_generated"]) >= {"attributes", "additional", "values"}
    scores = [out["real"], out["generated"], out["generated_with_every_step_at_one_spread"]]
    assert all(math.isfinite(s) for s in scores + list(out["real_altered"].values()))
    assert probe(model, table, seed=0) == out  # its own random streams: the same again


def test_the_oscillating_set_can_hold_every_series_of_a_class_at_its_period():
    """``period_jitter=0``: one period a class (each series repeats after exactly it); the
    default draws the set as before the keyword was added (its own default, 0.05)."""
    exact = oscillating_table(per_class=2, seed=4, transient=0.0, noise=0.0, period_jitter=0)
    for _, series in exact.groupby("example_id"):
        period = CLASSES[series["appliance"].iloc[0]][0]
        on = series["value"].to_numpy()[series["value"].to_numpy() != 0]
        np.testing.assert_allclose(on[period:], on[:-period], atol=1e-9 * np.abs(on).max())
    before = oscillating_table(per_class=2, seed=4)  # pinned from the code before
    assert before["value"].abs().sum() == pytest.approx(77979.74546853591, rel=1e-12)
    assert before.loc[before["example_id"] == 0, "value"].iloc[-1] == pytest.approx(
        0.003834121380539582, rel=1e-12
    )
    jittered = oscillating_table(per_class=2, seed=4, transient=0.0, noise=0.0)
    values = jittered.loc[jittered["example_id"] == 0, "value"].to_numpy()
    on = values[values != 0]
    assert np.abs(on[12:] - on[:-12]).max() > 1e-4 * np.abs(on).max()  # the fan's, drawn off 12
