"""benchmarks/gpu_suite.py: the smoke run writes every part's results and tables on a CPU,
a finished part is not run again, a part cut off keeps what it finished, and the pieces
the numbers come from (pytest's report, the machine record) are read right."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
from gpu_suite_tests import outcomes  # noqa: E402

PARTS = ("part1-tests", "part2-precision", "part3-stocks", "part4-torchrun")
# A Markdown table's header row per part, as docs/precision.md's PENDING tables have it.
HEADERS = {
    "part1-tests": "| tests | passed | failed | errors | skipped | seconds | pytest exit |",
    "part2-precision": "| model | batch | variant | ms / batch | examples/s | speed vs fp32 ",
    "part3-stocks": "| variant | series (batch, steps) | seeds | discriminative | predictive ",
    "part4-torchrun": "| torchrun check | ok | exit | seconds | epochs | device / backend |",
}


def _suite(*arguments: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, str(BENCHMARKS / "gpu_suite.py"), "--smoke", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> Path:
    """The folder of one whole smoke run."""
    out = tmp_path_factory.mktemp("gpu-suite")
    done = _suite("--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _part(out: Path, stem: str) -> dict:
    return json.loads((out / f"{stem}.json").read_text())


def test_every_part_writes_its_json_and_table_and_nothing_else(smoke):
    # 8 files: what one call of the GPU machine can bring back.
    assert sorted(p.name for p in smoke.iterdir()) == sorted(
        f"{stem}.{kind}" for stem in PARTS for kind in ("json", "md")
    )
    for number, stem in enumerate(PARTS, start=1):
        result = _part(smoke, stem)
        assert result["part"] == number and result["complete"] and "error" not in result
        assert result["smoke"] and result["device"] == "cpu" and result["wall_seconds"] > 0
        assert result["machine"]["torch"] and "cpu_native_low_precision_flags" in result["machine"]
        assert HEADERS[stem] in (smoke / f"{stem}.md").read_text(), stem


def test_part_1_records_each_test_of_both_selections(smoke):
    gpu, fast = _part(smoke, "part1-tests")["selections"]
    assert (gpu["name"], fast["name"]) == ("gpu-marked", "fast suite")
    # On a CPU the gpu-marked tests are skipped, and said so per test.
    assert gpu["counts"]["skipped"] == len(gpu["tests"]) > 0
    assert all(t["outcome"] == "skipped" and "CUDA" in t["message"] for t in gpu["tests"])
    assert fast["counts"] == {"passed": len(fast["tests"]), "failed": 0, "error": 0, "skipped": 0}
    assert all(t["id"].startswith("tests.test_architecture::") for t in fast["tests"])
    assert fast["returncode"] == 0 and not fast["interrupted"] and "passed" in fast["output_tail"]


def test_part_2_measures_every_variant_of_both_models(smoke):
    result = _part(smoke, "part2-precision")
    rows = result["measurements"]
    variants = ["fp32", "tf32", "fp16", "fp16+gp_autocast", "bf16", "bf16+gp_autocast"]
    assert [(r["model"], r["variant"]) for r in rows] == [
        (m, v) for m in ("small", "large") for v in variants
    ]
    for r in rows:
        assert r["status"] == "ok" and r["examples_per_s"] > 0 and r["peak_memory_bytes"] > 0
        assert r["tensor_reads_in_window"] == 0  # the step reads nothing from the device
        assert r["host_syncs_in_window"] is None  # read on CUDA only
        assert r["skipped_steps"] >= 0 and r["tf32_matmul"] == (r["variant"] == "tf32")
    summary = {(s["model"], s["variant"]): s for s in result["summary"]}
    assert summary["large", "fp32"]["speedup_vs_fp32"] == 1.0
    assert summary["large", "bf16"]["memory_vs_fp32"] > 0
    gretel = result["gretel"]  # measured beside dgan where installed, else said why not
    assert "version" in gretel or gretel["skipped"].startswith("not importable")


def test_part_3_scores_each_variant(smoke):
    result = _part(smoke, "part3-stocks")
    assert [(r["variant"], r["status"]) for r in result["runs"]] == [
        ("defaults", "scored"),
        ("batch 32", "scored"),
    ]
    defaults, large = result["runs"]
    assert (defaults["batch_size"], large["batch_size"]) == (16, 32)  # stocks-64's default, x2
    assert large["learning_rate"] == pytest.approx(1e-4 * 2**0.5)
    for run in result["runs"]:
        assert 0 <= run["metrics"]["discriminative"] <= 0.5
        assert run["metrics"]["predictive"] > 0 and run["train_seconds"] > 0
        assert run["train_steps"] == 4
    assert set(result["summary"]) == {"defaults", "batch 32"}


def test_part_4_trains_and_resumes_under_torchrun(smoke):
    checks = {c["name"]: c for c in _part(smoke, "part4-torchrun")["checks"]}
    assert list(checks) == ["cli train", "cli resume", "collectives"]
    assert all(c["ok"] and c["returncode"] == 0 for c in checks.values())
    assert checks["cli train"]["epochs"] == 2 and checks["cli resume"]["epochs"] == 4
    assert "resum" in checks["cli resume"]["resume_message"].lower()
    collectives = checks["collectives"]
    assert collectives["joined"] and collectives["backend"] == "gloo"
    assert (collectives["world_size"], collectives["resumed_epochs"]) == (1, 3)


def test_a_finished_part_is_not_run_again(smoke, tmp_path):
    shutil.copy(smoke / "part4-torchrun.json", tmp_path)
    before = (tmp_path / "part4-torchrun.json").read_text()
    done = _suite("--out", str(tmp_path), "--parts", "torchrun")
    assert done.returncode == 0 and "done in an earlier run, skipped" in done.stdout
    assert (tmp_path / "part4-torchrun.json").read_text() == before


def test_a_part_cut_off_keeps_what_it_finished(smoke, tmp_path):
    """A run of part 2 cut off after 3 measurements: the next run keeps those (the same
    numbers) and measures the rest."""
    result = _part(smoke, "part2-precision")
    result["complete"] = False
    kept = result["measurements"][:3]
    result["measurements"] = kept  # what the cut-off run had written
    (tmp_path / "part2-precision.json").write_text(json.dumps(result))
    done = _suite("--out", str(tmp_path), "--parts", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = _part(tmp_path, "part2-precision")
    assert resumed["complete"] and resumed["resumed_from"] == result["started_utc"]
    assert resumed["measurements"][:3] == kept
    assert len(resumed["measurements"]) == 12
    assert all(r["status"] == "ok" for r in resumed["measurements"])


def test_redo_starts_a_cut_off_part_afresh(smoke, tmp_path):
    result = _part(smoke, "part2-precision")
    result["complete"] = False
    result["measurements"] = [{**r, "examples_per_s": -1.0} for r in result["measurements"][:3]]
    (tmp_path / "part2-precision.json").write_text(json.dumps(result))
    done = _suite("--out", str(tmp_path), "--parts", "2", "--redo")
    assert done.returncode == 0, done.stderr[-3000:]
    redone = _part(tmp_path, "part2-precision")
    assert "resumed_from" not in redone and len(redone["measurements"]) == 12
    assert all(r["examples_per_s"] > 0 for r in redone["measurements"])


def test_junit_outcomes_of_each_kind():
    report = """<testsuites><testsuite>
      <testcase classname="tests.test_a" name="test_ok" time="0.25"/>
      <testcase classname="tests.test_a" name="test_bad" time="1">
        <failure message="assert 1 == 2&#10;more">long trace</failure></testcase>
      <testcase classname="tests.test_b" name="test_setup" time="0">
        <error message="fixture 'x' not found">trace</error></testcase>
      <testcase classname="tests.test_b" name="test_gpu[fp16]" time="0">
        <skipped message="needs a CUDA device" type="pytest.skip"/></testcase>
    </testsuite></testsuites>"""
    found = [(t["id"], t["outcome"], t["message"], t["seconds"]) for t in outcomes(report)]
    assert found == [
        ("tests.test_a::test_ok", "passed", "", 0.25),
        ("tests.test_a::test_bad", "failed", "assert 1 == 2", 1.0),
        ("tests.test_b::test_setup", "error", "fixture 'x' not found", 0.0),
        ("tests.test_b::test_gpu[fp16]", "skipped", "needs a CUDA device", 0.0),
    ]


def test_the_machine_record_lists_the_low_precision_flags_lscpu_shows(smoke):
    """AMX and AVX-512-BF16 (what issue 32 looks for on the GPU machine's CPU)."""
    machine = _part(smoke, "part2-precision")["machine"]
    env = {**os.environ, "LC_ALL": "C"}
    listed = subprocess.run(["lscpu"], capture_output=True, text=True, env=env, check=True)
    flags = next(line for line in listed.stdout.splitlines() if line.startswith("Flags:")).split()
    native = ("avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16")
    assert machine["cpu_native_low_precision_flags"] == [f for f in native if f in flags]
    assert machine["lscpu"]["low_precision_flags"] == [
        f for f in flags if f.startswith("amx") or f in ("avx512_bf16", "avx512_fp16")
    ]


def test_minutes_gives_some_parts_other_budgets_and_names_the_fix_for_a_bad_pair(tmp_path, capsys):
    from gpu_suite import parse_args

    args = parse_args(["--out", str(tmp_path), "--minutes", "1:3, precision:2.5"])
    assert args.minutes == {1: 3.0, 2: 2.5}
    assert parse_args(["--out", str(tmp_path)]).minutes == {}
    for bad in ("5:3", "1:0", "1:x", "1"):  # argparse's usage error: exit 2, the fix named
        with pytest.raises(SystemExit) as exited:
            parse_args(["--out", str(tmp_path), "--minutes", bad, "--tables"])
        assert exited.value.code == 2 and "PART:MINUTES" in capsys.readouterr().err, bad


def test_kept_windows_of_a_run_cut_off_in_scoring_are_scored_without_training(tmp_path):
    done = _suite("--out", str(tmp_path), "--parts", "3", "--stocks-variants", "batch 32",
                  "--keep-windows")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    kept = tmp_path / "part3-batch-32-seed0.npy"
    (run,) = _part(tmp_path, "part3-stocks")["runs"]
    assert run["variant"] == "batch 32" and run["status"] == "scored" and kept.is_file()
    # As a lease that ended while the classifiers ran leaves it: trained, not scored.
    result = _part(tmp_path, "part3-stocks")
    result["complete"] = False
    unscored = {k: v for k, v in run.items() if k not in ("metrics", "discriminative_runs")}
    result["runs"][0] = unscored | {"status": "scoring not finished in the part's time"}
    (tmp_path / "part3-stocks.json").write_text(json.dumps(result))
    written = kept.stat().st_mtime_ns
    done = _suite("--out", str(tmp_path), "--parts", "3", "--stocks-variants", "batch 32",
                  "--keep-windows")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (again,) = _part(tmp_path, "part3-stocks")["runs"]
    assert again["status"] == "scored" and 0 <= again["metrics"]["discriminative"] <= 0.5
    assert again["train_seconds"] == run["train_seconds"]  # not trained again
    assert kept.stat().st_mtime_ns == written
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "part3-batch-32-seed0.npy", "part3-stocks.json", "part3-stocks.md"
    ]  # fmt: skip


def test_an_unknown_stocks_variant_fails_the_part_naming_the_variants(tmp_path):
    done = _suite("--out", str(tmp_path), "--parts", "3", "--stocks-variants", "batch 64")
    assert done.returncode == 1
    error = _part(tmp_path, "part3-stocks")["error"]
    assert "unknown ['batch 64']" in error and "'defaults', 'batch 32'" in error
