"""What a saved model holds: the `DGAN` <-> (tensors, JSON state) mapping of a model file.

serialization.py writes and reads the file itself (safetensors + JSON, never pickle);
this module decides what goes in it: the config, encoders, DataFrame layout and history
as JSON, and the trainer's state (`Trainer.state_dict`) and the sampler's RNG split into
tensors and JSON.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from dgan.config import DGANConfig
from dgan.encoding.encoder import DataEncoder
from dgan.errors import ParameterError, SerializationError
from dgan.storage.format import (
    flatten_state_dict,
    join_optimizer_state,
    json_safe,
    read_model_file,
    split_optimizer_state,
    unflatten_state_dict,
    write_model_file,
)
from dgan.tabular.frames import FrameLayout

if TYPE_CHECKING:
    from dgan.model import DGAN


def save_model(model: DGAN, path: str | os.PathLike) -> Path:
    """Write a built ``model`` to ``path`` (atomically); returns the path written."""
    tensors, state = model_file_contents(model)
    return write_model_file(path, tensors, state)


def model_file_contents(
    model: DGAN, history: list[dict[str, Any]] | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """``(tensors, JSON state)`` of a model file for a built ``model``.

    ``history`` replaces ``model.history`` (a checkpoint written during training holds
    the epochs trained so far, which the model's history gets only when training returns).
    """
    import dgan  # for the version, which __init__ defines

    trainer_state = model.trainer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    optimizers = {}
    for name, module_state in trainer_state["modules"].items():
        tensors |= flatten_state_dict(name, module_state)
    for name, optimizer_state in trainer_state["optimizers"].items():
        opt_tensors, optimizers[name] = split_optimizer_state(f"optimizer.{name}", optimizer_state)
        tensors |= opt_tensors
    device = model.device.type
    tensors[f"rng.{device}.train"] = trainer_state["rng"]
    tensors[f"rng.{device}.generate"] = model.sampler.state_dict()["rng"]
    layout = model.data_frame_layout
    state = {
        "dgan_version": dgan.__version__,
        "torch_version": torch.__version__,
        "config": model.config.to_json_dict(),
        "encoder": model.encoder.to_json(),
        "data_frame_layout": None if layout is None else layout.to_json_dict(),
        "history": json_safe(model.history if history is None else history),
        "optimizers": optimizers,
        "steps_done": trainer_state["steps_done"],
        "precision": trainer_state["precision"],
    }
    return tensors, state


def load_model(
    cls: type[DGAN], path: str | os.PathLike, map_location: str | torch.device | None
) -> DGAN:
    """Read a model written by `save_model`; see `DGAN.load`."""
    device = None if map_location is None else loading_device(map_location)
    tensors, state = read_model_file(path)
    with inconsistent_file_errors(path):
        model = cls(DGANConfig.from_json_dict(state["config"]))
        build_from_contents(model, state, device)
        load_training_state(model, tensors, state)
    return model


def build_from_contents(model: DGAN, state: dict[str, Any], device: torch.device | None) -> None:
    """Build an unbuilt ``model`` around the encoder and layout of a model file's state."""
    layout = state["data_frame_layout"]
    model.build(
        DataEncoder.from_json(state["encoder"]),
        None if layout is None else FrameLayout.from_json_dict(layout),
        device=device,
    )


def load_training_state(model: DGAN, tensors: dict[str, torch.Tensor], state: dict) -> None:
    """Load a model file's networks, optimizers, precision, RNGs and history into a built
    ``model`` of the same structure."""
    trainer = model.trainer
    current_optimizers = trainer.optimizers()
    trainer_state: dict[str, Any] = {
        "modules": {name: unflatten_state_dict(name, tensors) for name in trainer.modules()},
        "optimizers": {
            name: join_optimizer_state(
                f"optimizer.{name}", tensors, state["optimizers"][name], opt.state_dict()
            )
            for name, opt in current_optimizers.items()
        },
        "precision": state["precision"],
        "steps_done": state["steps_done"],
    }
    device_type = model.device.type
    saved_rng = tensors.get(f"rng.{device_type}.train")
    if saved_rng is not None:  # RNG states do not carry across device types
        trainer_state["rng"] = saved_rng
    trainer.load_state_dict(trainer_state)
    saved_rng = tensors.get(f"rng.{device_type}.generate")
    if saved_rng is not None:
        model.sampler.load_state_dict({"rng": saved_rng})
    model.history = state["history"]


@contextlib.contextmanager
def inconsistent_file_errors(path: str | os.PathLike) -> Iterator[None]:
    """Turn the errors of reading a well-formed but inconsistent file into SerializationError."""
    try:
        yield
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
        detail = " ".join(str(e).split())  # torch's messages span several lines
        raise SerializationError(
            f"{str(path)!r} holds an incomplete or inconsistent dgan model ({detail}); "
            "save it again with DGAN.save()."
        ) from e


def loading_device(map_location: str | torch.device) -> torch.device:
    """``map_location`` as a device this machine has; ParameterError otherwise.

    Example:
        >>> loading_device("cpu")
        device(type='cpu')
    """
    try:
        device = torch.device(map_location)
    except (RuntimeError, TypeError) as e:
        raise ParameterError(
            f"map_location={map_location!r} is not a device ({e}); use e.g. 'cpu' or 'cuda'."
        ) from e
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ParameterError(
            f"map_location={map_location!r} but this machine has no usable CUDA device; "
            "load with map_location='cpu' (or leave it out: the CPU is then used)."
        )
    return device
