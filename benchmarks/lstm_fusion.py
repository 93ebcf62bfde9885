"""The generator's LSTM: oneDNN's `nn.LSTM` against a compiled cell loop with the same weights.

Issue 32 asks whether a fused LSTM (a compiled cell loop) beats oneDNN's kernel in bf16
on CPUs. For each shape (batch x LSTM steps x inputs x units) this checks, in fp32, that
the loop's output and weight gradients equal `nn.LSTM`'s, then times forward + backward
(CPU time of one thread, the variants interleaved in rounds, medians) of oneDNN's LSTM,
the loop compiled by `torch.compile` (inductor, which needs a C++ compiler) and the same
loop eager, in fp32 and under bf16 autocast. The shapes: W1 (`benchmarks/speed.py`, one
LSTM call over 10 steps), and Stocks at the defaults (feature feedback: one call per
step, 6 of them) as one step and as six::

    OMP_NUM_THREADS=1 python benchmarks/lstm_fusion.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import machine_info  # noqa: E402

SHAPES = [(1000, 10, 22, 100), (128, 1, 24, 100), (128, 6, 24, 100)]
"""(batch, LSTM steps, inputs, units): W1's generator LSTM, and Stocks' (one step a call
with feature feedback, and all six at once)."""


def cell_loop(x, h, c, w_ih, w_hh, bias):
    """An LSTM over ``x`` (B, T, I) from state (h, c): PyTorch's gate order i, f, g, o and
    equations, the input products of all steps in one matrix product."""
    inputs = F.linear(x, w_ih, bias)
    outputs = []
    for t in range(x.shape[1]):
        i, f, g, o = (inputs[:, t] + F.linear(h, w_hh)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outputs.append(h)
    return torch.stack(outputs, 1)


def forward_backward(
    kind: str, lstm: nn.LSTM, x: torch.Tensor, bf16: bool, compiled
) -> torch.Tensor:
    """One forward and backward pass of variant ``kind`` ("onednn", "compiled", "eager")."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        if kind == "onednn":
            y, _ = lstm(x)
        else:
            h = torch.zeros(x.shape[0], lstm.hidden_size)
            loop = compiled if kind == "compiled" else cell_loop
            bias = lstm.bias_ih_l0 + lstm.bias_hh_l0
            y = loop(x, h, torch.zeros_like(h), lstm.weight_ih_l0, lstm.weight_hh_l0, bias)
    y.float().square().mean().backward()
    return y


def same_as_lstm(lstm: nn.LSTM, x: torch.Tensor, compiled) -> bool:
    """fp32: the compiled loop's output and weight gradients equal oneDNN's."""
    results = []
    for kind in ("onednn", "compiled"):
        lstm.zero_grad()
        y = forward_backward(kind, lstm, x, False, compiled)
        results.append((y.detach(), [p.grad.clone() for p in lstm.parameters()]))
    lstm.zero_grad()
    (ya, ga), (yb, gb) = results
    grads = all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(ga, gb, strict=True))
    return torch.allclose(ya, yb, atol=1e-5) and grads


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5, help="passes per round and variant")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    compiled = torch.compile(cell_loop, dynamic=False)
    rows = []
    variants = [(bf16, kind) for bf16 in (False, True) for kind in ("onednn", "compiled", "eager")]
    for batch, steps, inputs, units in SHAPES:
        lstm = nn.LSTM(inputs, units, batch_first=True)
        x = torch.randn(batch, steps, inputs, requires_grad=True)
        same = same_as_lstm(lstm, x, compiled)
        for bf16, kind in variants * 3:  # warm-up, and compile every variant
            forward_backward(kind, lstm, x, bf16, compiled)
        ms: dict[tuple, list[float]] = {v: [] for v in variants}
        for _ in range(args.rounds):
            for bf16, kind in variants:
                start = time.process_time()
                for _ in range(args.repeats):
                    forward_backward(kind, lstm, x, bf16, compiled)
                ms[(bf16, kind)].append((time.process_time() - start) / args.repeats * 1e3)
        row = {"batch": batch, "steps": steps, "inputs": inputs, "units": units, "same": same}
        for (bf16, kind), values in ms.items():
            row[f"{'bf16' if bf16 else 'fp32'}_{kind}_ms"] = statistics.median(values)
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {"benchmark": "lstm_fusion", "machine": machine_info(HERE.parent), "rows": rows}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
