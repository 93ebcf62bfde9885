"""What a saved model holds: a model's parts <-> the (tensors, JSON state) of a model file.

`dgan.storage.format` writes and reads the file itself (safetensors + JSON, never pickle);
this module decides what goes in it: the config, encoders, DataFrame layout and history
as JSON, and the trainer's state (`Trainer.state_dict`) and the generation RNG split into
tensors and JSON. It works on a model's parts (`ModelParts`), never on the `DGAN` facade,
which builds itself from a `ModelFile` read back.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
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
from dgan.storage.schema import saved_config
from dgan.tabular.layout import FrameLayout
from dgan.version import __version__

if TYPE_CHECKING:
    from dgan.train.trainer import Trainer


@dataclass
class ModelParts:
    """What a model file is written from: a built model's parts.

    Attributes:
        config: the model's config (as training settled it).
        encoder: the fitted encoders.
        layout: the training DataFrame's layout, or None after numpy training.
        trainer: networks, optimizers, precision and the training RNG.
        generation_rng: the sampler's random generator (generation continues it).
    """

    config: DGANConfig
    encoder: DataEncoder
    layout: FrameLayout | None
    trainer: Trainer
    generation_rng: torch.Generator

    def contents(
        self, history: list[dict[str, Any]]
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """``(tensors, JSON state)`` of a model file holding these parts and ``history``."""
        trainer_state = self.trainer.state_dict()
        tensors: dict[str, torch.Tensor] = {}
        optimizers = {}
        for name, module_state in trainer_state["modules"].items():
            tensors |= flatten_state_dict(name, module_state)
        for name, optimizer_state in trainer_state["optimizers"].items():
            opt_tensors, optimizers[name] = split_optimizer_state(
                f"optimizer.{name}", optimizer_state
            )
            tensors |= opt_tensors
        device = self.trainer.device.type
        tensors[f"rng.{device}.train"] = trainer_state["rng"]
        tensors[f"rng.{device}.generate"] = self.generation_rng.get_state()
        state = {
            "dgan_version": __version__,
            "torch_version": torch.__version__,
            "config": self.config.to_json_dict(),
            "encoder": self.encoder.to_json(),
            "data_frame_layout": None if self.layout is None else self.layout.to_json_dict(),
            "history": json_safe(history),
            "optimizers": optimizers,
            "steps_done": trainer_state["steps_done"],
            "precision": trainer_state["precision"],
        }
        if "privacy" in trainer_state:  # a private run's accounting: epsilon, delta, steps
            state["privacy"] = trainer_state["privacy"]
        return tensors, state

    def save(self, path: str | os.PathLike, history: list[dict[str, Any]]) -> Path:
        """Write these parts and ``history`` to ``path`` (atomically); returns the path."""
        return write_model_file(path, *self.contents(history))


@dataclass
class ModelFile:
    """A model file read back (`read`): what `DGAN.load` and resuming build a model from.

    Attributes:
        path: the file.
        tensors, state: its contents (`dgan.storage.format.read_model_file`).
    """

    path: Path
    tensors: dict[str, torch.Tensor]
    state: dict[str, Any]

    @classmethod
    def read(cls, path: str | os.PathLike) -> ModelFile:
        """Read and check ``path``; `SerializationError` for anything but a valid model file."""
        tensors, state = read_model_file(path)
        return cls(Path(path), tensors, state)

    def config(self) -> DGANConfig:
        return saved_config(self.state["config"])

    def encoder(self) -> DataEncoder:
        return DataEncoder.from_json(self.state["encoder"])

    def layout(self) -> FrameLayout | None:
        layout = self.state["data_frame_layout"]
        return None if layout is None else FrameLayout.from_json_dict(layout)

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.state["history"]

    def load_into(self, trainer: Trainer, generation_rng: torch.Generator) -> None:
        """Load the networks, optimizers, precision and RNG states into a trainer built for
        the same encoder (and the generation RNG). RNG states do not carry across device
        types: a trainer on another kind of device keeps its own."""
        state, tensors = self.state, self.tensors
        trainer_state: dict[str, Any] = {
            "modules": {name: unflatten_state_dict(name, tensors) for name in trainer.modules()},
            "optimizers": {
                name: join_optimizer_state(f"optimizer.{name}", tensors, saved)
                for name, saved in state["optimizers"].items()
            },
            "precision": state["precision"],
            "steps_done": state["steps_done"],
            "privacy": state.get("privacy"),
        }
        device_type = trainer.device.type
        saved_rng = tensors.get(f"rng.{device_type}.train")
        if saved_rng is not None:
            trainer_state["rng"] = saved_rng
        trainer.load_state_dict(trainer_state)
        saved_rng = tensors.get(f"rng.{device_type}.generate")
        if saved_rng is not None:
            generation_rng.set_state(saved_rng)


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
