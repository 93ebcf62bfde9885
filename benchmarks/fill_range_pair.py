"""Paired measure of `fill_series_range`: the same trained model and the same noise, decoded
with each generated series stretched over its generated range and as generated.

Decoding is all the setting changes, so one training serves both sides and the pair
differs in nothing else (docs/quality.md, "Long real series").

    # a saved model (e.g. from benchmarks/long_series.py): two LONG tables for the judge
    python benchmarks/fill_range_pair.py model runs/sensors-s0.dgan --n 284 --seed 0 \\
        --out runs/sensors-s0
    # Stocks at the defaults: train once, score both with the TimeGAN protocol
    OMP_NUM_THREADS=1 python benchmarks/fill_range_pair.py stocks --seed 0 --json out.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fidelity  # noqa: E402
from dgan import DGAN  # noqa: E402

SIDES = {"filled": True, "as-generated": False}


def decode_both(model: DGAN, generate) -> dict[str, object]:
    """``generate()`` once per side, from the same sampler state and torch seed."""
    state, torch_state = model.sampler.rng.get_state(), torch.get_rng_state()
    kept, out = model.encoder.fill_range, {}
    try:
        for side, fill in SIDES.items():
            model.sampler.rng.set_state(state)
            torch.set_rng_state(torch_state)
            model.encoder.fill_range = fill
            out[side] = generate()
    finally:
        model.encoder.fill_range = kept
    return out


def from_model(args) -> None:
    model = DGAN.load(args.path)
    model.sampler.rng.manual_seed(args.seed)
    torch.manual_seed(args.seed)
    frames = decode_both(model, lambda: model.generate_dataframe(args.n))
    for side, frame in frames.items():
        frame.to_csv(f"{args.out}-{side}.csv", index=False)
        print(f"{args.out}-{side}.csv", flush=True)


def stocks(args) -> None:
    data, options, seconds, model = fidelity.train_at_defaults("stocks", args.seed)
    torch.manual_seed(args.seed + 10_000)
    generated = decode_both(model, lambda: model.generate_numpy(len(data.real)))
    fidelity.report_sides(data, options, args.seed, seconds, generated, args.json)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    saved = commands.add_parser("model", help="decode a saved model both ways")
    saved.add_argument("path")
    saved.add_argument("--n", type=int, required=True, help="series to generate")
    saved.add_argument("--seed", type=int, default=0)
    saved.add_argument("--out", required=True, help="prefix of the two CSV files")
    trained = commands.add_parser("stocks", help="train on Stocks, score both decodings")
    trained.add_argument("--seed", type=int, default=0)
    trained.add_argument("--json")
    args = parser.parse_args(argv)
    (from_model if args.command == "model" else stocks)(args)


if __name__ == "__main__":
    main()
