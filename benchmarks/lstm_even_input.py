"""bf16 training steps with and without the even LSTM input (`dgan.networks.even_input_lstm`).

oneDNN runs its bf16 LSTM on Intel AMX's tiles only for an even number of inputs. This
builds the large model (W1's data reshaped to 1,000 steps, 256 LSTM units, 512-unit
critics, batch 128) twice, in fp32 and in bf16 with the autocast penalty, on data whose
LSTM input width is odd (21), and times training steps (CPU time of one thread) of fp32,
of bf16 as dgan runs it (the policy pads the input to 22) and of bf16 with the padding
turned off, interleaved in rounds; it prints the medians and the speed of each bf16 side
against fp32::

    OMP_NUM_THREADS=1 python benchmarks/lstm_even_input.py --json out.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # measure this checkout
sys.path.insert(0, str(HERE))

from dgan.train.batch import Accumulators  # noqa: E402
from harness import machine_info  # noqa: E402
from speed import WORKLOADS, make_workload  # noqa: E402
from step_ab import build  # noqa: E402

LARGE = dict(feature_num_units=256, discriminator_num_units=512)


def step_ms(trainer, data, batch_size: int, even: bool, steps: int) -> float:
    """CPU ms per training step with the generator's even LSTM input on or off."""
    trainer.generator.lstm_even_input = even
    acc = Accumulators(trainer.device)
    batches = [trainer.random_batch(data, batch_size) for _ in range(steps)]
    start = time.process_time()
    for batch in batches:
        trainer.train_step(batch, acc)
    return (time.process_time() - start) / steps * 1e3


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--steps", type=int, default=3, help="steps per round and side")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    # 512 series: the class attribute's one-hot makes the LSTM's input width odd (21)
    workload = dataclasses.replace(WORKLOADS["w1"], seq_len=1000, batch_size=128, n_series=512)
    features, attributes = make_workload(workload, workload.n_series, seed=0)
    fp32, data = build(workload, features, attributes, LARGE)
    bf16, _ = build(
        workload,
        features,
        attributes,
        dict(LARGE, precision="bf16", gradient_penalty_precision="autocast"),
    )
    sides = {"fp32": (fp32, False), "bf16": (bf16, True), "bf16 odd input": (bf16, False)}
    ms: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in list(sides) if r % 2 == 0 else list(sides)[::-1]:
            trainer, even = sides[name]
            ms[name].append(step_ms(trainer, data, workload.batch_size, even, args.steps))
    result = {
        "benchmark": "lstm_even_input",
        "machine": machine_info(HERE.parent),
        "lstm_inputs": bf16.generator.lstm.input_size,
        "ms_per_step": {name: statistics.median(v) for name, v in ms.items()},
        "speed_vs_fp32": {
            name: statistics.median(a / b for a, b in zip(ms["fp32"], v, strict=True))
            for name, v in ms.items()
        },
        "rounds": ms,
    }
    print(json.dumps({k: result[k] for k in ("lstm_inputs", "ms_per_step", "speed_vs_fp32")}))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
