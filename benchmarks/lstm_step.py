"""The feedback loop's LSTM step: the whole `nn.LSTM` called on one step (what the
generator runs) against `torch.lstm_cell` on the same weights (docs/performance.md,
"The feedback loop's LSTM step by `torch.lstm_cell`": measured, not adopted).

With feature feedback (the rule for long series) the generator runs its LSTM one step at
a time. For each batch this checks that the two give the same outputs to rounding, then
times, in rounds that interleave the two, the whole loop forward and backward (training)
and forward under `torch.inference_mode` (generation); it prints medians in ms. The
default shape is the long gestures set's (`benchmarks/long_data.py`: 361 steps at
`sample_len` 19 = 19 LSTM steps, 89 inputs, 100 units)::

    OMP_NUM_THREADS=1 python benchmarks/lstm_step.py --batches 16 64 256 1024 4096
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn


def whole_lstm(lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """(B, T, I) -> (B, T, H), the whole LSTM called on one step at a time."""
    state, outputs = None, []
    for k in range(x.shape[1]):
        out, state = lstm(x[:, k : k + 1], state)
        outputs.append(out)
    return torch.cat(outputs, dim=1)


def cell(lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """(B, T, I) -> (B, T, H) by `torch.lstm_cell` (one layer)."""
    h = c = x.new_zeros(x.shape[0], lstm.hidden_size)
    outputs = []
    for k in range(x.shape[1]):
        h, c = torch.lstm_cell(x[:, k], (h, c), *lstm.all_weights[0])
        outputs.append(h)
    return torch.stack(outputs, dim=1)


def median_ms(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[16, 64, 256, 1024, 4096])
    parser.add_argument("--steps", type=int, default=19, help="LSTM steps")
    parser.add_argument("--inputs", type=int, default=89)
    parser.add_argument("--units", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per round")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    lstm = nn.LSTM(args.inputs, args.units, batch_first=True)
    variants = {"nn.LSTM": whole_lstm, "lstm_cell": cell}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for batch in args.batches:
        x = torch.randn(batch, args.steps, args.inputs)
        with torch.no_grad():
            gap = (whole_lstm(lstm, x) - cell(lstm, x)).abs().max().item()

        def train(run, x=x):
            lstm.zero_grad()
            run(lstm, x).square().sum().backward()

        def generate(run, x=x):
            with torch.inference_mode():
                run(lstm, x)

        for r in range(args.rounds):
            line = [f"batch {batch:5d} round {r}"]
            for name, run in variants.items():
                fb = median_ms(lambda run=run: train(run), args.repeats)
                fwd = median_ms(lambda run=run: generate(run), args.repeats)
                line.append(f"{name}: train {fb:8.2f} ms, generate {fwd:8.2f} ms")
            print(" | ".join(line) + f" | largest gap {gap:.1e}")


if __name__ == "__main__":
    main()
