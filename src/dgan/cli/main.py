"""The ``dgan`` command line: argument parsing and dispatch to the library.

Each command is a thin layer over the Python API: `dgan.cli.tables` reads and writes
tables, `dgan.cli.outputs` checks every output before the work starts,
`dgan.cli.config_files` reads and checks ``--config``, `dgan.tabular.lengths` infers
``max_sequence_len`` / ``sample_len``, `dgan.cli.chunked` writes generated tables in
chunks, `dgan.cli.summary` formats what is printed and `dgan.cli.messages` puts library
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
import contextlib
import logging
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dgan.cli.classes import MAX_CLASSES, MIN_SERIES_PER_CLASS
from dgan.cli.commands import run_demo_command, run_evaluate, run_generate, run_train
from dgan.cli.demo import DEMO_CONFIG
from dgan.cli.flags import Parser
from dgan.cli.messages import FlagWordsFormatter
from dgan.cli.progress import EVERY
from dgan.cli.ranks import prints_shared_errors, report, shared_output_on_rank_0
from dgan.cli.threads import choose_threads
from dgan.cli.windows import add_window_flags
from dgan.config import MAX_SEED, DfStyle
from dgan.config.sizing import (
    GRETEL_BATCH_SIZE,
    MIN_SUGGESTED_BATCH,
    STEPS_PER_EPOCH_WANTED,
)
from dgan.errors import DGANError, DistributedError
from dgan.tabular.lengths import TARGET_LSTM_STEPS
from dgan.version import __version__

_HELP_WIDTH = 80


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dgan`` command line with ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 1 when a command fails, 130 on Ctrl-C and 143
    on SIGTERM (both clean up what the command was writing first).
    """
    with shared_output_on_rank_0():  # under torchrun, rank 0 alone shows argument errors
        args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    _line_buffered(sys.stdout)
    handler = logging.StreamHandler()
    handler.setFormatter(FlagWordsFormatter("dgan: %(message)s"))  # warnings name flags too
    level = logging.WARNING if prints_shared_errors() else logging.ERROR
    logging.basicConfig(level=level, handlers=[handler])
    try:
        with _terminate_as_interrupt():
            import torch  # here, not at the top: `dgan` sets OpenMP's policy first (launch.py)

            torch.set_num_threads(choose_threads(getattr(args, "threads", None)))
            args.run(args)
    except KeyboardInterrupt as interrupt:
        if debug:
            raise
        terminated = isinstance(interrupt, _Terminated)
        advice = getattr(interrupt, "advice", "")  # what to do next (dgan.cli.resume)
        said = f"dgan: {'terminated' if terminated else 'interrupted'}"
        report(said + (f"; {advice}" if advice else ""), shared=True)
        return 128 + signal.SIGTERM if terminated else 130
    except (DGANError, OSError, ImportError) as error:
        # Errors we raise on purpose (their messages say the fix), files that cannot be
        # read or written, and missing optional dependencies: under torchrun every process
        # meets them alike, except a failed collective.
        if debug:
            raise
        shared = not isinstance(error, DistributedError)
        report(f"dgan: error: {_message(error)}", shared=shared)
        return 1
    except Exception as error:  # a bug: still one line, and say how to see more
        if debug:
            raise
        report(
            f"dgan: unexpected error: {type(error).__name__}: {_message(error)} "
            "(rerun with --debug for the traceback, and please report it)",
            shared=False,
        )
        return 1
    return 0


def _line_buffered(stream) -> None:
    """Each line out as it is printed, also into a file or a pipe (where Python buffers
    kilobytes): a log shows the plan when training starts, not when the command ends."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        stream.reconfigure(line_buffering=True)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``with`` block cleans up (temporary and
    partial files, the checkpoint folder's lock) before the command ends."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises `_Terminated` (only in the main thread,
    where Python can install the handler; elsewhere SIGTERM keeps its default)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
        help="CPU threads for torch (default: OMP_NUM_THREADS when set, else every usable "
        "core; idle threads sleep, so a busy machine does not slow training down, see the "
        "README's Performance section)",
    )
    parser = Parser(
        prog="dgan",
        description="Train DoppelGANger GANs on time-series tables and generate synthetic data.",
        epilog="Run `dgan COMMAND --help` for a command's options. Start with `dgan demo`.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"dgan {__version__}")
    commands = parser.add_subparsers(
        title="commands", metavar="COMMAND", dest="command", required=True
    )
    columns = _column_arguments()
    _add_train(commands, [common, columns])
    _add_generate(commands, [common])
    _add_evaluate(commands, [common, columns])
    _add_demo(commands, [common])
    parser.commands = dict(commands.choices)
    return parser


def _column_list(text: str) -> list[str]:
    """A comma-separated list of column names."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty column name in {text!r}")
    return names


def _positive(convert: Callable[[str], float], noun: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, which must be positive and finite."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {noun}, got {text!r}") from None
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"expected a positive {noun}, got {text!r}")
        return value

    return parse


_positive_int = _positive(int, "integer")
_positive_float = _positive(float, "number")


def _seconds(text: str) -> float:
    """A number of seconds: 0 or more, finite."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got {text!r}")
    return value


def _seed(text: str) -> int:
    """A seed torch's generators take (`dgan.config.MAX_SEED`)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"expected an integer from 0 to 2**63 - 2, got {text[:40]!r}"
        )
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
        "--continuous",
        **names,
        help="attributes to read as numbers although they hold a few whole numbers (read "
        f"as classes otherwise: at most {MAX_CLASSES} values, {MIN_SERIES_PER_CLASS} series "
        "per value or more)",
    )
    add_window_flags(group)
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
        "Prints the training plan first (columns, batches, precision, estimated time, "
        "warnings; --dry-run stops there) and a summary at the end: time, throughput, "
        "precision, guard events.",
        [
            "dgan train sensors.csv -o sensors.dgan --example-id sensor --time ts "
            "--attributes site --epochs 200",
            "dgan train wide.parquet -o wide.dgan --attributes label --config dgan.toml",
        ],
        parents,
    )
    p.add_argument("data", metavar="DATA", help="training table (.csv or .parquet)")
    p.add_argument("-o", "--output", metavar="MODEL", help="model file to write")
    p.add_argument("--config", metavar="FILE", help="TOML or JSON file of DGANConfig fields")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the training plan (columns, batches, precision, time estimate) and stop",
    )
    settings = p.add_argument_group("settings", "Override --config and DGANConfig's defaults.")
    settings.add_argument(
        "--precision",
        choices=["fp32", "fp16", "bf16", "auto"],
        help="numeric precision of training",
    )
    settings.add_argument(
        "--epochs",
        type=_positive_int,
        metavar="N",
        help="passes over the data (default: a budget of steps picked from the number of "
        "series, shown in the plan)",
    )
    settings.add_argument(
        "--training-steps",
        type=_positive_int,
        metavar="N",
        help="optimizer steps to train for, instead of --epochs",
    )
    settings.add_argument(
        "--training-minutes",
        type=_positive_float,
        metavar="M",
        help="stop after M minutes of training at most (on top of the steps or epochs)",
    )
    settings.add_argument(
        "--batch-size",
        type=_positive_int,
        metavar="N",
        help="series per step (default: picked from the number of series with the other "
        f"settings; with large_data=false in --config, about {STEPS_PER_EPOCH_WANTED} steps "
        f"per epoch, {MIN_SUGGESTED_BATCH} to {GRETEL_BATCH_SIZE})",
    )
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
    settings.add_argument("--seed", type=_seed, metavar="N", help="fix all randomness")
    private = p.add_argument_group(
        "differential privacy",
        'Train with a guaranteed (epsilon, delta) (docs/privacy.md; pip install "dgan[dp]"): '
        "give --max-sequence-len, --batch-size, the length and public_values in --config.",
    )
    private.add_argument("--dp-epsilon", type=_positive_float, metavar="E", help="the budget")
    private.add_argument(
        "--dp-delta", type=_positive_float, metavar="D", help="default: 0.1 / number of series"
    )
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
    _progress_argument(p)
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
    p.add_argument(
        "--seed",
        type=_seed,
        metavar="N",
        help="draw the same series for the same N and model (default: a fresh draw each run)",
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
    p.add_argument("--seed", type=_seed, default=0, help="seed of the metrics (default 0)")
    p.add_argument(
        "--seeds",
        type=_positive_int,
        default=3,
        metavar="N",
        help="repeat each metric and its real-vs-real baseline with N seeds for their "
        "spread (default 3; 1 is fastest)",
    )
    p.add_argument(
        "--max-examples",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="use at most N series per side (default 1000)",
    )
    _progress_argument(p)
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
    p.set_defaults(run=run_demo_command)


def _progress_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress-every",
        type=_seconds,
        default=EVERY,
        metavar="S",
        help="where the output is not a terminal (a log file, a notebook, CI): a progress "
        f"line every S seconds (default {EVERY:g}; on a terminal: a progress bar)",
    )


def _force_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing output files (an output is never allowed to be an input)",
    )


if __name__ == "__main__":
    sys.exit(main())
