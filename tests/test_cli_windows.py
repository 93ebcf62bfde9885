"""``--window`` / ``--stride`` through the real ``dgan`` command: the plan says what the
windows are, training and generation work on windows, and evaluate cuts the real
recordings the same way. Argument errors run ``main()`` in-process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dgan import DGAN
from dgan.cli.main import main
from dgan.tabular.layout import Windowing
from test_cli import TINY, run_dgan

LENGTHS = {"north": 60, "south": 60, "east": 45}  # one recording per sensor
FLAGS = ["--example-id", "sensor", "--time", "ts", "--attributes", "site"]


def hourly() -> pd.DataFrame:
    """A recording per sensor of hourly values (a daily cycle), rows shuffled."""
    rng = np.random.default_rng(0)
    parts = [
        pd.DataFrame(
            {
                "sensor": f"{site}-1",
                "site": site,
                "ts": pd.date_range("2021-03-01", periods=n, freq="h"),
                "load": np.sin(np.arange(n) * 2 * np.pi / 24) + rng.normal(0, 0.1, n),
            }
        )
        for site, n in LENGTHS.items()
    ]
    df = pd.concat(parts, ignore_index=True)
    return df.iloc[rng.permutation(len(df))]


@pytest.fixture(scope="module")
def windowed(tmp_path_factory) -> Path:
    """A folder with hourly.csv and model.dgan, trained on windows of 12 steps every 4."""
    folder = tmp_path_factory.mktemp("windows")
    hourly().to_csv(folder / "hourly.csv", index=False)
    (folder / "tiny.json").write_text(json.dumps(TINY))
    result = run_dgan(
        "train", "hourly.csv", "-o", "model.dgan", "--config", "tiny.json", *FLAGS,
        "--window", 12, "--stride", 4, cwd=folder,
    )  # fmt: skip
    (folder / "train.out").write_text(result.stdout)
    return folder


def test_the_dry_run_plan_says_what_the_windows_are(tmp_path):
    hourly().to_csv(tmp_path / "hourly.csv", index=False)
    result = run_dgan(
        "train", "hourly.csv", "--dry-run", *FLAGS, "--window", 50, "--stride", 5, cwd=tmp_path
    )
    plan = result.stdout
    # (60 - 50) // 5 + 1 = 3 windows of each long recording; 'east' (45) is too short
    said = (
        "windows: 3 recordings of 45 to 60 steps -> 6 windows of 50 steps every 5 steps; "
        "neighbouring windows share 45 steps, so they are not independent examples; "
        "1 recording shorter than one window left out: ['east-1']"
    )
    assert said in plan, plan
    assert "6 examples, length 50" in plan
    assert "1 recording shorter than --window 50 steps, so left out: ['east-1']" in result.stderr
    assert "window=" not in plan + result.stderr


def test_training_on_windows_records_them_and_generates_windows(windowed):
    plan = (windowed / "train.out").read_text()
    assert "windows: 3 recordings of 45 to 60 steps -> 35 windows of 12 steps every 4" in plan
    model = DGAN.load(windowed / "model.dgan")
    assert model.config.max_sequence_len == 12
    assert model.data_frame_layout.windowing == Windowing(window=12, stride=4)
    run_dgan("generate", "model.dgan", "-n", 5, "-o", "synthetic.csv", cwd=windowed)
    synthetic = pd.read_csv(windowed / "synthetic.csv")
    assert list(synthetic.columns) == ["sensor", "site", "ts", "load"]
    assert synthetic["ts"].tolist() == list(range(12)) * 5  # the step within the window


def test_evaluate_cuts_the_real_recordings_like_the_model_was_trained(windowed):
    run_dgan("generate", "model.dgan", "-n", 8, "-o", "eval.csv", "--force", cwd=windowed)
    result = run_dgan(
        "evaluate", "hourly.csv", "eval.csv", "--model", "model.dgan", "--seeds", 1,
        "--json", "metrics.json", "--force", cwd=windowed,
    )  # fmt: skip
    # disjoint windows: 60 // 12 + 60 // 12 + 45 // 12 = 13
    said = "real table cut into windows: 3 recordings of 45 to 60 steps -> 13 windows of 12"
    assert said in result.stdout and "(disjoint)" in result.stdout, result.stdout
    assert json.loads((windowed / "metrics.json").read_text())


def test_evaluate_without_a_model_takes_the_window_flags(windowed, monkeypatch, capsys):
    monkeypatch.chdir(windowed)
    run_dgan("generate", "model.dgan", "-n", 8, "-o", "flags.csv", "--force", cwd=windowed)
    args = ["evaluate", "hourly.csv", "flags.csv", *FLAGS, "--window", "12", "--stride", "6"]
    assert main([*args, "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "-> 24 windows of 12 steps every 6 steps; neighbouring windows share 6" in out, out


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--window", "12", "--time", "ts", "--style", "wide"], "--window cuts LONG tables"),
        (["--window", "12", "--example-id", "sensor"], "--window needs --time COL"),
        (["--window", "1", *FLAGS], "--window 1 is too small"),
        (["--window", "-3", *FLAGS], "--window -3 is too small"),
        (["--window", "12", "--stride", "0", *FLAGS], "--stride 0 is too small"),
        (["--stride", "4", *FLAGS], "--stride needs --window N"),
        (["--window", "61", *FLAGS], "--window 61 is longer than every recording"),
        (["--window", "61", *FLAGS], "Pass a window of at most 60 steps"),
        (["--window", "12", "--dp-epsilon", "8", *FLAGS], "the guarantee would hold per window"),
    ],
)
def test_bad_window_flags_name_the_fix(flags, expected, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    hourly().to_csv("hourly.csv", index=False)
    assert main(["train", "hourly.csv", "--dry-run", *flags]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dgan: error: ") and expected in err, err
    assert "window=" not in err and "stride=" not in err


def test_a_window_column_in_the_table_is_named_in_flag_words(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    hourly().assign(window=1).to_csv("hourly.csv", index=False)
    assert main(["train", "hourly.csv", "--dry-run", "--time", "ts", "--window", "12"]) == 1
    err = capsys.readouterr().err
    assert "pass --example-id 'window'; else rename that column." in err, err


def test_evaluate_refuses_a_second_window_for_a_windowed_model(windowed, monkeypatch, capsys):
    monkeypatch.chdir(windowed)
    args = ["evaluate", "hourly.csv", "hourly.csv", "--model", "model.dgan", "--window", "12"]
    assert main(args) == 1
    assert "drop --window" in capsys.readouterr().err


def test_one_recording_without_ids_trains_generates_and_evaluates(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    recording = hourly().query("site == 'north'").drop(columns=["sensor", "site"])
    recording.to_csv("north.csv", index=False)
    Path("tiny.json").write_text(json.dumps(TINY))
    train = ["train", "north.csv", "-o", "m.dgan", "--config", "tiny.json", "--time", "ts"]
    assert main([*train, "--window", "12", "--stride", "6"]) == 0
    assert "windows: 1 recording of 60 steps -> 9 windows" in capsys.readouterr().out
    assert main(["generate", "m.dgan", "-n", "4", "-o", "synthetic.csv"]) == 0
    synthetic = pd.read_csv("synthetic.csv")
    assert list(synthetic.columns) == ["ts", "load", "window"]  # the new id column last
    assert synthetic["window"].unique().tolist() == [0, 1, 2, 3]
    capsys.readouterr()
    assert (
        main(["evaluate", "north.csv", "synthetic.csv", "--model", "m.dgan", "--seeds", "1"]) == 0
    )
    out = capsys.readouterr().out
    assert "real table cut into windows: 1 recording of 60 steps -> 5 windows" in out, out


def test_series_too_long_for_the_model_point_to_window(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    hourly().to_csv("hourly.csv", index=False)
    assert main(["train", "hourly.csv", "--dry-run", *FLAGS, "--max-sequence-len", "24"]) == 1
    assert "cut them into windows of N steps with --window N" in capsys.readouterr().err


def test_the_readme_window_example_makes_the_windows_it_says(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"--stride S\]`\.\*\*.*?```bash\n(.*?)```", readme, re.S).group(1)
    train = re.search(r"dgan train (.*?)#", block.replace("\\\n", " "), re.S).group(1).split()
    hours = pd.date_range("2023-01-01", periods=8760, freq="h")  # as the comment says
    pd.concat(
        pd.DataFrame({"sensor": f"s{k}", "site": f"site-{k}", "ts": hours, "load": float(k)})
        for k in range(3)
    ).to_csv("hourly.csv", index=False)
    model = train.index("-o")
    assert main(["train", *train[:model], *train[model + 2 :], "--dry-run"]) == 0
    said = "windows: 3 recordings of 8,760 steps -> 1,077 windows of 168 steps every 24 steps"
    assert said in capsys.readouterr().out
    assert "1,077 windows" in block and said in readme.replace("\n  ", " ")
