"""Small checks of a model file's JSON header (`dgan.storage.schema`): each appends what
is wrong, naming the field, to a list of problems, and says whether the value passed."""

from __future__ import annotations

import math
from typing import Any

from dgan.config import short_repr

NUMBER = "a finite number"


def field(where: str, key: Any) -> str:
    key = short_repr(key)[1:-1] if isinstance(key, str) and len(key) <= 40 else short_repr(key)
    return key if where == "header" else f"{where}.{key}"


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def check(p: list[str], ok: bool, where: str, expected: str, value: Any) -> bool:
    if not ok:
        p.append(f"{where} must be {expected}, got {short_repr(value)}")
    return ok


def required(p: list[str], obj: dict, key: str, where: str) -> bool:
    if key in obj:
        return True
    p.append(f"{field(where, key)} is missing")
    return False


def is_dict(p: list[str], value: Any, where: str) -> bool:
    return check(p, isinstance(value, dict), where, "an object", value)


def is_list(p: list[str], value: Any, where: str) -> bool:
    return check(p, isinstance(value, list), where, "a list", value)


def in_range(
    p: list[str],
    value: Any,
    where: str,
    low: tuple[float, bool] | None = None,
    high: tuple[float, bool] | None = None,
    what: str = NUMBER,
) -> bool:
    ok = is_number(value)
    if ok and low is not None:
        ok = value >= low[0] if low[1] else value > low[0]
    if ok and high is not None:
        ok = value <= high[0] if high[1] else value < high[0]
    return check(p, ok, where, what, value)
