"""Checkpoints and exact resume (dgan.storage.checkpoint)."""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import re
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
from dgan.storage.checkpoint import find_resume_point, list_checkpoints
from dgan.storage.checkpointer import Checkpointer
from dgan.storage.model_file import ModelParts
from dgan.train.loop import Budget
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
    assert json.loads((folder / "dgan.lock").read_text())["pid"] == killed.pid  # stale now

    # Resumed here (one torch thread, as in the killed process): the same as never killed.
    resumed = _train(kill_config(str(folder)), resume_from=folder)
    assert [n for n, _ in list_checkpoints(folder)] == [2, 3, 4]
    assert not (folder / "dgan.lock").exists()  # taken over, then released
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
    levers = dict(
        generator_ema_decay=0.9,
        temporal_critic=True,
        temporal_critic_num_units=8,
        envelope_critic=True,
        period_carrier=True,
    )
    _train(tiny_config(epochs=1, checkpoint_dir=folder, **levers))
    resumed = _train(tiny_config(epochs=2, checkpoint_dir=folder, **levers), resume_from=folder)
    assert {"generator_ema", "envelope_critic"} <= set(resumed.trainer.modules())
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
    foreign = folder / ".checkpoint-000009.dgan.x1y2.tmp"  # another run's half-written file
    foreign.write_bytes(b"half")
    config = tiny_config(epochs=4, checkpoint_dir=str(folder), checkpoint_every=1)
    model = _train(dataclass_replace(config, checkpoint_keep=2))
    assert [n for n, _ in list_checkpoints(folder)] == [3, 4]
    assert foreign.exists()  # never another run's
    loaded = DGAN.load(folder / "checkpoint-000004.dgan")
    _assert_identical(model, loaded)


def test_pruning_never_deletes_the_checkpoint_just_written(tmp_path):
    """Before: with checkpoint_keep=1 and the run's checkpoints 2 and 3 damaged, the run
    resumed from 1 wrote checkpoint 2, then deleted it (and 1), keeping only damaged 3:
    nothing was left to resume from."""
    folder = tmp_path / "ckpt"
    _train(tiny_config(epochs=3, checkpoint_dir=str(folder), checkpoint_every=1))
    for number in (2, 3):
        path = folder / f"checkpoint-00000{number}.dgan"
        raw = bytearray(path.read_bytes())
        raw[-100:] = bytes(b ^ 0xFF for b in raw[-100:])  # the checksum fails
        path.write_bytes(bytes(raw))
    config = tiny_config(epochs=2, checkpoint_dir=str(folder), checkpoint_keep=1)
    resumed = _train(config, resume_from=folder)  # from 1: writes 2 over the damaged one
    assert [n for n, _ in list_checkpoints(folder)] == [2, 3]  # 3: damaged, left alone
    _assert_identical(resumed, DGAN.load(folder / "checkpoint-000002.dgan"))
    assert find_resume_point(folder).path.name == "checkpoint-000002.dgan"


def test_a_resumed_run_deletes_its_own_half_written_files_only(tmp_path):
    folder = tmp_path / "ckpt"
    _train(tiny_config(epochs=1, checkpoint_dir=str(folder)))
    run_id = find_resume_point(folder).record.run_id
    own = folder / f".checkpoint-000002.dgan.{run_id}-0a1b2c.tmp"  # its write, killed
    foreign = folder / ".checkpoint-000002.dgan.feedfacefeedface-0a1b2c.tmp"
    own.write_bytes(b"half")
    foreign.write_bytes(b"half")
    _train(tiny_config(epochs=2, checkpoint_dir=str(folder)), resume_from=folder)
    assert not own.exists() and foreign.exists()
    assert find_resume_point(folder).record.run_id == run_id  # the same run, continued


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


def test_resuming_with_fewer_epochs_than_done_is_refused_before_any_work(tmp_path, caplog):
    folder = tmp_path / "ckpt"
    _train(tiny_config(epochs=3, checkpoint_dir=str(folder)))
    epochs = []
    with pytest.raises(
        ParameterError,
        match=r"epochs=2: .* trained 3 epochs \(15 optimizer steps\) already.* give epochs=3 ",
    ):
        _train(tiny_config(epochs=2), resume_from=folder, progress_callback=epochs.append)
    assert epochs == []
    with caplog.at_level(logging.WARNING, logger="dgan.storage.checkpoint"):
        same = _train(tiny_config(epochs=3), resume_from=folder)  # only restores it
    assert "nothing left to train" in caplog.text and len(same.history) == 3


def test_resume_with_other_config_names_the_fields(interrupted):
    config = tiny_config(epochs=3, generator_learning_rate=0.01, batch_size=4)
    with pytest.raises(ParameterError, match="batch_size: 8 in the checkpoint, 4 now") as e:
        _train(config, resume_from=interrupted)
    assert "generator_learning_rate" in str(e.value)
    assert "epochs" not in str(e.value).split("differs in")[1].split(".")[0]


@pytest.mark.parametrize("large_data", [True, "auto", False])
def test_a_run_resumes_with_its_own_config_whatever_large_data_says(tmp_path, large_data):
    folder = str(tmp_path / "ckpt")
    _train(tiny_config(epochs=1, large_data=large_data, checkpoint_dir=folder))
    resumed = _train(tiny_config(epochs=2, large_data=large_data), resume_from=folder)
    # auto: the batch size is tiny_config's, the rule picks the rest (the weight average)
    assert resumed.config.generator_ema_decay == (None if large_data is False else 0.999)
    _assert_identical(resumed, _train(tiny_config(epochs=2, large_data=large_data)))


def test_resuming_another_models_checkpoints_says_so(interrupted, tmp_path):
    features, _ = _data()
    with pytest.raises(DataError, match="this checkpoint belongs to another run") as e:
        DGAN(tiny_config(epochs=3)).train_numpy(
            features, progress_bar=False, resume_from=interrupted
        )  # the interrupted run had attributes
    assert "trained with attributes, this data has none" in str(e.value)
    assert "first trained" not in str(e.value)
    with pytest.raises(DataError, match="this checkpoint belongs to another run"):
        _train(tiny_config(epochs=3), data=(features[..., :1], _data()[1]), resume_from=interrupted)


def test_resume_with_other_columns_is_a_data_error(tmp_path):
    folder = str(tmp_path / "ckpt")
    df = pd.DataFrame({"kind": ["a", "b"] * 10, "t0": range(20), "t1": range(20)})
    config = tiny_config(max_sequence_len=2, sample_len=1, checkpoint_dir=folder)
    DGAN(config).train_dataframe(df, attribute_columns=["kind"], progress_bar=False)
    other = df.rename(columns={"t1": "t9"})
    with pytest.raises(DataError, match=r"belongs to another run.*columns"):
        DGAN(config).train_dataframe(
            other, attribute_columns=["kind"], progress_bar=False, resume_from=folder
        )


def test_a_fresh_run_refuses_a_folder_with_another_runs_checkpoints(interrupted):
    with pytest.raises(ParameterError, match="resume it with resume_from"):
        _train(tiny_config(epochs=2, checkpoint_dir=str(interrupted)))


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("others", [[4, 5, 6], [1, 2, 3]])
def test_a_resumed_run_never_writes_into_another_runs_folder(tmp_path, others):
    """--resume A --checkpoint-dir B, B holding another run's checkpoints: refused before
    training, B untouched (before: checkpoint 3 was written and pruned at once, or it
    replaced the other run's checkpoint 3)."""
    a, b = tmp_path / "a", tmp_path / "b"
    _train(tiny_config(epochs=2, checkpoint_dir=str(a)))
    other = tiny_config(epochs=others[-1], seed=1, checkpoint_dir=str(b), checkpoint_every=1)
    _train(other)
    assert [n for n, _ in list_checkpoints(b)] == others
    before = _contents(b)
    with pytest.raises(ParameterError, match="checkpoints of another training run"):
        _train(tiny_config(epochs=3, checkpoint_dir=str(b)), resume_from=a)
    assert _contents(b) == before


def test_two_runs_cannot_share_a_folder_and_the_refused_one_deletes_nothing(tmp_path):
    folder = tmp_path / "ckpt"
    config = tiny_config(epochs=2, checkpoint_dir=str(folder), checkpoint_every=1)
    refused = []

    def second_run_starts(info):  # while the first run trains, before its first checkpoint
        if (info.epoch, info.batch) != (0, 0):
            return
        writing = folder / ".checkpoint-000001.dgan.0123456789abcdef-ffffff.tmp"
        writing.write_bytes(b"the first run's checkpoint, half written")
        with pytest.raises(ParameterError, match="in use by another training run") as e:
            _train(dataclass_replace(config, seed=1))
        refused.append(str(e.value))
        assert writing.exists()
        writing.unlink()

    first = _train(config, progress_callback=second_run_starts)
    assert refused and f"process {os.getpid()}" in refused[0]
    assert [n for n, _ in list_checkpoints(folder)] == [1, 2]
    _assert_identical(first, DGAN.load(folder / "checkpoint-000002.dgan"))


def test_a_loaded_model_trained_again_leaves_the_runs_checkpoints_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # checkpoint_dir is relative, as a config file has it
    config = tiny_config(epochs=2, checkpoint_dir="ckpt", checkpoint_every=1)
    path = _train(config).save("model.dgan")
    before = _contents(tmp_path / "ckpt")
    features, attributes = _data()
    with pytest.raises(ParameterError, match="checkpoints of another training run"):
        DGAN.load(path).train_numpy(features, attributes=attributes, progress_bar=False)
    assert _contents(tmp_path / "ckpt") == before


def test_training_one_model_again_continues_its_own_checkpoints(tmp_path):
    folder = tmp_path / "ckpt"
    model = _train(tiny_config(epochs=2, checkpoint_dir=str(folder), checkpoint_every=1))
    features, attributes = _data()
    model.train_numpy(features, attributes=attributes, progress_bar=False)  # the same run
    assert [n for n, _ in list_checkpoints(folder)] == [2, 3, 4]


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_lock_file_that_is_a_link_is_refused_and_its_target_left_alone(tmp_path, link):
    """Before: a dgan.lock linking to a user's file was truncated and overwritten with
    the lock's JSON."""
    folder, mine = tmp_path / "ckpt", tmp_path / "notes.txt"
    folder.mkdir()
    mine.write_text("the user's own notes")
    (os.symlink if link == "symbolic" else os.link)(mine, folder / "dgan.lock")
    epochs = []
    with pytest.raises(ParameterError, match=f"dgan.lock' is a {link} link: dgan never writes"):
        _train(tiny_config(checkpoint_dir=str(folder)), progress_callback=epochs.append)
    assert mine.read_text() == "the user's own notes" and epochs == []
    assert list_checkpoints(folder) == []


def test_a_checkpoint_dir_that_cannot_be_a_folder_fails_before_training(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    for where in (tmp_path / "file", tmp_path / "file" / "below"):
        epochs = []
        with pytest.raises(ParameterError, match="cannot hold checkpoints"):
            _train(tiny_config(checkpoint_dir=str(where)), progress_callback=epochs.append)
        assert epochs == []  # refused before the first step


def test_resume_into_a_trained_model_is_refused(interrupted):
    model = _train(tiny_config())
    features, attributes = _data()
    with pytest.raises(ParameterError, match="new DGAN"):
        model.train_numpy(
            features, attributes=attributes, progress_bar=False, resume_from=interrupted
        )


@pytest.mark.parametrize(
    "change, field",
    [
        ({"epochs_done": -5}, "checkpoint.epochs_done must be an integer >= 0"),
        ({"epochs_done": "1"}, "checkpoint.epochs_done must be an integer >= 0"),
        ({"epochs_done": 2}, "must be the 1 epochs of history"),
        ({"steps_done": None}, "checkpoint.steps_done is missing"),
        ({"version": 3}, "checkpoint.version must be an integer from 1 to 2"),
        ({"cut": {"batches_done": 0}}, "checkpoint.cut.batches_done must be an integer >= 1"),
        ({"cut": []}, "checkpoint.cut must be an object"),
        ({"data_sha256": None}, "checkpoint.data_sha256 is missing"),
        ({"world_size": "1"}, "checkpoint.world_size must be an integer >= 1"),
        ({"history_offset": 1.0}, "checkpoint.history_offset must be an integer"),
        ({"stopped": "no"}, "checkpoint.stopped must be true or false"),
        ({"run_id": "../*"}, "checkpoint.run_id must be 8 to 64 lowercase hex digits"),
        ({"guard": {"same_as_model": False, "precision": {}}}, "guard.precision.in_effect"),
    ],
)
def test_a_forged_checkpoint_header_is_refused_naming_the_field(interrupted, change, field):
    from dgan.storage.format import read_model_file, write_model_file

    path = list_checkpoints(interrupted)[-1][1]
    tensors, state = read_model_file(path)
    run = {k: v for k, v in {**state["checkpoint"], **change}.items() if v is not None}
    write_model_file(path, tensors, {**state, "checkpoint": run})  # a valid checksum again
    with pytest.raises(SerializationError, match=re.escape(field)):
        _train(tiny_config(epochs=3), resume_from=interrupted)


def test_a_plain_model_file_is_not_a_checkpoint(tmp_path):
    path = _train(tiny_config()).save(tmp_path / "model.dgan")
    with pytest.raises(SerializationError, match="not a training checkpoint"):
        find_resume_point(path)


@pytest.mark.parametrize(
    "field, value",
    [("checkpoint_every", 0), ("checkpoint_keep", -1), ("checkpoint_every_minutes", 0),
     ("checkpoint_dir", 3), ("checkpoint_dir", "ck\0pt")],
)  # fmt: skip
def test_checkpoint_settings_are_validated(field, value):
    with pytest.raises(ParameterError, match=field):
        tiny_config(**{field: value})


def test_an_empty_checkpoint_dir_is_refused_when_training_starts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tiny_config(checkpoint_dir="")  # still loads from model files that hold it
    with pytest.raises(ParameterError, match="checkpoint_dir is empty"):
        _train(config)
    assert list(tmp_path.iterdir()) == []  # before: checkpoints in the current folder


def test_checkpoint_dir_accepts_a_path(tmp_path):
    assert tiny_config(checkpoint_dir=tmp_path).checkpoint_dir == str(tmp_path)


def test_checkpoint_every_minutes_writes_at_the_first_epoch_end_after_that_time(
    tmp_path, monkeypatch
):
    clock = iter(range(0, 10_000, 40))  # each reading of the clock is 40 s later
    monkeypatch.setattr("dgan.storage.checkpointer.time.monotonic", lambda: next(clock))
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
    budget = Budget.of(model.config, len(encoded.features))
    path = Checkpointer(parts, encoded, model.history, 0, budget).write(1)

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


# ----- budgets in steps and time ------------------------------------------------------------
class _Interrupt(Exception):
    pass


def test_a_budget_in_steps_resumes_bit_identical_through_its_partial_epoch(tmp_path):
    """A run of 12 steps (5 per epoch: epochs of 5, 5 and 2) interrupted inside its partial
    last epoch resumes from the checkpoint after epoch 2 and ends as if never stopped."""
    config = tiny_config(training_steps=12, seed=3)
    folder = tmp_path / "ckpt"
    with_checkpoints = dataclasses.replace(config, checkpoint_dir=str(folder), checkpoint_every=1)
    whole = _train(config)
    assert [h["steps"] for h in whole.history] == [5, 5, 2]

    def interrupt(info):
        if info.step == 11:  # the last step of the partial epoch
            raise _Interrupt

    with pytest.raises(_Interrupt):
        _train(with_checkpoints, progress_callback=interrupt)
    assert [n for n, _ in list_checkpoints(folder)] == [1, 2]
    resumed = _train(with_checkpoints, resume_from=folder)
    _assert_identical(whole, resumed)


def test_a_run_that_spent_its_time_budget_resumes_to_nothing_more(tmp_path):
    folder = tmp_path / "ckpt"
    config = tiny_config(epochs=5, training_minutes=1e-6, checkpoint_dir=str(folder))
    first = _train(config)
    assert first.history[-1]["time_budget_reached"] and first.trainer.steps_done == 1
    assert [n for n, _ in list_checkpoints(folder)] == [1]  # written where time ran out
    again = _train(config, resume_from=folder)
    assert again.trainer.steps_done == 1 and len(again.history) == 1


def test_a_time_budget_cut_resumes_the_rest_of_the_cut_epoch(tmp_path):
    """Before: the resumed run went on at the next epoch; the 4 batches of epoch 0 that
    time had cut off were never trained (and the history said 5 epochs)."""
    folder = tmp_path / "ckpt"
    config = tiny_config(epochs=5, training_minutes=1e-6, checkpoint_dir=str(folder))
    _train(config)  # cut after the first of the 5 batches of epoch 0
    more_time = dataclasses.replace(config, training_minutes=60.0)
    longer = _train(more_time, resume_from=folder)
    assert longer.trainer.steps_done == 25 == sum(h["steps"] for h in longer.history)
    assert [h["epoch"] for h in longer.history] == [0, 1, 2, 3, 4]
    assert not any(h.get("time_budget_reached") for h in longer.history)
    _assert_identical(longer, _train(tiny_config(epochs=5)))  # as if never cut


def test_a_step_budget_resumed_with_a_larger_one_is_bit_identical_to_one_run(tmp_path):
    """Before: training_steps=10 resumed with 20 trained 18 steps (the steps left in the
    cut epoch were lost) and differed from an uninterrupted 20-step run."""
    folder = str(tmp_path / "ckpt")
    first = _train(tiny_config(training_steps=7, checkpoint_dir=folder))
    assert [h["steps"] for h in first.history] == [5, 2]  # cut after 2 of 5 batches
    point = find_resume_point(folder)
    assert (point.record.epochs_done, point.record.steps_done) == (1, 7)
    assert point.record.cut.batches_done == 2 and len(point.record.cut.permutation) == 40
    resumed = _train(tiny_config(training_steps=20, checkpoint_dir=folder), resume_from=folder)
    assert resumed.trainer.steps_done == 20 and [h["steps"] for h in resumed.history] == [5] * 4
    _assert_identical(resumed, _train(tiny_config(training_steps=20)))
    assert [n for n, _ in list_checkpoints(folder)] == [2, 4]  # 2: the cut one
    same = _train(tiny_config(training_steps=20, checkpoint_dir=folder), resume_from=folder)
    assert same.trainer.steps_done == 20 and len(same.history) == 4  # nothing left
    with pytest.raises(
        ParameterError,
        match=r"trained 4 epochs \(20 optimizer steps\) already.* training_steps=20 or",
    ):
        _train(tiny_config(training_steps=19), resume_from=folder)


def test_a_checkpoint_of_the_previous_format_still_resumes(tmp_path, caplog):
    """Format-2 checkpoints hold version-1 resume records (run_epochs_done, which counted
    a cut epoch as whole) and configs without the record of the fields set: they load and
    resume as they did, from the next epoch, saying that the cut epoch's rest is lost."""
    from dgan.storage.format import read_model_file, write_model_file

    folder = tmp_path / "ckpt"
    _train(tiny_config(training_steps=7, checkpoint_dir=str(folder)))
    path = list_checkpoints(folder)[-1][1]
    tensors, state = read_model_file(path)
    new = state["checkpoint"]
    old = {
        "run_epochs_done": 2,
        **{k: new[k] for k in ("history_offset", "data_sha256", "examples", "world_size")},
        **{k: new[k] for k in ("stopped", "guard", "run_id")},
    }
    config = {k: v for k, v in state["config"].items() if k != "_given"}
    tensors = {k: v for k, v in tensors.items() if not k.startswith("cut.")}
    state = {**state, "checkpoint": old, "config": config, "format_version": 2}
    write_model_file(path, tensors, state)
    assert DGAN.load(path).config.training_steps == 7
    with caplog.at_level(logging.WARNING, logger="dgan.storage.checkpoint"):
        resumed = _train(tiny_config(training_steps=12), resume_from=folder)
    assert "its rest is not trained" in caplog.text
    assert resumed.trainer.steps_done == 7 + 2  # from epoch 2: 12 - 2 * 5 steps more


def test_a_cut_epoch_saved_before_the_envelope_loss_still_resumes_exactly(tmp_path):
    """A cut epoch's loss sums written before the envelope critic's loss existed (one
    fewer) resume as if that loss had summed nothing: the same model as one run."""
    from dgan.storage.format import read_model_file, write_model_file

    folder = tmp_path / "ckpt"
    _train(tiny_config(training_steps=7, checkpoint_dir=str(folder)))
    path = list_checkpoints(folder)[-1][1]
    tensors, state = read_model_file(path)
    assert tensors["cut.loss_sums"][-1] == 0  # no envelope critic
    write_model_file(path, {**tensors, "cut.loss_sums": tensors["cut.loss_sums"][:-1]}, state)
    resumed = _train(tiny_config(training_steps=20, checkpoint_dir=str(folder)),
                     resume_from=str(folder))  # fmt: skip
    _assert_identical(resumed, _train(tiny_config(training_steps=20)))


@pytest.fixture
def weather_csv(tmp_path) -> Path:
    from dgan.datasets import load_demo

    data = tmp_path / "weather.csv"
    load_demo().head(28 * 16).to_csv(data, index=False)  # 16 series of 28 days
    tiny = "\n".join(f"{k} = {v}" for k, v in TINY_NETWORKS.items())
    (tmp_path / "tiny.toml").write_text(tiny + "\ncuda = false\n")
    return data


def _cli_train(data: Path, *flags: str) -> list[str]:
    return [
        "train", str(data), "--example-id", "example_id", "--time", "day",
        "--attributes", "month", "--batch-size", "8", "--seed", "0",
        "--config", str(data.parent / "tiny.toml"), *flags,
    ]  # fmt: skip


def test_command_line_checks_checkpoint_paths_before_reading_the_data(
    weather_csv, tmp_path, capsys
):
    from dgan.cli.main import main

    folder, out = tmp_path / "c1d", str(tmp_path / "a.dgan")
    misspelt = folder / "checkpoint-00002.dgan"  # one digit short
    assert main(_cli_train(weather_csv, "-o", out, "--resume", str(misspelt))) == 1
    out_err = capsys.readouterr()
    assert f"dgan: error: --resume {str(misspelt)!r}: there is no such checkpoint" in out_err.err
    assert "inferred" not in out_err.out  # the data was never read
    assert not misspelt.exists()

    (tmp_path / "file").write_text("")
    for where in ("file", "file/below"):
        flags = ["-o", out, "--checkpoint-dir", str(tmp_path / where)]
        assert main(_cli_train(weather_csv, *flags)) == 1
        out_err = capsys.readouterr()
        assert "dgan: error: --checkpoint-dir" in out_err.err and "inferred" not in out_err.out


def test_command_line_resumes_from_a_checkpoint_file_into_its_folder(weather_csv, tmp_path):
    from dgan.cli.main import main

    folder = tmp_path / "ckpt"
    flags = ["--checkpoint-dir", str(folder), "--checkpoint-every", "1"]
    first_run = _cli_train(weather_csv, "-o", str(tmp_path / "a.dgan"), "--epochs", "2")
    assert main([*first_run, *flags]) == 0
    first = str(folder / "checkpoint-000001.dgan")
    resumed = _cli_train(weather_csv, "-o", str(tmp_path / "b.dgan"), "--epochs", "2")
    # checkpoint 2 of the same run is there: resuming from 1 would make a second future
    assert main([*resumed, "--resume", first]) == 1
    (folder / "checkpoint-000002.dgan").unlink()
    assert main([*resumed, "--resume", first]) == 0
    assert [n for n, _ in list_checkpoints(folder)] == [1, 2]


def test_command_line_resumes_a_step_budget_to_a_larger_one(weather_csv, tmp_path, capsys):
    """Before: --training-steps 10 resumed with --training-steps 12 (4 steps per epoch)
    said "nothing is left to train" and saved a model claiming 12 steps with 10 done."""
    from dgan.cli.main import main

    folder = str(tmp_path / "ckpt")
    flags = ["--batch-size", "4", "--checkpoint-dir", folder]  # 16 series: 4 steps per epoch
    first = _cli_train(weather_csv, "-o", str(tmp_path / "a.dgan"), "--training-steps", "10")
    assert main([*first, *flags]) == 0
    capsys.readouterr()
    more = _cli_train(weather_csv, "-o", str(tmp_path / "b.dgan"), "--training-steps", "12")
    assert main([*more, *flags, "--resume", folder]) == 0
    out = capsys.readouterr().out
    assert "10 of 12 steps trained (2 epochs and 2 of 4 steps), 2 left" in out
    assert "resuming after epoch 2 and 2 of 4 steps: 1 epoch left (2 steps)" in out
    assert "trained epoch 2 (1 epoch) on 16 series" in out
    model = DGAN.load(tmp_path / "b.dgan")
    assert model.trainer.steps_done == 12 == sum(h["steps"] for h in model.history)
    assert model.config.training_steps == 12


def test_command_line_summary_counts_the_series_and_names_a_spent_time_budget(
    weather_csv, tmp_path, capsys
):
    """Before: the summary counted series as throughput x time of the last epoch ("on 8
    series" for 16 when that epoch was half a budget's), and after a spent
    --training-minutes the resumed run advised "a larger --epochs"."""
    from dgan.cli.main import main

    folder = str(tmp_path / "ckpt")
    flags = ["--checkpoint-dir", folder, "--training-minutes", "0.000001"]  # one step
    first = _cli_train(weather_csv, "-o", str(tmp_path / "a.dgan"), "--epochs", "3")
    assert main([*first, *flags]) == 0  # 2 steps per epoch: the first epoch is cut in half
    assert "trained 1 epoch on 16 series in " in capsys.readouterr().out
    again = _cli_train(weather_csv, "-o", str(tmp_path / "b.dgan"), "--epochs", "4")
    assert main([*again, *flags, "--resume", folder]) == 0
    out = capsys.readouterr().out
    spent = "its time budget, --training-minutes 1e-06 of the whole run's training, is spent"
    assert f"nothing is left to train: {spent}" in out  # the resume note
    assert "nothing left to train: the model had trained 1 epoch (" in out and spent in out
    assert "--epochs" not in out.split("nothing left to train")[1]
