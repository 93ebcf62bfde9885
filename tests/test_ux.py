"""What the user is told and given (issue 12): generation seeds and rounding, the training
plan, metric baselines and verdicts, the progress bar."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dgan import DGAN, DGANConfig
from dgan.cli import main
from dgan.layout import FrameLayout

TINY = dict(
    epochs=1,
    batch_size=8,
    attribute_num_units=8,
    feature_num_units=8,
    discriminator_num_layers=2,
    discriminator_num_units=16,
    cuda=False,
    seed=0,
)


def long_frame(n_series: int = 24, n_steps: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.repeat(np.arange(n_series), n_steps),
            "kind": np.repeat(np.where(np.arange(n_series) % 3 == 0, "a", "b"), n_steps),
            "step": np.tile(np.arange(n_steps), n_series),
            "level": np.round(rng.normal(size=n_series * n_steps), 1),  # one decimal
            "flow": np.round(rng.normal(size=n_series * n_steps) * 100, 3),  # three
            "count": rng.integers(0, 50, n_series * n_steps),  # integers
        }
    )


LONG = dict(example_id_column="id", time_column="step", attribute_columns=["kind"])


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ux")
    model = DGAN(DGANConfig(max_sequence_len=6, sample_len=2, **TINY))
    model.train_dataframe(long_frame(), df_style="long", progress_bar=False, **LONG)
    return model.save(folder / "model.dgan")


# ----------------------------------------------------------------------------- generate


def test_generate_without_seed_draws_anew_and_with_seed_repeats(model_file, tmp_path):
    outputs = {}
    for name, extra in [("a", []), ("b", []), ("s1", ["--seed", "5"]), ("s2", ["--seed", "5"])]:
        path = tmp_path / f"{name}.csv"
        assert main(["generate", str(model_file), "-n", "6", "-o", str(path), *extra]) == 0
        outputs[name] = path.read_bytes()
    assert outputs["a"] != outputs["b"]  # no --seed: a fresh draw each run
    assert outputs["s1"] == outputs["s2"]  # the same --seed: the same series


def test_generated_numbers_have_the_training_columns_decimals(model_file, tmp_path):
    path = tmp_path / "out.csv"
    assert main(["generate", str(model_file), "-n", "20", "-o", str(path), "--seed", "1"]) == 0
    text = pd.read_csv(path, dtype=str)
    for column, decimals in [("level", 1), ("flow", 3), ("count", 0)]:
        digits = text[column].str.partition(".")[2].str.len()
        assert digits.max() <= decimals, (column, text[column].head().tolist())
    model = DGAN.load(model_file)
    assert [model.data_frame_layout.spec(c).decimals for c in ("level", "flow", "count")] == [
        1,
        3,
        None,  # integers are rounded as integers
    ]


def test_layouts_saved_before_decimals_were_recorded_still_load_without_rounding(model_file):
    stored = DGAN.load(model_file).data_frame_layout.to_json_dict()
    for column in stored["columns"]:
        del column["decimals"]  # as written by an older dgan
    layout = FrameLayout.from_json_dict(stored)
    assert all(c.decimals is None for c in layout.columns)
