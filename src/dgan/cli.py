"""The ``dgan`` command line: argument parsing and dispatch to the library.

Each command is a thin layer over the Python API: `dgan.tables` reads and writes
tables, `dgan.output_paths` checks every output before the work starts,
`dgan.config_files` reads and checks ``--config``, `dgan.lengths` infers
``max_sequence_len`` / ``sample_len``, `dgan.streaming` writes generated tables in
chunks, `dgan.summary` formats what is printed and `dgan.cli_messages` puts library
messages in the command line's words. Errors dgan raises on purpose (and unreadable
files) print one ``dgan: error: ...`` message and exit with status 1; ``--debug`` shows
the traceback instead.

Example:
    >>> parser = build_parser()
    >>> args = parser.parse_args(["train", "data.csv", "-o", "m.dgan", "--attributes", "a,b"])
    >>> args.attributes, args.output, args.force
    (['a', 'b'], 'm.dgan', False)
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dgan
from dgan.cli_messages import check_not_long, flag_words, hint_long_data
from dgan.config import DfStyle, DGANConfig
from dgan.config_files import check_settings, read_config_file
from dgan.demo import DEMO_CONFIG, run_demo
from dgan.errors import DGANError, ParameterError
from dgan.layout import columns_of_layout
from dgan.lengths import TARGET_LSTM_STEPS, infer_lengths
from dgan.metrics import evaluate, frames_to_series
from dgan.model import DGAN
from dgan.output_paths import check_outputs
from dgan.streaming import write_generated
from dgan.summary import metrics_table, training_summary
from dgan.tables import read_table, require_module
from dgan.threads import choose_threads

_HELP_WIDTH = 80


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dgan`` command line with ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 1 when a command fails, 130 on Ctrl-C.
    """
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    logging.basicConfig(format="dgan: %(message)s", level=logging.WARNING)
    try:
        import torch  # here, not at the top: `dgan` sets OpenMP's policy first (launch.py)

        torch.set_num_threads(choose_threads(getattr(args, "threads", None)))
        args.run(args)
    except KeyboardInterrupt:
        if debug:
            raise
        print("dgan: interrupted", file=sys.stderr)
        return 130
    except (DGANError, OSError, ImportError) as error:
        # Errors we raise on purpose (their messages say the fix), files that cannot be
        # read or written, and missing optional dependencies.
        if debug:
            raise
        print(f"dgan: error: {_message(error)}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug: still one line, and say how to see more
        if debug:
            raise
        print(
            f"dgan: unexpected error: {type(error).__name__}: {_message(error)} "
            "(rerun with --debug for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    return 0


def _message(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.strerror}: {str(error.filename)!r}"
    return str(error) or type(error).__name__


# --------------------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dgan`` and its subcommands."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,  # so a subcommand's default does not hide `dgan --debug`
        help="show the full traceback when something fails",
    )
    common.add_argument(
        "--threads",
        type=_positive_int,
        default=argparse.SUPPRESS,
        metavar="N",
        help="CPU threads for torch (default: every usable core; idle threads sleep, so a "
        "busy machine does not slow training down, see the README's Performance section)",
    )
    parser = argparse.ArgumentParser(
        prog="dgan",
        description="Train DoppelGANger GANs on time-series tables and generate synthetic data.",
        epilog="Run `dgan COMMAND --help` for a command's options. Start with `dgan demo`.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"dgan {dgan.__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    columns = _column_arguments()
    _add_train(commands, [common, columns])
    _add_generate(commands, [common])
    _add_evaluate(commands, [common, columns])
    _add_demo(commands, [common])
    return parser


def _column_list(text: str) -> list[str]:
    """A comma-separated list of column names."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty column name in {text!r}")
    return names


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _column_arguments() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group(
        "columns", "How the table holds the series. Lists are comma-separated (a,b,c)."
    )
    names = {"type": _column_list, "action": "extend", "metavar": "COLS"}
    group.add_argument("--attributes", **names, help="attribute columns: one value per series")
    group.add_argument("--features", **names, help="feature columns (default: all other columns)")
    group.add_argument("--example-id", metavar="COL", help="the column naming each series")
    group.add_argument("--time", metavar="COL", help="LONG: the column ordering each series")
    group.add_argument("--discrete", **names, help="numeric columns to treat as discrete")
    group.add_argument(
        "--style",
        choices=[s.value for s in DfStyle],
        help="wide: one row per series, a column per time step; long: one row per time step "
        "(default: long when --time is given, else wide)",
    )
    return parent


def _command(commands, name: str, summary: str, description: str, examples: list[str], parents):
    """A subcommand whose help shows ``description`` wrapped and ``examples`` verbatim."""
    return commands.add_parser(
        name,
        parents=parents,
        help=summary,
        description=textwrap.fill(description, width=_HELP_WIDTH),
        epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_train(commands, parents) -> None:
    p = _command(
        commands,
        "train",
        "train a model on a CSV or Parquet table",
        "Train a DGAN model on the table DATA and save it to MODEL. Settings come from "
        "--config (a TOML or JSON file of DGANConfig fields), overridden by the flags. "
        "Prints a summary at the end: time, throughput, precision, guard events.",
        [
            "dgan train sensors.csv -o sensors.dgan --example-id sensor --time ts "
            "--attributes site --epochs 200",
            "dgan train wide.parquet -o wide.dgan --attributes label --config dgan.toml",
        ],
        parents,
    )
    p.add_argument("data", metavar="DATA", help="training table (.csv or .parquet)")
    p.add_argument("-o", "--output", metavar="MODEL", required=True, help="model file to write")
    p.add_argument("--config", metavar="FILE", help="TOML or JSON file of DGANConfig fields")
    settings = p.add_argument_group("settings", "Override --config and DGANConfig's defaults.")
    settings.add_argument(
        "--precision",
        choices=["fp32", "fp16", "bf16", "auto"],
        help="numeric precision of training",
    )
    settings.add_argument("--epochs", type=_positive_int, metavar="N", help="passes over the data")
    settings.add_argument("--batch-size", type=_positive_int, metavar="N", help="series per step")
    settings.add_argument(
        "--max-sequence-len",
        type=_positive_int,
        metavar="N",
        help="longest series (default: inferred; LONG: the longest example, WIDE: the "
        "number of feature columns)",
    )
    settings.add_argument(
        "--sample-len",
        type=_positive_int,
        metavar="N",
        help="time steps per LSTM step; must divide max_sequence_len (default: the "
        f"divisor giving about {TARGET_LSTM_STEPS} LSTM steps)",
    )
    settings.add_argument("--seed", type=int, metavar="N", help="fix all randomness")
    long_runs = p.add_argument_group(
        "long runs", "Checkpoints and resuming (README: 'Long runs and several processes')."
    )
    long_runs.add_argument(
        "--checkpoint-dir", metavar="DIR", help="write training checkpoints into DIR"
    )
    long_runs.add_argument(
        "--checkpoint-every",
        type=_positive_int,
        metavar="N",
        help="epochs between checkpoints (default 10; the last epoch always gets one)",
    )
    long_runs.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the run whose checkpoints are in DIR, or start it if DIR has none "
        "(same data and settings; --epochs may grow); checkpoints keep going to DIR "
        "unless --checkpoint-dir says otherwise",
    )
    _force_argument(p)
    p.set_defaults(run=run_train)


def _add_generate(commands, parents) -> None:
    p = _command(
        commands,
        "generate",
        "generate synthetic data from a trained model",
        "Generate synthetic series with MODEL and write them to OUT (.csv or .parquet), "
        "shaped like the training table: same columns, order and types.",
        [
            "dgan generate sensors.dgan -n 1000 -o synthetic.csv",
            "dgan generate sensors.dgan --attributes wanted.csv -o synthetic.parquet",
        ],
        parents,
    )
    p.add_argument("model", metavar="MODEL", help="model file written by `dgan train`")
    p.add_argument("-n", type=_positive_int, metavar="N", help="number of series to generate")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="table to write")
    p.add_argument(
        "--attributes",
        metavar="FILE",
        help="generate one series per row of this table of attribute values (conditional "
        "generation); -n may then be omitted",
    )
    _force_argument(p)
    p.set_defaults(run=run_generate)


def _add_evaluate(commands, parents) -> None:
    p = _command(
        commands,
        "evaluate",
        "compare synthetic data with real data",
        "Compute fidelity metrics of the table SYNTH against the table REAL and print "
        "them. Both tables are read with the layout stored in --model, or as the column "
        "flags describe them.",
        [
            "dgan evaluate sensors.csv synthetic.csv --model sensors.dgan --report report.html",
            "dgan evaluate real.parquet synth.parquet --example-id sensor --time ts "
            "--attributes site --json metrics.json",
        ],
        parents,
    )
    p.add_argument("real", metavar="REAL", help="real table (.csv or .parquet)")
    p.add_argument("synthetic", metavar="SYNTH", help="synthetic table (.csv or .parquet)")
    p.add_argument("--model", metavar="MODEL", help="read both tables like this model's data")
    p.add_argument(
        "--max-sequence-len",
        type=_positive_int,
        metavar="N",
        help="without --model: LONG tables without --example-id are cut into series of N rows",
    )
    p.add_argument("--report", metavar="HTML", help="write an HTML report with plots")
    p.add_argument("--json", metavar="FILE", help="write all metrics as JSON")
    p.add_argument("--target", metavar="COL", help="attribute that the TSTR metric predicts")
    p.add_argument("--seed", type=int, default=0, help="seed of the metrics (default 0)")
    p.add_argument(
        "--max-examples",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="use at most N series per side (default 1000)",
    )
    _force_argument(p)
    p.set_defaults(run=run_evaluate)


def _add_demo(commands, parents) -> None:
    c = DEMO_CONFIG
    p = _command(
        commands,
        "demo",
        "train on bundled weather data; write a model, synthetic data and a report",
        "Train on the bundled Seattle weather data (48 months x 28 days, 4 features, the "
        f"month as attribute) for {c.epochs} epochs, then write the model, a synthetic CSV "
        "and an HTML report comparing it to the real data into DIR.",
        ["dgan demo", "dgan demo --out /tmp/demo --epochs 20"],
        parents,
    )
    p.add_argument(
        "--out", default="dgan-demo", metavar="DIR", help="output folder (default: dgan-demo)"
    )
    p.add_argument(
        "--epochs", type=_positive_int, metavar="N", help=f"(default {c.epochs}) for a quick try"
    )
    _force_argument(p)
    p.set_defaults(run=_run_demo)


def _force_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing output files (an output is never allowed to be an input)",
    )


# --------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------


def run_train(args: argparse.Namespace) -> None:
    """``dgan train``: check settings and outputs, read the table, train, save, summarise."""
    columns = _columns_from_flags(args)
    settings = _training_settings(args)  # before the data is read
    check_outputs({"-o": args.output}, inputs=[args.data, args.config], force=args.force)
    df = read_table(args.data)
    with flag_words(), hint_long_data(_style_given(args)):
        notes = infer_lengths(df, columns, settings)  # also checks the column flags
        check_not_long(df, _style_given(args), args.example_id)
        if notes:
            print(f"inferred {', '.join(notes)}; set them with --max-sequence-len / --sample-len")
        config = DGANConfig.from_json_dict(settings)
        model = DGAN(config)
        start = time.perf_counter()
        model.train_dataframe(df, **columns, resume_from=args.resume)
    seconds = time.perf_counter() - start
    path = model.save(args.output)
    print(training_summary(model.history, seconds))
    print(f"model: {path}")


def run_generate(args: argparse.Namespace) -> None:
    """``dgan generate``: load, generate (optionally conditioned) in chunks, write."""
    if args.n is None and args.attributes is None:
        raise ParameterError("Pass -n N (how many series to generate) or --attributes FILE.")
    check_outputs(
        {"-o": args.output},
        inputs=[args.model, args.attributes],
        tables=["-o"],
        force=args.force,
    )
    wanted = read_table(args.attributes) if args.attributes else None
    model = DGAN.load(args.model)
    if model.data_frame_layout is None:
        raise ParameterError(
            f"{args.model} was trained on arrays (train_numpy), not a table, so it cannot "
            "write one; train it with `dgan train` or DGAN.train_dataframe."
        )
    with flag_words():
        series, rows = write_generated(model, args.output, args.n, wanted)
    print(f"wrote {series} synthetic series ({rows} rows) to {args.output}")


# Flags of `dgan evaluate` that describe the tables, which --model describes instead.
_LAYOUT_FLAGS = {
    "attributes": "--attributes",
    "features": "--features",
    "example_id": "--example-id",
    "time": "--time",
    "discrete": "--discrete",
    "style": "--style",
    "max_sequence_len": "--max-sequence-len",
}


def run_evaluate(args: argparse.Namespace) -> None:
    """``dgan evaluate``: both tables -> `SeriesData` -> metrics (-> JSON, report)."""
    check_outputs(
        {"--json": args.json, "--report": args.report},
        inputs=[args.real, args.synthetic, args.model],
        force=args.force,
    )
    if args.report:
        require_module("matplotlib", "The HTML report needs matplotlib", "report")
    history = None
    if args.model:
        given = [flag for dest, flag in _LAYOUT_FLAGS.items() if getattr(args, dest) is not None]
        if given:
            raise ParameterError(
                f"--model already says how the tables are laid out; drop {', '.join(given)} "
                "or drop --model."
            )
        model = DGAN.load(args.model, map_location="cpu")
        if model.data_frame_layout is None:
            raise ParameterError(
                f"{args.model} was trained on arrays, not a table, so it has no column layout; "
                "describe the tables with the column flags instead of --model."
            )
        columns = columns_of_layout(model.data_frame_layout)
        max_len, history = model.config.max_sequence_len, model.history
        style_given = True
    else:
        columns, max_len = _columns_from_flags(args), args.max_sequence_len
        style_given = _style_given(args)
    real_df, synthetic_df = read_table(args.real), read_table(args.synthetic)
    with flag_words(), hint_long_data(style_given):
        real, synthetic = frames_to_series(real_df, synthetic_df, columns, max_len)
        check_not_long(real_df, style_given, columns["example_id_column"])
        metrics = evaluate(
            real,
            synthetic,
            target_attribute=args.target,
            seed=args.seed,
            max_examples=args.max_examples,
        )
    print(metrics_table(metrics))
    if args.json:
        Path(args.json).write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        print(f"metrics: {args.json}")
    if args.report:
        title = f"dgan report: {Path(args.synthetic).name} vs {Path(args.real).name}"
        from dgan.report import write_report  # imports matplotlib: only when asked for

        print(f"report: {write_report(args.report, real, synthetic, metrics, history, title)}")


def _run_demo(args: argparse.Namespace) -> None:
    """``dgan demo``: see `dgan.demo.run_demo`."""
    run_demo(args.out, epochs=args.epochs, force=args.force)


# --------------------------------------------------------------------------------------
# Flags -> library arguments
# --------------------------------------------------------------------------------------

# Flags of `dgan train` that set a DGANConfig field of the same name.
_CONFIG_FLAGS = (
    "precision",
    "epochs",
    "batch_size",
    "max_sequence_len",
    "sample_len",
    "seed",
    "checkpoint_dir",
    "checkpoint_every",
)


def _training_settings(args: argparse.Namespace) -> dict[str, Any]:
    """DGANConfig fields from --config, overridden by the flags; checked before any work."""
    settings = read_config_file(args.config) if args.config else {}
    check_settings(settings, source=args.config or "the flags")
    settings.update({k: getattr(args, k) for k in _CONFIG_FLAGS if getattr(args, k) is not None})
    if getattr(args, "resume", None) and settings.get("checkpoint_dir") is None:
        settings["checkpoint_dir"] = args.resume  # a resumed run keeps checkpointing there
    check_settings(settings, source=args.config or "the flags")
    return settings


def _style_given(args: argparse.Namespace) -> bool:
    """Whether the table's style was said (--style, or --time, which implies LONG)."""
    return args.style is not None or args.time is not None


def _columns_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    """`train_dataframe` / `dataframe_to_arrays` column arguments from the flags."""
    style = args.style or (DfStyle.LONG if args.time is not None else DfStyle.WIDE)
    return {
        "attribute_columns": args.attributes,
        "feature_columns": args.features,
        "example_id_column": args.example_id,
        "time_column": args.time,
        "discrete_columns": args.discrete,
        "df_style": DfStyle(style),
    }


if __name__ == "__main__":
    sys.exit(main())
