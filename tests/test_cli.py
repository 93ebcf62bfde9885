"""The `dgan` command line, driven as a user drives it: in a subprocess, on tiny data.

Each subprocess imports torch (seconds), so the tests share one trained model where
they can, and checks of arguments and messages that need no training run `main()`
in-process.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from dgan import DGAN
from dgan.cli import DEMO_SYNTHETIC_SERIES, choose_sample_len, main, training_summary
from dgan.errors import DataError

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
        [sys.executable, "-m", "dgan.cli", *map(str, args)],
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
        cwd=trained,
    )
    metrics = json.loads((trained / "out" / "metrics.json").read_text())
    assert metrics["info"] == {"n_real": N_SERIES, "n_synthetic": 12, "seed": 0}
    for name in ("discriminative", "marginals", "autocorrelation"):
        assert re.search(rf"^{name}\s+[\d.e+-]+\s+(lower|higher)$", result.stdout, re.M)
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
        "evaluate", "wide.parquet", "synthetic.parquet", *flags, "--json", "m.json", cwd=tmp_path
    )
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


def test_a_flag_this_build_has_no_field_for_is_a_clear_error(tmp_path, monkeypatch, capsys):
    """For builds whose DGANConfig predates a flag (as --precision once did)."""
    import dgan.cli as cli

    @dataclasses.dataclass
    class OldConfig:
        epochs: int = 1

    monkeypatch.setattr(cli, "DGANConfig", OldConfig)
    monkeypatch.chdir(tmp_path)
    long_frame().to_csv("data.csv", index=False)
    assert main(["train", "data.csv", "-o", "m.dgan", "--precision", "bf16"]) == 1
    err = capsys.readouterr().err
    assert "--precision is not supported by this dgan build" in err, err
    assert not Path("m.dgan").exists()


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
    text = training_summary(SimpleNamespace(history=history, config=None), seconds=1.5)
    assert "trained 3 epochs on 50 series in 1.5 s (100 examples/s" in text
    assert "precision: fp16 (epochs 0-1), fp32 (epochs 2-2)" in text
    assert "guard events: 1\n  epoch 1: step 7: non-finite loss -> fell back to fp32" in text

    # Builds that do not record them (yet): the configured precision, or fp32.
    unrecorded = ("precision", "guard_events")
    plain = [{k: v for k, v in h.items() if k not in unrecorded} for h in history]
    text = training_summary(SimpleNamespace(history=plain, config=None), seconds=1.5)
    assert "precision: fp32" in text and "guard events: none" in text


def test_inferred_sample_len_divides_and_keeps_the_lstm_short():
    for length in range(1, 400):
        sample_len = choose_sample_len(length)
        assert length % sample_len == 0
        steps = length // sample_len
        # About 10 steps, unless the length has no divisor giving 4..25 steps.
        has_moderate = any(length % d == 0 and 4 <= length // d <= 25 for d in range(1, length + 1))
        assert 4 <= steps <= 25 or not has_moderate, (length, steps)


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
