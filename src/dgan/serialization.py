"""Model files: tensors in safetensors, everything else as JSON in its header. Never pickle.

A model file is one safetensors file. Its header metadata holds a single JSON document
under the key ``"dgan"`` (format name and version, dgan and torch versions, config,
encoders, DataFrame layout, history, optimizer hyper-parameters, and a SHA-256 digest of
the tensors); its tensors are the networks' weights, the optimizers' moment estimates and
the random generators' states. Loading parses JSON and raw tensor bytes only, so a
crafted file cannot run code; the digest catches corrupted tensor bytes, which
safetensors itself would load silently.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import safe_open, save_file

from dgan.errors import SerializationError

FORMAT_NAME = "dgan-model"
FORMAT_VERSION = 1


def write_model_file(path: str | os.PathLike, tensors: dict[str, torch.Tensor],
                     state: dict[str, Any]) -> Path:  # fmt: skip
    """Write ``tensors`` and the JSON-native ``state`` to ``path`` atomically.

    Example:
        >>> import tempfile, torch
        >>> path = Path(tempfile.mkdtemp()) / "m.dgan"
        >>> _ = write_model_file(path, {"w": torch.ones(2)}, {"answer": 42})
        >>> read_model_file(path)[1]["answer"]
        42
    """
    path = Path(path)
    cpu = {name: t.detach().to("cpu").contiguous() for name, t in tensors.items()}
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        **state,
        "tensors_sha256": tensors_digest(cpu),
    }
    try:
        metadata = {"dgan": json.dumps(header, allow_nan=False)}
    except (TypeError, ValueError) as e:
        raise SerializationError(f"Model state is not JSON-serializable: {e}") from e
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename, so an interrupted save never leaves half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        save_file(cpu, tmp, metadata=metadata)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def read_model_file(
    path: str | os.PathLike, device: str | torch.device = "cpu"
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a file written by `write_model_file`: ``(tensors on device, state)``.

    Raises SerializationError, saying what is wrong, for a missing, truncated, corrupt,
    foreign (e.g. pickle) or newer-format file.
    """
    path = Path(path)
    if not path.is_file():
        raise SerializationError(f"No model file at {str(path)!r}; check the path.")
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            metadata = f.metadata() or {}
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        kind = _pickle_kind(path)
        if kind is not None:
            raise SerializationError(
                f"{str(path)!r} is {kind}, not a dgan model file. dgan never unpickles "
                "files, as unpickling can run arbitrary code; models saved by other "
                "libraries (e.g. gretel-synthetics' DGAN.save) cannot be loaded: retrain "
                "with dgan and save with DGAN.save()."
            ) from e
        raise SerializationError(
            f"{str(path)!r} is not a readable dgan model file ({e}). It may be truncated, "
            "corrupted, or not a dgan model; save it again with DGAN.save()."
        ) from e
    try:
        state = json.loads(metadata["dgan"])
    except (KeyError, json.JSONDecodeError) as e:
        raise SerializationError(
            f"{str(path)!r} is a safetensors file but not a dgan model (no valid 'dgan' "
            "metadata); save models with DGAN.save()."
        ) from e
    if not isinstance(state, dict) or state.get("format") != FORMAT_NAME:
        raise SerializationError(
            f"{str(path)!r} is a safetensors file but not a dgan model file; save models "
            "with DGAN.save()."
        )
    version = state.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise SerializationError(
            f"{str(path)!r} has model format version {version!r}, newer than this dgan "
            f"understands ({FORMAT_VERSION}); upgrade dgan (pip install -U dgan) to load it."
        )
    if state.get("tensors_sha256") != tensors_digest(tensors):
        raise SerializationError(
            f"{str(path)!r} is corrupted: its tensors do not match the checksum stored when "
            "it was saved. Copy the file again from its source, or save the model again."
        )
    return {name: t.to(device) for name, t in tensors.items()}, state


def tensors_digest(tensors: dict[str, torch.Tensor]) -> str:
    """SHA-256 over the names, dtypes, shapes and bytes of CPU ``tensors``, in name order.

    Example:
        >>> tensors_digest({"w": torch.ones(2)}) == tensors_digest({"w": torch.ones(2)})
        True
    """
    digest = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _pickle_kind(path: Path) -> str | None:
    """What pickle-based format an unreadable file looks like, for the error message only.

    Only consulted after safetensors has refused the file: a valid safetensors header
    length may well start with the same bytes.
    """
    with path.open("rb") as f:
        start = f.read(4)
    if start.startswith(b"PK\x03\x04"):
        return "a zip archive (what torch.save writes: a pickle inside)"
    if len(start) >= 2 and start[0] == 0x80 and 2 <= start[1] <= 5:
        return "a pickle"
    return None


def flatten_state_dict(prefix: str, state_dict: dict[str, Any]) -> dict[str, torch.Tensor]:
    """``{"prefix.name": tensor}`` for a module's state_dict."""
    return {f"{prefix}.{k}": v for k, v in state_dict.items()}


def unflatten_state_dict(prefix: str, tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    start = f"{prefix}."
    return {k[len(start) :]: v for k, v in tensors.items() if k.startswith(start)}


def split_optimizer_state(prefix: str, state_dict: dict[str, Any]) -> tuple[dict, dict]:
    """Split an optimizer state_dict into (tensors, JSON-native rest)."""
    tensors, per_param = {}, {}
    for index, values in state_dict["state"].items():
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{prefix}.{index}.{key}"] = value
            else:
                per_param.setdefault(str(index), {})[key] = value
    return tensors, {"param_groups": state_dict["param_groups"], "per_param": per_param}


# Optimizer options that say how to step on the device the model was trained on, not
# what it learned: a model trained on CUDA (fused Adam) steps the CPU's way after loading.
DEVICE_OPTIONS = ("fused", "foreach", "capturable")


def join_optimizer_state(
    prefix: str, tensors: dict[str, torch.Tensor], rest: dict, current: dict
) -> dict:
    """The inverse of `split_optimizer_state`, for loading into an optimizer whose own
    ``state_dict()`` is ``current``: its `DEVICE_OPTIONS` are kept."""
    state: dict[int, dict[str, Any]] = {}
    for index, values in rest["per_param"].items():
        state.setdefault(int(index), {}).update(values)
    start = f"{prefix}."
    for name, value in tensors.items():
        if name.startswith(start):
            index, key = name[len(start) :].split(".", 1)
            state.setdefault(int(index), {})[key] = value
    groups = [
        {**saved, **{k: here[k] for k in DEVICE_OPTIONS if k in here}}
        for saved, here in zip(rest["param_groups"], current["param_groups"], strict=True)
    ]
    return {"state": state, "param_groups": groups}


def json_safe(value: Any) -> Any:
    """Non-finite floats become None (JSON has no NaN); numpy scalars become Python ones."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
