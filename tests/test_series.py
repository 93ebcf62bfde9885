"""`SeriesRows` and what large data relies on: no copy of the user's array, one digest
per training, and a clear error when the data will not fit in memory."""

from __future__ import annotations

import hashlib
import types

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.tiny import tiny_config

from dgan import DGAN, DGANConfig
from dgan.encoding import encoded as encoded_module
from dgan.encoding.encoder import EncodedData
from dgan.errors import DataError
from dgan.prepare import ArraySource, prepare
from dgan.series import SeriesRows
from dgan.train import memory
from dgan.train.batch import Batch


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=12), st.integers(1, 40))
def test_chunks_padding_and_take_keep_every_series_whole(lengths, chunk_rows):
    rng = np.random.default_rng(len(lengths))
    series = [rng.normal(size=(length, 2)) for length in lengths]
    data = SeriesRows.from_list(series)
    assert [s.tolist() for s in data] == [s.tolist() for s in series]
    firsts, parts = zip(*data.chunks(rows=chunk_rows), strict=True)
    assert [s.tolist() for part in parts for s in part] == [s.tolist() for s in series]
    assert list(firsts) == np.cumsum([0, *[len(p) for p in parts[:-1]]]).tolist()
    padded = data.padded(max(lengths), fill=np.nan)
    for k, s in enumerate(series):
        assert padded[k, : len(s)].tolist() == s.tolist()
        assert np.isnan(padded[k, len(s) :]).all()
    keep = rng.random(len(lengths)) < 0.5
    assert [s.tolist() for s in data.take(keep)] == [
        s.tolist() for s, k in zip(series, keep, strict=True) if k
    ]
    assert data.per_row(np.arange(len(lengths))).tolist() == data.example_of_row().tolist()


def test_a_float_array_is_checked_and_encoded_without_a_copy_and_left_unchanged():
    features = np.random.default_rng(0).random((6, 4, 2), dtype=np.float32)
    before = features.copy()
    checked = ArraySource(features).check(4)
    assert np.shares_memory(checked.arrays.features.rows, features)  # no second copy
    assert not checked.arrays.features.rows.flags.writeable  # and dgan cannot write to it
    prepare(checked, DGANConfig(max_sequence_len=4, sample_len=2))
    assert features.flags.writeable and np.array_equal(features, before)


def _old_digest(data: EncodedData) -> str:
    """The digest as checkpoints written before issue 35 hold it (bytes via tobytes)."""
    digest = hashlib.sha256()
    for name in ("attributes", "additional_attributes", "features", "lengths"):
        array = getattr(data, name)
        if array is None:
            digest.update(f"{name}|none|".encode())
            continue
        array = np.ascontiguousarray(array)
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def test_the_digest_is_the_one_older_checkpoints_hold():
    rng = np.random.default_rng(1)
    data = EncodedData(
        rng.random((5, 3), dtype=np.float32),
        None,
        rng.random((5, 4, 2), dtype=np.float32)[:, ::-1],  # not contiguous
        np.array([4, 4, 3, 2, 4]),
    )
    assert data.digest() == _old_digest(data)


def test_training_with_checkpoints_and_resuming_hash_the_data_once_each(tmp_path, monkeypatch):
    calls = []
    real = hashlib.sha256

    def counting(*args):
        calls.append(1)
        return real(*args)

    # Only the encoder's hashlib: model files have digests of their own.
    monkeypatch.setattr(encoded_module, "hashlib", types.SimpleNamespace(sha256=counting))
    features = np.random.default_rng(2).random((16, 6, 1))
    config = tiny_config(epochs=2, checkpoint_dir=str(tmp_path), checkpoint_every=1)
    DGAN(config).train_numpy(features, progress_bar=False)
    assert len(calls) == 1
    calls.clear()
    DGAN(tiny_config(epochs=3, checkpoint_dir=str(tmp_path), checkpoint_every=1)).train_numpy(
        features, progress_bar=False, resume_from=tmp_path
    )
    assert len(calls) == 1  # the resume check and the new checkpoints share it


def test_data_too_large_for_memory_is_one_error_before_training(monkeypatch):
    monkeypatch.setattr(memory, "available_memory_bytes", lambda device: 1000)
    model = DGAN(tiny_config(epochs=1))
    features = np.random.default_rng(3).random((40, 6, 2))
    with pytest.raises(DataError) as error:
        model.train_numpy(features, progress_bar=False)
    message = str(error.value)
    assert "40 series x 6 steps" in message and "fewer series" in message
    assert "max_sequence_len" in message and "torchrun" in message
    assert not model.history


def test_data_too_large_for_the_device_is_an_error_before_moving_it(monkeypatch):
    monkeypatch.setattr(memory, "available_memory_bytes", lambda device: 10)
    data = EncodedData(None, None, np.zeros((8, 4, 3), np.float32), np.full(8, 4))
    with pytest.raises(DataError, match="8 series x 4 steps x 3 encoded values"):
        Batch.from_encoded(data, torch.device("meta"))
    assert Batch.from_encoded(data, "cpu").features.shape == (8, 4, 3)  # shares memory


def test_dgan_train_checks_the_table_once_for_its_two_plans(tmp_path, monkeypatch, capsys):
    """The batch-size plan and the printed plan share one check; training does its own."""
    from dgan.cli.main import main
    from dgan.tabular import frames

    calls = []
    real = frames.dataframe_to_arrays

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("dgan.prepare.dataframe_to_arrays", counting)
    rng = np.random.default_rng(4)
    table = tmp_path / "data.csv"
    pd.DataFrame(
        {"id": np.repeat(np.arange(30), 4), "t": np.tile(np.arange(4), 30), "x": rng.random(120)}
    ).to_csv(table, index=False)
    argv = ["train", str(table), "-o", str(tmp_path / "m.dgan"), "--example-id", "id"]
    argv += ["--time", "t", "--epochs", "1", "--config", str(tmp_path / "tiny.json")]
    (tmp_path / "tiny.json").write_text(
        '{"feature_num_units": 8, "attribute_num_units": 8, "discriminator_num_units": 8}'
    )
    assert main(argv) == 0
    assert len(calls) == 2  # was 3: each plan checked the table again
