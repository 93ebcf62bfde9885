"""What differential privacy costs: quality and time at several epsilons (docs/privacy.md).

For each dataset and each epsilon (and without privacy) it runs `benchmarks/fidelity.py`
(dgan only, the same seeds and scoring: TimeGAN-protocol discriminative and predictive
scores, dgan's copy check `memorisation`, the training time), one result file per cell
(``fidelity-privacy-DATASET-eps<E>[-TAG]-<date>.json``, ``eps-none`` without privacy),
then prints the Markdown table docs/privacy.md shows (``--table`` alone prints it from the
files already written).

Every run, private or not, uses the same settings so that only privacy differs: the
large-data settings (learning rates 1e-4, weight average, feature feedback) at an
explicit batch size and budget of steps, since a private run takes neither from the
data's size. Private runs get each variable's public range or categories, chosen without
looking at the data: Stocks as published is min-max scaled, so [0, 1]; the weather's from
what Seattle's weather can be (below).

    # the full table (hours on a CPU): Stocks and the weather data, 3 seeds
    OMP_NUM_THREADS=1 python benchmarks/privacy.py --datasets stocks,weather --seeds 3
    # a screen: one seed, epsilon 10 and no privacy, a shorter budget
    OMP_NUM_THREADS=1 python benchmarks/privacy.py --datasets stocks --epsilons none,10 \\
        --seeds 1 --steps 2000 --tag screen
    python benchmarks/privacy.py --table
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fidelity  # noqa: E402

RESULTS = HERE / "results"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
PUBLIC_VALUES = {
    # Published Stocks windows are min-max scaled per column: [0, 1] by construction.
    "stocks": {f"feature {i}": [0.0, 1.0] for i in range(6)},
    # Seattle's daily weather as anyone could bound it: rain in mm, temperatures in C,
    # wind in m/s; the month names.
    "weather": {
        "precipitation": [0.0, 60.0],
        "temp_max": [-10.0, 40.0],
        "temp_min": [-15.0, 30.0],
        "wind": [0.0, 12.0],
        "month": MONTHS,
    },
}
# The weather arrays name their variables as the demo table's columns do.
NUMPY_NAMES = {
    "weather": {
        "feature 0": "precipitation",
        "feature 1": "temp_max",
        "feature 2": "temp_min",
        "feature 3": "wind",
        "attribute 0": "month",
    }
}
SETTINGS = {  # (batch size, steps): the size rule's choice for the data, made explicit
    "stocks": (128, 11_600),
    "weather": (16, 10_000),
}


def public_values(dataset: str) -> dict[str, list]:
    """The public values of ``dataset`` under the names `train_numpy` gives its variables."""
    given = PUBLIC_VALUES[dataset]
    names = NUMPY_NAMES.get(dataset)
    return given if names is None else {k: given[v] for k, v in names.items()}


def run(
    dataset: str,
    epsilon: str,
    seeds: str,
    steps: int | None,
    tag: str,
    extra: list[str],
    fields: list[str] = (),
):
    """One cell of the table: ``dataset`` at ``epsilon`` ("none": no privacy), through
    `fidelity.main`; ``fields`` are more DGANConfig key=value overrides."""
    batch, default_steps = SETTINGS[dataset]
    overrides = [
        "large_data=True",
        f"batch_size={batch}",
        f"training_steps={steps or default_steps}",
        *fields,
    ]
    if epsilon != "none":
        overrides += [f"dp_epsilon={float(epsilon)}", f"public_values={public_values(dataset)!r}"]
    name = f"privacy-{dataset}-eps{epsilon}" + (f"-{tag}" if tag else "")
    argv = ["--datasets", dataset, "--systems", "dgan", "--seeds", seeds, "--tag", name]
    fidelity.main([*argv, "--no-own-metrics", *extra, *overrides])


def table(paths: list[Path]) -> str:
    """The Markdown table of privacy result files: one row per dataset and epsilon."""
    lines = [
        "| run | data | epsilon (spent) | seeds | steps | discriminative | predictive "
        "| copies (memorisation) | train time |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for path in sorted(paths):
        report = json.loads(path.read_text())
        tag = path.stem.removeprefix("fidelity-privacy-")[: -len("-YYYY-MM-DD")]
        for dataset, entry in report["datasets"].items():
            result = entry["systems"].get("dgan", {})
            summary = result.get("summary")
            if not summary:
                continue
            config = result["config"]
            target = config.get("dp_epsilon")
            spent = [r.get("epsilon_spent") for r in result["runs"] if r.get("epsilon_spent")]
            shown = "no privacy" if target is None else f"{target:g}"
            if spent:
                shown += f" ({max(spent):.2f})"
            steps = sorted({r.get("train_steps") for r in result["runs"]})
            seconds = summary["train_seconds"]
            lines.append(
                f"| {tag} | {dataset} | {shown} | {summary['train_seconds']['n']} | "
                f"{', '.join(str(s) for s in steps)} | {_cell(summary.get('discriminative'))} | "
                f"{_cell(summary.get('predictive'))} | {_cell(summary.get('memorisation'))} | "
                f"{seconds['mean'] / 60:.0f} min |"
            )
    return "\n".join(lines)


def _cell(summary: dict | None) -> str:
    if not summary:
        return "-"
    if summary["n"] > 1:
        return f"{summary['mean']:.3f} ± {summary['sd']:.3f}"
    return f"{summary['mean']:.3f}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="stocks,weather")
    p.add_argument("--epsilons", default="none,1,4,10", help="comma list; 'none': no privacy")
    p.add_argument("--seeds", default="3")
    p.add_argument("--steps", type=int, default=None, help="default: per dataset (SETTINGS)")
    p.add_argument("--tag", default="", help="goes into the result file names")
    p.add_argument("--disc-runs", type=int, default=10)
    p.add_argument("--table", action="store_true", help="only print the table of results")
    p.add_argument("overrides", nargs="*", help="DGANConfig field=value for every run")
    args = p.parse_args(argv)
    if not args.table:
        for dataset in args.datasets.split(","):
            for epsilon in args.epsilons.split(","):
                extra = ["--disc-runs", str(args.disc_runs)]
                run(dataset, epsilon, args.seeds, args.steps, args.tag, extra, args.overrides)
    print(table(list(RESULTS.glob("fidelity-privacy-*.json"))))


if __name__ == "__main__":
    main()
