"""Part 1 of benchmarks/gpu_suite.py: the ``gpu``-marked tests, then the fast suite.

Each selection runs as its own pytest process from the repository root, with this
checkout's ``src`` and ``tests`` on ``PYTHONPATH`` and pytest's JUnit XML report, read back
into pass/fail per test. The fast suite leaves out the ``gpu`` tests (they ran first) and
tests/test_gpu_suite.py (the suite's own smoke run, on a CPU). When the part's minutes are
spent pytest is interrupted (it still writes its report) and the part says so. The end of
pytest's output is kept in the JSON (``output_tail``), so the part writes no other file.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpu_suite import PartContext

ROOT = Path(__file__).resolve().parents[1]
OUTCOMES = ("passed", "failed", "error", "skipped")
# (name, pytest arguments): full run, and the smoke run's small stand-ins.
SELECTIONS = {
    False: [
        ("gpu-marked", ["-m", "gpu"]),
        ("fast suite", ["-m", "not slow and not gpu", "--ignore", "tests/test_gpu_suite.py"]),
    ],
    True: [
        ("gpu-marked", ["-m", "gpu", "tests/test_precision.py"]),
        ("fast suite", ["-m", "not slow and not gpu", "tests/test_architecture.py"]),
    ],
}
GRACE_SECONDS = 30  # after the interrupt, for pytest to write its report
OUTPUT_TAIL = 20_000  # characters of pytest's output kept: the failures' short tracebacks


def run(context: PartContext) -> None:
    """Run each selection, recording its outcomes as it ends."""
    result = context.result
    result["cuda_available"] = context.device == "cuda"
    result["selections"] = []
    workers = _workers(context)
    for name, arguments in SELECTIONS[context.smoke]:
        if name == "fast suite" and workers:
            arguments = [*arguments, "-n", str(workers), "--dist", "loadfile"]
        budget = context.seconds_left() - GRACE_SECONDS
        result["selections"].append(run_pytest(name, arguments, budget))
        context.save()


def _workers(context: PartContext) -> int:
    if context.args.test_workers is not None:
        return context.args.test_workers
    has_xdist = importlib.util.find_spec("xdist") is not None
    return 8 if context.device == "cuda" and has_xdist and not context.smoke else 0


def run_pytest(name: str, arguments: list[str], budget: float) -> dict[str, Any]:
    """One pytest run of ``arguments``, interrupted after ``budget`` seconds."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "src"), str(ROOT / "tests"), os.environ.get("PYTHONPATH")])
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        report, log = Path(tmp) / "junit.xml", Path(tmp) / "output.txt"
        command = [sys.executable, "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider"]
        command += ["--junitxml", str(report), *arguments]
        started = time.monotonic()
        with log.open("w") as sink:
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=sink)
            interrupted = _wait(process, budget)
        seconds = time.monotonic() - started
        tests = outcomes(report.read_text()) if report.exists() else []
        output = log.read_text(errors="replace")
    counts = {o: sum(t["outcome"] == o for t in tests) for o in OUTCOMES}
    print(f"  {name}: {counts} in {seconds:.0f} s (pytest exit {process.returncode})", flush=True)
    return {
        "name": name,
        "arguments": arguments,
        "returncode": process.returncode,
        "interrupted": interrupted,
        "seconds": seconds,
        "counts": counts,
        "tests": tests,
        "output_tail": output[-OUTPUT_TAIL:],
    }


def _wait(process: subprocess.Popen, budget: float) -> bool:
    """Wait for pytest; past ``budget`` interrupt it (it then writes its report) and,
    should it hang, kill it. True if it was interrupted."""
    try:
        process.wait(timeout=max(budget, 1))
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return True


def outcomes(junit_xml: str) -> list[dict[str, Any]]:
    """Each test case of a pytest JUnit XML report: id, outcome, seconds, message.

    Example:
        >>> xml = ('<testsuites><testsuite><testcase classname="tests.test_a" name="test_x" '
        ...        'time="0.5"><failure message="assert 1 == 2">trace</failure></testcase>'
        ...        '<testcase classname="tests.test_a" name="test_y" time="0.1"/></testsuite>'
        ...        '</testsuites>')
        >>> for t in outcomes(xml):
        ...     print(t["id"], t["outcome"], repr(t["message"]))
        tests.test_a::test_x failed 'assert 1 == 2'
        tests.test_a::test_y passed ''
    """
    cases = []
    for case in ElementTree.fromstring(junit_xml).iter("testcase"):
        found = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        outcome = "passed" if found is None else {"failure": "failed"}.get(found.tag, found.tag)
        message = "" if found is None else (found.get("message") or found.text or "")
        cases.append(
            {
                "id": f"{case.get('classname')}::{case.get('name')}",
                "outcome": outcome,
                "seconds": float(case.get("time") or 0),
                "message": message.strip().splitlines()[0][:300] if message.strip() else "",
            }
        )
    return cases


def table(result: dict[str, Any]) -> str:
    """Counts per selection, every gpu-marked test, and every failure or error."""
    lines = [
        f"Tests on {'CUDA' if result.get('cuda_available') else 'a CPU (no CUDA)'}:",
        "",
        "| tests | passed | failed | errors | skipped | seconds | pytest exit |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    selections = result.get("selections", [])
    for s in selections:
        c = s["counts"]
        exit_code = f"{s['returncode']}" + (" (interrupted: time)" if s["interrupted"] else "")
        lines.append(
            f"| {s['name']} | {c['passed']} | {c['failed']} | {c['error']} | {c['skipped']} "
            f"| {s['seconds']:.0f} | {exit_code} |"
        )
    if not selections:
        lines.append("| PENDING |  |  |  |  |  |  |")
    gpu = [t for s in selections if s["name"] == "gpu-marked" for t in s["tests"]]
    if gpu:
        lines += ["", "| gpu-marked test | outcome | message |", "|---|---|---|"]
        lines += [f"| `{t['id']}` | {t['outcome']} | {_cell(t['message'])} |" for t in gpu]
    bad = [t for s in selections for t in s["tests"] if t["outcome"] in ("failed", "error")]
    lines += ["", f"Failures and errors: {len(bad)}."]
    if bad:
        lines += ["", "| test | outcome | message |", "|---|---|---|"]
        lines += [f"| `{t['id']}` | {t['outcome']} | {_cell(t['message'])} |" for t in bad]
    if result.get("error"):
        lines += ["", f"The part failed: {_cell(result['error'].strip().splitlines()[-1])}"]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
