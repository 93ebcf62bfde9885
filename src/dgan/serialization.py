"""Model files: tensors in safetensors, everything else as JSON in its header. Never pickle.

A model file is one safetensors file. Its header metadata holds a single JSON document
under the key ``"dgan"`` (format name and version, dgan and torch versions, config,
encoders, DataFrame layout, history, optimizer hyper-parameters); its tensors are the
networks' weights, the optimizers' moment estimates and the random generators' states.
Loading parses JSON and raw tensor bytes only, so a crafted file cannot run code.
"""

from __future__ import annotations

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
    header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **state}
    try:
        metadata = {"dgan": json.dumps(header, allow_nan=False)}
    except (TypeError, ValueError) as e:
        raise SerializationError(f"Model state is not JSON-serializable: {e}") from e
    cpu = {name: t.detach().to("cpu").contiguous() for name, t in tensors.items()}
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
        with safe_open(str(path), framework="pt", device=str(device)) as f:
            metadata = f.metadata() or {}
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise SerializationError(
            f"{str(path)!r} is not a readable dgan model file ({e}). It may be truncated, "
            "corrupted, or not a dgan model (dgan never loads pickles); save it again "
            "with DGAN.save()."
        ) from e
    try:
        state = json.loads(metadata["dgan"])
    except (KeyError, json.JSONDecodeError) as e:
        raise SerializationError(
            f"{str(path)!r} is a safetensors file but not a dgan model (no valid 'dgan' "
            "metadata); save models with DGAN.save()."
        ) from e
    if state.get("format") != FORMAT_NAME:
        raise SerializationError(f"{str(path)!r} is not a dgan model file.")
    version = state.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise SerializationError(
            f"{str(path)!r} has model format version {version!r}, newer than this dgan "
            f"understands ({FORMAT_VERSION}); upgrade dgan to load it."
        )
    return tensors, state


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


def join_optimizer_state(prefix: str, tensors: dict[str, torch.Tensor], rest: dict) -> dict:
    state: dict[int, dict[str, Any]] = {}
    for index, values in rest["per_param"].items():
        state.setdefault(int(index), {}).update(values)
    start = f"{prefix}."
    for name, value in tensors.items():
        if name.startswith(start):
            index, key = name[len(start) :].split(".", 1)
            state.setdefault(int(index), {})[key] = value
    return {"state": state, "param_groups": rest["param_groups"]}


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
