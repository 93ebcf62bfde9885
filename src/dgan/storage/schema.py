"""The schema of a model file's JSON header: what `DGAN.save` writes and `DGAN.load` reads.

Fields dgan does not read are ignored; every field it reads is checked here, so that a bad
value is a SerializationError naming the field (raised by `dgan.storage.format`) rather
than a crash or, worse, a model that loads and generates wrong values. The checks never
recurse, so a deeply nested header cannot exhaust the stack.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dgan.config import DGANConfig, Normalization, short_repr
from dgan.errors import DGANError

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


_NUMBER = "a finite number"
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
        if _required(p, state, key, "header"):
            _check(p, isinstance(state[key], str), key, "a string", state[key])
    config = None
    if _required(p, state, "config", "header") and _is_dict(p, state["config"], "config"):
        config = _config(p, state["config"])
    if _required(p, state, "encoder", "header"):
        _encoder(p, state["encoder"], config)
    if _required(p, state, "data_frame_layout", "header"):
        _layout(p, state["data_frame_layout"])
    if _required(p, state, "history", "header"):
        _history(p, state["history"])
    if _required(p, state, "optimizers", "header"):
        _optimizers(p, state["optimizers"])
    if _required(p, state, "steps_done", "header"):
        value = state["steps_done"]
        _check(p, _is_int(value) and value >= 0, "steps_done", "an integer >= 0", value)
    if _required(p, state, "precision", "header"):
        _precision(p, state["precision"])
    if "checkpoint" in state:  # a training checkpoint's resume information
        _checkpoint(p, state["checkpoint"], state.get("history"))
    if state.get("privacy") is not None:  # a private run's accounting
        _privacy(p, state["privacy"])
    return p


def _privacy(p: list[str], data: Any) -> None:
    """A private run's accounting (`dgan.privacy.accounting.Accountant.state_dict`)."""
    if not _is_dict(p, data, "privacy"):
        return
    sigma = data.get("noise_multiplier")
    if sigma is not None:
        _in(p, sigma, "privacy.noise_multiplier", (0.0, False), what="None or a number > 0")
    if _required(p, data, "history", "privacy") and _is_list(p, data["history"], "privacy.history"):
        for i, run in enumerate(data["history"]):
            ok = (
                isinstance(run, list)
                and len(run) == 3
                and all(_is_number(v) for v in run[:2])
                and 0 < run[1] <= 1
                and _is_int(run[2])
                and run[2] >= 0
            )
            at = f"privacy.history[{i}]"
            _check(p, ok, at, "[noise multiplier, sample rate in (0, 1], steps]", run)


def _too_deep(value: Any) -> str | None:
    """The path of a container nested deeper than MAX_HEADER_DEPTH, or None (no recursion)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "header")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, (dict, list)) and depth > MAX_HEADER_DEPTH:
            return where
        if isinstance(item, dict):
            stack.extend((v, depth + 1, _field(where, k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, depth + 1, f"{where}[{i}]") for i, v in enumerate(item))
    return None


def _field(where: str, key: Any) -> str:
    key = short_repr(key)[1:-1] if isinstance(key, str) and len(key) <= 40 else short_repr(key)
    return key if where == "header" else f"{where}.{key}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _check(p: list[str], ok: bool, where: str, expected: str, value: Any) -> bool:
    if not ok:
        p.append(f"{where} must be {expected}, got {short_repr(value)}")
    return ok


def _required(p: list[str], obj: dict, key: str, where: str) -> bool:
    if key in obj:
        return True
    p.append(f"{_field(where, key)} is missing")
    return False


def _is_dict(p: list[str], value: Any, where: str) -> bool:
    return _check(p, isinstance(value, dict), where, "an object", value)


def _is_list(p: list[str], value: Any, where: str) -> bool:
    return _check(p, isinstance(value, list), where, "a list", value)


def _in(
    p: list[str],
    value: Any,
    where: str,
    low: tuple[float, bool] | None = None,
    high: tuple[float, bool] | None = None,
    what: str = _NUMBER,
) -> bool:
    ok = _is_number(value)
    if ok and low is not None:
        ok = value >= low[0] if low[1] else value > low[0]
    if ok and high is not None:
        ok = value <= high[0] if high[1] else value < high[0]
    return _check(p, ok, where, what, value)


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


def _encoder(p: list[str], data: Any, config: DGANConfig | None) -> None:
    if not _is_dict(p, data, "encoder"):
        return
    lists = {}
    for key in ("attribute_encoders", "feature_encoders", "additional_encoders"):
        where = f"encoder.{key}"
        if not _required(p, data, key, "encoder"):
            continue
        value = data[key]
        if value is None and key != "feature_encoders":
            continue
        if _is_list(p, value, where):
            if key == "feature_encoders" and not value:
                p.append(f"{where} must not be empty")
            lists[key] = [_variable(p, e, f"{where}[{i}]") for i, e in enumerate(value)]
    if _required(p, data, "max_sequence_len", "encoder"):
        length, where = data["max_sequence_len"], "encoder.max_sequence_len"
        valid = _check(p, _is_int(length) and length >= 1, where, "a positive integer", length)
        if valid and config is not None and length != config.max_sequence_len:
            p.append(f"{where}={length} differs from config.max_sequence_len")
    if _required(p, data, "variable_length", "encoder"):
        value = data["variable_length"]
        _check(p, isinstance(value, bool), "encoder.variable_length", "true or false", value)
    if _required(p, data, "normalization", "encoder"):
        _normalization(p, data["normalization"], "encoder.normalization")
    additional = lists.get("additional_encoders")
    if additional is not None and "feature_encoders" in lists:
        expected = 2 * sum(kind == "continuous" for kind in lists["feature_encoders"])
        if len(additional) != expected or set(additional) - {"continuous"}:
            p.append(
                f"encoder.additional_encoders must be {expected} continuous encoders (2 per "
                f"continuous feature), got {len(additional)} of types "
                f"{sorted(map(str, set(additional)))}"
            )


def _variable(p: list[str], data: Any, where: str) -> str | None:
    """Check one variable's encoder; its type ("continuous", "discrete") or None."""
    if not _is_dict(p, data, where) or not _required(p, data, "type", where):
        return None
    kind = data["type"]
    if not _check(
        p, kind in ("continuous", "discrete"), f"{where}.type", "'continuous' or 'discrete'", kind
    ):
        return None
    if _required(p, data, "name", where):
        _check(p, isinstance(data["name"], str), f"{where}.name", "a string", data["name"])
    if kind == "continuous":
        if _required(p, data, "normalization", where):
            _normalization(p, data["normalization"], f"{where}.normalization")
        if _required(p, data, "apply_scaling", where):
            value = data["apply_scaling"]
            _check(p, isinstance(value, bool), f"{where}.apply_scaling", "true or false", value)
        ok = [
            _required(p, data, k, where) and _in(p, data[k], f"{where}.{k}") for k in ("min", "max")
        ]
        if all(ok) and data["min"] > data["max"]:
            p.append(f"{where}.min={data['min']!r} is above its max={data['max']!r}")
    else:
        if _required(p, data, "binary_encoder_cutoff", where):
            value = data["binary_encoder_cutoff"]
            _check(
                p,
                _is_int(value) and value >= 1,
                f"{where}.binary_encoder_cutoff",
                "a positive integer",
                value,
            )
        if _required(p, data, "categories", where):
            _categories(p, data["categories"], f"{where}.categories")
    return kind


def _categories(p: list[str], values: Any, where: str) -> None:
    if not _is_list(p, values, where):
        return
    if not values:
        p.append(f"{where} must not be empty")
    seen = set()
    for i, value in enumerate(values):
        scalar = value is None or isinstance(value, (str, bool)) or _is_number(value)
        if not _check(p, scalar, f"{where}[{i}]", "a string, number, bool or null", value):
            return
        key = (type(value).__name__, value)
        if key in seen:
            p.append(f"{where}[{i}]={short_repr(value)} is listed twice")
            return
        seen.add(key)


def _normalization(p: list[str], value: Any, where: str) -> None:
    names = [n.name for n in Normalization]
    _check(p, isinstance(value, str) and value in names, where, f"one of {names}", value)


def _layout(p: list[str], data: Any) -> None:
    if data is None or not _is_dict(p, data, "data_frame_layout"):
        return
    from dgan.tabular.frames import FrameLayout  # frames imports much more than this module needs

    try:
        FrameLayout.from_json_dict(data)
    except (DGANError, KeyError, TypeError, ValueError, AttributeError) as e:
        p.append(f"data_frame_layout is invalid ({' '.join(str(e).split())})")


def _history(p: list[str], history: Any) -> None:
    if not _is_list(p, history, "history"):
        return
    for i, entry in enumerate(history):
        where = f"history[{i}]"
        if not _is_dict(p, entry, where):
            continue
        if _required(p, entry, "epoch", where):
            value = entry["epoch"]
            _check(p, _is_int(value) and value >= 0, f"{where}.epoch", "an integer >= 0", value)
        for key in _HISTORY_NUMBERS:
            if key in entry and entry[key] is not None:
                _in(p, entry[key], f"{where}.{key}", what="a finite number or null")
        if "precision" in entry:
            value = entry["precision"]
            _check(p, isinstance(value, str), f"{where}.precision", "a string", value)
        if entry.get("in_hardware") is not None:
            value = entry["in_hardware"]
            _check(p, isinstance(value, bool), f"{where}.in_hardware", "true, false or null", value)
        if "guard_events" in entry and _is_list(p, entry["guard_events"], f"{where}.guard_events"):
            for j, event in enumerate(entry["guard_events"]):
                _is_dict(p, event, f"{where}.guard_events[{j}]")


def _optimizers(p: list[str], data: Any, within: str = "optimizers") -> None:
    if not _is_dict(p, data, within):
        return
    for name, optimizer in data.items():
        where = _field(within, name)
        if not _is_dict(p, optimizer, where):
            continue
        if _required(p, optimizer, "param_groups", where) and _is_list(
            p, optimizer["param_groups"], f"{where}.param_groups"
        ):
            for i, group in enumerate(optimizer["param_groups"]):
                _param_group(p, group, f"{where}.param_groups[{i}]")
        if _required(p, optimizer, "per_param", where) and _is_dict(
            p, optimizer["per_param"], f"{where}.per_param"
        ):
            for index, values in optimizer["per_param"].items():
                at = _field(f"{where}.per_param", index)
                _check(p, index.isdigit(), at, "keyed by a parameter index", index)
                _is_dict(p, values, at)


def _param_group(p: list[str], group: Any, where: str) -> None:
    if not _is_dict(p, group, where):
        return
    if _required(p, group, "params", where) and _is_list(p, group["params"], f"{where}.params"):
        for j, index in enumerate(group["params"]):
            _check(
                p, _is_int(index) and index >= 0, f"{where}.params[{j}]", "a parameter index", index
            )
    if _required(p, group, "lr", where):
        _in(p, group["lr"], f"{where}.lr", (0.0, True), what="a finite number >= 0")
    if "betas" in group:
        betas = group["betas"]
        if _check(
            p,
            isinstance(betas, list) and len(betas) == 2,
            f"{where}.betas",
            "a list of 2 numbers",
            betas,
        ):
            for j, beta in enumerate(betas):
                _in(p, beta, f"{where}.betas[{j}]", (0.0, True), (1.0, False), "a number in [0, 1)")
    if "eps" in group:
        _in(p, group["eps"], f"{where}.eps", (0.0, False), what="a finite number > 0")
    if "weight_decay" in group:
        _in(
            p,
            group["weight_decay"],
            f"{where}.weight_decay",
            (0.0, True),
            what="a finite number >= 0",
        )


def _precision(p: list[str], data: Any, within: str = "precision") -> None:
    if not _is_dict(p, data, within):
        return
    if _required(p, data, "in_effect", within):
        value = data["in_effect"]
        choices = ("fp32", "fp16", "bf16")
        _check(p, value in choices, f"{within}.in_effect", f"one of {choices}", value)
    for key in ("critic_scaler", "generator_scaler"):
        where = f"{within}.{key}"
        if not _required(p, data, key, within) or not _is_dict(p, data[key], where):
            continue
        scaler = data[key]
        if not scaler:  # loss scaling was off
            continue
        for name, low in _SCALER_FIELDS.items():
            if not _required(p, scaler, name, where):
                continue
            value, at = scaler[name], f"{where}.{name}"
            if low is None:
                minimum = 1 if name == "growth_interval" else 0
                _check(
                    p, _is_int(value) and value >= minimum, at, f"an integer >= {minimum}", value
                )
            elif name == "backoff_factor":
                _in(p, value, at, low, (1.0, False), "a number in (0, 1)")
            else:
                _in(p, value, at, low, what=f"a finite number > {low[0]:g}")


def _checkpoint(p: list[str], data: Any, history: Any) -> None:
    """The resume record of a checkpoint (`dgan.storage.resume.ResumeRecord`)."""
    if not _is_dict(p, data, "checkpoint"):
        return
    version, where = data.get("version", 1), "checkpoint.version"
    newest = f"an integer from 1 to {RESUME_VERSION} (a newer dgan wrote it: upgrade dgan)"
    if not _check(p, _is_int(version) and 1 <= version <= RESUME_VERSION, where, newest, version):
        return
    counts = {}
    for key, least, needed in _CHECKPOINT_COUNTS[version]:
        if (key in data or needed) and _required(p, data, key, "checkpoint"):
            value, where = data[key], f"checkpoint.{key}"
            if _check(p, _is_int(value) and value >= least, where, f"an integer >= {least}", value):
                counts[key] = value
    if _required(p, data, "data_sha256", "checkpoint"):
        value = data["data_sha256"]
        ok = isinstance(value, str) and re.fullmatch("[0-9a-f]{64}", value) is not None
        _check(p, ok, "checkpoint.data_sha256", "a SHA-256 digest (64 hex digits)", value)
    if "stopped" in data:
        value = data["stopped"]
        _check(p, isinstance(value, bool), "checkpoint.stopped", "true or false", value)
    if data.get("run_id") is not None:  # absent in checkpoints from before run ids
        value = data["run_id"]
        ok = isinstance(value, str) and RUN_ID.fullmatch(value) is not None
        _check(p, ok, "checkpoint.run_id", "8 to 64 lowercase hex digits", value)
    guard = data.get("guard")
    if guard is not None and _is_dict(p, guard, "checkpoint.guard"):
        if _required(p, guard, "precision", "checkpoint.guard"):
            _precision(p, guard["precision"], "checkpoint.guard.precision")
        same, where = guard.get("same_as_model", False), "checkpoint.guard.same_as_model"
        if (
            _check(p, isinstance(same, bool), where, "true or false", same)
            and not same
            and _required(p, guard, "optimizers", "checkpoint.guard")
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
    if not _is_dict(p, cut, "checkpoint.cut"):
        return
    for key, least in _CUT_COUNTS:
        if _required(p, cut, key, "checkpoint.cut"):
            value, where = cut[key], f"checkpoint.cut.{key}"
            _check(p, _is_int(value) and value >= least, where, f"an integer >= {least}", value)
    if _required(p, cut, "wall_time_s", "checkpoint.cut"):
        _in(p, cut["wall_time_s"], "checkpoint.cut.wall_time_s", (0, True))
    peak = cut.get("peak_memory_bytes")
    ok = peak is None or (_is_int(peak) and peak >= 0)
    _check(p, ok, "checkpoint.cut.peak_memory_bytes", "an integer >= 0 or null", peak)
    where = "checkpoint.cut.guard_events"
    if _required(p, cut, "guard_events", "checkpoint.cut") and _is_list(
        p, cut["guard_events"], where
    ):
        for j, event in enumerate(cut["guard_events"]):
            if _is_dict(p, event, f"{where}[{j}]"):
                for key in ("epoch", "step"):
                    value = event.get(key)
                    _check(p, _is_int(value), f"{where}[{j}].{key}", "an integer", value)
