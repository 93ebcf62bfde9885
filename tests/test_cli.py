"""The `dgan` command line, driven as a user drives it: in a subprocess, on tiny data.

Each subprocess imports torch (seconds), so the tests share one trained model where
they can, and checks of arguments and messages that need no training run `main()`
in-process.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from dgan import DGAN
from dgan.cli.demo import DEMO_SYNTHETIC_SERIES
from dgan.cli.main import main
from dgan.cli.summary import metrics_table, training_summary
from dgan.errors import DataError
from dgan.storage.checkpoint import list_checkpoints
from dgan.tabular.columns import Columns
from dgan.tabular.lengths import choose_sample_len, infer_lengths

SRC = Path(__file__).resolve().parents[1] / "src"
ENV = {
    **os.environ,
    # The checkout's code, even where an installed dgan points elsewhere.
    "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    # Tiny models: more threads only add synchronisation, which on a busy CPU costs more
    # than the work (the test file runs about twice as fast with one thread).
    "OMP_NUM_THREADS": "1",
}
N_SERIES, N_STEPS = 24, 6
TINY = {  # a model small enough to train in a second
    "epochs": 1,
    "batch_size": 8,
    "attribute_num_units": 8,
    "feature_num_units": 8,
    "discriminator_num_layers": 2,
    "discriminator_num_units": 16,
    "cuda": False,
    "seed": 0,
}
LONG_FLAGS = ["--example-id", "id", "--time", "step", "--attributes", "kind"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_dgan(*args, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "dgan", *map(str, args)],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def long_frame(seed: int = 0) -> pd.DataFrame:
    """LONG: N_SERIES series of N_STEPS steps; 'kind' (attribute) sets the amplitude."""
    rng = np.random.default_rng(seed)
    kinds = np.where(np.arange(N_SERIES) % 3 == 0, "wavy", "calm")
    steps = np.arange(N_STEPS)
    level = [(2.0 if k == "wavy" else 0.5) * np.sin(steps + rng.uniform(0, 6)) for k in kinds]
    return pd.DataFrame(
        {
            "id": np.repeat([f"s{i}" for i in range(N_SERIES)], N_STEPS),
            "kind": np.repeat(kinds, N_STEPS),
            "step": np.tile(steps, N_SERIES),
            "level": np.concatenate(level),
            "flow": rng.normal(size=N_SERIES * N_STEPS),
        }
    )


def wide_frame(seed: int = 1) -> pd.DataFrame:
    """WIDE: one row per series, columns t0..t7 are its steps."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, N_SERIES)
    values = np.cumsum(rng.normal(size=(N_SERIES, 8)), axis=1) + 3 * label[:, None]
    return pd.DataFrame({"label": label, **{f"t{j}": values[:, j] for j in range(8)}})


def png_images(html: str) -> list[bytes]:
    return [
        base64.b64decode(src, validate=True)
        for src in re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    ]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A folder with data.csv and model.dgan, trained from a TOML config (epochs=1)
    overridden by --epochs 2."""
    folder = tmp_path_factory.mktemp("cli")
    long_frame().to_csv(folder / "data.csv", index=False)
    toml = "\n".join(f"{k} = {json.dumps(v).lower()}" for k, v in TINY.items())
    (folder / "tiny.toml").write_text(toml + "\n")
    result = run_dgan(
        "train",
        "data.csv",
        "-o",
        "model.dgan",
        "--config",
        "tiny.toml",
        "--epochs",
        "2",
        *LONG_FLAGS,
        cwd=folder,
    )
    (folder / "train.out").write_text(result.stdout)
    return folder


def test_train_reads_config_file_and_flags_override_it(trained):
    model = DGAN.load(trained / "model.dgan")
    assert model.config.epochs == 2  # the flag beats the file's epochs = 1
    assert model.config.batch_size == TINY["batch_size"]  # the file beats the default
    assert model.config.discriminator_num_units == TINY["discriminator_num_units"]
    assert len(model.history) == 2
    # Inferred from the data: the longest example, and a divisor of it.
    assert model.config.max_sequence_len == N_STEPS
    assert model.config.sample_len == choose_sample_len(N_STEPS)
    out = (trained / "train.out").read_text()
    assert f"inferred max_sequence_len={N_STEPS}" in out
    summary = r"trained 2 epochs on 24 series in [\d.]+ s \([\d,]+ examples/s after the first"
    assert re.search(summary, out)
    assert "\nprecision: fp32\n" in out and "\nguard events: none" in out


def test_csv_round_trip_generate_then_evaluate_with_model(trained):
    run_dgan("generate", "model.dgan", "-n", 12, "-o", "synthetic.csv", cwd=trained)
    synthetic = pd.read_csv(trained / "synthetic.csv")
    assert list(synthetic.columns) == list(long_frame().columns)
    assert synthetic["id"].nunique() == 12
    assert set(synthetic["kind"]) <= {"calm", "wavy"}
    assert synthetic.groupby("id").size().eq(N_STEPS).all()  # every training series is full

    result = run_dgan(
        "evaluate",
        "data.csv",
        "synthetic.csv",
        "--model",
        "model.dgan",
        "--json",
        "out/metrics.json",
        "--report",
        "out/report.html",
        "--seeds",
        1,  # the metrics' spread is not what this test checks
        cwd=trained,
    )
    metrics = json.loads((trained / "out" / "metrics.json").read_text())
    assert metrics["info"] == {"n_real": N_SERIES, "n_synthetic": 12, "seed": 0}
    for name in ("discriminative", "marginals", "autocorrelation"):
        score = r"[\d.e+-]+( ± [\d.e+-]+)?"  # mean (± spread over seeds)
        line = rf"^{name}\s+{score}\s+({score})?\s+(lower|higher)\s+\S"  # baseline, verdict
        assert re.search(line, result.stdout, re.M)
    report = (trained / "out" / "report.html").read_text()
    assert "<h2>Training</h2>" in report  # the model's history was used


def test_conditional_generation_follows_the_attributes_file(trained):
    pd.DataFrame({"kind": ["wavy", "wavy", "calm"]}).to_csv(trained / "wanted.csv", index=False)
    run_dgan("generate", "model.dgan", "--attributes", "wanted.csv", "-o", "cond.csv", cwd=trained)
    synthetic = pd.read_csv(trained / "cond.csv")
    assert synthetic.drop_duplicates("id")["kind"].tolist() == ["wavy", "wavy", "calm"]


def test_parquet_round_trip_wide_with_json_config_and_column_flags(tmp_path):
    wide_frame().to_parquet(tmp_path / "wide.parquet", index=False)
    (tmp_path / "tiny.json").write_text(json.dumps(TINY))
    flags = ["--attributes", "label", "--discrete", "label"]
    out = run_dgan(
        "train", "wide.parquet", "-o", "wide.dgan", "--config", "tiny.json", *flags, cwd=tmp_path
    ).stdout
    assert "max_sequence_len=8 (the number of feature columns)" in out
    run_dgan("generate", "wide.dgan", "-n", 15, "-o", "synthetic.parquet", cwd=tmp_path)
    synthetic = pd.read_parquet(tmp_path / "synthetic.parquet")
    assert list(synthetic.columns) == list(wide_frame().columns)
    assert len(synthetic) == 15 and set(synthetic["label"]) <= {0, 1}

    # Without --model the column flags describe both tables.
    result = run_dgan(
        "evaluate", "wide.parquet", "synthetic.parquet", *flags, "--json", "m.json",
        "--seeds", 1, cwd=tmp_path,
    )  # fmt: skip
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["info"]["n_synthetic"] == 15
    assert "marginals" in result.stdout


def test_failure_prints_one_line_and_exits_nonzero(trained):
    result = run_dgan(
        "train",
        "data.csv",
        "-o",
        "x.dgan",
        "--attributes",
        "knd",
        "--example-id",
        "id",
        cwd=trained,
        ok=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dgan: error: ")
    assert "'knd'" in lines[0]  # names the bad column
    assert not (trained / "x.dgan").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["train", "missing.csv", "-o", "m.dgan"], "No such file: 'missing.csv'"),
        (["train", "data.txt", "-o", "m.dgan"], "unknown table format"),
        (["train", "data.csv", "-o", "."], "is a folder"),
        (["train", "bad.parquet", "-o", "m.dgan"], "Cannot read 'bad.parquet' as Parquet"),
        (["train", "data.csv", "-o", "m.dgan", "--config", "bad.toml"], "'bogus'"),
        (["train", "data.csv", "-o", "m.dgan", "--config", "broken.json"], "not valid JSON"),
        (["train", "data.csv", "-o", "m.dgan", "--style", "long"], "--example-id"),
        (["generate", "data.csv", "-n", "3", "-o", "s.csv"], "not a readable dgan model"),
        (["generate", "m.dgan", "-o", "s.csv"], "Pass -n N"),
        (["evaluate", "data.csv", "data.csv", "--model", "m", "--time", "t"], "drop --time"),
    ],
)
def test_errors_name_the_problem(args, expected, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    long_frame().to_csv("data.csv", index=False)
    Path("data.txt").write_text("a,b\n1,2\n")
    Path("bad.parquet").write_text("not parquet")
    Path("bad.toml").write_text("epochs = 1\nbogus = 2\n")
    Path("broken.json").write_text("{epochs: 1")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("dgan: error: ") and expected in err, err
    assert "Traceback" not in err


def test_precision_flag_reaches_the_config_and_the_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    long_frame().to_csv("data.csv", index=False)
    Path("tiny.json").write_text(json.dumps(TINY))
    args = ["train", "data.csv", "-o", "m.dgan", "--config", "tiny.json", *LONG_FLAGS]
    assert main([*args, "--precision", "bf16"]) == 0
    model = DGAN.load("m.dgan")
    assert model.config.precision == "bf16"
    assert [h["precision"] for h in model.history] == ["bf16"]


def test_budget_flags_reach_the_config_and_the_training(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    long_frame().to_csv("data.csv", index=False)
    Path("tiny.json").write_text(json.dumps({**TINY, "epochs": 400}))  # replaced by the flag
    args = ["train", "data.csv", "-o", "m.dgan", "--config", "tiny.json", *LONG_FLAGS]
    assert main([*args, "--training-steps", "3", "--training-minutes", "30"]) == 0
    model = DGAN.load("m.dgan")
    assert (model.config.training_steps, model.config.training_minutes) == (3, 30.0)
    assert sum(h["steps"] for h in model.history) == 3
    with pytest.raises(SystemExit):  # argparse's usage error: a positive number
        main([*args, "--force", "--training-minutes", "0"])
    assert main([*args, "--force", "--epochs", "2", "--training-steps", "3"]) == 1


def test_debug_shows_the_traceback(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match="No such file"):
        main(["train", "missing.csv", "-o", "m.dgan", "--debug"])


@pytest.mark.parametrize(
    ("missing", "args", "expected"),
    [
        (
            "pyarrow",
            ["generate", "model.dgan", "-n", "2", "-o", "out.parquet"],
            'Parquet files need pyarrow (or use CSV); install it with pip install "dgan[parquet]".',
        ),
        (
            "matplotlib",
            ["evaluate", "real.csv", "synthetic.csv", "--style", "wide", "--report", "r.html"],
            'The HTML report needs matplotlib; install it with pip install "dgan[report]".',
        ),
    ],
)
def test_missing_optional_dependency_names_the_extra(
    missing, args, expected, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import <missing>` fail
    monkeypatch.chdir(tmp_path)
    assert main(args) == 1
    assert capsys.readouterr().err.strip() == f"dgan: error: {expected}"


def test_summary_reports_precision_and_guard_events_when_history_has_them():
    def epoch(k, precision, events):
        timing = {"examples_per_s": 100.0, "wall_time_s": 0.5}
        return {"epoch": k, **timing, "precision": precision, "guard_events": events}

    event = {"step": 7, "reason": "non-finite loss", "action": "fell back to fp32"}
    history = [epoch(0, "fp16", []), epoch(1, "fp16", [event]), epoch(2, "fp32", [])]
    text = training_summary(history, seconds=1.5, n_series=50)
    assert "trained 3 epochs on 50 series in 1.5 s (100 examples/s" in text
    assert "precision: fp16 (epochs 0-1), fp32 (epochs 2-2)" in text
    assert "guard events: 1\n  epoch 1: step 7: non-finite loss -> fell back to fp32" in text

    # Histories without them (written by gretel-style callers): fp32, no events.
    unrecorded = ("precision", "guard_events")
    plain = [{k: v for k, v in h.items() if k not in unrecorded} for h in history]
    text = training_summary(plain, seconds=1.5, n_series=50)
    assert "precision: fp32" in text and "guard events: none" in text


def test_inferred_sample_len_divides_and_keeps_the_lstm_short():
    for length in range(1, 400):
        sample_len = choose_sample_len(length)
        assert length % sample_len == 0
        steps = length // sample_len
        # About 10 steps, unless the length has no divisor giving 4..25 steps.
        has_moderate = any(length % d == 0 and 4 <= length // d <= 25 for d in range(1, length + 1))
        assert 4 <= steps <= 25 or not has_moderate, (length, steps)


def _lengths_frame(lengths: list[int]) -> pd.DataFrame:
    ids = np.repeat(np.arange(len(lengths)), lengths)
    return pd.DataFrame({"id": ids, "x": np.arange(len(ids), dtype=float)})


def test_a_prime_longest_series_gets_room_not_one_lstm_step():
    columns = Columns(example_id_column="id", df_style="long")
    # 797 steps is a prime: its divisors give 1 LSTM step or 797. Lengths vary, so the
    # inferred max_sequence_len is rounded up to 10 steps of 80.
    settings = {}
    notes = infer_lengths(_lengths_frame([797, 500, 120]), columns, settings)
    assert settings == {"max_sequence_len": 800, "sample_len": 80}
    assert notes == [
        "max_sequence_len=800 (the longest example, 797, rounded up to a multiple of "
        "sample_len: no divisor of 797 gives 4 to 25 LSTM steps)",
        "sample_len=80 (10 LSTM steps)",
    ]
    # A length with a good divisor keeps it; series of one length are never padded; what
    # the user set is kept.
    settings = {}
    infer_lengths(_lengths_frame([799, 500]), columns, settings)
    assert settings == {"max_sequence_len": 799, "sample_len": 47}
    settings = {}
    infer_lengths(_lengths_frame([797, 797]), columns, settings)
    assert settings["max_sequence_len"] == 797
    settings = {"sample_len": 1}
    assert infer_lengths(_lengths_frame([797, 500]), columns, settings) == [
        "max_sequence_len=797 (the longest example)"
    ]
    assert settings == {"sample_len": 1, "max_sequence_len": 797}
    # A sample_len the user set that does not divide the longest series: the inferred
    # room is rounded up to it (where lengths vary), rather than an error over a length
    # the user never chose.
    settings = {"sample_len": 50}
    assert infer_lengths(_lengths_frame([998, 500]), columns, settings) == [
        "max_sequence_len=1000 (the longest example, 998, rounded up to a multiple of the "
        "given sample_len 50)"
    ]
    assert settings == {"sample_len": 50, "max_sequence_len": 1000}
    settings = {"sample_len": 50}
    infer_lengths(_lengths_frame([998, 998]), columns, settings)
    assert settings["max_sequence_len"] == 998  # one length: left for the config's check
    settings = {"max_sequence_len": 797}
    infer_lengths(_lengths_frame([797, 500]), columns, settings)
    assert settings == {"max_sequence_len": 797, "sample_len": 797}


@pytest.mark.parametrize("command", [None, "train", "generate", "evaluate", "demo"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"] if command else ["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: dgan {command or ''}".rstrip())
    if command:
        assert "examples:\n  dgan " + command in out


def test_demo_writes_model_synthetic_csv_and_report(tmp_path):
    result = run_dgan("demo", "--epochs", 2, "--out", "demo", cwd=tmp_path)
    out = tmp_path / "demo"
    assert DGAN.load(out / "model.dgan").config.epochs == 2
    synthetic = pd.read_csv(out / "synthetic.csv")
    assert synthetic["example_id"].nunique() == DEMO_SYNTHETIC_SERIES
    assert len(synthetic) == DEMO_SYNTHETIC_SERIES * 28
    images = png_images((out / "report.html").read_text())
    assert len(images) >= 4
    for raw in images:
        assert raw.startswith(PNG_SIGNATURE)
        assert matplotlib.image.imread(io.BytesIO(raw), format="png").ndim == 3
    for name in ("model.dgan", "synthetic.csv", "report.html"):
        assert str(out / name) in result.stdout or f"demo/{name}" in result.stdout


# ------------------------------------------------------------- outputs: no data loss


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["train", "data.csv", "-o", "data.csv"], "-o 'data.csv' is the input file"),
        (["train", "data.csv", "-o", "link.csv"], "-o 'link.csv' is the input file 'data.csv'"),
        (
            ["evaluate", "data.csv", "other.csv", "--style", "wide", "--json", "data.csv"],
            "--json 'data.csv' is the input file",
        ),
        (
            ["evaluate", "data.csv", "other.csv", "--style", "wide", "--report", "data.csv"],
            "--report 'data.csv' is the input file",
        ),
        (
            ["generate", "m.dgan", "--attributes", "w.csv", "-o", "w.csv"],
            "-o 'w.csv' is the input file",
        ),
        (["train", "data.csv", "-o", "old.dgan"], "'old.dgan' exists; pass --force"),
        (["generate", "m.dgan", "-n", "2", "-o", "other.csv"], "'other.csv' exists; pass --force"),
        (
            ["evaluate", "data.csv", "other.csv", "--json", "x.json", "--report", "x.json"],
            "--report 'x.json' is the same file as --json",
        ),
    ],
)
def test_outputs_never_overwrite_inputs_or_existing_files(
    args, expected, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    long_frame().to_csv("data.csv", index=False)
    os.symlink("data.csv", "link.csv")
    Path("other.csv").write_text("x\n1\n")
    Path("w.csv").write_text("kind\nwavy\n")
    Path("old.dgan").write_text("an old model")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("dgan: error: ") and expected in err, err
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before  # nothing was written or replaced


def test_force_overwrites_an_existing_output_but_never_an_input(trained, capsys):
    out = trained / "forced.csv"
    out.write_text("old\n")
    assert main(["generate", str(trained / "model.dgan"), "-n", "3", "-o", str(out)]) == 1
    assert "pass --force" in capsys.readouterr().err and out.read_text() == "old\n"
    assert (
        main(["generate", str(trained / "model.dgan"), "-n", "3", "-o", str(out), "--force"]) == 0
    )
    assert pd.read_csv(out)["id"].nunique() == 3
    model = trained / "model.dgan"
    before = model.read_bytes()
    assert main(["generate", str(model), "-n", "3", "-o", str(model), "--force"]) == 1
    assert model.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # The data file does not exist: the output is checked before anything is read.
        (["train", "nodata.csv", "-o", "afile/m.dgan"], "'afile' is a file, not a folder"),
        (["generate", "nomodel.dgan", "-n", "2", "-o", "out.txt"], "unknown table format"),
        (
            ["evaluate", "no.csv", "no2.csv", "--style", "wide", "--report", "afile/r.html"],
            "'afile' is a file, not a folder",
        ),
        (["demo", "--out", "afile"], "'afile' is a file, not a folder"),
    ],
)
def test_every_output_location_is_checked_before_any_work(
    args, expected, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("not a folder")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert expected in err and "No such file" not in err and "not a readable" not in err, err


def test_a_fake_compressed_csv_error_names_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("fake.csv.gz").write_text("a,b\n1,2\n")  # not gzip
    assert main(["train", "fake.csv.gz", "-o", "m.dgan"]) == 1
    err = capsys.readouterr().err
    assert "Cannot read 'fake.csv.gz' as CSV" in err and "compressed" in err, err


def test_generate_streams_large_outputs_in_chunks_with_continuing_ids(
    trained, monkeypatch, tmp_path
):
    monkeypatch.setattr("dgan.cli.chunked.GENERATE_CHUNK", 4)
    calls = []
    original = DGAN.generate_dataframe

    def counting(self, n=None, **kwargs):
        calls.append(n)
        return original(self, n, **kwargs)

    monkeypatch.setattr(DGAN, "generate_dataframe", counting)
    out = tmp_path / "big.csv.gz"
    assert main(["generate", str(trained / "model.dgan"), "-n", "10", "-o", str(out)]) == 0
    assert calls == [4, 4, 2]  # never more than one chunk in memory
    synthetic = pd.read_csv(out)
    assert synthetic["id"].drop_duplicates().tolist() == [f"synthetic-{k}" for k in range(10)]
    assert synthetic.groupby("id").size().eq(N_STEPS).all()  # every training series is full


# --------------------------------------------------------------- errors in CLI words


@pytest.mark.parametrize(
    ("args", "expected", "python_words"),
    [
        (
            ["train", "data.csv", "-o", "m.dgan", "--time", "step", "--discrete", "nope"],
            "--discrete ['nope']",
            "discrete_columns",
        ),
        (
            ["train", "data.csv", "-o", "m.dgan", "--time", "step", "--example-id", "step"],
            "--time and --example-id values cannot be the same",
            "example_id_column",
        ),
        (  # LONG data read as WIDE: say how to read it as LONG
            ["train", "data.csv", "-o", "m.dgan", "--example-id", "id"],
            "Pass --time COL (the column ordering each series) or --style long",
            "df_style",
        ),
        (
            ["train", "data.csv", "-o", "m.dgan", "--attributes", "kind"],
            "pass --time COL or --style long",
            "df_style",
        ),
        (  # no flags at all: the id and the steps give the LONG table away
            ["train", "data.csv", "-o", "m.dgan"],
            "pass --example-id id --time step",
            "example_id_column",
        ),
        (  # evaluate refuses it before reading 'id' and 'step' as time steps
            ["evaluate", "data.csv", "data2.csv"],
            "pass --example-id id --time step",
            "example_id_column",
        ),
        (
            ["evaluate", "data.csv", "data2.csv", *LONG_FLAGS, "--target", "level"],
            "--target 'level' is not a discrete attribute",
            "target_attribute",
        ),
    ],
)
def test_errors_name_flags_not_python_parameters(
    args, expected, python_words, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    long_frame().to_csv("data.csv", index=False)
    long_frame(seed=1).to_csv("data2.csv", index=False)
    assert main(args) == 1
    err = capsys.readouterr().err
    assert expected in err and python_words not in err, err


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("bach_size = 64\n", "'bach_size' (did you mean 'batch_size'?)"),
        ('batch_size = "64"\n', "batch_size must be a positive integer, got '64'"),
        ("epochs = 5\nsample_len = 0\n", "sample_len must be a positive integer"),
    ],
)
def test_config_fields_and_types_are_checked_before_the_data_is_read(
    config, expected, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    Path("c.toml").write_text(config)
    # No data file: the error must come from the config, before reading the data.
    assert main(["train", "nodata.csv", "-o", "m.dgan", "--config", "c.toml"]) == 1
    err = capsys.readouterr().err
    assert expected in err and "No such file" not in err, err
    assert "valid fields are" not in err  # no list of all 47 fields


def _write_config(kind: str) -> str:
    """A bad config file of the given kind in the current folder; returns its name."""
    deep = "[" * 100_000 + "]" * 100_000
    if kind == "deep.json":
        Path(kind).write_text(f'{{"epochs": {deep}}}')
    elif kind == "deep.toml":
        Path(kind).write_text(f"epochs = {deep}\n")
    elif kind == "latin1.toml":
        Path(kind).write_bytes("epochs = 5 # réglé\n".encode("latin-1"))
    elif kind == "twice.json":
        Path(kind).write_text('{"epochs": 5, "batch_size": 8, "epochs": 50}')
    elif kind == "zero.json":
        Path(kind).symlink_to("/dev/zero")
    elif kind == "huge.json":
        Path(kind).write_text('{"epochs": 5' + " " * 2_000_000 + "}")
    elif kind == "fifo.json":
        os.mkfifo(kind)
    elif kind == "folder.toml":
        Path(kind).mkdir()
    return kind


def _write_quietly(pipe: str) -> None:
    with contextlib.suppress(BrokenPipeError), open(pipe, "w") as f:
        f.write("{}")


@pytest.mark.parametrize(
    ("flags", "config", "expected"),
    [
        (["--checkpoint-every", "5"], "", "--checkpoint-every needs --checkpoint-dir"),
        ([], "checkpoint_keep = 2\n", "checkpoint_keep needs --checkpoint-dir"),
        (["--checkpoint-dir", ""], "", "--checkpoint-dir is empty"),
    ],
)
def test_checkpoint_settings_without_a_folder_are_refused(
    flags, config, expected, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    Path("c.toml").write_text(config)
    assert main(["train", "nodata.csv", "-o", "m.dgan", "--config", "c.toml", *flags]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dgan: error: ") and expected in err, err
    assert "No such file" not in err  # before the data is read


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("deep.json", "nested too deeply"),
        ("deep.toml", "nested too deeply"),
        ("latin1.toml", "is not UTF-8 text (byte 0xe9 at position 14)"),
        ("twice.json", "gives 'epochs' twice"),
        ("zero.json", "is not a regular file"),
        ("huge.json", "bytes long"),
        ("fifo.json", "is not a regular file"),
        ("folder.toml", "is not a regular file"),  # before: "Is a directory: '4'"
    ],
)
def test_unreadable_config_files_are_errors_not_crashes_or_hangs(
    kind, expected, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    name = _write_config(kind)
    if kind == "fifo.json":  # a writer, so that a dgan that opens the pipe does not hang
        writer = threading.Thread(target=_write_quietly, args=(name,), daemon=True)
        writer.start()
    assert main(["train", "nodata.csv", "-o", "m.dgan", "--config", name]) == 1
    if kind == "fifo.json":
        os.close(os.open(name, os.O_RDONLY | os.O_NONBLOCK))  # lets the writer go
        writer.join(10)
    err = capsys.readouterr().err
    assert err.startswith(f"dgan: error: Config file {name!r}") and expected in err, err
    assert "No such file" not in err  # before the data is read


def test_a_failed_generation_leaves_the_old_output_in_place(trained, monkeypatch, tmp_path):
    out = tmp_path / "kept.csv"
    out.write_text("old\n")
    monkeypatch.setattr("dgan.cli.chunked.GENERATE_CHUNK", 2)
    original, calls = DGAN.generate_dataframe, []

    def failing_second_chunk(self, n=None, **kwargs):
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, n, **kwargs)

    monkeypatch.setattr(DGAN, "generate_dataframe", failing_second_chunk)
    args = ["generate", str(trained / "model.dgan"), "-n", "5", "-o", str(out), "--force"]
    assert main(args) == 130
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["kept.csv"]


def test_an_unseen_category_in_the_last_attribute_row_is_reported_before_generating(
    trained, monkeypatch, tmp_path, capsys
):
    """Before: the bad last row of 200,000 was reported after 54 s of generating the
    chunks before it."""
    monkeypatch.setattr("dgan.cli.chunked.GENERATE_CHUNK", 2)
    calls = []
    original = DGAN.generate_dataframe
    monkeypatch.setattr(
        DGAN,
        "generate_dataframe",
        lambda self, *a, **kw: calls.append(1) or original(self, *a, **kw),
    )
    wanted = tmp_path / "wanted.csv"
    pd.DataFrame({"kind": ["calm", "wavy", "calm", "wavy", "stormy"]}).to_csv(wanted, index=False)
    out = tmp_path / "out.csv"
    args = ["generate", str(trained / "model.dgan"), "--attributes", str(wanted), "-o", str(out)]
    assert main(args) == 1
    assert "never seen in training: ['stormy']" in capsys.readouterr().err
    assert calls == [] and not out.exists()


# --------------------------------------------------------------- typos in flags


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        (["--atributes", "kind"], "unrecognized argument --atributes (did you mean --attributes?)"),
        # argparse alone would take a prefix of a flag as the flag, silently.
        (["--epoch", "2"], "--epoch is not a flag; did you mean --epochs?"),
        # a word of the flag meant, not the nearest spelling (--style)
        (["--steps", "5"], "unrecognized argument --steps (did you mean --training-steps?)"),
        # nothing near: no guess (the shared dashes once made it --dp-delta)
        (["--plan"], "unrecognized argument --plan\n"),
    ],
)
def test_a_mistyped_or_shortened_flag_is_an_error_naming_the_flag_meant(typed, meant, tmp_path):
    long_frame().to_csv(tmp_path / "data.csv", index=False)
    flags = ["--example-id", "id", "--time", "step", *typed]
    result = run_dgan("train", "data.csv", "--dry-run", *flags, cwd=tmp_path, ok=False)
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith("usage: dgan train ")  # the usage of the command typed
    assert f"dgan train: error: {meant}" in result.stderr, result.stderr
    assert "training plan" not in result.stdout


# ----------------------------------------------- what the command prints names flags


def test_warnings_and_the_plan_name_flags_not_python_parameters(tmp_path):
    from dgan.precision import cpu_fp16_hardware

    if cpu_fp16_hardware():
        pytest.skip("this CPU runs fp16 in hardware: no emulation warning to read")
    long_frame().to_csv(tmp_path / "data.csv", index=False)
    flags = ["--dry-run", "--epochs", "1", "--precision", "fp16", *LONG_FLAGS]
    result = run_dgan("train", "data.csv", *flags, cwd=tmp_path)
    text = result.stdout + result.stderr
    assert "use --precision 'fp32' (or 'auto') here" in result.stderr, result.stderr
    assert "precision fp16: --precision 'fp16' was asked for" in result.stdout
    assert "precision=" not in text and "precision='" not in text, text


def test_evaluate_suggests_another_target_flag_and_what_to_try(tmp_path):
    def labelled(seed: int) -> pd.DataFrame:
        frame = long_frame(seed)
        # A category per series: held-out categories are never seen in training.
        frame["label"] = frame["id"].str.replace("s", "L")
        return frame

    labelled(0).to_csv(tmp_path / "real.csv", index=False)
    far = labelled(1)
    far["level"] += 50  # far from real
    far.to_csv(tmp_path / "synth.csv", index=False)
    flags = ["--example-id", "id", "--time", "step", "--attributes", "label,kind"]
    result = run_dgan(
        "evaluate", "real.csv", "synth.csv", *flags, "--target", "label", "--seeds", "1",
        cwd=tmp_path,
    )  # fmt: skip
    tstr = next(line for line in result.stdout.splitlines() if line.startswith("tstr"))
    assert "n/a" in tstr, tstr
    why = next(line for line in result.stdout.splitlines() if line.startswith("tstr: no score"))
    assert why.endswith("choose another --target ('kind')."), why
    assert "target_attribute" not in result.stdout
    verdict, advice = result.stdout.splitlines()[:2]
    assert verdict.startswith("verdict: far from real")
    assert advice.startswith("What to try: a longer training budget (--training-steps or ")


# ----------------------------------------------------------------------- missing values


def test_the_plan_says_how_missing_values_are_repaired_and_which_feature_is_an_attribute(
    tmp_path,
):
    frame = long_frame()
    frame.loc[[3, 10], "level"] = np.nan  # blank cells inside series s0 and s1
    frame["site"] = "site-" + frame["id"].str[-1]  # one value per series: an attribute
    frame.to_csv(tmp_path / "data.csv", index=False)
    out = run_dgan("train", "data.csv", "--dry-run", "--epochs", "1", *LONG_FLAGS, cwd=tmp_path)
    lines = out.stdout.splitlines()
    assert (
        "  missing values: 2 interpolated in 2 of 24 examples (feature 'level': 2), linearly "
        "between the neighbouring steps of each series (the nearest value at its ends)."
    ) in lines, out.stdout
    warning = next(w for w in lines if "'site'" in w and "warning" in w)
    assert warning.startswith("warning: feature 'site' never changes within a series"), warning
    assert "make it an attribute (--attributes)" in warning
    assert not any("'level'" in w for w in lines if w.startswith("warning"))


def test_a_blank_attribute_cell_is_called_a_missing_value(tmp_path):
    frame = long_frame()
    frame.loc[2, "kind"] = np.nan  # one blank cell in series s0's rows
    frame.to_csv(tmp_path / "data.csv", index=False)
    result = run_dgan("train", "data.csv", "--dry-run", *LONG_FLAGS, cwd=tmp_path, ok=False)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "dgan: error: Attribute 'kind' is missing (a blank cell) in some rows of example(s) 's0'"
    ), result.stderr
    assert "move it to --features" in result.stderr
    assert "not constant within example(s)" not in result.stderr  # not the other problem


# ---------------------------------------------------------------------------- resuming


@pytest.fixture(scope="module")
def checkpointed(tmp_path_factory) -> Path:
    """A folder with data.csv, tiny.toml and ck/, the checkpoints of a 2-epoch run."""
    folder = tmp_path_factory.mktemp("resume")
    long_frame().to_csv(folder / "data.csv", index=False)
    toml = "\n".join(f"{k} = {json.dumps(v).lower()}" for k, v in TINY.items())
    (folder / "tiny.toml").write_text(toml + "\n")
    run_dgan(*RESUMED, "-o", "first.dgan", "--epochs", 2, "--checkpoint-dir", "ck",
             "--checkpoint-every", 1, cwd=folder)  # fmt: skip
    return folder


RESUMED = ["train", "data.csv", "--config", "tiny.toml", *LONG_FLAGS]


def copied(checkpointed: Path, tmp_path: Path) -> Path:
    """A copy of the fixture's folder, for a test that adds checkpoints to it."""
    shutil.copytree(checkpointed, tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_resume_says_what_it_resumes_and_the_plan_and_summary_count_this_run(
    checkpointed, tmp_path
):
    folder = copied(checkpointed, tmp_path)
    # Extending the finished 2-epoch run to 3 epochs: one epoch to train.
    out = run_dgan(*RESUMED, "-o", "more.dgan", "--epochs", 3, "--resume", "ck", cwd=folder)
    lines = out.stdout.splitlines()
    assert "resuming from ck/checkpoint-000002.dgan: 2 of 3 epochs trained, 1 left" in lines
    assert "  resuming after epoch 2: 1 epoch left (3 steps)" in lines
    estimate = next(line for line in lines if line.startswith("  estimated time"))
    total, per_step = re.search(
        r"epochs left ([\d.e-]+) s \(([\d.e-]+) ms per step", estimate
    ).groups()
    assert float(total) == pytest.approx(3 * float(per_step) / 1000, rel=0.06), estimate
    assert any(line.startswith("trained epoch 2 (1 epoch) on 24 series in ") for line in lines)
    assert any(line.startswith("resumed after 2 epochs: 3 epochs in all, ") for line in lines)
    assert len(DGAN.load(folder / "more.dgan").history) == 3


def test_resumed_time_budget_says_it_counts_the_whole_runs_training(checkpointed, tmp_path):
    """--training-minutes counts the interrupted run's training time too; plan and summary
    say so (issue 31: the plan said "2 min" for the epochs left, training stopped at 38 s)."""
    folder = copied(checkpointed, tmp_path)
    done = sum(h["wall_time_s"] for h in DGAN.load(folder / "first.dgan").history)
    args = [*RESUMED, "-o", "more.dgan", "--epochs", 30, "--resume", "ck"]
    out = run_dgan(*args, "--training-minutes", done / 60 / 2, cwd=folder).stdout
    resuming = re.search(
        r"  resuming after epoch 2: 28 epochs left \(84 steps\); the time budget of (\S+) min "
        r"counts the whole run's training: ([\d.]+) s before this resume, 0 s left\n",
        out,
    )
    assert resuming is not None, out
    assert float(resuming.group(1)) == pytest.approx(done / 120, rel=1e-3)
    assert float(resuming.group(2)) == pytest.approx(done, rel=0.05, abs=0.05)
    estimate = next(line for line in out.splitlines() if line.startswith("  estimated time"))
    assert estimate.startswith("  estimated time for the epochs left 0 s (")
    assert estimate.endswith("; the time budget stops it)")
    assert "of the whole run's training, is spent (a larger --training-minutes trains" in out
    assert "small data:" not in out  # said when the run started, not again


def test_resuming_with_other_settings_names_the_flags(checkpointed, tmp_path):
    folder = copied(checkpointed, tmp_path)
    args = [*RESUMED, "-o", "other.dgan", "--epochs", 3, "--seed", 1, "--resume", "ck"]
    result = run_dgan(*args, cwd=folder, ok=False)
    assert result.returncode == 1 and "training plan" not in result.stdout  # said first
    assert "the config differs in --seed: 0 in the checkpoint, 1 now" in result.stderr
    assert "or train from the start without --resume." in result.stderr
    assert "resume_from" not in result.stderr, result.stderr


def _ctrl_c_stops_it() -> None:
    """In a child before it runs: Ctrl-C (SIGINT) interrupts it, as in a terminal. A suite
    started in the background (`nohup`, `&` in a script) ignores SIGINT, children inherit
    that, and an interrupted `dgan train` would train on until killed."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted(args: list, folder: Path, ready) -> subprocess.CompletedProcess:
    """Run ``dgan`` with ``args`` in ``folder``; press Ctrl-C (send SIGINT) once it has
    printed its plan and ``ready()`` is true."""
    env = {**ENV, "PYTHONUNBUFFERED": "1"}
    quiet = ["--progress-every", "1e9"]  # stderr holds what Ctrl-C says, on a slow day too
    process = subprocess.Popen(
        [sys.executable, "-m", "dgan", *map(str, args), *quiet],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ctrl_c_stops_it,
    )  # fmt: skip
    try:
        for line in process.stdout:  # the plan's last line comes just before training
            if line.startswith("  estimated time"):
                break
        deadline = time.monotonic() + 240
        while not ready() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def test_ctrl_c_says_how_to_resume_or_that_nothing_was_saved(checkpointed, tmp_path):
    folder = copied(checkpointed, tmp_path)
    long_run = [*RESUMED, "-o", "long.dgan", "--epochs", 100_000]
    saving = [*long_run, "--checkpoint-dir", "ck2", "--checkpoint-every", 1]
    result = _interrupted(saving, folder, lambda: len(list_checkpoints(folder / "ck2")) >= 2)
    assert result.returncode == 130
    newest = re.fullmatch(
        r"dgan: interrupted; the newest checkpoint is ck2/checkpoint-(\d+)\.dgan \(after \d+ "
        r"epochs\); to continue, run the same command with --resume ck2\n",
        result.stderr,
    )
    assert newest and (folder / "ck2" / f"checkpoint-{newest.group(1)}.dgan").exists()

    result = _interrupted(long_run, folder, lambda: True)
    assert result.returncode == 130
    assert result.stderr == (
        "dgan: interrupted; nothing was saved: without --checkpoint-dir no checkpoints are "
        "written (pass --checkpoint-dir DIR to be able to resume a run)\n"
    )
    assert not (folder / "long.dgan").exists()


@pytest.mark.parametrize("command", ["generate", "train", "evaluate"])
def test_seeds_beyond_the_generators_range_are_refused_by_the_flag(
    command, trained, tmp_path, capsys
):
    args = {
        "generate": ["generate", str(trained / "model.dgan"), "-n", "2", "-o", "x.csv"],
        "train": ["train", "nodata.csv", "-o", "m.dgan"],
        "evaluate": ["evaluate", "a.csv", "b.csv"],
    }[command]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--seed", str(2**70)])
    assert exit_info.value.code == 2  # argparse's usage error, before any work
    err = capsys.readouterr().err
    assert "--seed: expected an integer from 0 to 2**63 - 2, got '1180591620717411303424'" in err


def test_a_full_disk_while_generating_names_the_output_and_leaves_nothing(
    trained, tmp_path, capsys
):
    out = tmp_path / "synthetic.csv"
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, limit[1]))  # files stop at 100 kB
    try:
        status = main(["generate", str(trained / "model.dgan"), "-n", "20000", "-o", str(out)])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        signal.signal(signal.SIGXFSZ, handler)
    err = capsys.readouterr().err
    assert status == 1 and err.startswith(f"dgan: error: File too large: {str(out)!r}"), err
    assert list(tmp_path.iterdir()) == []  # no output, no hidden .partial file


def test_sigterm_while_generating_leaves_no_partial_file(trained, tmp_path):
    out = tmp_path / "synthetic.csv"
    command = [sys.executable, "-m", "dgan", "generate", str(trained / "model.dgan")]
    process = subprocess.Popen(
        [*command, "-n", "10000000", "-o", str(out)], env=ENV, stderr=subprocess.PIPE, text=True
    )
    partial = tmp_path / ".synthetic.csv.partial"
    try:
        while not partial.exists():
            assert process.poll() is None, process.stderr.read()
            time.sleep(0.05)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    assert stderr.strip().splitlines() == ["dgan: terminated"]
    assert list(tmp_path.iterdir()) == []


def test_an_attributes_table_without_rows_is_an_error_and_keeps_the_output(
    trained, tmp_path, capsys
):
    wanted, out = tmp_path / "wanted.csv", tmp_path / "old.csv"
    wanted.write_text("kind\n")
    out.write_text("old contents\n")
    model = str(trained / "model.dgan")
    assert main(["generate", model, "--attributes", str(wanted), "-o", str(out), "--force"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dgan: error: --attributes {str(wanted)!r} has no rows"), err
    assert out.read_text() == "old contents\n"


def test_evaluate_reports_values_near_the_float_limit(trained, tmp_path, capsys):
    """Synthetic values of 1e307: every metric still prints (before: 'unexpected error:
    TypeError' in the table printer, as the correlation overflowed to NaN without a
    reason) and --json is strict JSON."""
    huge = long_frame()
    huge["level"] *= 1e307  # finite, but its squares overflow
    huge.to_csv(tmp_path / "huge.csv", index=False)
    metrics_json = tmp_path / "metrics.json"
    args = ["evaluate", str(trained / "data.csv"), str(tmp_path / "huge.csv")]
    args += ["--model", str(trained / "model.dgan"), "--seeds", "1", "--json", str(metrics_json)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"^feature_correlation\s+[\d.e+-]+\s", out, re.M), out
    metrics = json.loads(metrics_json.read_text(), parse_constant=pytest.fail)  # no NaN
    # correlations do not depend on a feature's scale: the same as the real data's
    assert metrics["feature_correlation"]["score"] < 1e-12
    assert metrics["autocorrelation"]["score"] < 1e-12
    assert metrics["marginals"]["score"] > 1e300


def test_evaluate_answers_for_a_real_table_of_one_series(trained, tmp_path, capsys):
    """One real series: every metric is reported as not judged, with the JSON and report
    written (before: a false 'There are no examples' error from the copy check's halves)."""
    one = long_frame()
    one[one["id"] == one["id"].iloc[0]].to_csv(tmp_path / "one.csv", index=False)
    metrics_json, report = tmp_path / "metrics.json", tmp_path / "report.html"
    args = ["evaluate", str(tmp_path / "one.csv"), str(trained / "data.csv")]
    args += ["--model", str(trained / "model.dgan"), "--seeds", "1"]
    assert main([*args, "--json", str(metrics_json), "--report", str(report)]) == 0
    metrics = json.loads(metrics_json.read_text())
    assert metrics["verdict"]["verdict"] == "not enough data to judge"
    assert metrics["memorisation"]["verdict"] == "not judged"
    assert report.stat().st_size > 0
    assert "not enough data to judge" in capsys.readouterr().out


def test_the_metrics_table_prints_a_score_missing_without_a_reason():
    table = metrics_table(
        {"marginals": {"score": None, "reason": None, "better": "lower", "verdict": None}}
    )
    lines = table.splitlines()
    assert lines[1].split()[:2] == ["marginals", "n/a"] and "None" not in table
    assert lines[2] == "marginals: no score: not computed"


# ---------------------------------------------------------------------------- progress


def test_train_into_a_log_file_shows_the_plan_then_plain_progress_lines(trained, tmp_path):
    """Output into a file (a log, a notebook, CI): the plan as soon as it is printed, then
    complete progress lines (no bar) while training runs (issue 31: 15 silent minutes)."""
    shutil.copy(trained / "data.csv", tmp_path / "data.csv")
    shutil.copy(trained / "tiny.toml", tmp_path / "tiny.toml")
    args = ["train", "data.csv", "--config", "tiny.toml", *LONG_FLAGS, "-o", "m.dgan"]
    log = tmp_path / "train.log"
    buffered = {k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"}  # Python's default
    with log.open("w") as file:  # `dgan train ... > train.log 2>&1`
        process = subprocess.Popen(
            [sys.executable, "-m", "dgan", *args, "--epochs", "100000", "--progress-every", "0"],
            cwd=tmp_path, env=buffered, stdout=file, stderr=subprocess.STDOUT,
            preexec_fn=_ctrl_c_stops_it,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and process.poll() is None:
                if log.read_text().count("\ntraining: step ") >= 3:
                    break
                time.sleep(0.2)
            process.send_signal(signal.SIGINT)
            process.wait(timeout=120)
        finally:
            process.kill()
    text = log.read_text()
    assert "\r" not in text  # no bar redrawn into the file
    lines = [line for line in text.splitlines() if line.startswith("training: step ")]
    assert len(lines) >= 3, text
    assert text.index("training plan:") < text.index(lines[0])
    pattern = (
        r"training: step [\d,]+ of 300,000 \(0%\), epoch \d+ of 100000; losses: discriminator "
        r"\S+, attribute discriminator \S+, generator \S+; \d+:\d\d elapsed, about [\d:]+ left"
    )
    assert all(re.fullmatch(pattern, line) for line in lines), lines[:3]
    assert "dgan: interrupted; nothing was saved" in text
