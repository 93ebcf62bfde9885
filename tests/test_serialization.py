"""Saving and loading models: one safetensors file, never a pickle, exact round trips."""

from __future__ import annotations

import copy
import json
import os
import pickle
import stat
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import save_file

from dgan import DGAN, DfStyle, DGANConfig, OutputType
from dgan.errors import ParameterError, SerializationError
from dgan.storage.format import (
    DIGEST_KEY,
    FORMAT_VERSION,
    MAX_HEADER_DEPTH,
    file_digest,
    read_model_file,
    tensors_digest,
    write_model_file,
)
from model_files import rewritten
from tiny import tiny_config


def _config(**kw) -> DGANConfig:
    return tiny_config(
        **{"max_sequence_len": 4, "sample_len": 2, "batch_size": 16, "seed": 3, **kw}
    )


def _mixed_data(rng, n: int = 24):
    """Variable-length series with a continuous and a discrete feature, mixed attributes."""
    features = []
    for _ in range(n):
        length = int(rng.integers(2, 5))
        steps = np.empty((length, 2), dtype=object)
        steps[:, 0] = rng.normal(size=length)
        steps[:, 1] = rng.choice(["up", "down"], size=length)
        features.append(steps)
    attributes = np.empty((n, 2), dtype=object)
    attributes[:, 0] = rng.choice(["a", "b", "c"], size=n)
    attributes[:, 1] = rng.uniform(1, 5, size=n)
    return features, attributes


def _train(rng) -> tuple[DGAN, list, np.ndarray]:
    features, attributes = _mixed_data(rng)
    model = DGAN(_config())
    model.train_numpy(features, attributes=attributes, progress_bar=False)
    return model, features, attributes


@pytest.fixture(scope="module")
def trained() -> tuple[DGAN, list, np.ndarray]:
    """A small trained model, shared: tests may save and generate, but not train it."""
    return _train(np.random.default_rng(12345))


@pytest.fixture
def saved(trained, tmp_path):
    model = trained[0]
    return model, model.save(tmp_path / "model.dgan")


def _write_raw(path, tensors, header, digest=True):
    """Write a model file with any ``header`` (a dict, NaN allowed, or JSON text) and,
    unless ``digest`` is False, a valid checksum: as if a buggy or hostile writer made it."""
    text = header if isinstance(header, str) else json.dumps(header)
    metadata = {"dgan": text}
    if digest:
        metadata[DIGEST_KEY] = file_digest(metadata, tensors)
    save_file(tensors, path, metadata=metadata)


def _edit_header(path, edit):
    """Edit the JSON header in place and rewrite the file with a valid checksum."""
    tensors, state = read_model_file(path)
    edit(state)
    _write_raw(path, tensors, state)


TIMING = ("examples_per_s", "wall_time_s", "peak_memory_bytes")  # measurements, not state


def _same_output(a: DGAN, b: DGAN, n: int = 7) -> None:
    rng = np.random.default_rng(0)
    c = a.config
    attribute_noise = rng.normal(size=(n, c.attribute_noise_dim))
    feature_noise = rng.normal(size=(n, c.max_sequence_len // c.sample_len, c.feature_noise_dim))
    first = a.generate_numpy(attribute_noise=attribute_noise, feature_noise=feature_noise)
    second = b.generate_numpy(attribute_noise=attribute_noise, feature_noise=feature_noise)
    assert first[0].tolist() == second[0].tolist()
    assert [s.tolist() for s in first[1]] == [s.tolist() for s in second[1]]


# ------------------------------------------------------------------ round trips


def test_loaded_model_generates_exactly_what_the_saved_one_did(saved):
    model, path = saved
    loaded = DGAN.load(path)
    assert loaded.config == model.config and loaded.history == model.history
    _same_output(model, loaded)
    # The generation RNG is restored too: fresh noise is the same noise.
    assert [s.tolist() for s in model.generate_numpy(5)[1]] == [
        s.tolist() for s in loaded.generate_numpy(5)[1]
    ]


def test_training_continues_after_load_bit_for_bit(rng, tmp_path):
    model, features, attributes = _train(rng)
    loaded = DGAN.load(model.save(tmp_path / "model.dgan"))
    for m in (model, loaded):
        m.train_numpy(features, attributes=attributes, progress_bar=False)

    assert [h["epoch"] for h in loaded.history] == [0, 1]  # the history continues

    def without_timing(history):
        return [{k: v for k, v in h.items() if k not in TIMING} for h in history]

    assert without_timing(loaded.history) == without_timing(model.history)
    twins = loaded.trainer.modules(), loaded.trainer.optimizers()
    for name, module in model.trainer.modules().items():
        optimizer = model.trainer.optimizers()[name]
        twin = twins[0][name], twins[1][name]
        for p, q in zip(module.state_dict().values(), twin[0].state_dict().values(), strict=True):
            assert torch.equal(p, q), name
        moments = optimizer.state_dict()["state"]
        for index, values in twin[1].state_dict()["state"].items():
            assert all(torch.equal(values[k], moments[index][k]) for k in values), name
    _same_output(model, loaded)


def test_dataframe_model_round_trip_keeps_layout_and_dtypes(rng, tmp_path):
    n, length = 12, 3
    df = pd.DataFrame(
        {
            "sensor": np.repeat([f"s{i}" for i in range(n)], length),
            "when": np.tile(pd.date_range("2024-03-01", periods=length, freq="h"), n),
            "kind": pd.Categorical(np.repeat(rng.choice(["x", "y"], n), length)),
            "level": rng.normal(size=n * length),
            "count": rng.integers(0, 9, size=n * length).astype("int32"),
        }
    )
    model = DGAN(_config(max_sequence_len=length, sample_len=1))
    model.train_dataframe(
        df,
        attribute_columns=["kind"],
        example_id_column="sensor",
        time_column="when",
        df_style=DfStyle.LONG,
        progress_bar=False,
    )
    loaded = DGAN.load(model.save(tmp_path / "frame.dgan"))
    noise = (model.attribute_noise_func(4), model.feature_noise_func(4))
    expected = model.generate_dataframe(attribute_noise=noise[0], feature_noise=noise[1])
    got = loaded.generate_dataframe(attribute_noise=noise[0], feature_noise=noise[1])
    pd.testing.assert_frame_equal(got, expected)
    assert expected.dtypes.to_dict() == df.dtypes.to_dict()
    # Continuing training with the same frame works on the loaded model.
    loaded.train_dataframe(
        df,
        attribute_columns=["kind"],
        example_id_column="sensor",
        time_column="when",
        df_style=DfStyle.LONG,
        progress_bar=False,
    )
    assert len(loaded.history) == 2


def test_save_leaves_no_temporary_files_and_overwrites(saved):
    model, path = saved
    model.save(path)
    assert [p.name for p in path.parent.iterdir()] == [path.name]


# A process killed (os._exit: no cleanup) while a checkpoint's bytes are being written: a
# watcher thread kills it at the first file in the folder that is not the empty temporary
# dgan creates first (its name carries the run's tag), e.g. one safetensors makes itself.
KILLED_WHILE_WRITING = """
import os, sys, threading, torch
from pathlib import Path
from dgan.storage.format import write_model_file

folder = Path(sys.argv[1])
path = folder / "checkpoint-000001.dgan"

def watch():
    while True:
        for entry in os.scandir(folder):
            ours = entry.name.startswith(".checkpoint-000001.dgan.feedfacefeedface-")
            if not ours or entry.stat().st_size > 0:
                os._exit(9)

threading.Thread(target=watch, daemon=True).start()
write_model_file(path, {"w": torch.zeros(25_000_000)}, {}, tag="feedfacefeedface-")
os._exit(0)  # the write ended before the watcher saw it: nothing was left to see
"""


def test_a_write_killed_midway_leaves_only_its_own_temporary(tmp_path):
    """Before: safetensors' save_file wrote through its own ``.tmpXXXXXX`` file, which a
    process killed during the write left in the checkpoint folder (the size of the
    model), where no run could tell it was its own."""
    import subprocess

    script = tmp_path / "write.py"
    script.write_text(KILLED_WHILE_WRITING)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    src = str(Path(__file__).parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(script), str(folder)], env=env, timeout=240)
    assert done.returncode in (0, 9)
    left = [p.name for p in folder.iterdir()]
    assert all(n.startswith(".checkpoint-000001.dgan.feedfacefeedface-") for n in left), left


# ------------------------------------------------------- untrusted or broken files


class _PlantMarker:
    """Unpickling this creates a file: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize(
    "write, kind",
    [
        (lambda obj, p: p.write_bytes(pickle.dumps(obj)), "is a pickle"),
        (lambda obj, p: torch.save({"model": obj}, p), "is a zip archive"),
        (
            lambda obj, p: torch.save(obj, p, _use_new_zipfile_serialization=False),
            "is a pickle",
        ),
    ],
    ids=["pickle", "torch.save", "legacy-torch.save"],
)
def test_a_malicious_pickle_is_refused_without_running_it(tmp_path, write, kind):
    marker = tmp_path / "code-ran"
    path = tmp_path / "model.pt"
    write(_PlantMarker(marker), path)
    assert not marker.exists()
    with pytest.raises(SerializationError, match=rf"{kind}.*never unpickles") as error:
        DGAN.load(path)
    assert "gretel-synthetics" in str(error.value)
    assert not marker.exists()


def test_loading_never_calls_the_unpickler(saved, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("loading a model must not unpickle")

    for module, name in [
        (pickle, "load"),
        (pickle, "loads"),
        (pickle, "Unpickler"),
        (torch, "load"),
    ]:
        monkeypatch.setattr(module, name, refuse)
    DGAN.load(saved[1]).generate_numpy(2)


def test_truncated_files_are_clear_errors(saved, tmp_path):
    data = saved[1].read_bytes()
    for cut in [0, 5, 100, len(data) // 2, len(data) - 1]:
        path = tmp_path / f"cut{cut}.dgan"
        path.write_bytes(data[:cut])
        with pytest.raises(SerializationError, match=r"not a readable dgan model file.*truncated"):
            DGAN.load(path)


def test_corrupted_tensor_bytes_are_detected(saved, tmp_path):
    data = bytearray(saved[1].read_bytes())
    data[-20] ^= 0xFF  # a weight, deep in the data section: safetensors alone loads this
    path = tmp_path / "flipped.dgan"
    path.write_bytes(bytes(data))
    with pytest.raises(SerializationError, match=r"is corrupted.*checksum"):
        DGAN.load(path)


def test_corrupted_header_is_a_clear_error(saved, tmp_path):
    data = bytearray(saved[1].read_bytes())
    data[9:14] = b"#####"  # inside the JSON header
    path = tmp_path / "header.dgan"
    path.write_bytes(bytes(data))
    with pytest.raises(SerializationError, match="not a readable dgan model file"):
        DGAN.load(path)


def test_newer_format_version_asks_for_an_upgrade(saved):
    path = saved[1]
    _edit_header(path, lambda s: s.update(format_version=FORMAT_VERSION + 1))
    with pytest.raises(SerializationError, match=rf"version {FORMAT_VERSION + 1}.*upgrade dgan"):
        DGAN.load(path)


def test_other_safetensors_files_and_missing_files_are_clear_errors(tmp_path):
    from safetensors.torch import save_file

    plain = tmp_path / "weights.safetensors"
    save_file({"w": torch.ones(2)}, plain)
    with pytest.raises(SerializationError, match="not a dgan model"):
        DGAN.load(plain)
    save_file({"w": torch.ones(2)}, plain, metadata={"dgan": "[1, 2]"})
    with pytest.raises(SerializationError, match="not a dgan model file"):
        DGAN.load(plain)
    with pytest.raises(SerializationError, match=r"No model file at .*check the path"):
        DGAN.load(tmp_path / "nothing-here.dgan")


def test_inconsistent_contents_are_a_serialization_error(saved):
    path = saved[1]
    with rewritten(path) as (tensors, _):
        tensors.pop(next(k for k in tensors if k.startswith("generator.")))
    with pytest.raises(SerializationError, match=r"incomplete or inconsistent.*save it again"):
        DGAN.load(path)


# ---------------------------------------------------------------- across devices


def test_map_location_must_be_a_device_this_machine_has(saved):
    with pytest.raises(ParameterError, match=r"map_location='gpu' is not a device"):
        DGAN.load(saved[1], map_location="gpu")
    assert DGAN.load(saved[1], map_location="cpu").device.type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ParameterError, match=r"no usable CUDA device.*map_location='cpu'"):
            DGAN.load(saved[1], map_location="cuda")


CUDA_SCALE = 2.0**11  # a dynamic scale that has backed off from 2**14


def _cuda_state(state):
    """What a CUDA fp16 run writes in the JSON: fused Adam, cuda=True, precision fp16 in
    effect with its loss scalers' state."""
    for optimizer in state["optimizers"].values():
        for group in optimizer["param_groups"]:
            group["fused"] = True
            group["foreach"] = True  # stands for any option of CUDA's that the CPU has not
    state["config"]["cuda"] = True
    state["config"]["precision"] = "fp16"
    scaler = {
        "scale": CUDA_SCALE,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "_growth_tracker": 5,
    }
    state["precision"] = {"in_effect": "fp16", "critic_scaler": scaler, "generator_scaler": scaler}


def _cuda_rng_states(tensors):
    """What a CUDA run writes for its random generators (seed and offset)."""
    for stream in ("train", "generate"):
        tensors.pop(f"rng.cpu.{stream}")
        tensors[f"rng.cuda.{stream}"] = torch.arange(16, dtype=torch.uint8)


def test_a_cuda_trained_file_loads_and_trains_on_cpu(trained, tmp_path):
    model, features, attributes = trained
    path = model.save(tmp_path / "cuda.dgan")
    with rewritten(path) as (tensors, state):
        _cuda_state(state)
        _cuda_rng_states(tensors)

    loaded = DGAN.load(path, map_location="cpu" if torch.cuda.is_available() else None)
    assert loaded.device.type == "cpu" and loaded.config.cuda
    _same_output(model, loaded)
    optimizer = loaded.trainer.generator_opt
    assert optimizer.param_groups[0]["foreach"] is None  # the CPU's way of stepping, not CUDA's
    policy = loaded.trainer.policy  # fp16 autocast runs on CPUs too: training goes on in it
    assert policy.precision.value == "fp16"
    assert policy.critic_scaler.get_scale() == policy.generator_scaler.get_scale() == CUDA_SCALE
    loaded.train_numpy(features, attributes=attributes, progress_bar=False)
    assert [h["epoch"] for h in loaded.history] == [0, 1]
    assert np.isfinite(loaded.history[-1]["generator_loss"])
    assert loaded.history[-1]["precision"] == "fp16"


@pytest.fixture
def no_tf32(monkeypatch):
    """GPU results within float32 rounding of the CPU's (cuDNN's LSTM uses TF32 by default)."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)


@pytest.mark.gpu
def test_model_trained_on_cuda_loads_on_cpu(rng, tmp_path, no_tf32):
    features, attributes = _mixed_data(rng)
    model = DGAN(_config(cuda=True))
    model.train_numpy(features, attributes=attributes, progress_bar=False)
    assert model.device.type == "cuda"
    path = model.save(tmp_path / "gpu.dgan")
    assert {k.split(".")[1] for k in read_model_file(path)[0] if k.startswith("rng.")} == {"cuda"}

    on_cpu = DGAN.load(path, map_location="cpu")
    assert on_cpu.device.type == "cpu"
    assert all(p.device.type == "cpu" for p in on_cpu.generator.parameters())
    assert on_cpu.trainer.generator_opt.param_groups[0]["fused"]  # the CPU's own fused Adam
    noise = (model.attribute_noise_func(6), model.feature_noise_func(6))  # on the GPU
    expected = model.generate_numpy(attribute_noise=noise[0], feature_noise=noise[1])
    got = on_cpu.generate_numpy(attribute_noise=noise[0].cpu(), feature_noise=noise[1].cpu())
    assert got[0][:, 0].tolist() == expected[0][:, 0].tolist()
    np.testing.assert_allclose(
        got[0][:, 1].astype(float), expected[0][:, 1].astype(float), rtol=1e-4
    )
    assert [len(s) for s in got[1]] == [len(s) for s in expected[1]]
    for a, b in zip(got[1], expected[1], strict=True):
        np.testing.assert_allclose(a[:, 0].astype(float), b[:, 0].astype(float), rtol=1e-3)
    on_cpu.train_numpy(features, attributes=attributes, progress_bar=False)
    assert len(on_cpu.history) == 2 and np.isfinite(on_cpu.history[-1]["generator_loss"])


@pytest.mark.gpu
def test_model_trained_on_cpu_loads_and_trains_on_cuda(saved, trained):
    _, features, attributes = trained
    on_gpu = DGAN.load(saved[1], map_location="cuda")
    assert on_gpu.device.type == "cuda"
    assert on_gpu.trainer.generator_opt.param_groups[0]["fused"]  # the GPU's fused Adam
    on_gpu.train_numpy(features, attributes=attributes, progress_bar=False)
    assert len(on_gpu.history) == 2 and np.isfinite(on_gpu.history[-1]["generator_loss"])


def test_category_types_survive_the_round_trip(tmp_path, rng):
    features = np.empty((12, 4, 2), dtype=object)
    features[:, :, 0] = rng.integers(0, 3, size=(12, 4))
    features[:, :, 1] = rng.choice([True, False], size=(12, 4))
    attributes = rng.choice(["x", "y"], size=(12, 1))
    model = DGAN(_config())
    model.train_numpy(
        features, feature_types=[OutputType.DISCRETE] * 2, attributes=attributes, progress_bar=False
    )
    loaded = DGAN.load(model.save(tmp_path / "types.dgan"))
    generated_attributes, series = loaded.generate_numpy(20)
    values = np.concatenate(series)
    assert {type(v) for v in values[:, 0]} == {int} and set(values[:, 0]) <= {0, 1, 2}
    assert {type(v) for v in values[:, 1]} == {bool}
    assert set(generated_attributes[:, 0]) <= {"x", "y"}


# ------------------------------------------ issue 10: header integrity and schema


def test_a_flipped_digit_in_the_header_is_detected(saved, tmp_path):
    # The old checksum covered the tensors only: this file loaded and every generated
    # value of the feature moved.
    model, path = saved
    data = path.read_bytes()
    recorded = repr(model.encoder.feature_encoders[0].max).encode()
    key = b'\\"max\\": '  # the header is JSON text inside safetensors' JSON: quotes escaped
    at = data.index(key + recorded) + len(key) + len(recorded) - 1  # its last digit
    flipped = bytearray(data)
    flipped[at] = ord("7") if data[at] != ord("7") else ord("3")
    bad = tmp_path / "flipped-max.dgan"
    bad.write_bytes(bytes(flipped))
    with pytest.raises(SerializationError, match=r"is corrupted.*checksum"):
        DGAN.load(bad)


def _set(*keys, value):
    """An edit that sets state[k0][k1]... = value."""

    def edit(state):
        target = state
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


def _drop(key):
    return lambda state: state.pop(key)


def _invert_range(state):
    encoder = state["encoder"]["feature_encoders"][0]
    encoder["min"], encoder["max"] = encoder["max"] + 1, encoder["min"]


@pytest.mark.parametrize(
    "edit, message",
    [
        (_invert_range, r"encoder\.feature_encoders\[0\]\.min=.* is above its max"),
        (
            _set("encoder", "feature_encoders", 0, "min", value=None),
            r"encoder\.feature_encoders\[0\]\.min must be a finite number, got None",
        ),
        (
            _set("encoder", "attribute_encoders", 1, "max", value=float("inf")),
            r"encoder\.attribute_encoders\[1\]\.max must be a finite number, got inf",
        ),
        (
            _set("encoder", "feature_encoders", 1, "categories", value=["up", "up"]),
            r"categories\[1\]='up' is listed twice",
        ),
        (
            _set("encoder", "max_sequence_len", value=8),
            r"encoder\.max_sequence_len=8 differs from config\.max_sequence_len",
        ),
        (
            _set("encoder", "additional_encoders", value=[]),
            r"encoder\.additional_encoders must be 2 continuous encoders",
        ),
        (
            _set("encoder", "fill_range", value="yes"),
            r"encoder\.fill_range must be true, false or 'auto', got 'yes'",
        ),
        (_set("format_version", value=-7), r"format_version must be a positive integer, got -7"),
        (
            _set("format_version", value=True),
            r"format_version must be a positive integer, got True",
        ),
        (_set("history", value={"epoch": 0}), r"history must be a list, got \{'epoch': 0\}"),
        (_set("history", value=["x"]), r"history\[0\] must be an object, got 'x'"),
        (
            _set("history", 0, "epoch", value=-1),
            r"history\[0\]\.epoch must be an integer >= 0, got -1",
        ),
        (
            _set("history", 0, "in_hardware", value="yes"),
            r"history\[0\]\.in_hardware must be true, false or null, got 'yes'",
        ),
        (
            _set("config", "gradient_penalty_coef", value=float("nan")),
            r"config is invalid \(gradient_penalty_coef must be a finite number",
        ),
        (
            _set("config", "mixed_precision_training", value="false"),
            r"config is invalid \(mixed_precision_training must be True or False",
        ),
        (_set("steps_done", value="2"), r"steps_done must be an integer >= 0, got '2'"),
        (_set("precision", "in_effect", value="fp8"), r"precision\.in_effect must be one of"),
        (
            _set("precision", "critic_scaler", value={"scale": 1e400}),
            r"precision\.critic_scaler\.scale must be a finite number > 0, got inf.*"
            r"precision\.critic_scaler\.growth_factor is missing",
        ),
        (
            _set("optimizers", "generator", "param_groups", 0, "lr", value=float("nan")),
            r"optimizers\.generator\.param_groups\[0\]\.lr must be a finite number >= 0",
        ),
        (_set("data_frame_layout", value=[]), r"data_frame_layout must be an object, got \[\]"),
        (_drop("encoder"), r"encoder is missing"),
        (_set("dgan_version", value=1), r"dgan_version must be a string, got 1"),
    ],
    ids=lambda x: None if callable(x) else x.split(" ")[0].replace("\\", ""),
)
def test_header_is_checked_against_the_schema(saved, edit, message):
    path = saved[1]
    _edit_header(path, edit)
    with pytest.raises(SerializationError, match=rf"has an invalid header: .*{message}") as info:
        DGAN.load(path)
    assert "save the model again" in str(info.value) and "newer" not in str(info.value)


def test_a_string_version_is_invalid_not_newer(saved):
    path = saved[1]
    _edit_header(path, _set("format_version", value="1"))
    with pytest.raises(
        SerializationError, match="format_version must be a positive integer, got '1'"
    ) as info:
        DGAN.load(path)
    assert "newer" not in str(info.value) and "upgrade" not in str(info.value)


def test_every_problem_is_listed_once(saved):
    path = saved[1]
    _edit_header(path, lambda s: s.update(steps_done=-1, history=3, dgan_version=None))
    with pytest.raises(SerializationError) as info:
        DGAN.load(path)
    message = str(info.value)
    for field in ("steps_done must be", "history must be", "dgan_version must be"):
        assert message.count(field) == 1, field


@pytest.mark.parametrize("depth", [MAX_HEADER_DEPTH + 1, 100_000])
def test_a_deeply_nested_header_is_a_serialization_error(saved, depth):
    # 100_000 levels made the JSON parser raise RecursionError.
    path = saved[1]
    tensors, state = read_model_file(path)
    text = json.dumps({**state, "history": []})
    nested = "[" * depth + "]" * depth
    _write_raw(path, tensors, text.replace('"history": []', f'"history": {nested}'))
    with pytest.raises(SerializationError, match=r"has an invalid header: .*nested"):
        DGAN.load(path)


def test_a_number_too_long_to_parse_is_a_serialization_error(saved):
    path = saved[1]
    tensors, state = read_model_file(path)
    text = json.dumps({**state, "steps_done": 0}).replace(
        '"steps_done": 0', '"steps_done": ' + "9" * 5000
    )
    _write_raw(path, tensors, text)
    with pytest.raises(SerializationError, match=r"has an invalid header: it cannot be parsed"):
        DGAN.load(path)


def test_a_file_without_its_checksum_is_refused(saved):
    path = saved[1]
    tensors, state = read_model_file(path)
    _write_raw(path, tensors, state, digest=False)
    with pytest.raises(SerializationError, match="has no checksum"):
        DGAN.load(path)


def _as_format_1(path):
    """Rewrite a saved model as dgan 0.1.0 wrote it: tensor checksum in the header only."""
    tensors, state = read_model_file(path)
    state = {**state, "format_version": 1, "tensors_sha256": tensors_digest(tensors)}
    save_file(tensors, path, metadata={"dgan": json.dumps(state)})
    return tensors, state


@pytest.mark.filterwarnings("ignore:.*model format 1:UserWarning")
def test_format_1_files_still_load_with_a_warning_and_a_checked_header(saved, tmp_path):
    model, path = saved
    _as_format_1(path)
    with pytest.warns(UserWarning, match=r"older dgan \(model format 1\).*save the model again"):
        loaded = DGAN.load(path)
    _same_output(model, loaded)
    # Its tensors are still checked, and so is its header against the schema.
    tensors, state = _as_format_1(path)
    save_file(tensors, path, metadata={"dgan": json.dumps({**state, "steps_done": -1})})
    with pytest.raises(SerializationError, match="steps_done must be an integer >= 0"):
        DGAN.load(path)
    weight = next(name for name in sorted(tensors) if name.endswith(".weight"))
    tensors[weight] += 1
    save_file(tensors, path, metadata={"dgan": json.dumps(state)})
    with pytest.raises(SerializationError, match="is corrupted"):
        DGAN.load(path)


def test_saving_a_header_load_would_refuse_is_not_possible_silently(saved):
    # write_model_file keeps JSON strict: NaN cannot be written, so load never sees it.
    tensors, state = read_model_file(saved[1])
    bad = copy.deepcopy(state)
    bad["config"]["gradient_penalty_coef"] = float("nan")
    with pytest.raises(SerializationError, match="not JSON-serializable"):
        write_model_file(saved[1], tensors, bad)


# ------------------------------------------ issue 10: where and how files are written


def test_saving_to_a_directory_names_the_users_path(saved, tmp_path):
    model = saved[0]
    folder = tmp_path / "models"
    folder.mkdir()
    with pytest.raises(SerializationError, match="it is a directory") as info:
        model.save(folder)
    assert repr(str(folder)) in str(info.value) and ".tmp" not in str(info.value)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(SerializationError) as info:
        model.save(blocker / "m.dgan")
    assert repr(str(blocker / "m.dgan")) in str(info.value) and ".tmp" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "model.dgan", "models"]


def test_loading_a_directory_says_so(tmp_path):
    with pytest.raises(SerializationError, match="is a directory, not a model file"):
        DGAN.load(tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_model_files_respect_the_umask(saved, tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        path = saved[0].save(tmp_path / "new.dgan")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_replaced_model_file_keeps_its_mode(saved):
    model, path = saved
    os.chmod(path, 0o640)
    old = os.umask(0o077)
    try:
        model.save(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_per_class_ranges_are_saved_loaded_and_checked(tmp_path):
    rng = np.random.default_rng(5)
    labels = np.repeat(["quiet", "loud"], 12)
    levels = np.where(labels == "quiet", 0.1, 1000.0)
    features = [level * (1 + 0.1 * rng.random((4, 1))) for level in levels]
    model = DGAN(_config(epochs=1))
    model.train_numpy(features, attributes=labels.astype(object)[:, None], progress_bar=False)
    assert model.encoder.groups is not None
    path = model.save(tmp_path / "classes.dgan")
    loaded = DGAN.load(path)
    assert loaded.encoder.groups.to_json() == model.encoder.groups.to_json()
    _same_output(model, loaded)
    _edit_header(path, _set("encoder", "groups", "low", value=[[0.0, 0.0]]))
    with pytest.raises(SerializationError, match=r"encoder\.groups\.low must be a 2 x 2 list"):
        DGAN.load(path)


GENERATE_ONLY = """
import sys
from dgan import DGAN

for path in sys.argv[1:]:
    DGAN.load(path).generate_numpy(3)
print("torch._dynamo" in sys.modules)
"""


def test_generating_from_a_loaded_model_builds_no_optimizer(saved, tmp_path):
    """Building an optimizer imports torch._dynamo (seconds of a `dgan generate`); a model
    loaded to generate never needs one, nor a meta-device copy of its networks (where the
    bridge's constants would import it too). Asked for, optimizers get the file's state."""
    import subprocess

    model, path = saved
    bridged = DGAN(tiny_config(bridge_seams=True))
    bridged.train_numpy(np.random.default_rng(0).random((8, 6, 1)), progress_bar=False)
    assert bridged.generator.bridge is not None
    script = tmp_path / "generate.py"
    script.write_text(GENERATE_ONLY)
    src = str(Path(__file__).parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, str(script), str(path), str(bridged.save(tmp_path / "b.dgan"))]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "False"
    loaded = DGAN.load(path)
    loaded.generate_numpy(3)
    for name, optimizer in model.trainer.optimizers().items():
        built = loaded.trainer.optimizers()[name]  # built now, with the file's state
        groups = (o.state_dict()["param_groups"] for o in (built, optimizer))
        assert json.dumps(next(groups)) == json.dumps(next(groups))  # betas: list or tuple
        for index, state in optimizer.state_dict()["state"].items():
            for key, value in state.items():
                assert torch.equal(built.state_dict()["state"][index][key], value), (name, key)


def test_networks_too_large_to_train_are_refused_when_training_starts_not_to_generate(
    tmp_path, monkeypatch
):
    """Room for the data, not for the networks' training state: a new model is refused
    before its networks are built, with a ParameterError naming each one's size; a loaded
    model still generates (that needs no optimizer state) and is refused when it trains."""
    import dgan.train.memory

    features = np.random.default_rng(0).random((8, 6, 1))
    model = DGAN(tiny_config())
    model.train_numpy(features, progress_bar=False)
    path = model.save(tmp_path / "model.dgan")
    monkeypatch.setattr(dgan.train.memory, "available_memory_bytes", lambda device: 20_000)
    fresh = DGAN(tiny_config())
    with pytest.raises(ParameterError, match=r"need .* for weights, gradients .* generator"):
        fresh.train_numpy(features, progress_bar=False)
    assert not fresh.is_built
    loaded = DGAN.load(path)
    assert len(loaded.generate_numpy(2)[1]) == 2
    with pytest.raises(ParameterError, match=r"GiB for gradients and optimizer state, but"):
        loaded.trainer.optimizers()  # its weights are in memory already


def test_a_model_whose_lstm_starts_from_its_attributes_saves_and_generates_the_same(tmp_path):
    rng = np.random.default_rng(0)
    model = DGAN(tiny_config(attribute_state=True))
    model.train_numpy(
        rng.random((8, 6, 1)),
        attributes=rng.integers(0, 2, (8, 1)).astype(float),
        attribute_types=[OutputType.DISCRETE],
        progress_bar=False,
    )
    assert model.generator.initial_state is not None
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.config.attribute_state and loaded.generator.initial_state is not None
    for key, value in model.generator.state_dict().items():
        assert torch.equal(loaded.generator.state_dict()[key], value), key
    noise = model.sampler.noise(5)
    once, again = (m.generate_numpy(5, *noise)[1] for m in (model, loaded))
    assert all(np.array_equal(a, b) for a, b in zip(once, again, strict=True))
