"""benchmarks/time_to_quality.py: when a fidelity curve reached a score, and the ratio."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from time_to_quality import main, reached


def _result(path: Path, runs: list[tuple[int, list[float], float]]) -> Path:
    """A fidelity.py result file: each run (seed, its curve's scores, CPU s per 1000 steps)."""
    found = []
    for seed, scores, cpu_per_point in runs:
        curve = [
            {
                "steps": 1000 * (i + 1),
                "train_seconds": 2 * cpu_per_point * (i + 1),
                "train_cpu_seconds": cpu_per_point * (i + 1),
                "discriminative": d,
            }
            for i, d in enumerate(scores)
        ]
        found.append(
            {
                "seed": seed,
                "curve": curve,
                "metrics": {"discriminative": scores[-1]},
                "train_cpu_seconds": cpu_per_point * len(scores),
            }
        )
    path.write_text(json.dumps({"datasets": {"stocks": {"systems": {"dgan": {"runs": found}}}}}))
    return path


def test_reached_is_the_first_point_and_the_point_from_which_it_stays():
    points = [{"discriminative": d} for d in (0.3, 0.04, 0.2, 0.03, 0.01)]
    first, stays = reached(points, 0.05)
    assert first is points[1] and stays is points[3]
    assert (
        reached([{"discriminative": 0.2}, {"discriminative": 0.01}, {"discriminative": 0.3}], 0.05)[
            1
        ]
        is None
    )


def test_the_ratio_is_the_median_over_seeds_of_cpu_time_to_stay(tmp_path, capsys):
    slow = _result(
        tmp_path / "a.json", [(0, [0.3, 0.04, 0.02], 100.0), (1, [0.3, 0.2, 0.03], 100.0)]
    )
    fast = _result(
        tmp_path / "b.json", [(0, [0.3, 0.04, 0.02], 50.0), (1, [0.3, 0.04, 0.03], 25.0)]
    )
    text = main([str(slow), str(fast)])
    # seed 0: 200 / 100 = 2; seed 1: 300 / 50 = 6; median 4
    assert "median of 2 seed(s): 4.00x" in text
    assert "| b.json | 1 | 2000, 50, 100 | 2000, 50, 100 | 0.030 | 75 |" in text


def test_a_file_without_curves_is_refused(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(
        json.dumps(
            {
                "datasets": {
                    "stocks": {
                        "systems": {
                            "dgan": {"runs": [{"seed": 0, "metrics": {"discriminative": 0.1}}]}
                        }
                    }
                }
            }
        )
    )
    with pytest.raises(SystemExit, match="--curve-every"):
        main([str(path)])


def test_a_variant_may_be_several_files_one_seed_each(tmp_path):
    slow = [_result(tmp_path / f"a{s}.json", [(s, [0.3, 0.04, 0.02], 100.0)]) for s in (0, 1)]
    fast = [_result(tmp_path / f"b{s}.json", [(s, [0.04, 0.04, 0.02], 50.0)]) for s in (0, 1)]
    text = main([",".join(map(str, slow)), ",".join(map(str, fast))])
    # each seed: 200 CPU s against 50
    assert "a0.json,a1.json over b0.json,b1.json" in text and "of 2 seed(s): 4.00x" in text
    assert "| b1.json | 1 | 1000, 50, 100 |" in text
