"""Checkpoints and exact resume (dgan.storage.checkpoint)."""

from __future__ import annotations

import copy
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from dgan import DGAN, DGANConfig, OutputType
from dgan.errors import DataError, ParameterError, SerializationError
from dgan.storage.checkpoint import Checkpointer, find_resume_point, list_checkpoints
from dgan.storage.model_file import ModelParts
from tiny import TINY_NETWORKS, tiny_config

TYPES = [OutputType.DISCRETE, OutputType.CONTINUOUS]


def _data(seed: int = 3, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 6, 2))
    attributes = np.stack([rng.integers(0, 3, n), rng.normal(size=n)], axis=1)
    return features, attributes


def _train(config: DGANConfig, data=None, **kwargs) -> DGAN:
    features, attributes = _data() if data is None else data
    model = DGAN(config)
    model.train_numpy(
        features, attributes=attributes, attribute_types=TYPES, progress_bar=False, **kwargs
    )
    return model


def _assert_identical(a: DGAN, b: DGAN) -> None:
    for name, module in a.trainer.modules().items():
        other = b.trainer.modules()[name].state_dict()
        for key, value in module.state_dict().items():
            assert torch.equal(value, other[key]), f"{name}.{key}"
    assert torch.equal(a.trainer.rng.get_state(), b.trainer.rng.get_state())
    assert a.trainer.steps_done == b.trainer.steps_done
    losses = [(h["epoch"], h["discriminator_loss"], h["generator_loss"]) for h in a.history]
    assert losses == [(h["epoch"], h["discriminator_loss"], h["generator_loss"]) for h in b.history]
    (x_attributes, x_features), (y_attributes, y_features) = (
        a.generate_numpy(6),
        b.generate_numpy(6),
    )
    assert (x_attributes is None) == (y_attributes is None)
    assert x_attributes is None or np.array_equal(x_attributes, y_attributes)
    for x, y in zip(x_features, y_features, strict=True):
        assert np.array_equal(x, y)


# A real training process that stops in the middle of epoch 2 (of 4) and waits there to
# be killed, after writing the checkpoints of epochs 0 and 1.
SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, {tests!r})
    from test_checkpoint import kill_config, TYPES, _data
    from dgan import DGAN

    folder = Path(sys.argv[1])

    def stall(info):
        if (info.epoch, info.batch) == (2, 2):
            (folder / "mid-epoch-2").write_text("")
            time.sleep(600)

    features, attributes = _data()
    DGAN(kill_config(str(folder / "ckpt"))).train_numpy(
        features, attributes=attributes, attribute_types=TYPES, progress_callback=stall,
        progress_bar=False)
    """
)


def kill_config(checkpoint_dir: str | None) -> DGANConfig:
    return tiny_config(epochs=4, checkpoint_dir=checkpoint_dir, checkpoint_every=1)


def test_sigkill_mid_epoch_then_resume_is_bit_identical(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    killed = subprocess.Popen([sys.executable, str(script), str(tmp_path)], env=env)
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "mid-epoch-2").exists():
            assert killed.poll() is None, "the training process ended before it was killed"
            assert time.monotonic() < deadline, "the training process never reached epoch 2"
            time.sleep(0.05)
    finally:
        killed.send_signal(signal.SIGKILL)
        returncode = killed.wait(timeout=60)
    assert returncode == -signal.SIGKILL
    folder = tmp_path / "ckpt"
    assert [n for n, _ in list_checkpoints(folder)] == [1, 2]

    # Resumed here (one torch thread, as in the killed process): the same as never killed.
    resumed = _train(kill_config(str(folder)), resume_from=folder)
    assert [n for n, _ in list_checkpoints(folder)] == [2, 3, 4]
    _assert_identical(_train(kill_config(None)), resumed)
    assert [h["epoch"] for h in resumed.history] == [0, 1, 2, 3]


def test_corrupt_latest_checkpoint_falls_back_to_the_previous(tmp_path, caplog):
    folder = tmp_path / "ckpt"
    _train(tiny_config(epochs=3, checkpoint_dir=str(folder), checkpoint_every=1))
    latest = checkpoint = list_checkpoints(folder)[-1][1]
    raw = bytearray(latest.read_bytes())
    raw[-200:] = bytes(b ^ 0xFF for b in raw[-200:])  # flipped tensor bytes: checksum fails
    latest.write_bytes(bytes(raw))

    with caplog.at_level(logging.WARNING, logger="dgan.storage.checkpoint"):
        resumed = _train(tiny_config(epochs=3, checkpoint_dir=str(folder)), resume_from=folder)
    assert f"Skipping checkpoint {checkpoint}" in caplog.text and "corrupted" in caplog.text
    _assert_identical(resumed, _train(tiny_config(epochs=3)))


def test_resume_is_exact_with_the_quality_levers(tmp_path):
    folder = str(tmp_path / "ckpt")
    levers = dict(generator_ema_decay=0.9, temporal_critic=True, temporal_critic_num_units=8)
    _train(tiny_config(epochs=1, checkpoint_dir=folder, **levers))
    resumed = _train(tiny_config(epochs=2, checkpoint_dir=folder, **levers), resume_from=folder)
    assert "generator_ema" in resumed.trainer.modules()
    _assert_identical(resumed, _train(tiny_config(epochs=2, **levers)))


@pytest.mark.filterwarnings("ignore:precision='fp16' on CPU")
def test_resume_restores_the_loss_scalers(tmp_path):
    folder = str(tmp_path / "ckpt")
    fp16 = dict(precision="fp16", growth_interval=1)  # the scale changes every step
    first = _train(tiny_config(epochs=1, checkpoint_dir=folder, **fp16))
    resumed = _train(tiny_config(epochs=2, checkpoint_dir=folder, **fp16), resume_from=folder)
    full = _train(tiny_config(epochs=2, **fp16))
    assert first.history[0]["critic_loss_scale"] != tiny_config().init_scale
    scales = [(h["critic_loss_scale"], h["generator_loss_scale"]) for h in resumed.history]
    assert scales == [(h["critic_loss_scale"], h["generator_loss_scale"]) for h in full.history]
    _assert_identical(resumed, full)


def test_preprocess_then_train_encoded_resumes_too(tmp_path):
    folder = tmp_path / "ckpt"
    _train(tiny_config(epochs=1, checkpoint_dir=str(folder)))
    features, attributes = _data()
    model = DGAN(tiny_config(epochs=2))
    encoded = model.preprocess(features, attributes=attributes, attribute_types=TYPES)
    model.train_encoded(encoded, progress_bar=False, resume_from=folder)
    _assert_identical(model, _train(tiny_config(epochs=2)))


def test_all_checkpoints_unreadable_is_an_error(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "checkpoint-000001.dgan").write_bytes(b"not a model")
    with pytest.raises(SerializationError, match="No readable checkpoint"):
        find_resume_point(folder)


def test_resume_from_an_empty_folder_trains_from_the_start(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="dgan.storage.checkpoint"):
        model = _train(tiny_config(epochs=2), resume_from=tmp_path / "nothing-yet")
    assert "No checkpoint" in caplog.text
    _assert_identical(model, _train(tiny_config(epochs=2)))


def test_a_finished_run_can_be_extended_with_more_epochs(tmp_path):
    folder = str(tmp_path / "ckpt")
    _train(tiny_config(epochs=2, checkpoint_dir=folder, checkpoint_every=5))
    assert [n for n, _ in list_checkpoints(folder)] == [2]  # the last epoch always
    longer = _train(tiny_config(epochs=3, checkpoint_dir=folder), resume_from=folder)
    _assert_identical(longer, _train(tiny_config(epochs=3)))


def test_keeps_the_newest_checkpoints_and_they_load_as_models(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    stale = folder / ".checkpoint-000009.dgan.x1y2.tmp"  # a killed run's half-written file
    stale.write_bytes(b"half")
    config = tiny_config(epochs=4, checkpoint_dir=str(folder), checkpoint_every=1)
    model = _train(dataclass_replace(config, checkpoint_keep=2))
    assert [n for n, _ in list_checkpoints(folder)] == [3, 4]
    assert not stale.exists()
    loaded = DGAN.load(folder / "checkpoint-000004.dgan")
    _assert_identical(model, loaded)


def dataclass_replace(config: DGANConfig, **changes) -> DGANConfig:
    return DGANConfig(**{**config.to_dict(), **changes})


@pytest.fixture
def interrupted(tmp_path) -> Path:
    """A checkpoint folder of a finished 1-epoch run (resuming with more epochs extends it)."""
    folder = tmp_path / "ckpt"
    _train(tiny_config(epochs=1, checkpoint_dir=str(folder)))
    return folder


def test_resume_with_other_data_names_the_difference(interrupted):
    features, attributes = _data()
    changed = features.copy()
    changed[0, 0, 0] += 0.01
    with pytest.raises(DataError, match="training data differs"):
        _train(tiny_config(epochs=3), data=(changed, attributes), resume_from=interrupted)
    with pytest.raises(DataError, match="30 examples now, 40 then"):
        _train(tiny_config(epochs=3), data=_data(n=30), resume_from=interrupted)


def test_resume_with_other_config_names_the_fields(interrupted):
    config = tiny_config(epochs=3, generator_learning_rate=0.01, batch_size=4)
    with pytest.raises(ParameterError, match="batch_size: 8 in the checkpoint, 4 now") as e:
        _train(config, resume_from=interrupted)
    assert "generator_learning_rate" in str(e.value)
    assert "epochs" not in str(e.value).split("differs in")[1].split(".")[0]


def test_resume_with_other_columns_is_a_data_error(tmp_path):
    folder = str(tmp_path / "ckpt")
    df = pd.DataFrame({"kind": ["a", "b"] * 10, "t0": range(20), "t1": range(20)})
    config = tiny_config(max_sequence_len=2, sample_len=1, checkpoint_dir=folder)
    DGAN(config).train_dataframe(df, attribute_columns=["kind"], progress_bar=False)
    other = df.rename(columns={"t1": "t9"})
    with pytest.raises(DataError, match="columns"):
        DGAN(config).train_dataframe(
            other, attribute_columns=["kind"], progress_bar=False, resume_from=folder
        )


def test_a_fresh_run_refuses_a_folder_with_another_runs_checkpoints(interrupted):
    with pytest.raises(ParameterError, match="resume it with resume_from"):
        _train(tiny_config(epochs=2, checkpoint_dir=str(interrupted)))


def test_resume_into_a_trained_model_is_refused(interrupted):
    model = _train(tiny_config())
    features, attributes = _data()
    with pytest.raises(ParameterError, match="new DGAN"):
        model.train_numpy(
            features, attributes=attributes, progress_bar=False, resume_from=interrupted
        )


def test_a_plain_model_file_is_not_a_checkpoint(tmp_path):
    path = _train(tiny_config()).save(tmp_path / "model.dgan")
    with pytest.raises(SerializationError, match="not a training checkpoint"):
        find_resume_point(path)


@pytest.mark.parametrize(
    "field, value",
    [("checkpoint_every", 0), ("checkpoint_keep", -1), ("checkpoint_every_minutes", 0),
     ("checkpoint_dir", 3)],
)  # fmt: skip
def test_checkpoint_settings_are_validated(field, value):
    with pytest.raises(ParameterError, match=field):
        tiny_config(**{field: value})


def test_checkpoint_dir_accepts_a_path(tmp_path):
    assert tiny_config(checkpoint_dir=tmp_path).checkpoint_dir == str(tmp_path)


def test_checkpoint_every_minutes_writes_at_the_first_epoch_end_after_that_time(
    tmp_path, monkeypatch
):
    clock = iter(range(0, 10_000, 40))  # each reading of the clock is 40 s later
    monkeypatch.setattr("dgan.storage.checkpoint.time.monotonic", lambda: next(clock))
    folder = tmp_path / "ckpt"
    config = tiny_config(
        epochs=4, checkpoint_dir=str(folder), checkpoint_every=100, checkpoint_every_minutes=1
    )
    _train(config)
    # start 0; epoch 1 ends at 40 s; epoch 2 at 80 s: due (written, clock 120 s); epoch 3
    # at 160 s: not due; epoch 4: the last, always written
    assert [n for n, _ in list_checkpoints(folder)] == [2, 4]


def test_a_guard_snapshot_older_than_the_weights_is_kept_whole(tmp_path):
    features, attributes = _data()
    folder = tmp_path / "ckpt"
    config = tiny_config(checkpoint_dir=str(folder))
    model = _train(config)
    snapshot = copy.deepcopy(model.trainer.guard.state_dict())
    with torch.no_grad():  # the weights move on after the guard's last healthy check
        for p in model.generator.parameters():
            p.add_(1.0)
    encoded = model.preprocess(features, attributes=attributes)
    parts = ModelParts(
        model.config, model.encoder, model.data_frame_layout, model.trainer, model.sampler.rng
    )
    path = Checkpointer(parts, encoded, model.history, history_offset=0).write(1)

    resumed = _train(config, resume_from=path)  # 1 of 1 epochs done: only restores
    restored = resumed.trainer.guard.state_dict()
    for name, state in snapshot["modules"].items():
        for key, value in state.items():
            assert torch.equal(restored["modules"][name][key], value), (name, key)
    weight = "lstm.weight_hh_l0"  # the checkpoint's weights are the moved ones
    current = resumed.generator.state_dict()[weight]
    assert not torch.equal(current, snapshot["modules"]["generator"][weight])
    assert restored["precision"] == snapshot["precision"]
    moments = restored["optimizers"]["critic"]["state"][0]["exp_avg"]
    assert torch.equal(moments, snapshot["optimizers"]["critic"]["state"][0]["exp_avg"])


def test_command_line_checkpoints_and_resumes(tmp_path, capsys):
    from dgan.cli.main import main
    from dgan.datasets import load_demo

    data = tmp_path / "weather.csv"
    load_demo().head(28 * 16).to_csv(data, index=False)  # 16 series of 28 days
    tiny = tmp_path / "tiny.toml"  # tiny networks: what is tested is resuming, not learning
    tiny.write_text("".join(f"{k} = {v}\n" for k, v in TINY_NETWORKS.items()))
    common = [
        "train", str(data), "--example-id", "example_id", "--time", "day",
        "--attributes", "month", "--batch-size", "8", "--seed", "0", "--config", str(tiny),
    ]  # fmt: skip
    folder = tmp_path / "ckpt"
    first = [*common, "-o", str(tmp_path / "a.dgan"), "--epochs", "2"]
    assert main([*first, "--checkpoint-dir", str(folder), "--checkpoint-every", "1"]) == 0
    assert [n for n, _ in list_checkpoints(folder)] == [1, 2]
    assert (
        main([*common, "-o", str(tmp_path / "b.dgan"), "--epochs", "3", "--resume", str(folder)])
        == 0
    )
    assert [n for n, _ in list_checkpoints(folder)] == [1, 2, 3]  # kept checkpointing there
    assert main([*common, "-o", str(tmp_path / "c.dgan"), "--epochs", "3"]) == 0
    capsys.readouterr()
    _assert_identical(DGAN.load(tmp_path / "b.dgan"), DGAN.load(tmp_path / "c.dgan"))
