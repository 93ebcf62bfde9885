"""What the user is told and given (issue 12): generation seeds and rounding, the training
plan, metric baselines and verdicts, the progress bar."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from torch import tensor as torch_tensor

from dgan import DGAN, DGANConfig
from dgan.cli.main import main
from dgan.errors import ParameterError
from dgan.tabular.layout import FrameLayout

TINY = dict(
    epochs=1,
    batch_size=8,
    attribute_num_units=8,
    feature_num_units=8,
    discriminator_num_layers=2,
    discriminator_num_units=16,
    cuda=False,
    seed=0,
)


def long_frame(n_series: int = 24, n_steps: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.repeat(np.arange(n_series), n_steps),
            "kind": np.repeat(np.where(np.arange(n_series) % 3 == 0, "a", "b"), n_steps),
            "step": np.tile(np.arange(n_steps), n_series),
            "level": np.round(rng.normal(size=n_series * n_steps), 1),  # one decimal
            "flow": np.round(rng.normal(size=n_series * n_steps) * 100, 3),  # three
            "count": rng.integers(0, 50, n_series * n_steps),  # integers
        }
    )


def cli(args: list[str]) -> int:
    """`dgan` in-process, on one thread as the rest of the tests run."""
    return main([*args, "--threads", "1"])


LONG = dict(example_id_column="id", time_column="step", attribute_columns=["kind"])


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ux")
    model = DGAN(DGANConfig(max_sequence_len=6, sample_len=2, **TINY))
    model.train_dataframe(long_frame(), df_style="long", progress_bar=False, **LONG)
    return model.save(folder / "model.dgan")


# ----------------------------------------------------------------------------- generate


def test_generate_without_seed_draws_anew_and_with_seed_repeats(model_file, tmp_path):
    outputs = {}
    for name, extra in [("a", []), ("b", []), ("s1", ["--seed", "5"]), ("s2", ["--seed", "5"])]:
        path = tmp_path / f"{name}.csv"
        assert cli(["generate", str(model_file), "-n", "6", "-o", str(path), *extra]) == 0
        outputs[name] = path.read_bytes()
    assert outputs["a"] != outputs["b"]  # no --seed: a fresh draw each run
    assert outputs["s1"] == outputs["s2"]  # the same --seed: the same series


def test_generated_numbers_have_the_training_columns_decimals(model_file, tmp_path):
    path = tmp_path / "out.csv"
    assert cli(["generate", str(model_file), "-n", "20", "-o", str(path), "--seed", "1"]) == 0
    text = pd.read_csv(path, dtype=str)
    for column, decimals in [("level", 1), ("flow", 3), ("count", 0)]:
        digits = text[column].str.partition(".")[2].str.len()
        assert digits.max() <= decimals, (column, text[column].head().tolist())
    model = DGAN.load(model_file)
    assert [model.data_frame_layout.spec(c).decimals for c in ("level", "flow", "count")] == [
        1,
        3,
        None,  # integers are rounded as integers
    ]


def test_generated_numbers_keep_the_significant_digits_of_a_scientific_column(tmp_path):
    """A column written in scientific notation (values spanning orders of magnitude) holds
    significant digits, not decimals: generated values get as many, never 16 of them."""
    df = long_frame()
    rng = np.random.default_rng(1)
    power = 10 ** rng.uniform(-6, 2, len(df))  # 1e-06 .. 1e+02: no number of decimals fits
    (tmp_path / "sci.csv").write_text(
        df.assign(power=power).to_csv(index=False, float_format="%.4e")  # 5 significant
    )
    training = pd.read_csv(tmp_path / "sci.csv")
    model = DGAN(DGANConfig(max_sequence_len=6, sample_len=2, **TINY))
    model.train_dataframe(training, df_style="long", progress_bar=False, **LONG)
    spec = model.data_frame_layout.spec("power")
    assert (spec.decimals, spec.significant) == (None, 5)
    path = tmp_path / "out.csv"
    model.save(tmp_path / "sci.dgan")
    assert cli(["generate", str(tmp_path / "sci.dgan"), "-n", "40", "-o", str(path)]) == 0
    written = pd.read_csv(path, dtype=str)["power"]
    mantissas = written.str.lower().str.partition("e")[0].str.replace(r"[-.]", "", regex=True)
    significant = mantissas.str.lstrip("0").str.rstrip("0").str.len()
    assert significant.max() <= 5, written.head().tolist()
    assert significant.max() >= 4  # rounded to the column's digits, not to fewer
    average = written.str.len().mean()
    assert average <= training["power"].map(repr).str.len().mean() + 1  # no longer than real


def test_layouts_saved_before_decimals_were_recorded_still_load_without_rounding(model_file):
    stored = DGAN.load(model_file).data_frame_layout.to_json_dict()
    for column in stored["columns"]:
        del column["decimals"]  # as written by an older dgan
    layout = FrameLayout.from_json_dict(stored)
    assert all(c.decimals is None for c in layout.columns)


# ----------------------------------------------------------------------------- the plan


def small_config(**overrides) -> DGANConfig:
    return DGANConfig(**{**TINY, "max_sequence_len": 6, "sample_len": 2, **overrides})


def test_plan_lists_columns_batches_precision_and_an_estimate():
    plan = DGAN(small_config(batch_size=10, epochs=3)).plan(
        long_frame(), df_style="long", warm_up_steps=2, **LONG
    )
    roles = {c.name: (c.role, c.kind) for c in plan.columns}
    assert roles == {
        "kind": ("attribute", "discrete"),
        "level": ("feature", "continuous"),
        "flow": ("feature", "continuous"),
        "count": ("feature", "continuous"),
        "id": ("example id", ""),
        "step": ("time", "orders each series"),
    }
    assert next(c for c in plan.columns if c.name == "kind").detail == (
        "2 categories; each class generated at its share of the training series "
        "(match_class_shares)"
    )
    assert next(c for c in plan.columns if c.name == "level").detail.startswith("range -")
    assert (plan.n_examples, plan.lengths, plan.steps_per_epoch, plan.epochs) == (24, (6, 6), 3, 3)
    assert plan.precision == "fp32" and "default" in plan.precision_reason
    assert plan.seconds_per_step > 0 and plan.estimated_seconds == plan.seconds_per_step * 9
    text = str(plan)
    assert "batch_size 10: 3 steps per epoch; training 9 steps (3 epochs): epochs=3" in text
    assert "estimated time" in text and plan.warnings == []


def test_plan_counts_one_lstm_step_in_the_singular():
    config = small_config(max_sequence_len=6, sample_len=6, batch_size=10, epochs=1)
    plan = DGAN(config).plan(long_frame(), df_style="long", warm_up_steps=0, **LONG)
    assert "max_sequence_len 6, sample_len 6 (1 LSTM step)" in str(plan)


def test_plan_says_which_classes_get_levels_of_their_own():
    """Classes orders of magnitude apart get per-class ranges (`per_class_scaling`): the
    plan says so on the class attribute's line, and not where the classes share a scale."""
    df = long_frame()
    loud = df["kind"] == "b"
    df.loc[loud, "level"] = 1000.0 + 50 * df.loc[loud, "level"]
    plan = DGAN(small_config()).plan(df, df_style="long", warm_up_steps=0, **LONG)
    kind = next(c for c in plan.columns if c.name == "kind")
    assert kind.detail.endswith(
        "; each class gets its own range of series levels (per_class_scaling)"
        "; each class generated at its share of the training series (match_class_shares)"
    )
    level = next(c for c in plan.columns if c.name == "level").detail
    assert "log scale (log_scale)" in level  # 0.1 to 1,000: filled (`fill_series_range`)
    assert level.endswith(
        "; generated series fill their range (fill_series_range)"
        "; generated values take the data's distribution (match_marginals)"
    )
    flow = next(c for c in plan.columns if c.name == "flow").detail
    assert "fill_series_range" not in flow and "match_marginals" not in flow
    same = DGAN(small_config()).plan(long_frame(), df_style="long", warm_up_steps=0, **LONG)
    assert next(c for c in same.columns if c.name == "kind").detail == (
        "2 categories; each class generated at its share of the training series "
        "(match_class_shares)"
    )
    with pytest.raises(ParameterError, match="per_class_scaling='site' names no discrete"):
        DGAN(small_config(per_class_scaling="site")).plan(  # the error training would raise
            df, df_style="long", warm_up_steps=0, **LONG
        )


def test_plan_says_which_features_switch_between_levels():
    """Lamps at standby (0.3) or on (about 15), classes 100 times apart (so on a log
    scale, mapped per class): the plan names the switches kept (`match_switches`) on the
    feature's line; not where no class has levels with nothing between them. (A gap is
    read from the quantiles, so a class needs more values than `QUANTILES` to show one.)"""
    df = long_frame(n_steps=60)
    rng = np.random.default_rng(5)
    on = (df["step"] >= rng.integers(5, 55, 24).repeat(60)).to_numpy()
    scale = np.where(df["kind"] == "b", 100.0, 1.0)
    df["level"] = np.where(on, 15.0, 0.3) * scale * (1 + 0.01 * rng.standard_normal(len(df)))
    config = small_config(max_sequence_len=60, sample_len=6)
    plan = DGAN(config).plan(df, df_style="long", warm_up_steps=0, **LONG)
    level = next(c for c in plan.columns if c.name == "level").detail
    assert "log scale" in level and level.endswith(
        "; switching between a class's levels as often and as long as the training series, "
        "each level as steady and noisy (match_switches)"
    )
    assert "match_switches" not in next(c for c in plan.columns if c.name == "flow").detail
    off = DGAN(small_config(max_sequence_len=60, sample_len=6, match_switches=False))
    plan = off.plan(df, df_style="long", warm_up_steps=0, **LONG)
    assert "match_switches" not in next(c for c in plan.columns if c.name == "level").detail
    # On a linear scale the value map takes the feature for its levels, and says so.
    df["level"] /= scale
    plan = DGAN(config).plan(df, df_style="long", warm_up_steps=0, **LONG)
    level = next(c for c in plan.columns if c.name == "level").detail
    assert "log scale" not in level and level.endswith(
        "; generated values take the data's distribution (match_marginals)"
        "; switching between a class's levels as often and as long as the training series, "
        "each level as steady and noisy (match_switches)"
    )


def test_plan_leaves_the_model_its_weights_and_random_streams_alone():
    model = DGAN(small_config())
    model.train_dataframe(long_frame(), df_style="long", progress_bar=False, **LONG)
    before = {k: v.clone() for k, v in model.generator.state_dict().items()}
    rng_states = model.trainer.rng.get_state(), model.sampler.rng.get_state()
    global_state = __import__("torch").get_rng_state()
    model.plan(long_frame(seed=3), df_style="long", warm_up_steps=2, **LONG)
    after = model.generator.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert np.array_equal(rng_states[0], model.trainer.rng.get_state())
    assert np.array_equal(rng_states[1], model.sampler.rng.get_state())
    assert np.array_equal(global_state, __import__("torch").get_rng_state())


def test_plan_warns_about_one_step_epochs_and_suggests_a_batch_size():
    plan = DGAN(small_config(batch_size=1024, large_data=False)).plan(  # gretel's settings
        long_frame(), df_style="long", warm_up_steps=0, **LONG
    )
    assert plan.steps_per_epoch == 1
    assert any(w.startswith("batch_size 1024 >= 24 examples") and "16" in w for w in plan.warnings)


def test_suggested_batch_size_aims_at_about_ten_steps_per_epoch():
    from dgan.config.sizing import suggested_batch_size

    assert [suggested_batch_size(n) for n in (1, 24, 365, 5000, 10**6)] == [16, 16, 32, 256, 1024]


def test_plan_warns_about_identifier_and_free_text_features_and_crowded_attributes():
    df = long_frame(n_series=30)
    df["note"] = [f"reading number {i}" for i in range(len(df))]  # free text
    df["site"] = np.repeat(np.arange(30) % 10, 6).astype(str)  # 10 categories, 30 series
    plan = DGAN(small_config()).plan(
        df,
        df_style="long",
        warm_up_steps=0,
        example_id_column="id",
        time_column="step",
        attribute_columns=["kind", "site"],
        feature_columns=["level", "note"],
    )
    joined = "\n".join(plan.warnings)
    assert "feature 'note' is discrete with 180 distinct values" in joined
    assert "attribute 'site' has 10 categories for 30 examples" in joined
    assert "'kind'" not in joined and "'level'" not in joined


def test_plan_warns_about_a_wide_column_that_is_a_year_or_an_identifier():
    rng = np.random.default_rng(0)
    months = {f"m{i}": rng.normal(25, 2, 40) for i in range(6)}
    wide = pd.DataFrame({"YEAR": np.arange(1960, 2000), "row": np.arange(40) * 7.0, **months})
    plan = DGAN(small_config(max_sequence_len=8, sample_len=1)).plan(wide, warm_up_steps=0)
    assert any(w.startswith("WIDE column 'YEAR' looks like a year") for w in plan.warnings)
    assert any(w.startswith("WIDE column 'row' looks like an identifier") for w in plan.warnings)
    assert not any("'m0'" in w for w in plan.warnings)


def test_cli_dry_run_prints_the_plan_and_chooses_the_batch_size(tmp_path, capsys):
    data = tmp_path / "data.csv"
    long_frame(n_series=200).to_csv(data, index=False)
    flags = ["--example-id", "id", "--time", "step", "--attributes", "kind", "--epochs", "1"]
    assert cli(["train", str(data), "--dry-run", *flags]) == 0
    out = capsys.readouterr().out
    assert "training plan:" in out and "--batch-size 16: 13 steps per epoch" in out
    assert "settings: picked for 200 series" in out
    small = next(line for line in out.splitlines() if line.startswith("  small data: 200 "))
    assert "(--training-steps, --training-minutes)" in small and "dgan evaluate" in small
    assert len(small) <= 250  # what to expect and to try, in one line (it was 440)
    assert "kind   attribute   discrete, 2 categories" in out
    assert "yours:" not in out  # nothing given beyond the flags the plan shows
    assert list(tmp_path.iterdir()) == [data]  # nothing written


def test_the_plan_names_the_settings_a_config_file_gave(tmp_path, capsys):
    """A lever set in --config (a critic, a network's size) changed the run without a word
    in the plan, so a recorded plan could not tell it from the defaults' run; a field set
    to its default, and one another line shows, are not repeated."""
    data, toml = tmp_path / "data.csv", tmp_path / "lever.toml"
    long_frame(n_series=40).to_csv(data, index=False)
    toml.write_text("change_critic = true\nfeature_num_units = 32\nmatch_texture = 'auto'\n")
    flags = ["--example-id", "id", "--time", "step", "--epochs", "1", "--seed", "2"]
    assert cli(["train", str(data), "--dry-run", "--config", str(toml), *flags]) == 0
    yours = [line for line in capsys.readouterr().out.splitlines() if "yours:" in line]
    assert yours == ["  yours: change_critic true, feature_num_units 32"]
    python = DGAN(small_config(temporal_critic=True))
    plan = python.plan(long_frame(), df_style="long", warm_up_steps=0, **LONG)
    assert "  yours: " in str(plan) and "temporal_critic true" in plan.yours
    model_path = tmp_path / "m.dgan"
    assert cli(["train", str(data), "-o", str(model_path), "--batch-size", "64", *flags]) == 0
    assert "training plan:" in capsys.readouterr().out
    assert DGAN.load(model_path).config.batch_size == 64  # a given batch size is kept


def test_cli_dry_run_plans_the_settings_and_budget_picked_for_the_size(tmp_path, capsys):
    data = tmp_path / "data.csv"
    long_frame(n_series=1000, n_steps=4).to_csv(data, index=False)
    flags = ["--example-id", "id", "--time", "step", "--attributes", "kind"]
    assert cli(["train", str(data), "--dry-run", *flags]) == 0
    out = capsys.readouterr().out
    assert "(for 1000 series)" not in out  # no suggested batch size: the rule picks 64
    assert "--batch-size 64: 16 steps per epoch; training 10,000 steps (625 epochs)" in out
    assert "picked for 1,000 series" in out and "small data:" not in out
    config = tmp_path / "gretel.toml"
    config.write_text("large_data = false\n")
    assert cli(["train", str(data), "--dry-run", "--config", str(config), *flags]) == 0
    out = capsys.readouterr().out  # gretel's settings: the CLI suggests a batch size
    assert "batch_size=64 (for 1000 series)" in out and "(400 epochs): --epochs 400" in out
    assert cli(["train", str(data), "--dry-run", "--training-steps", "50", *flags]) == 0
    assert "training 50 steps (3 epochs and 2 of 16 steps): --training-steps 50" in (
        capsys.readouterr().out
    )


def test_cli_train_without_output_or_dry_run_says_what_to_pass(tmp_path, capsys):
    data = tmp_path / "data.csv"
    long_frame().to_csv(data, index=False)
    assert cli(["train", str(data), "--example-id", "id", "--time", "step"]) == 1
    assert "Pass -o MODEL" in capsys.readouterr().err


def test_plan_warns_about_whole_number_codes_read_as_continuous():
    df = long_frame()
    df["kind"] = np.repeat(np.arange(24) % 3, 6)  # codes 0, 1, 2 from a CSV
    plan = DGAN(small_config()).plan(df, df_style="long", warm_up_steps=0, **LONG)
    assert any(w.startswith("attribute 'kind' is continuous but") for w in plan.warnings)
    assert not any("'count'" in w for w in plan.warnings)  # 50 distinct counts: a quantity


def test_cli_reads_attributes_of_a_few_whole_numbers_as_classes(tmp_path, capsys):
    """The command line reads class labels stored as numbers as discrete, says so in the
    plan with the way out (--continuous); the Python API keeps gretel's rule (see above)."""
    df = long_frame(n_series=60)
    df["kind"] = np.repeat(np.arange(60) % 4, 6)  # 4 classes, 15 series each
    df["size"] = np.repeat(np.arange(60) % 15, 6)  # 15 values, 4 series each: a quantity
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    flags = ["--example-id", "id", "--time", "step", "--attributes", "kind,size"]
    config = tmp_path / "tiny.toml"
    config.write_text("\n".join(f"{k} = {str(v).lower()}" for k, v in TINY.items()) + "\n")
    assert cli(["train", str(data), "-o", str(tmp_path / "m.dgan"), "--config", str(config),
                *flags]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert re.search(
        r"\n  kind +attribute +discrete, 4 categories; each class generated at its share of "
        r"the training series \(match_class_shares\); whole numbers read as classes "
        r"\(--continuous kind reads them as numbers\)\n",
        out,
    ), out
    assert re.search(r"\n  size +attribute +continuous, range 0 \.\. 14\n", out), out
    layout = DGAN.load(tmp_path / "m.dgan").data_frame_layout
    assert [t.name for t in layout.attribute_types] == ["DISCRETE", "CONTINUOUS"]
    assert cli(["train", str(data), "--dry-run", "--continuous", "kind", *flags]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\n  kind +attribute +continuous, range 0 \.\. 3\n", out), out
    assert "'kind' is continuous but" not in out  # asked for: no advice to undo it
    real = tmp_path / "real.csv"
    df.to_csv(real, index=False)
    metrics = tmp_path / "metrics.json"
    assert cli(["evaluate", str(real), str(data), "--seeds", "1", "--json", str(metrics),
                *flags]) == 0  # fmt: skip
    out = capsys.readouterr().out  # evaluate reads the tables as train did
    assert "attribute 'kind': whole numbers read as classes" in out
    tstr = json.loads(metrics.read_text())["tstr"]
    assert (tstr["task"], tstr["target"]) == ("classification", "kind")  # kind's classes


# ----------------------------------------------------------------------------- metrics


def _walks(rng, n: int, scale: float = 1.0, shift: float = 0.0):
    from dgan.metrics import SeriesData

    features = rng.normal(size=(n, 8, 2)).cumsum(axis=1) * scale + shift
    return SeriesData.from_arrays(features, rng.integers(0, 2, (n, 1)).astype(object))


def test_evaluate_reports_baselines_spreads_and_verdicts():
    from dgan.metrics import evaluate

    rng = np.random.default_rng(0)
    real, alike, shifted = _walks(rng, 120), _walks(rng, 120), _walks(rng, 120, shift=6.0)
    good = evaluate(real, alike, n_seeds=2)
    for name in ("detection", "discriminative", "tstr", "marginals", "autocorrelation"):
        entry = good[name]
        assert len(entry["per_seed"]) == 2 and entry["std"] == pytest.approx(
            np.std(entry["per_seed"])
        )
        if name != "tstr":  # read against the real data's own accuracy, not halves
            assert len(entry["baseline"]["per_seed"]) == 2, name
    assert "tstr" not in good["verdict"]["counted"]  # a coin-flip attribute; 36 test series
    assert good["marginals"]["verdict"] == "close to real"
    assert good["verdict"]["verdict"] in ("close to real", "noticeably different")
    bad = evaluate(real, shifted, n_seeds=2)
    assert bad["marginals"]["verdict"] == "far from real"
    assert bad["discriminative"]["verdict"] == "far from real"
    assert bad["detection"]["verdict"] == "far from real"
    assert bad["verdict"]["verdict"] == "far from real"
    assert "marginals" in bad["verdict"]["counted"]


def test_metrics_on_too_few_series_are_flagged_and_left_out_of_the_verdict():
    from dgan.metrics import evaluate

    rng = np.random.default_rng(1)
    result = evaluate(_walks(rng, 48), _walks(rng, 48), n_seeds=1)
    assert "14 real series" in result["tstr"]["warning"]
    assert result["tstr"]["verdict"] == "not judged"
    assert {"tstr", "discriminative"} <= set(result["verdict"]["left_out"])
    assert "tstr" not in result["verdict"]["counted"]


def test_judge_follows_the_documented_rule():
    from dgan.metrics.verdict import THRESHOLDS, judge

    close, far = THRESHOLDS["marginals"]
    base = {"score": 0.1, "std": 0.0}
    for gap, verdict in [
        (close * 0.99, "close to real"),
        ((close + far) / 2, "noticeably different"),
        (far + 0.01, "far from real"),
    ]:
        entry = {"score": 0.1 + gap, "std": 0.0, "better": "lower"}
        assert judge(entry, base, "marginals") == verdict
    noisy = {"score": 0.1 + far + 0.01, "std": 0.1, "better": "lower"}
    assert judge(noisy, base, "marginals") == "noticeably different"  # spread widens it
    higher = {"score": 1.0 - THRESHOLDS["tstr"][1] - 0.01, "std": 0.0, "better": "higher"}
    assert judge(higher, {"score": 1.0, "std": 0.0}, "tstr") == "far from real"


def test_cli_evaluate_prints_and_writes_the_verdict(model_file, tmp_path, capsys):
    import json

    real, synthetic, out = tmp_path / "real.csv", tmp_path / "synth.csv", tmp_path / "m.json"
    long_frame().to_csv(real, index=False)
    assert cli(["generate", str(model_file), "-n", "24", "-o", str(synthetic)]) == 0
    args = ["evaluate", str(real), str(synthetic), "--model", str(model_file), "--seeds", "1"]
    assert cli([*args, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[1].startswith("verdict: ")  # after "wrote ..." of generate
    assert "real vs real" in printed and "warning: tstr: its test set has 7 real" in printed
    written = json.loads(out.read_text())
    assert written["verdict"]["n_seeds"] == 1 and "tstr" in written["verdict"]["left_out"]
    assert written["marginals"]["baseline"]["score"] is not None


# ----------------------------------------------------------------------------- report


def _captured_figures(monkeypatch):
    """Record every figure the report sections embed."""
    import dgan.report.samples as samples
    import dgan.report.sections as sections
    import dgan.report.training as training

    figures = []
    for module in (samples, sections, training):

        def record(fig, alt, _original=module.img):
            figures.append((alt, fig))
            return _original(fig, alt)

        monkeypatch.setattr(module, "img", record)
    return figures


def test_report_reads_verdict_first_and_counts_in_words(metrics_toy_evaluation):
    from dgan.report import render_report

    real, synthetic, metrics = metrics_toy_evaluation
    page = render_report(real, synthetic, metrics)
    assert page.index("Verdict: <strong>") < page.index("<h2>Metrics</h2>")
    from dgan.metrics import SeriesData

    rng = np.random.default_rng(0)
    one = SeriesData.from_arrays(rng.normal(size=(12, 5, 1)), rng.integers(0, 2, (12, 1)))
    assert "1 feature, 1 attribute." in render_report(one, one, {})


def test_report_panels_legends_order_and_resolution(metrics_toy_evaluation, monkeypatch):
    from dgan.metrics import SeriesData
    from dgan.report import render_report
    from dgan.report.figures import DPI

    figures = _captured_figures(monkeypatch)
    rng = np.random.default_rng(0)
    months = np.array(["Sep", "Apr", "May", "Jan", "Jun"], dtype=object)
    fixed = SeriesData.from_arrays(
        rng.normal(size=(30, 7, 1)), rng.choice(months, (30, 1)).astype(object)
    )
    render_report(fixed, fixed, {})
    panels = {alt: fig for alt, fig in figures}
    features = panels["Feature distributions"]
    assert len([ax for ax in features.axes if ax.get_visible()]) == 1  # no length panel
    attributes = panels["Attribute distributions"]
    ax = attributes.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Jan", "Apr", "May", "Jun", "Sep"]
    assert ax.get_legend() is None and len(attributes.legends) == 1  # one legend, outside
    swatches = [h.get_facecolor() for h in attributes.legends[0].legend_handles]
    bars = [ax.patches[0].get_facecolor(), ax.patches[-1].get_facecolor()]
    assert np.allclose(swatches, bars)  # legend colours are the bars' colours
    assert features.dpi == DPI >= 150 and features.get_size_inches()[0] * DPI >= 600
    figures.clear()
    real, synthetic, _ = metrics_toy_evaluation  # lengths vary: the length panel is back
    if len(set(real.lengths.tolist())) > 1:
        render_report(real, synthetic, {})
        visible = [a for a in dict(figures)["Feature distributions"].axes if a.get_visible()]
        assert visible[-1].get_title() == "sequence length"


def test_report_marks_and_explains_a_late_loss_spike(metrics_toy_evaluation):
    from dgan.report import render_report

    real, synthetic, metrics = metrics_toy_evaluation
    history = [
        {"epoch": e, "generator_loss": 1.0 - 0.001 * e, "discriminator_loss": -0.5}
        for e in range(60)
    ]
    history[57]["generator_loss"] = 6.0
    page = render_report(real, synthetic, metrics, history)
    assert "Loss spikes" in page and "epoch 57: generator loss 6" in page
    assert "near the end of training" in page
    calm = render_report(real, synthetic, metrics, history[:50])
    assert "Loss spikes" not in calm


def test_training_start_is_not_a_spike_and_single_panels_are_not_blown_up():
    from dgan.report.figures import figure, img
    from dgan.report.training import find_spikes

    start = np.r_[10.0, 7.0, 3.0, 1.5, np.full(40, 1.0) + 0.01 * np.sin(np.arange(40))]
    assert find_spikes(start) == []
    one, three = figure(1)[0], figure(3)[0]
    width = [int(img(f, "x").split('width="')[1].split('"')[0]) for f in (one, three)]
    assert width[0] < 600 < 1000 < width[1]  # a row of panels fills a page, one panel does not


# ----------------------------------------------------------------------------- README


def test_the_readme_python_example_runs_as_written(monkeypatch):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Python API\n\n```python\n(.*?)```", readme, re.S).group(1)
    assert "epochs=50" in block
    scope: dict = {}
    exec(
        block.replace("epochs=50", "epochs=1").replace("DGANConfig(", "DGANConfig(cuda=False, "),
        scope,
    )
    assert isinstance(scope["synthetic_features"], list)
    assert scope["series"].shape == (1000, 20, 2)
    assert scope["synthetic_attributes"].shape == (1000, 1)


def test_ci_runs_the_readmes_test_command_then_the_slow_tests():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start\n.*?```bash\n(.*?)```", readme, re.S).group(1)
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2 and commands[0].endswith("dgan demo")
    # the fast tests, a process a core, each taking whole files: minutes
    assert commands[1].endswith('pytest -n auto --dist loadfile -q -m "not slow"')
    ci = (root / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci  # verbatim
    # then the slow ones, one process a core (each trains its own model)
    slow = ".venv/bin/python -m pytest -n auto --dist load -q -m slow"
    assert ci.index(slow) > ci.index(commands[1])


# ----------------------------------------------------------------------------- progress bar


def test_progress_bar_keeps_its_bar_at_120_columns():
    from tqdm import tqdm

    from dgan.train.batch import Accumulators
    from dgan.train.loop import bar_postfix

    model = DGAN(small_config())
    model.train_dataframe(long_frame(), df_style="long", progress_bar=False, **LONG)
    acc = Accumulators(model.device)
    acc.losses += torch_tensor([-1234.5678, 987.654, 12.3456, -0.000123456, 0.0, 0.0])
    postfix = bar_postfix(model.trainer, acc, seen=1)
    assert len(postfix) <= 40, postfix
    line = tqdm.format_meter(
        n=12345,
        total=400_000,
        elapsed=3600.0,
        ncols=120,
        prefix="training",
        unit="batch",
        postfix=postfix,
    )
    assert len(line) <= 120
    bar = re.search(r"\|([^|]*)\|", line).group(1)
    assert len(bar) >= 20, line  # the bar keeps a readable width, even at 1:00:00 elapsed


def test_training_lines_come_every_minute_and_at_tenths_never_per_step():
    """Away from a terminal: a line after 30 s, then one a minute, plus the epoch ends that
    complete a tenth of the budget; only where the losses were read; the time budget caps
    the estimate."""
    import io

    from dgan.cli.progress import TrainingLines
    from dgan.train.loop import ProgressInfo

    now = [0.0]
    log = io.StringIO()
    lines = TrainingLines(log, every=60, seconds_left=1000.0, clock=lambda: now[0])
    losses = {"discriminator_loss": 1.0, "generator_loss": 2.0}
    for step in range(2000):  # 20 epochs of 100 steps, 0.5 s each: 1,000 s
        now[0] = 0.5 * (step + 1)
        read = losses if step % 50 == 49 else None  # losses read every 50 steps (log_every)
        lines(ProgressInfo(step // 100, 20, step % 100, 100, step, 2000, read))
    written = log.getvalue().splitlines()
    at = [int(re.search(r"step ([\d,]+) of", line).group(1).replace(",", "")) for line in written]
    assert at[0] == 100  # the first sync point after 30 s (and the first tenth)
    gaps = np.diff(at) * 0.5  # seconds between lines
    assert gaps.min() >= 10 and gaps.max() <= 60 + 25  # a minute apart, or a tenth's end
    assert {200 * k for k in range(1, 11)} <= set(at)  # every tenth of the budget
    assert len(written) < 35  # 1,000 s: not one per step, nor per sync point (40)
    assert written[-1].endswith(
        "step 2,000 of 2,000 (100%), epoch 20 of 20; losses: "
        "discriminator 1, generator 2; 16:40 elapsed, about 0:00 left"
    )
    now[0] = 0.0
    capped = TrainingLines(io.StringIO(), every=0, seconds_left=5.0, clock=lambda: now[0])
    capped(ProgressInfo(0, 9, 0, 100, 0, 900))
    now[0] = 1.0
    capped(ProgressInfo(0, 9, 9, 100, 9, 900, losses))  # 891 steps left at 0.11 s: 99 s
    assert capped.stream.getvalue().endswith("at most 0:04 left (the time budget)\n")


def test_evaluation_progress_says_what_runs_with_an_estimate():
    import io
    import time

    from dgan.cli.progress import EvaluationProgress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    now = [0.0]
    plain = EvaluationProgress(io.StringIO(), every=0, clock=lambda: now[0])
    plain("discriminative, seed 1 of 2", 0.0)
    now[0] = 30.0
    plain("tstr, seed 1 of 2", 0.25)
    now[0] = 120.0
    plain("memorisation", 1.0)  # not counted in the work: never "100% done" while it runs
    plain.close()
    assert plain.stream.getvalue().splitlines() == [
        "evaluate: discriminative, seed 1 of 2 (0% done, 0:00 elapsed)",
        "evaluate: tstr, seed 1 of 2 (25% done, 0:30 elapsed, about 1:30 left)",
        "evaluate: memorisation (the last step, 2:00 elapsed)",
    ]
    timed = EvaluationProgress(io.StringIO(), every=0.3)  # a line for steps over 10 ms
    timed("marginals, seed 1 of 1", 0.5)  # quick: replaced before its line is due
    timed("discriminative, seed 2 of 2", 0.5)
    time.sleep(0.5)  # runs on: its line, then another every 0.3 s
    timed.close()
    printed = timed.stream.getvalue().splitlines()
    assert printed and all(line.startswith("evaluate: discriminative, seed 2") for line in printed)
    bar = EvaluationProgress(Terminal(), every=0)
    bar("tstr, seed 1 of 1", 0.5)
    bar.close()
    assert "\r" in bar.stream.getvalue() and "evaluate: tstr, seed 1 of 1" in bar.stream.getvalue()
    last = EvaluationProgress(Terminal(), every=0)  # the bar says it too, beside its 100%
    last("memorisation", 1.0)
    last.close()
    assert "evaluate: memorisation (the last step)" in last.stream.getvalue()


def test_evaluate_reports_each_metric_and_seed_with_the_work_done():
    from dgan.metrics import evaluate

    rng = np.random.default_rng(0)
    real, synthetic = _walks(rng, 20), _walks(rng, 20)
    calls = []
    evaluate(real, synthetic, n_seeds=2, progress=lambda what, done: calls.append((what, done)))
    names = [what for what, _ in calls]
    assert names[:3] == ["detection, 2 seeds", "real vs real: detection, seed 1 of 2",
                         "real vs real: detection, seed 2 of 2"]  # fmt: skip
    assert "discriminative, seed 2 of 2" in names and "tstr, seed 2 of 2" in names
    assert "feature_correlation, seed 2 of 2" in names
    assert "real vs real: discriminative, seed 2 of 2" in names
    assert names[-1] == "memorisation"
    fractions = [done for _, done in calls]
    assert fractions[0] == 0 and fractions[-1] == 1 and fractions == sorted(fractions)
    # The classifiers' work in series read: detection 80 + 40, discriminative 80 + 40,
    # tstr 80 (read against the real data's own accuracy, no halves): 320 in all.
    assert dict(calls)["discriminative, seed 2 of 2"] == pytest.approx(160 / 320)
    # More synthetic series than real: the halves read only the real ones, and the work
    # still adds up to all of it when the copy check starts.
    calls.clear()
    more_synthetic = _walks(rng, 36)
    evaluate(real, more_synthetic, n_seeds=1, progress=lambda *call: calls.append(call))
    assert calls[-1] == ("memorisation", 1.0)


def test_cli_evaluate_prints_progress_lines_away_from_a_terminal(model_file, tmp_path, capsys):
    real = tmp_path / "real.csv"
    long_frame().to_csv(real, index=False)
    args = ["evaluate", str(real), str(real), "--model", str(model_file), "--seeds", "2"]
    assert cli([*args, "--progress-every", "0"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "evaluate: detection, 2 seeds (0% done, 0:00 elapsed)"
    assert any(
        re.fullmatch(r"evaluate: real vs real: discriminative, seed 2 of 2 "
                     r"\(\d+% done, 0:\d\d elapsed, about 0:\d\d left\)", line)
        for line in err
    ), err  # fmt: skip


def test_plan_says_what_the_time_column_of_generated_series_will_mean():
    df = long_frame()
    shared = DGAN(small_config()).plan(df, df_style="long", warm_up_steps=0, **LONG)
    assert not any("time_column" in w for w in shared.warnings)  # steps 0..5 in every series
    df["step"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(len(df)), unit="h")
    dated = DGAN(small_config()).plan(df, df_style="long", warm_up_steps=0, **LONG)
    assert any(
        w.startswith("the series have different times in time_column 'step'")
        for w in dated.warnings
    )


def test_the_memorisation_line_says_what_fraction_against_what_and_what_it_means():
    """'memorisation: some near-copies' alone read as a privacy problem with the tool: the
    line says the fraction, the real-vs-real baseline, what it means and what it compared."""
    from dgan.cli.summary import metrics_table

    entry = {"score": 0.092, "std": 0.0, "better": "lower", "n_train": 48,
             "baseline": {"score": 0.041, "std": 0.029}, "verdict": "some near-copies"}  # fmt: skip
    text = metrics_table({"memorisation": entry})
    line = next(x for x in text.splitlines() if x.startswith("memorisation: "))
    assert "9.2% of the synthetic series are near-copies of one of the 48 real series" in line
    assert "between two halves of the real data 4.1% ± 2.9% are" in line
    assert "matters where the training data is private" in line
    assert line.endswith(
        "It compares with the real table given, not with the series the model trained on (a "
        "model file keeps nothing that identifies them): pass the training data as REAL."
    )
