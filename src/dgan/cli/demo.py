"""`dgan demo`: train on the bundled weather data, write a model, synthetic data and a report.

Example (takes a minute; ``epochs=2`` for a quick try)::

    from dgan.cli.demo import run_demo
    paths = run_demo("dgan-demo", epochs=2)
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import torch

from dgan.cli.outputs import check_outputs
from dgan.cli.progress import evaluation_progress, training_progress
from dgan.cli.summary import metrics_table, training_summary
from dgan.cli.tables import write_table
from dgan.config import DfStyle, DGANConfig
from dgan.datasets import DEMO_COLUMNS, DEMO_MAX_SEQUENCE_LEN, load_demo
from dgan.metrics import evaluate, frames_to_series
from dgan.model import DGAN
from dgan.tabular.columns import columns_of_layout

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


def run_demo(out: str | Path, epochs: int | None = None, force: bool = False) -> dict[str, Path]:
    """Train on the bundled data; write model.dgan, synthetic.csv and report.html to ``out``.

    Prints progress and results. Returns the paths written (the report only when
    matplotlib is installed). Existing files in ``out`` are overwritten only with
    ``force``.
    """

    config = DEMO_CONFIG
    if epochs is not None:
        config = dataclasses.replace(config, epochs=epochs)
    out = Path(out)
    paths = check_outputs(
        {
            "model": out / "model.dgan",
            "synthetic data": out / "synthetic.csv",
            "report": out / "report.html",
        },
        force=force,
    )
    real_df = load_demo()
    n_real = real_df[DEMO_COLUMNS["example_id_column"]].nunique()
    print(
        f"training on {n_real} months of Seattle weather (28 days x 4 features, the month as "
        f"attribute) for {config.epochs} epochs..."
    )
    # The demo's networks are tiny, so extra CPU threads only add synchronisation (on a
    # busy machine, many times slower epochs). The process ends after the demo, so the
    # setting is not restored.
    torch.set_num_threads(1)
    model = DGAN(config)
    start = time.perf_counter()
    model.train_dataframe(real_df, df_style=DfStyle.LONG, **DEMO_COLUMNS, **training_progress())
    print(training_summary(model.history, time.perf_counter() - start))
    written = {"model": model.save(paths["model"])}
    synthetic_df = model.generate_dataframe(DEMO_SYNTHETIC_SERIES)
    written["synthetic data"] = write_table(synthetic_df, paths["synthetic data"])

    columns = columns_of_layout(model.data_frame_layout)
    real, synthetic = frames_to_series(real_df, synthetic_df, columns, config.max_sequence_len)
    with evaluation_progress() as progress:
        metrics = evaluate(real, synthetic, progress=progress)
    print(metrics_table(metrics))
    try:
        from dgan.report import write_report

        written["report"] = write_report(
            paths["report"], real, synthetic, metrics, model.history, "dgan demo report"
        )
    except ImportError as error:  # matplotlib is optional: keep the rest of the demo
        print(f"no report: {error}")
    print(f"model:          {written['model']}")
    print(
        f"synthetic data: {written['synthetic data']} ({DEMO_SYNTHETIC_SERIES} series, "
        f"{len(synthetic_df)} rows)"
    )
    if "report" in written:
        print(f"report:         {written['report']}  (open it in a browser)")
    return written
