"""Paired measure of `match_marginals`: the same trained model and the same noise, decoded
with generated values mapped onto the training values' distribution and as generated.

Decoding is all the setting changes, so one training serves both sides. A model saved
before the setting existed holds no quantiles: they are fitted here from its training
table, as training fits them (`dgan.prepare.fit_encoder`), so the models of earlier runs
can be measured without training again (docs/quality.md, "Long real series")::

    python benchmarks/marginals_pair.py model runs/sensors-s0.dgan runs/sensors.csv \\
        --attributes sensor,station --n 284 --seed 0 --out runs/sensors-s0 \\
        --fill-series-range auto
    # then the judge on each side: benchmarks/independent_judge.py runs/sensors.csv \\
    #     runs/sensors-s0-matched.csv --class-column sensor
    # a benchmark dataset at the defaults: train once, the TimeGAN protocol on both sides
    OMP_NUM_THREADS=1 python benchmarks/marginals_pair.py protocol stocks --seed 0 --json out.json
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import pandas as pd
import torch

HERE = Path(__file__).resolve().parent
if (HERE.parent / "src" / "dgan").is_dir():
    sys.path.insert(0, str(HERE.parent / "src"))  # measure this checkout
sys.path.insert(0, str(HERE))

import fidelity  # noqa: E402  (benchmarks/: the protocol's scores)
from dgan import DGAN  # noqa: E402
from dgan.prepare import fit_encoder, repair_missing, source_of  # noqa: E402


def training_marginals(
    model: DGAN, table: pd.DataFrame, attributes: list[str], setting: bool | str = "auto"
):
    """The `ValueMarginals` training on ``table`` (a LONG table: example_id, step) fits
    with ``match_marginals=setting``, or None where no feature qualifies."""
    source = source_of(
        table,
        attribute_columns=attributes or None,
        example_id_column="example_id",
        time_column="step",
        discrete_columns=attributes or None,
        df_style="long",
    )
    arrays, _ = repair_missing(source.check(model.config.max_sequence_len).arrays, model.config)
    config = dataclasses.replace(model.config, match_marginals=setting)
    return fit_encoder(config, arrays).marginals


def from_model(args) -> None:
    """Both decodings of a saved model, as two LONG tables for the judge."""
    model = DGAN.load(args.model)
    if args.fill_series_range != "saved":
        model.encoder.fill_range = {"auto": "auto", "true": True, "false": False}[
            args.fill_series_range
        ]
    attributes = [a for a in args.attributes.split(",") if a]
    setting = True if args.match_marginals == "true" else "auto"
    fitted = training_marginals(model, pd.read_csv(args.data), attributes, setting)
    if fitted is None:
        raise SystemExit("no feature is mapped at match_marginals='auto' (none on a log scale)")
    state = None
    for side, marginals in (("as-generated", None), ("matched", fitted)):
        if state is None:
            model.sampler.reseed(args.seed)
            state = model.sampler.rng.get_state()
        model.sampler.rng.set_state(state)
        torch.manual_seed(args.seed)
        model.encoder.marginals = marginals
        model.generate_dataframe(args.n).to_csv(f"{args.out}-{side}.csv", index=False)
        print(f"{args.out}-{side}.csv", flush=True)


def protocol(args) -> None:
    """Train on a benchmark dataset at the defaults once; score both decodings (the map
    over every continuous feature, one class) with the TimeGAN protocol."""
    data, options, seconds, model = fidelity.train_at_defaults(args.dataset, args.seed)
    checked = source_of(data.features).check(model.config.max_sequence_len)
    arrays, _ = repair_missing(checked.arrays, model.config)
    fitted = fit_encoder(dataclasses.replace(model.config, match_marginals=True), arrays)
    state = model.sampler.rng.get_state()
    generated = {}
    for side, marginals in (("as-generated", None), ("matched", fitted.marginals)):
        model.sampler.rng.set_state(state)
        torch.manual_seed(args.seed + 10_000)
        model.encoder.marginals = marginals
        generated[side] = model.generate_numpy(len(data.real))
    fidelity.report_sides(
        data, options, args.seed, seconds, generated, args.json, dataset=args.dataset
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("model", help="decode a saved model both ways")
    p.add_argument("model", help="a saved model (.dgan)")
    p.add_argument("data", help="its training table (CSV, LONG: example_id, step, ...)")
    p.add_argument("--attributes", default="", help="the discrete attribute columns, a,b")
    p.add_argument("--n", type=int, required=True, help="series to generate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="prefix of the two CSV files")
    p.add_argument(
        "--fill-series-range",
        choices=("saved", "auto", "true", "false"),
        default="saved",
        help="decode both sides with this fill_series_range ('saved': the model file's; "
        "files from before the setting hold False)",
    )
    p.add_argument(
        "--match-marginals",
        choices=("auto", "true"),
        default="auto",
        help="which features the map covers: 'auto' (the rule) or 'true' (every continuous)",
    )
    q = commands.add_parser("protocol", help="train on a benchmark dataset, score both")
    q.add_argument("dataset", help="stocks, sines, weather, stocks-256, ...")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--json")
    args = parser.parse_args(argv)
    (from_model if args.command == "model" else protocol)(args)


if __name__ == "__main__":
    main()
