"""``python -m dgan.demo``: train on the bundled weather data and write synthetic data.

Example:
    >>> from dgan.demo import DEMO_CONFIG
    >>> DEMO_CONFIG.max_sequence_len
    28
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dgan import DGAN, DGANConfig
from dgan.datasets import DEMO_COLUMNS, DEMO_MAX_SEQUENCE_LEN, load_demo

# Settings that train in about a minute on a 2-core laptop CPU.
DEMO_CONFIG = DGANConfig(
    max_sequence_len=DEMO_MAX_SEQUENCE_LEN,
    sample_len=7,
    batch_size=16,
    epochs=300,
    seed=0,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo-output", help="output folder")
    parser.add_argument("--epochs", type=int, default=DEMO_CONFIG.epochs)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    real = load_demo()
    config = DGANConfig(**{**DEMO_CONFIG.to_dict(), "epochs": args.epochs})
    model = DGAN(config)
    start = time.perf_counter()
    model.train_dataframe(real, df_style="long", **DEMO_COLUMNS)
    seconds = time.perf_counter() - start
    n_examples = real[DEMO_COLUMNS["example_id_column"]].nunique()
    synthetic = model.generate_dataframe(n_examples)
    model_path = model.save(out / "model.dgan")
    csv_path = out / "synthetic.csv"
    synthetic.to_csv(csv_path, index=False)
    print(f"trained {config.epochs} epochs on {n_examples} real series in {seconds:.0f} s")
    print(f"model:          {model_path}")
    print(f"synthetic data: {csv_path} ({len(synthetic)} rows)")
    print(synthetic.head(10).to_string(index=False))


if __name__ == "__main__":
    main()
