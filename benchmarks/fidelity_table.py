"""Print a Markdown table (mean ± sd over seeds) from benchmarks/results/fidelity-*.json.

    python benchmarks/fidelity_table.py                      # every fidelity result
    python benchmarks/fidelity_table.py benchmarks/results/fidelity-stocks-*.json

One row per (file, dataset, system): the tag and config overrides, epochs, seeds, the
TimeGAN-protocol discriminative and predictive scores, train-on-real when recorded, and the
mean training time of one run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
COLUMNS = ["discriminative", "predictive"]


def cell(summary: dict | None, digits: int = 3) -> str:
    if not summary:
        return "-"
    if summary["n"] > 1:
        return f"{summary['mean']:.{digits}f} ± {summary['sd']:.{digits}f}"
    return f"{summary['mean']:.{digits}f}"


def rows(path: Path) -> list[str]:
    report = json.loads(path.read_text())
    tag = path.stem.removeprefix("fidelity-")[: -len("-YYYY-MM-DD")]
    overrides = " ".join(f"{k}={v}" for k, v in report.get("overrides", {}).items()) or "-"
    out = []
    for dataset, entry in report["datasets"].items():
        tor = cell(entry.get("train_on_real_predictive"))
        for system, result in entry["systems"].items():
            summary = result.get("summary")
            if not summary:
                continue
            n = summary["train_seconds"]["n"]
            metrics = " | ".join(cell(summary.get(c)) for c in COLUMNS)
            seconds = summary["train_seconds"]["mean"]
            out.append(
                f"| {dataset} | {system} | {tag} | {overrides} | {report['epochs']} | {n} | "
                f"{metrics} | {tor} | {seconds:.0f} |"
            )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="result files (default: all)")
    args = parser.parse_args(argv)
    paths = args.files or sorted(RESULTS.glob("fidelity-*.json"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such result file(s): {', '.join(missing)}")
    print(
        "| dataset | system | tag | overrides | epochs | seeds | discriminative | predictive "
        "| train-on-real | train s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        for row in rows(path):
            print(row)


if __name__ == "__main__":
    main()
