"""Model files: tensors in safetensors, everything else as JSON in its header. Never pickle.

A model file is one safetensors file. Its header metadata holds a single JSON document
under the key ``"dgan"`` (format name and version, dgan and torch versions, config,
encoders, DataFrame layout, history, optimizer hyper-parameters and loss-scaler state) and,
under ``"dgan_sha256"``, a SHA-256 digest of everything else in the file: every metadata
entry and every tensor's name, dtype, shape and bytes. Its tensors are the networks'
weights, the optimizers' moment estimates and the random generators' states.

Loading parses JSON and raw tensor bytes only, so a crafted file cannot run code; the
digest catches corrupted bytes anywhere (safetensors alone loads flipped weights, and a
flipped digit in an encoder's range would change every generated value), and the header
is then checked against the schema (`dgan.storage.schema`), so what `DGAN.load` builds
from it is valid.

Format versions: 1 (dgan 0.1.0 before the header digest) had a digest of the tensors only;
such files still load, with their header checked against the schema, and a warning asks
to save them again. 2 added the digest of the whole file. 3, the current one, adds the
config's record of the fields set (``_given``, `dgan.config.given`); format-2 files load,
their fields counting as set where they differ from gretel's defaults
(`dgan.storage.schema.saved_config`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import stat
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import safe_open
from safetensors.torch import save as safetensors_bytes

from dgan.config import short_repr
from dgan.errors import SerializationError
from dgan.storage.schema import MAX_HEADER_DEPTH, header_problems

FORMAT_NAME = "dgan-model"
FORMAT_VERSION = 3
HEADER_KEY = "dgan"
DIGEST_KEY = "dgan_sha256"
_FILE_FIELDS = ("format", "format_version", "tensors_sha256")  # written by this module
_SHOWN_PROBLEMS = 10


def write_model_file(path: str | os.PathLike, tensors: dict[str, torch.Tensor],
                     state: dict[str, Any], tag: str = "") -> Path:  # fmt: skip
    """Write ``tensors`` and the JSON-native ``state`` to ``path`` atomically.

    The file gets the current format name and version (any in ``state`` are replaced)
    and a digest of its whole contents. A new file gets the permissions the umask allows
    (like any file the user creates); a replaced file keeps its permissions. The
    temporary file written first is ``.NAME.TAGxxxxxxxxxxxx.tmp`` beside ``path`` (a
    checkpoint's tag names its run, so a run cleans up only its own leftovers).

    Example:
        >>> import tempfile
        >>> from dgan import DGAN, DGANConfig
        >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, epochs=1, cuda=False))
        >>> model.train_numpy(np.zeros((4, 2, 1)), progress_bar=False)
        >>> path = model.save(Path(tempfile.mkdtemp()) / "m.dgan")  # calls write_model_file
        >>> tensors, state = read_model_file(path)
        >>> _ = write_model_file(path, tensors, {**state, "steps_done": 5})
        >>> read_model_file(path)[1]["steps_done"]
        5
    """
    path = Path(path)
    cpu = {name: t.detach().to("cpu").contiguous() for name, t in tensors.items()}
    rest = {k: v for k, v in state.items() if k not in _FILE_FIELDS}
    header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **rest}
    try:
        metadata = {HEADER_KEY: json.dumps(header, allow_nan=False)}
    except (TypeError, ValueError, RecursionError) as e:
        raise SerializationError(f"Model state is not JSON-serializable: {e}") from e
    metadata[DIGEST_KEY] = file_digest(metadata, cpu)
    _write_atomically(path, cpu, metadata, tag)
    return path


def _write_atomically(
    path: Path, tensors: dict[str, torch.Tensor], metadata: dict, tag: str = ""
) -> None:
    """Write beside the target and rename, so an interrupted save never leaves half a
    file; errors name ``path``, the user's path, never the temporary one.

    dgan writes the bytes itself, into its one temporary: safetensors' ``save_file``
    writes through a temporary of its own (``.tmpXXXXXX``) that a process killed during
    the write leaves behind, which no run could prove its own and clean up."""
    where = f"Cannot save the model to {str(path)!r}"
    if path.is_dir():
        raise SerializationError(
            f"{where}: it is a directory. Give a file path, e.g. {str(path / 'model.dgan')!r}."
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        existing = os.stat(path) if path.exists() else None
        tmp = _create_temporary(path, tag)
    except OSError as e:
        raise SerializationError(f"{where}: {e.strerror or e}. Check the path.") from e
    try:
        # The mode the umask gave the new temporary (as to any file the user creates), or
        # the replaced file's own.
        keep = existing if existing is not None and stat.S_ISREG(existing.st_mode) else None
        mode = stat.S_IMODE((keep or os.stat(tmp)).st_mode)
        data = safetensors_bytes(tensors, metadata=metadata)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # the bytes are on disk before the rename makes them the file
        del data
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except (OSError, SafetensorError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise SerializationError(
            f"{where}: {detail}. Check that its folder is writable and has space."
        ) from e
    finally:
        tmp.unlink(missing_ok=True)


def _create_temporary(path: Path, tag: str = "") -> Path:
    """A new empty file beside ``path``, created with mode 0o666 so that the umask decides
    its permissions, as for any file the user creates (mkstemp would force 0o600)."""
    while True:
        tmp = path.parent / f".{path.name[:200]}.{tag}{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue


def read_model_file(
    path: str | os.PathLike, device: str | torch.device = "cpu"
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a file written by `write_model_file`: ``(tensors on device, state)``.

    Raises SerializationError, saying what is wrong, for a missing, truncated, corrupt,
    foreign (e.g. pickle) or newer-format file, and for a header that does not match the
    schema (naming the field).

    Example:
        >>> read_model_file("no-such-file.dgan")
        Traceback (most recent call last):
        ...
        dgan.errors.SerializationError: No model file at 'no-such-file.dgan'; check the path.
    """
    path = Path(path)
    if path.is_dir():
        raise SerializationError(
            f"{str(path)!r} is a directory, not a model file; give the path of a file "
            "written by DGAN.save()."
        )
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
    corrupted = (
        f"{str(path)!r} is corrupted: its contents do not match the checksum stored when "
        "it was saved. Copy the file again from its source, or save the model again."
    )
    digest = metadata.get(DIGEST_KEY)
    if digest is not None and digest != file_digest(metadata, tensors):
        raise SerializationError(corrupted)
    state = _parse_header(path, metadata.get(HEADER_KEY))
    version = _format_version(path, state)
    if version == 1:
        if state.get("tensors_sha256") != tensors_digest(tensors):
            raise SerializationError(corrupted)
        warnings.warn(
            f"{str(path)!r} was saved by an older dgan (model format 1), whose checksum "
            "covers the weights only, not the config and encoders; save the model again "
            "to protect all of it.",
            UserWarning,
            stacklevel=2,
        )
    elif digest is None:
        raise SerializationError(
            f"{str(path)!r} has no checksum ({DIGEST_KEY!r} metadata): it was altered after "
            "dgan saved it. Copy the file again from its source, or save the model again."
        )
    problems = header_problems(state)
    if problems:
        shown = problems[:_SHOWN_PROBLEMS]
        if len(problems) > len(shown):
            shown.append(f"... and {len(problems) - len(shown)} more")
        raise SerializationError(
            f"{str(path)!r} has an invalid header: " + "; ".join(shown) + ". The file is "
            "corrupt or was not written by dgan; save the model again with DGAN.save() "
            "(or retrain it)."
        )
    return {name: t.to(device) for name, t in tensors.items()}, state


def read_header(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON header of a model file, read without its tensors and without checking its
    digest or schema: enough to tell which run wrote a checkpoint, never to load one.

    Raises SerializationError when the file has no readable dgan header.

    Example:
        >>> read_header("no-such-file.dgan")
        Traceback (most recent call last):
        ...
        dgan.errors.SerializationError: No model file at 'no-such-file.dgan'; check the path.
    """
    path = Path(path)
    if not path.is_file():
        raise SerializationError(f"No model file at {str(path)!r}; check the path.")
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            metadata = f.metadata() or {}
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise SerializationError(f"{str(path)!r} is not a readable dgan model file ({e}).") from e
    return _parse_header(path, metadata.get(HEADER_KEY))


def _parse_header(path: Path, text: str | None) -> dict[str, Any]:
    """The JSON header as a dict with dgan's format name; SerializationError otherwise."""
    not_dgan = (
        f"{str(path)!r} is a safetensors file but not a dgan model (no valid 'dgan' "
        "metadata); save models with DGAN.save()."
    )
    if text is None:
        raise SerializationError(not_dgan)
    try:
        state = json.loads(text)
    except json.JSONDecodeError as e:
        raise SerializationError(not_dgan) from e
    except (RecursionError, ValueError) as e:  # nested too deeply; a number too long
        problem = (
            f"it is nested too deeply to read (dgan writes at most {MAX_HEADER_DEPTH} levels)"
            if isinstance(e, RecursionError)
            else f"it cannot be parsed ({short_repr(str(e))[1:-1]})"
        )
        raise SerializationError(
            f"{str(path)!r} has an invalid header: {problem}. The file is corrupt or was "
            "not written by dgan; save the model again with DGAN.save()."
        ) from e
    if not isinstance(state, dict) or state.get("format") != FORMAT_NAME:
        raise SerializationError(
            f"{str(path)!r} is a safetensors file but not a dgan model file; save models "
            "with DGAN.save()."
        )
    return state


def _format_version(path: Path, state: dict[str, Any]) -> int:
    version = state.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SerializationError(
            f"{str(path)!r} has an invalid header: format_version must be a positive "
            f"integer, got {short_repr(version)}. The file is corrupt or was not written "
            "by dgan; save the model again with DGAN.save()."
        )
    if version > FORMAT_VERSION:
        raise SerializationError(
            f"{str(path)!r} has model format version {version}, newer than this dgan "
            f"understands ({FORMAT_VERSION}); upgrade dgan (pip install -U dgan) to load it."
        )
    return version


def file_digest(metadata: dict[str, str], tensors: dict[str, torch.Tensor]) -> str:
    """SHA-256 over every metadata entry but the digest itself and every tensor's name,
    dtype, shape and bytes (CPU tensors), each length-prefixed, in name order.

    Example:
        >>> a = file_digest({"dgan": "{}"}, {"w": torch.ones(2)})
        >>> a == file_digest({"dgan": "{}", DIGEST_KEY: a}, {"w": torch.ones(2)})
        True
        >>> a == file_digest({"dgan": "{ }"}, {"w": torch.ones(2)})
        False
    """
    digest = hashlib.sha256(b"dgan-model-file\n")

    def add(data: bytes | memoryview) -> None:
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)

    for key in sorted(k for k in metadata if k != DIGEST_KEY):
        add(key.encode())
        add(metadata[key].encode())
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        add(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        add(memoryview(t.reshape(-1).view(torch.uint8).numpy()))
    return digest.hexdigest()


def tensors_digest(tensors: dict[str, torch.Tensor]) -> str:
    """SHA-256 over the names, dtypes, shapes and bytes of CPU ``tensors``, in name order:
    the checksum of format-1 files.

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


def join_optimizer_state(prefix: str, tensors: dict[str, torch.Tensor], rest: dict) -> dict:
    """The inverse of `split_optimizer_state`: an optimizer's state dict. Its param groups
    keep the saving device's options; the trainer loading it keeps its own
    (`dgan.train.trainer.Trainer.load_state_dict`)."""
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
