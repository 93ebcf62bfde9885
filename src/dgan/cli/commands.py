"""What each ``dgan`` command does, once its arguments are parsed (`dgan.cli.main` parses).

Example:
    >>> from dgan.cli.main import build_parser
    >>> args = build_parser().parse_args(["generate", "m.dgan", "-n", "3", "-o", "out.csv"])
    >>> args.run is run_generate
    True
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from dgan.cli.chunked import write_generated
from dgan.cli.classes import class_note, read_classes
from dgan.cli.config_files import check_settings, read_config_file
from dgan.cli.demo import run_demo
from dgan.cli.messages import check_not_long, flag_words, hint_long_data, in_flag_words
from dgan.cli.outputs import check_checkpoint_paths, check_outputs
from dgan.cli.progress import evaluation_progress, training_progress
from dgan.cli.resume import interrupted_advice, nothing_left, resume_note, steps_done
from dgan.cli.summary import metrics_table, training_summary
from dgan.cli.tables import read_table, require_module
from dgan.cli.windows import (
    check_window_flags,
    cut_table,
    evaluation_window,
    real_recordings,
    remember_windowing,
    windowed_columns,
    with_windows_line,
)
from dgan.config import DfStyle, DGANConfig
from dgan.config.sizing import suggested_batch_size
from dgan.errors import ParameterError
from dgan.metrics import evaluate, frames_to_series
from dgan.model import DGAN
from dgan.planning import TrainingPlan
from dgan.prepare import FrameSource
from dgan.records import privacy_guarantee, privacy_text
from dgan.storage.checkpoint import ResumePoint, find_resume_point
from dgan.storage.folder import resume_folder
from dgan.storage.format import json_safe
from dgan.tabular.columns import Columns, columns_of_layout
from dgan.tabular.lengths import infer_lengths
from dgan.tabular.windows import WindowSummary


def run_train(args: argparse.Namespace) -> None:
    """``dgan train``: check settings and outputs, read the table, train, save, summarise."""
    columns = _columns_from_flags(args)
    check_window_flags(args.window, args.stride, columns)
    settings = _training_settings(args)  # before the data is read
    _refuse_private_windows(settings, args.window)
    if args.output is None and not args.dry_run:
        raise ParameterError("Pass -o MODEL (the model file to write), or --dry-run.")
    outputs = {} if args.dry_run else {"-o": args.output}
    check_outputs(outputs, inputs=[args.data, args.config], force=args.force)
    check_checkpoint_paths(args.resume, settings.get("checkpoint_dir"))
    point = find_resume_point(args.resume) if args.resume else None  # read once, here
    df = read_table(args.data)
    with flag_words():
        df, windows = cut_table(df, columns, args.window, args.stride)  # before the plan
    columns = windowed_columns(columns, args.window)
    try:
        model, seconds, plan = _plan_and_train(args, columns, settings, df, point, windows)
    except KeyboardInterrupt as interrupt:  # Ctrl-C (or SIGTERM): say what is left
        interrupt.advice = interrupted_advice(settings.get("checkpoint_dir"), args.resume)
        raise
    if model is None:  # --dry-run
        return
    remember_windowing(model, windows)  # so that `dgan evaluate --model` cuts alike
    path = model.save(args.output)
    # The epochs this run trained: after the checkpoint's whole ones (it finishes a cut one)
    before = 0 if point is None else point.record.history_offset + point.record.epochs_done
    summary = training_summary(
        model.history,
        seconds,
        plan.n_examples,
        first_epoch=before,
        nothing_left=nothing_left(point, plan),
    )
    print(summary)
    if (guarantee := privacy_guarantee(model.history)) is not None:
        print(privacy_text(guarantee))
    print(f"model: {path}")


def _plan_and_train(
    args: argparse.Namespace,
    columns: Columns,
    settings: dict[str, Any],
    df: Any,
    point: ResumePoint | None,
    windows: WindowSummary | None,
) -> tuple[DGAN | None, float, TrainingPlan]:
    """Print the plan (with what ``windows`` made of the table) and train (from ``point``
    when resuming): the model, the seconds training took and the plan (None and 0 for the
    first two after --dry-run)."""
    with flag_words(), hint_long_data(_style_given(args)):
        _refuse_settings_from_the_data(settings)
        notes = infer_lengths(df, columns, settings)  # also checks the column flags
        check_not_long(df, _style_given(args), args.example_id)
        columns, classes = read_classes(df, columns, args.continuous, settings["max_sequence_len"])
        source = FrameSource(df, columns)  # checked once for both plans
        if "batch_size" not in settings:  # neither --batch-size nor in --config
            config = DGANConfig.from_json_dict(settings)
            plan = DGAN(config).plan(source, warm_up_steps=0)
            if not plan.large_data:  # the large-data settings bring their own batch size
                settings["batch_size"] = suggested_batch_size(plan.n_examples)
                notes.append(f"batch_size={settings['batch_size']} (for {plan.n_examples} series)")
        if notes:
            print(
                f"inferred {', '.join(notes)}; set them with --max-sequence-len / "
                "--sample-len / --batch-size"
            )
        config = DGANConfig.from_json_dict(settings)
        if point is not None:
            point.check_config(config)  # before the plan: a mismatch is the first thing said
        model = DGAN(config)
        plan = model.plan(source)
        del source  # its checked copy: training checks the frame itself
        plan.steps_done = steps_done(point, plan)  # of the budget's steps
        plan.seconds_done = point.seconds_used() if point else 0.0  # the time budget counts
        _note_classes(plan, classes, args.continuous)
        if point is not None:
            print(in_flag_words(resume_note(point, plan)))
        print(in_flag_words(with_windows_line(str(plan), windows)))
        if args.dry_run:
            return None, 0.0, plan
        progress = training_progress(args.progress_every, plan.seconds_left)
        start = time.perf_counter()
        model.train_dataframe(df, **columns.as_arguments(), resume_from=point, **progress)
    return model, time.perf_counter() - start, plan


def _note_classes(plan: TrainingPlan, classes: list[str], continuous: list[str] | None) -> None:
    """The plan's columns say which attributes were read as classes by default; the advice
    to make whole numbers discrete goes for the attributes --continuous keeps numbers."""
    for column in plan.columns:
        if column.name in classes:
            column.detail += f"; {class_note(column.name)}"
    kept = [f"attribute {name!r} is continuous but" for name in continuous or []]
    plan.warnings = [w for w in plan.warnings if not w.startswith(tuple(kept))]


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
    if wanted is not None and wanted.empty:
        raise ParameterError(
            f"--attributes {args.attributes!r} has no rows, so there is nothing to generate; "
            "give one row of attribute values per series to generate, or use -n N."
        )
    model = DGAN.load(args.model)
    if model.data_frame_layout is None:
        raise ParameterError(
            f"{args.model} was trained on arrays (train_numpy), not a table, so it cannot "
            "write one; train it with `dgan train` or DGAN.train_dataframe."
        )
    model.sampler.reseed(args.seed)  # None: fresh entropy, so each run draws anew
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
    "continuous": "--continuous",
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
        window = evaluation_window(args.window, model.data_frame_layout.windowing)
    else:
        columns, max_len = _columns_from_flags(args), args.max_sequence_len
        style_given = _style_given(args)
        window = args.window
    check_window_flags(window, args.stride, columns)
    real_df, synthetic_df = read_table(args.real), read_table(args.synthetic)
    with flag_words(), hint_long_data(style_given):
        check_not_long(real_df, style_given, columns.example_id_column)  # before the reading
        recordings = real_recordings(columns, real_df)
        real_df, windows = cut_table(real_df, recordings, window, args.stride)  # disjoint default
        columns = windowed_columns(columns, window)
        if windows is not None:
            print(f"real table cut into windows: {windows}")
        if not args.model:  # read as `dgan train` read them
            columns, classes = read_classes(real_df, columns, args.continuous, max_len)
            for name in classes:
                print(f"attribute {name!r}: {class_note(name)}")
        real, synthetic = frames_to_series(real_df, synthetic_df, columns, max_len)
        with evaluation_progress(args.progress_every) as progress:
            metrics = evaluate(
                real,
                synthetic,
                target_attribute=args.target,
                seed=args.seed,
                max_examples=args.max_examples,
                n_seeds=args.seeds,
                progress=progress,
            )
    print(in_flag_words(metrics_table(metrics)))
    guarantee = None if history is None else privacy_guarantee(history)
    if guarantee is not None:
        print(privacy_text(guarantee))
    if args.json:
        payload = json_safe(metrics)
        if guarantee is not None:  # the model's differential privacy, beside its scores
            payload["privacy"] = guarantee
        text = json.dumps(payload, indent=2, allow_nan=False)  # NaN: null
        Path(args.json).write_text(text + "\n", encoding="utf-8")
        print(f"metrics: {args.json}")
    if args.report:
        title = f"dgan report: {Path(args.synthetic).name} vs {Path(args.real).name}"
        from dgan.report import write_report  # imports matplotlib: only when asked for

        print(f"report: {write_report(args.report, real, synthetic, metrics, history, title)}")


def run_demo_command(args: argparse.Namespace) -> None:
    """``dgan demo``: see `dgan.cli.demo.run_demo`."""
    run_demo(args.out, epochs=args.epochs, force=args.force)


# --------------------------------------------------------------------------------------
# Flags -> library arguments
# --------------------------------------------------------------------------------------

# Flags of `dgan train` that set a DGANConfig field of the same name.
_CONFIG_FLAGS = (
    "precision",
    "epochs",
    "training_steps",
    "training_minutes",
    "batch_size",
    "max_sequence_len",
    "sample_len",
    "seed",
    "checkpoint_dir",
    "checkpoint_every",
    "dp_epsilon",
    "dp_delta",
)


_LENGTHS = {"epochs", "training_steps"}  # the training length, in either unit


def _training_settings(args: argparse.Namespace) -> dict[str, Any]:
    """DGANConfig fields from --config, overridden by the flags; checked before any work."""
    settings = read_config_file(args.config) if args.config else {}
    check_settings(settings, source=args.config or "the flags")
    flags = {k: getattr(args, k) for k in _CONFIG_FLAGS if getattr(args, k) is not None}
    if flags.keys() & _LENGTHS:  # a length on the command line replaces the file's
        settings = {k: v for k, v in settings.items() if k not in _LENGTHS}
    settings.update(flags)
    if getattr(args, "resume", None) and settings.get("checkpoint_dir") is None:
        # a resumed run keeps checkpointing there (into the folder of a checkpoint file)
        settings["checkpoint_dir"] = str(resume_folder(args.resume))
    check_settings(settings, source=args.config or "the flags")
    if settings.get("checkpoint_dir") is None:  # the checkpoint settings would do nothing
        given = [
            "--checkpoint-every" if k == "checkpoint_every" and args.checkpoint_every else k
            for k in ("checkpoint_every", "checkpoint_every_minutes", "checkpoint_keep")
            if k in settings
        ]
        if given:
            raise ParameterError(
                f"{', '.join(given)} needs --checkpoint-dir DIR (or --resume DIR): without a "
                "checkpoint folder no checkpoints are written."
            )
    return settings


def _private(settings: dict[str, Any]) -> bool:
    """Whether the settings ask for differential privacy (``dp_epsilon``, or gretel's
    ``dp_enabled``)."""
    return settings.get("dp_epsilon") is not None or settings.get("dp_enabled") is True


def _refuse_private_windows(settings: dict[str, Any], window: int | None) -> None:
    """Differential privacy protects each training example; the windows of one recording
    are many examples of one person's data, so the guarantee would not be the recording's."""
    if _private(settings) and window is not None:
        raise ParameterError(
            "--dp-epsilon protects each training example, and --window makes many examples "
            "of one recording: the guarantee would hold per window, not per recording. "
            "Drop --window (train on whole recordings, with --max-sequence-len the longest), "
            "or drop --dp-epsilon."
        )


def _refuse_settings_from_the_data(settings: dict[str, Any]) -> None:
    """Under differential privacy nothing is inferred from the table: the longest series
    and the batch that would be picked from the number of series are the user's to give."""
    missing = [
        flag
        for name, flag in (
            ("max_sequence_len", "--max-sequence-len"),
            ("batch_size", "--batch-size"),
        )
        if settings.get(name) is None
    ]
    if _private(settings) and missing:
        raise ParameterError(
            f"--dp-epsilon: give {' and '.join(missing)}; under differential privacy dgan "
            "does not pick them from the table (the longest series, the number of series)."
        )


def _style_given(args: argparse.Namespace) -> bool:
    """Whether the table's style was said (--style, or --time, which implies LONG)."""
    return args.style is not None or args.time is not None


def _columns_from_flags(args: argparse.Namespace) -> Columns:
    """The table's column roles from the flags."""
    style = args.style or (DfStyle.LONG if args.time is not None else DfStyle.WIDE)
    return Columns(
        attribute_columns=args.attributes,
        feature_columns=args.features,
        example_id_column=args.example_id,
        time_column=args.time,
        discrete_columns=args.discrete,
        df_style=DfStyle(style),
    )
