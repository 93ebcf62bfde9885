"""The schema of a model file's JSON header: what `DGAN.save` writes and `DGAN.load` reads.

Fields dgan does not read are ignored; every field it reads is checked here, so that a bad
value is a SerializationError naming the field (raised by `dgan.storage.format`) rather
than a crash or, worse, a model that loads and generates wrong values. The checks never
recurse, so a deeply nested header cannot exhaust the stack.
"""

from __future__ import annotations

import re
from typing import Any

from dgan.config import DGANConfig
from dgan.errors import DGANError
from dgan.storage.header_checks import (
    check,
    field,
    in_range,
    is_dict,
    is_int,
    is_list,
    is_number,
    required,
)
from dgan.storage.schema_encoder import encoder_problems

MAX_HEADER_DEPTH = 32
"""Deepest nesting of JSON containers a header may have; dgan writes at most 6 levels."""
RUN_ID = re.compile("[0-9a-f]{8,64}")
"""What a checkpoint's run id looks like (`dgan.storage.folder.new_run_id` makes 16 digits)."""
RESUME_VERSION = 2
"""The newest version of a checkpoint's resume record (`dgan.storage.resume`) read here."""
_CHECKPOINT_COUNTS = {  # per version: (field, least value, required: absent from older ones)
    1: (("run_epochs_done", 0, True), ("history_offset", 0, True), ("examples", 1, True),
        ("world_size", 1, False)),
    2: (("epochs_done", 0, True), ("steps_done", 0, True), ("history_offset", 0, True),
        ("examples", 1, True), ("world_size", 1, True)),
}  # fmt: skip
_CUT_COUNTS = (("batches_done", 1), ("seen", 0), ("trained", 0), ("skipped_steps", 0))


_SCALER_FIELDS = {  # GradScaler.state_dict() of an enabled scaler
    "scale": (0.0, False),
    "growth_factor": (1.0, False),
    "backoff_factor": (0.0, False),
    "growth_interval": None,
    "_growth_tracker": None,
}
_HISTORY_NUMBERS = (
    "discriminator_loss",
    "attribute_discriminator_loss",
    "gradient_penalty",
    "generator_loss",
    "examples_per_s",
    "wall_time_s",
    "critic_loss_scale",
    "generator_loss_scale",
    "skipped_steps",
    "steps",
    "peak_memory_bytes",
    "epsilon",
    "delta",
)


def header_problems(state: dict[str, Any]) -> list[str]:
    """What is wrong with a model file's JSON header, each naming the field; [] if valid.

    Example:
        >>> header_problems({"format": "dgan-model", "format_version": 2, "steps_done": -1})[:2]
        ['dgan_version is missing', 'torch_version is missing']
    """
    too_deep = _too_deep(state)
    if too_deep is not None:
        return [f"{too_deep} is nested more than {MAX_HEADER_DEPTH} levels deep"]
    p: list[str] = []
    for key in ("dgan_version", "torch_version"):
        if required(p, state, key, "header"):
            check(p, isinstance(state[key], str), key, "a string", state[key])
    config = None
    if required(p, state, "config", "header") and is_dict(p, state["config"], "config"):
        config = _config(p, state["config"])
    if required(p, state, "encoder", "header"):
        encoder_problems(p, state["encoder"], config)
    if required(p, state, "data_frame_layout", "header"):
        _layout(p, state["data_frame_layout"])
    if required(p, state, "history", "header"):
        _history(p, state["history"])
    if required(p, state, "optimizers", "header"):
        _optimizers(p, state["optimizers"])
    if required(p, state, "steps_done", "header"):
        value = state["steps_done"]
        check(p, is_int(value) and value >= 0, "steps_done", "an integer >= 0", value)
    if required(p, state, "precision", "header"):
        _precision(p, state["precision"])
    if "checkpoint" in state:  # a training checkpoint's resume information
        _checkpoint(p, state["checkpoint"], state.get("history"))
    if state.get("privacy") is not None:  # a private run's accounting
        _privacy(p, state["privacy"])
    return p


def _privacy(p: list[str], data: Any) -> None:
    """A private run's accounting (`dgan.privacy.accounting.Accountant.state_dict`)."""
    if not is_dict(p, data, "privacy"):
        return
    sigma = data.get("noise_multiplier")
    if sigma is not None:
        in_range(p, sigma, "privacy.noise_multiplier", (0.0, False), what="None or a number > 0")
    if required(p, data, "history", "privacy") and is_list(p, data["history"], "privacy.history"):
        for i, run in enumerate(data["history"]):
            ok = (
                isinstance(run, list)
                and len(run) == 3
                and all(is_number(v) for v in run[:2])
                and 0 < run[1] <= 1
                and is_int(run[2])
                and run[2] >= 0
            )
            at = f"privacy.history[{i}]"
            check(p, ok, at, "[noise multiplier, sample rate in (0, 1], steps]", run)


def _too_deep(value: Any) -> str | None:
    """The path of a container nested deeper than MAX_HEADER_DEPTH, or None (no recursion).
    Only containers are visited: a header holds tens of thousands of numbers (quantiles)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "header")] if _container(value) else []
    while stack:
        item, depth, where = stack.pop()
        if depth > MAX_HEADER_DEPTH:
            return where
        if isinstance(item, dict):
            stack.extend((v, depth + 1, field(where, k)) for k, v in item.items() if _container(v))
        else:
            stack.extend(
                (v, depth + 1, f"{where}[{i}]") for i, v in enumerate(item) if _container(v)
            )
    return None


def _container(value: Any) -> bool:
    return isinstance(value, (dict, list))


def saved_config(data: dict[str, Any]) -> DGANConfig:
    """The config a model file holds. Files from before the record of the fields set
    (format 2) hold every field and no record: there, as dgan read them then, a field
    counts as set when its value differs from gretel's default (`DGANConfig.fields_set`).

    Example:
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2, epochs=400)
        >>> old = {k: v for k, v in config.to_json_dict().items() if k != "_given"}
        >>> "epochs" in saved_config(config.to_json_dict()).fields_set
        True
        >>> "epochs" in saved_config(old).fields_set
        False
    """
    return DGANConfig.from_json_dict({"_given": [], **data})


def _config(p: list[str], data: dict[str, Any]) -> DGANConfig | None:
    try:
        return saved_config(data)
    except DGANError as e:
        p.append(f"config is invalid ({' '.join(str(e).split())})")
    except TypeError as e:  # a required field is missing
        p.append(f"config is invalid ({e})")
    return None


def _layout(p: list[str], data: Any) -> None:
    if data is None or not is_dict(p, data, "data_frame_layout"):
        return
    from dgan.tabular.frames import FrameLayout  # frames imports much more than this module needs

    try:
        FrameLayout.from_json_dict(data)
    except (DGANError, KeyError, TypeError, ValueError, AttributeError) as e:
        p.append(f"data_frame_layout is invalid ({' '.join(str(e).split())})")


def _history(p: list[str], history: Any) -> None:
    if not is_list(p, history, "history"):
        return
    for i, entry in enumerate(history):
        where = f"history[{i}]"
        if not is_dict(p, entry, where):
            continue
        if required(p, entry, "epoch", where):
            value = entry["epoch"]
            check(p, is_int(value) and value >= 0, f"{where}.epoch", "an integer >= 0", value)
        for key in _HISTORY_NUMBERS:
            if key in entry and entry[key] is not None:
                in_range(p, entry[key], f"{where}.{key}", what="a finite number or null")
        if "precision" in entry:
            value = entry["precision"]
            check(p, isinstance(value, str), f"{where}.precision", "a string", value)
        if entry.get("in_hardware") is not None:
            value = entry["in_hardware"]
            check(p, isinstance(value, bool), f"{where}.in_hardware", "true, false or null", value)
        if "guard_events" in entry and is_list(p, entry["guard_events"], f"{where}.guard_events"):
            for j, event in enumerate(entry["guard_events"]):
                is_dict(p, event, f"{where}.guard_events[{j}]")


def _optimizers(p: list[str], data: Any, within: str = "optimizers") -> None:
    if not is_dict(p, data, within):
        return
    for name, optimizer in data.items():
        where = field(within, name)
        if not is_dict(p, optimizer, where):
            continue
        if required(p, optimizer, "param_groups", where) and is_list(
            p, optimizer["param_groups"], f"{where}.param_groups"
        ):
            for i, group in enumerate(optimizer["param_groups"]):
                _param_group(p, group, f"{where}.param_groups[{i}]")
        if required(p, optimizer, "per_param", where) and is_dict(
            p, optimizer["per_param"], f"{where}.per_param"
        ):
            for index, values in optimizer["per_param"].items():
                at = field(f"{where}.per_param", index)
                check(p, index.isdigit(), at, "keyed by a parameter index", index)
                is_dict(p, values, at)


def _param_group(p: list[str], group: Any, where: str) -> None:
    if not is_dict(p, group, where):
        return
    if required(p, group, "params", where) and is_list(p, group["params"], f"{where}.params"):
        for j, index in enumerate(group["params"]):
            check(
                p, is_int(index) and index >= 0, f"{where}.params[{j}]", "a parameter index", index
            )
    if required(p, group, "lr", where):
        in_range(p, group["lr"], f"{where}.lr", (0.0, True), what="a finite number >= 0")
    if "betas" in group:
        betas = group["betas"]
        if check(
            p,
            isinstance(betas, list) and len(betas) == 2,
            f"{where}.betas",
            "a list of 2 numbers",
            betas,
        ):
            for j, beta in enumerate(betas):
                in_range(
                    p, beta, f"{where}.betas[{j}]", (0.0, True), (1.0, False), "a number in [0, 1)"
                )
    if "eps" in group:
        in_range(p, group["eps"], f"{where}.eps", (0.0, False), what="a finite number > 0")
    if "weight_decay" in group:
        in_range(
            p,
            group["weight_decay"],
            f"{where}.weight_decay",
            (0.0, True),
            what="a finite number >= 0",
        )


def _precision(p: list[str], data: Any, within: str = "precision") -> None:
    if not is_dict(p, data, within):
        return
    if required(p, data, "in_effect", within):
        value = data["in_effect"]
        choices = ("fp32", "fp16", "bf16")
        check(p, value in choices, f"{within}.in_effect", f"one of {choices}", value)
    for key in ("critic_scaler", "generator_scaler"):
        where = f"{within}.{key}"
        if not required(p, data, key, within) or not is_dict(p, data[key], where):
            continue
        scaler = data[key]
        if not scaler:  # loss scaling was off
            continue
        for name, low in _SCALER_FIELDS.items():
            if not required(p, scaler, name, where):
                continue
            value, at = scaler[name], f"{where}.{name}"
            if low is None:
                minimum = 1 if name == "growth_interval" else 0
                check(p, is_int(value) and value >= minimum, at, f"an integer >= {minimum}", value)
            elif name == "backoff_factor":
                in_range(p, value, at, low, (1.0, False), "a number in (0, 1)")
            else:
                in_range(p, value, at, low, what=f"a finite number > {low[0]:g}")


def _checkpoint(p: list[str], data: Any, history: Any) -> None:
    """The resume record of a checkpoint (`dgan.storage.resume.ResumeRecord`)."""
    if not is_dict(p, data, "checkpoint"):
        return
    version, where = data.get("version", 1), "checkpoint.version"
    newest = f"an integer from 1 to {RESUME_VERSION} (a newer dgan wrote it: upgrade dgan)"
    if not check(p, is_int(version) and 1 <= version <= RESUME_VERSION, where, newest, version):
        return
    counts = {}
    for key, least, needed in _CHECKPOINT_COUNTS[version]:
        if (key in data or needed) and required(p, data, key, "checkpoint"):
            value, where = data[key], f"checkpoint.{key}"
            if check(p, is_int(value) and value >= least, where, f"an integer >= {least}", value):
                counts[key] = value
    if required(p, data, "data_sha256", "checkpoint"):
        value = data["data_sha256"]
        ok = isinstance(value, str) and re.fullmatch("[0-9a-f]{64}", value) is not None
        check(p, ok, "checkpoint.data_sha256", "a SHA-256 digest (64 hex digits)", value)
    if "stopped" in data:
        value = data["stopped"]
        check(p, isinstance(value, bool), "checkpoint.stopped", "true or false", value)
    if data.get("run_id") is not None:  # absent in checkpoints from before run ids
        value = data["run_id"]
        ok = isinstance(value, str) and RUN_ID.fullmatch(value) is not None
        check(p, ok, "checkpoint.run_id", "8 to 64 lowercase hex digits", value)
    guard = data.get("guard")
    if guard is not None and is_dict(p, guard, "checkpoint.guard"):
        if required(p, guard, "precision", "checkpoint.guard"):
            _precision(p, guard["precision"], "checkpoint.guard.precision")
        same, where = guard.get("same_as_model", False), "checkpoint.guard.same_as_model"
        if (
            check(p, isinstance(same, bool), where, "true or false", same)
            and not same
            and required(p, guard, "optimizers", "checkpoint.guard")
        ):
            _optimizers(p, guard["optimizers"], "checkpoint.guard.optimizers")
    cut = data.get("cut") if version >= 2 else None
    if cut is not None:
        _cut(p, cut)
    done = counts.get("run_epochs_done" if version == 1 else "epochs_done")
    offset, entries = counts.get("history_offset"), "epochs of history"
    if None not in (done, offset) and isinstance(history, list):
        name = "run_epochs_done" if version == 1 else "epochs_done"
        cut_epoch = " plus the epoch cut short" if cut is not None else ""
        if offset + done + (cut is not None) != len(history):
            p.append(
                f"checkpoint.history_offset={offset} plus checkpoint.{name}={done}"
                f"{cut_epoch} must be the {len(history)} {entries}"
            )


def _cut(p: list[str], cut: Any) -> None:
    """The epoch a budget cut short (`dgan.train.loop.CutEpoch`), without its tensors."""
    if not is_dict(p, cut, "checkpoint.cut"):
        return
    for key, least in _CUT_COUNTS:
        if required(p, cut, key, "checkpoint.cut"):
            value, where = cut[key], f"checkpoint.cut.{key}"
            check(p, is_int(value) and value >= least, where, f"an integer >= {least}", value)
    if required(p, cut, "wall_time_s", "checkpoint.cut"):
        in_range(p, cut["wall_time_s"], "checkpoint.cut.wall_time_s", (0, True))
    peak = cut.get("peak_memory_bytes")
    ok = peak is None or (is_int(peak) and peak >= 0)
    check(p, ok, "checkpoint.cut.peak_memory_bytes", "an integer >= 0 or null", peak)
    where = "checkpoint.cut.guard_events"
    if required(p, cut, "guard_events", "checkpoint.cut") and is_list(
        p, cut["guard_events"], where
    ):
        for j, event in enumerate(cut["guard_events"]):
            if is_dict(p, event, f"{where}[{j}]"):
                for key in ("epoch", "step"):
                    value = event.get(key)
                    check(p, is_int(value), f"{where}[{j}].{key}", "an integer", value)
