"""The ``dgan`` command line: train, generate, evaluate and demo.

Each command is a thin layer over the Python API: read a table (CSV or Parquet), call
`DGAN` / `dgan.metrics` / `dgan.report`, write files and print what happened. Errors
dgan raises on purpose (and unreadable files) print one ``dgan: error: ...`` message and
exit with status 1; ``--debug`` shows the traceback instead.

When ``max_sequence_len`` is not given, ``dgan train`` infers it from the data (LONG: the
longest example; WIDE: the number of feature columns), and ``sample_len`` is then the
divisor of ``max_sequence_len`` that brings the number of LSTM steps
(``max_sequence_len / sample_len``) closest to 10 on a log scale, ties going to the smaller
``sample_len`` (see `choose_sample_len`).

Example:
    >>> parser = build_parser()
    >>> args = parser.parse_args(["train", "data.csv", "-o", "m.dgan", "--attributes", "a,b"])
    >>> args.attributes, args.output
    (['a', 'b'], 'm.dgan')
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch

import dgan
from dgan.config import DfStyle, DGANConfig
from dgan.datasets import DEMO_COLUMNS, DEMO_MAX_SEQUENCE_LEN, load_demo
from dgan.errors import DataError, DGANError, ParameterError
from dgan.frames import FrameLayout, dataframe_to_arrays
from dgan.metrics import (
    METRIC_DESCRIPTIONS,
    columns_of_layout,
    evaluate,
    frames_to_series,
)
from dgan.model import DGAN

# Settings of `dgan demo`: under a minute on a CPU, everything included (50 s on a busy
# 2-core VM). On the bundled data, 600 epochs halve the marginal distance and cut the
# discriminative score by a third compared with 300 (48 synthetic vs 48 real series). A
# week per LSTM step (4 steps for 28 days) keeps the LSTM short and fast.
DEMO_CONFIG = DGANConfig(
    max_sequence_len=DEMO_MAX_SEQUENCE_LEN,
    sample_len=7,
    batch_size=16,
    epochs=600,
    seed=0,
)
DEMO_SYNTHETIC_SERIES = 480
"""Series `dgan demo` generates: ten times the real data, for smooth plots."""

TARGET_LSTM_STEPS = 10
"""`choose_sample_len` aims for about this many LSTM steps per series."""

_HELP_WIDTH = 80
_PARQUET_SUFFIXES = (".parquet", ".pq")
_CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".csv.zst")


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dgan`` command line with ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 1 when a command fails, 130 on Ctrl-C.
    """
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    logging.basicConfig(format="dgan: %(message)s", level=logging.WARNING)
    try:
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


def _names(text: str) -> list[str]:
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
    names = {"type": _names, "action": "extend", "metavar": "COLS"}
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
    p.set_defaults(run=run_demo)


# --------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------


def run_train(args: argparse.Namespace) -> None:
    """``dgan train``: read the table, build the config, train, save, summarise."""
    columns = _columns_from_flags(args)
    settings = _training_settings(args)
    output = _prepared(args.output)  # fail before training, not after
    if output.is_dir():
        raise ParameterError(f"-o {args.output!r} is a folder; give a model file name.")
    df = read_table(args.data)
    _infer_lengths(df, columns, settings)
    config = DGANConfig.from_json_dict(settings)
    model = DGAN(config)
    start = time.perf_counter()
    model.train_dataframe(df, **columns)
    seconds = time.perf_counter() - start
    path = model.save(output)
    print(training_summary(model, seconds))
    print(f"model: {path}")


def run_generate(args: argparse.Namespace) -> None:
    """``dgan generate``: load, generate (optionally conditioned), write the table."""
    if args.n is None and args.attributes is None:
        raise ParameterError("Pass -n N (how many series to generate) or --attributes FILE.")
    _check_writable_format(args.output)
    wanted = read_table(args.attributes) if args.attributes else None
    model = DGAN.load(args.model)
    synthetic = model.generate_dataframe(args.n, attributes=wanted)
    write_table(synthetic, args.output)
    n = args.n if args.n is not None else _count_series(synthetic, model.data_frame_layout)
    print(f"wrote {n} synthetic series ({len(synthetic)} rows) to {args.output}")


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
    else:
        columns, max_len = _columns_from_flags(args), args.max_sequence_len
    for name in (args.report, args.json):  # fail before the metrics run, not after
        if name:
            _prepared(name)
    if args.report:
        _require("matplotlib", "The HTML report needs matplotlib", "report")
    real_df, synthetic_df = read_table(args.real), read_table(args.synthetic)
    real, synthetic = frames_to_series(real_df, synthetic_df, columns, max_len)
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


def run_demo(args: argparse.Namespace) -> None:
    """``dgan demo``: train on the bundled data; write model, synthetic CSV and report."""
    config = DEMO_CONFIG
    if args.epochs is not None:
        config = dataclasses.replace(config, epochs=args.epochs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    real_df = load_demo()
    n_real = real_df[DEMO_COLUMNS["example_id_column"]].nunique()
    print(
        f"training on {n_real} months of Seattle weather (28 days x 4 features, the month as "
        f"attribute) for {config.epochs} epochs..."
    )
    # The demo's networks are tiny, so extra CPU threads only add synchronisation; on a
    # busy 2-core VM two threads made an epoch 10-40x slower than one (0.09 s). The
    # process ends after the demo, so the setting is not restored.
    torch.set_num_threads(1)
    model = DGAN(config)
    start = time.perf_counter()
    model.train_dataframe(real_df, df_style=DfStyle.LONG, **DEMO_COLUMNS)
    print(training_summary(model, time.perf_counter() - start))
    model_path = model.save(out / "model.dgan")
    synthetic_df = model.generate_dataframe(DEMO_SYNTHETIC_SERIES)
    csv_path = out / "synthetic.csv"
    write_table(synthetic_df, csv_path)

    columns = columns_of_layout(model.data_frame_layout)
    real, synthetic = frames_to_series(real_df, synthetic_df, columns, config.max_sequence_len)
    metrics = evaluate(real, synthetic)
    print(metrics_table(metrics))
    report_path = None
    try:
        from dgan.report import write_report

        report_path = write_report(
            out / "report.html", real, synthetic, metrics, model.history, "dgan demo report"
        )
    except ImportError as error:  # matplotlib is optional: keep the rest of the demo
        print(f"no report: {error}")
    print(f"model:          {model_path}")
    print(f"synthetic data: {csv_path} ({DEMO_SYNTHETIC_SERIES} series, {len(synthetic_df)} rows)")
    if report_path is not None:
        print(f"report:         {report_path}  (open it in a browser)")


# --------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------

# Flags of `dgan train` that set a DGANConfig field of the same name.
_CONFIG_FLAGS = ("precision", "epochs", "batch_size", "max_sequence_len", "sample_len", "seed")


def _training_settings(args: argparse.Namespace) -> dict[str, Any]:
    """DGANConfig fields from --config, overridden by the flags; checked before any work."""
    known = {f.name for f in dataclasses.fields(DGANConfig)}
    settings = read_config_file(args.config) if args.config else {}
    unknown = sorted(set(settings) - known)
    if unknown:  # DGANConfig.from_json_dict says the same, but only after reading the data
        raise ParameterError(
            f"Config file {args.config!r} has unknown DGANConfig field(s) {unknown}; valid "
            f"fields are {sorted(known)}."
        )
    for name in _CONFIG_FLAGS:
        value = getattr(args, name)
        if value is None:
            continue
        if name not in known:  # e.g. --precision before DGANConfig.precision existed
            flag = "--" + name.replace("_", "-")
            raise ParameterError(
                f"{flag} is not supported by this dgan build (dgan {dgan.__version__}): its "
                f"DGANConfig has no {name!r} field. Drop {flag}, or upgrade dgan."
            )
        settings[name] = value
    return settings


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The table of DGANConfig fields in a TOML (``.toml``) or JSON (``.json``) file.

    Example:
        >>> import json, tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "config.json"
        >>> _ = path.write_text(json.dumps({"epochs": 5}))
        >>> read_config_file(path)
        {'epochs': 5}
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise ParameterError(
            f"Config file {str(path)!r} must end in .toml or .json, so dgan knows how to read it."
        )
    text = path.read_text(encoding="utf-8")
    try:
        data = _toml_module(path).loads(text) if suffix == ".toml" else json.loads(text)
    except ValueError as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ParameterError(
            f"Config file {str(path)!r} is not valid {suffix[1:].upper()}: {error}."
        ) from error
    if not isinstance(data, dict):
        raise ParameterError(
            f"Config file {str(path)!r} must hold a table of DGANConfig fields (like "
            f'{{"epochs": 100}}), not a {type(data).__name__}.'
        )
    return data


def _toml_module(path: Path):
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ParameterError(
                f"Reading the TOML config {str(path)!r} needs Python 3.11+ or the tomli "
                "package (pip install tomli); or write the config as JSON."
            ) from None
    return tomllib


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


def choose_sample_len(max_sequence_len: int, target_steps: int = TARGET_LSTM_STEPS) -> int:
    """The divisor of ``max_sequence_len`` giving the LSTM about ``target_steps`` steps.

    Closest on a log scale (14 steps and 7 steps are about as far from 10); ties go to
    the smaller sample_len, i.e. more and finer LSTM steps.

    Example:
        >>> [choose_sample_len(n) for n in (1, 12, 20, 23, 28, 100, 1000)]
        [1, 1, 2, 1, 2, 10, 100]
    """
    divisors = [d for d in range(1, max_sequence_len + 1) if max_sequence_len % d == 0]
    return min(divisors, key=lambda d: (abs(math.log(max_sequence_len / d / target_steps)), d))


def _infer_lengths(df: pd.DataFrame, columns: dict[str, Any], settings: dict[str, Any]) -> None:
    """Fill in max_sequence_len and sample_len when neither flags nor config set them."""
    notes = []
    if settings.get("max_sequence_len") is None:
        long = columns["df_style"] is DfStyle.LONG
        if long and columns["example_id_column"] is None:
            raise ParameterError(
                "Without --example-id, LONG rows are cut into series of max_sequence_len rows, "
                "so it cannot be inferred; pass --max-sequence-len or --example-id."
            )
        # No series is longer than the table has rows (LONG) or columns (WIDE).
        bound = max(len(df), len(df.columns), 1)
        arrays = dataframe_to_arrays(df, **columns, max_sequence_len=bound)
        settings["max_sequence_len"] = max(len(f) for f in arrays.features)
        why = "the longest example" if long else "the number of feature columns"
        notes.append(f"max_sequence_len={settings['max_sequence_len']} ({why})")
    if settings.get("sample_len") is None:
        settings["sample_len"] = choose_sample_len(settings["max_sequence_len"])
        steps = settings["max_sequence_len"] // settings["sample_len"]
        notes.append(f"sample_len={settings['sample_len']} ({steps} LSTM steps)")
    if notes:
        print(f"inferred {', '.join(notes)}; set them with --max-sequence-len / --sample-len")


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def _table_format(path: str | Path) -> str:
    name = str(path).lower()
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    raise ParameterError(
        f"{str(path)!r}: unknown table format; use a .csv (optionally compressed, e.g. "
        ".csv.gz) or .parquet file."
    )


def _require(module: str, what: str, extra: str) -> None:
    """Raise a `ParameterError` naming the pip extra when an optional module is missing."""
    try:
        __import__(module)
    except ImportError:
        raise ParameterError(f'{what}; install it with pip install "dgan[{extra}]".') from None


def _require_pyarrow() -> None:
    _require("pyarrow", "Parquet files need pyarrow (or use CSV)", "parquet")


def _check_writable_format(path: str | Path) -> None:
    if _table_format(path) == "parquet":
        _require_pyarrow()


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet table; unreadable files raise `DataError` naming the file."""
    kind = _table_format(path)
    if kind == "parquet":
        _require_pyarrow()
    if not Path(path).is_file():
        raise DataError(f"No such file: {str(path)!r}; check the path.")
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        # pyarrow's ArrowInvalid is a ValueError; keep the first line of long messages.
        label = "CSV" if kind == "csv" else "Parquet"
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DataError(
            f"Cannot read {str(path)!r} as {label} ({reason}); check that it is a valid "
            f"{label} file."
        ) from e


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as CSV or Parquet (by the file name), creating parent folders."""
    path = _prepared(path)
    if _table_format(path) == "parquet":
        _require_pyarrow()
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def _prepared(path: str | Path) -> Path:
    """``path`` with its parent folders created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _count_series(df: pd.DataFrame, layout: FrameLayout) -> int:
    if layout.df_style is DfStyle.LONG and layout.example_id_column is not None:
        return int(df[layout.example_id_column].nunique())
    return len(df)


# --------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------


def training_summary(model: DGAN, seconds: float) -> str:
    """Time, throughput, precision in effect and guard events of the last training run.

    Precision and guard events are read from the per-epoch ``precision`` and
    ``guard_events`` history keys when the build records them.
    """
    history = model.history
    if not history:
        return f"trained 0 epochs in {seconds:.1f} s"
    # Throughput after warm-up (the first epoch pays for one-off kernel setup).
    steady = history[1:] or history
    epoch_seconds = sum(h["wall_time_s"] for h in steady)
    examples = sum(h["examples_per_s"] * h["wall_time_s"] for h in steady)
    n_series = round(history[-1]["examples_per_s"] * history[-1]["wall_time_s"])
    lines = [
        f"trained {len(history)} epochs on {n_series} series in {seconds:.1f} s "
        f"({examples / max(epoch_seconds, 1e-9):,.0f} examples/s"
        + (" after the first epoch)" if len(history) > 1 else ")"),
        f"precision: {_precision_in_effect(model)}",
    ]
    events = [(h["epoch"], e) for h in history for e in h.get("guard_events") or []]
    lines.append(f"guard events: {len(events) or 'none'}")
    for epoch, event in events[:5]:
        lines.append(f"  epoch {epoch}: {_describe_event(event)}")
    if len(events) > 5:
        lines.append(f"  ... and {len(events) - 5} more (see the report)")
    return "\n".join(lines)


def _precision_in_effect(model: DGAN) -> str:
    runs: list[list[Any]] = []  # [precision, first epoch, last epoch]
    for h in model.history:
        precision = h.get("precision")
        if runs and runs[-1][0] == precision:
            runs[-1][2] = h["epoch"]
        else:
            runs.append([precision, h["epoch"], h["epoch"]])
    if all(p is None for p, _, _ in runs):  # not recorded by this build
        return str(getattr(model.config, "precision", "fp32"))
    if len(runs) == 1:
        return str(runs[0][0])
    return ", ".join(f"{p} (epochs {a}-{b})" for p, a, b in runs)


def _describe_event(event: Any) -> str:
    """``step 120: <reason> -> <action>`` for the guard's event dicts; str() otherwise."""
    if not isinstance(event, dict):
        return str(event)
    text = str(event.get("reason") or event)
    if "step" in event:
        text = f"step {event['step']}: {text}"
    if event.get("action"):
        text += f" -> {event['action']}"
    return text


def metrics_table(metrics: dict[str, Any]) -> str:
    """One line per metric: name, headline score, which way is better (or why skipped).

    Example:
        >>> print(metrics_table({"marginals": {"score": 0.1234, "better": "lower"},
        ...                      "tstr": {"score": None, "reason": "No attributes."}}))
        metric         score  better
        tstr             n/a  No attributes.
        marginals      0.123  lower
    """
    names = [n for n in METRIC_DESCRIPTIONS if n in metrics]
    width = max(len("metric"), *(len(n) for n in names)) if names else len("metric")
    lines = [f"{'metric':<{width}}  {'score':>9}  better"]  # .3g needs 9: -0.000123
    for name in names:
        entry = metrics[name]
        score = entry.get("score")
        if score is None:
            lines.append(f"{name:<{width}}  {'n/a':>9}  {entry.get('reason', '')}")
        else:
            lines.append(f"{name:<{width}}  {score:>9.3g}  {entry.get('better', '')}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
