"""Training-step time of two dgan configs, interleaved in one process: what a setting costs.

Builds two models on the same speed workload (`benchmarks/speed.py`'s W1 or W2, gretel's
defaults otherwise), the second with ``key=value`` overrides (and the first with
``--a`` overrides), then alternates rounds of ``--steps`` training steps between them (the
order flips every round) and reports the CPU time per step of each and the median of the
per-round ratios A/B. Interleaving in one process makes the ratio trustworthy on a shared
machine; absolute times are not. One torch thread unless ``--threads``. ``--seq-len``,
``--batch-size`` and ``--n-series`` reshape the workload (a large model: 1,000 steps at
batch 128, with wider networks as overrides of both sides)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/step_ab.py --workload w2 reuse_fakes=True
    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/step_ab.py --seq-len 1000 \\
        --batch-size 128 --n-series 1024 --a feature_num_units=256 discriminator_num_units=512 \\
        -- feature_num_units=256 discriminator_num_units=512 precision=bf16
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
if (REPO / "src" / "dgan").is_dir():
    sys.path.insert(0, str(REPO / "src"))  # measure this checkout, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dgan import DGAN, DGANConfig, OutputType  # noqa: E402
from dgan.train.batch import Accumulators, Batch  # noqa: E402
from fidelity import parse_override  # noqa: E402
from speed import WORKLOADS, make_workload  # noqa: E402


def build(workload, features, attributes, overrides: dict) -> tuple:
    """A model trained for one epoch (warm-up) and its data as one device batch."""
    base = dict(
        max_sequence_len=workload.seq_len,
        sample_len=workload.sample_len,
        batch_size=workload.batch_size,
        epochs=1,
        cuda=False,
        seed=0,
        large_data=False,  # the workload's settings unless an override says otherwise
    )
    config = DGANConfig(**{**base, **overrides})
    model = DGAN(config)
    kinds = [OutputType.DISCRETE, OutputType.CONTINUOUS][: attributes.shape[1]]
    encoded = model.preprocess(
        features, [OutputType.CONTINUOUS] * features.shape[2], attributes, kinds
    )
    model.train_encoded(encoded, progress_bar=False)
    return model.trainer, Batch.from_encoded(encoded, model.device)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", choices=sorted(WORKLOADS), default="w1")
    p.add_argument("--rounds", type=int, default=8, help="alternations (default 8)")
    p.add_argument("--steps", type=int, default=5, help="steps per round and side (5)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seq-len", type=int, help="steps per series (default: the workload's)")
    p.add_argument("--batch-size", type=int, help="default: the workload's")
    p.add_argument("--n-series", type=int, help="default: the workload's")
    p.add_argument("--a", nargs="*", default=[], help="key=value overrides of side A")
    p.add_argument("overrides", nargs="+", help="key=value overrides of side B")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    shape = {"seq_len": args.seq_len, "batch_size": args.batch_size, "n_series": args.n_series}
    workload = dataclasses.replace(
        WORKLOADS[args.workload], **{k: v for k, v in shape.items() if v is not None}
    )
    features, attributes = make_workload(workload, workload.n_series, seed=0)
    sides = {
        "A": build(workload, features, attributes, dict(map(parse_override, args.a))),
        "B": build(workload, features, attributes, dict(map(parse_override, args.overrides))),
    }
    ms: dict[str, list[float]] = {"A": [], "B": []}
    for r in range(args.rounds):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            trainer, data = sides[name]
            acc = Accumulators(trainer.device)
            batches = [trainer.random_batch(data, workload.batch_size) for _ in range(args.steps)]
            start = time.process_time()
            for batch in batches:
                trainer.train_step(batch, acc)
            ms[name].append((time.process_time() - start) / args.steps * 1e3)
    ratio = statistics.median(a / b for a, b in zip(ms["A"], ms["B"], strict=True))
    result = {name: statistics.median(v) for name, v in ms.items()} | {"ratio": ratio}
    print(
        f"{args.workload}, {args.threads} thread(s): A {result['A']:.1f} ms/step "
        f"({' '.join(args.a) or 'defaults'}), B {result['B']:.1f} ms/step "
        f"({' '.join(args.overrides)}); median ratio A/B {ratio:.3f}"
    )
    return result


if __name__ == "__main__":
    main()
