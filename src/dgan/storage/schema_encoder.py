"""The schema of a model file's encoder (`DataEncoder.to_json`), part of its header's
(`dgan.storage.schema`): per-variable encoders, example scaling, per-class ranges."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from dgan.config import DGANConfig, Normalization, short_repr
from dgan.encoding.marginals import QUANTILES
from dgan.encoding.series_shares import SHARES
from dgan.encoding.switches import MAX_GAPS
from dgan.encoding.texture import LAGS
from dgan.encoding.transients import STEPS
from dgan.storage.header_checks import (
    check,
    in_range,
    is_dict,
    is_int,
    is_list,
    is_number,
    required,
)

MAX_LAGS = 1024
"""The most autocorrelation lags a file's texture may keep (dgan writes `LAGS`; earlier
files 32): a bound on the filters a header can ask for."""


def encoder_problems(p: list[str], data: Any, config: DGANConfig | None) -> None:
    """Check a header's ``encoder`` (`DataEncoder.to_json`), appending to ``p``."""
    if not is_dict(p, data, "encoder"):
        return
    lists = {}
    for key in ("attribute_encoders", "feature_encoders", "additional_encoders"):
        where = f"encoder.{key}"
        if not required(p, data, key, "encoder"):
            continue
        value = data[key]
        if value is None and key != "feature_encoders":
            continue
        if is_list(p, value, where):
            if key == "feature_encoders" and not value:
                p.append(f"{where} must not be empty")
            lists[key] = [_variable(p, e, f"{where}[{i}]") for i, e in enumerate(value)]
    if required(p, data, "max_sequence_len", "encoder"):
        length, where = data["max_sequence_len"], "encoder.max_sequence_len"
        valid = check(p, is_int(length) and length >= 1, where, "a positive integer", length)
        if valid and config is not None and length != config.max_sequence_len:
            p.append(f"{where}={length} differs from config.max_sequence_len")
    if required(p, data, "variable_length", "encoder"):
        value = data["variable_length"]
        check(p, isinstance(value, bool), "encoder.variable_length", "true or false", value)
    if required(p, data, "normalization", "encoder"):
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
    if "fill_range" in data:
        value = data["fill_range"]
        ok = isinstance(value, bool) or value == "auto"
        check(p, ok, "encoder.fill_range", "true, false or 'auto'", value)
    for key in ("length_attribute", "onset_attribute"):  # each needs varied lengths
        if key in data:
            value = data[key]
            check(p, isinstance(value, bool), f"encoder.{key}", "true or false", value)
            if value is True and data.get("variable_length") is False:
                p.append(f"encoder.{key} is true for series of one length")
    if data.get("groups") is not None:
        _groups(p, data["groups"], data.get("attribute_encoders"), additional)
    for key, problems in (("marginals", _marginals), ("texture", _texture)):
        if data.get(key) is not None:
            problems(p, data[key], lists.get("feature_encoders"), data.get("attribute_encoders"))
    if data.get("class_shares") is not None:
        _class_shares(p, data["class_shares"], data.get("attribute_encoders"))
    if data.get("standardized") is not None:
        _standardized(p, data["standardized"], lists.get("feature_encoders"))


def _marginals(p: list[str], data: Any, features: list | None, attributes: Any) -> None:
    """The training values' quantiles (`dgan.encoding.marginals`): continuous features,
    a discrete attribute or none, and per feature and class `QUANTILES` ascending numbers
    (null for a class without values); the switches at each class's gaps, the median
    step on each level, the wander on each level, the series' shares above each gap and
    their first readings after switching up across it, if any."""
    expected = f"{QUANTILES} ascending numbers"
    _per_class(p, data, "encoder.marginals", features, attributes, _ascending, expected)
    real, switches, steps = data.get("real"), data.get("switches"), data.get("steps")
    if steps is not None and isinstance(real, list):  # files from before: none
        ok = _shaped_as(steps, real, lambda v: v is None or (is_number(v) and v >= 0))
        expected = "null or, per feature and class as in real, null or a step >= 0"
        check(p, ok, "encoder.marginals.steps", expected, steps)
    wander = data.get("wander")
    if wander is not None and isinstance(real, list):  # files from before: none

        def levels(entry: Any) -> bool:  # one class's: a wander >= 0 or null per level
            return (
                isinstance(entry, list)
                and len(entry) == MAX_GAPS + 1
                and all(v is None or (is_number(v) and v >= 0) for v in entry)
            )

        expected = "null or, per feature and class as in real, "
        expected += f"{MAX_GAPS + 1} nulls or numbers >= 0"
        check(p, _shaped_as(wander, real, levels), "encoder.marginals.wander", expected, wander)
    if data.get("shares") is not None and isinstance(real, list):  # files from before: none
        _series_shares(p, data["shares"], real)
    if data.get("switch_ons") is not None and isinstance(real, list):  # from before: none
        _switch_ons(p, data["switch_ons"], real)
    if switches is None or not isinstance(real, list):  # files from before switches: none
        return

    def gap(pair: Any) -> bool:  # [the quantile step, the crossings per step], or [null, null]
        if pair == [None, None]:
            return True
        if not (isinstance(pair, list) and len(pair) == 2 and all(map(is_number, pair))):
            return False
        step, rate = pair
        return step == int(step) and 0 <= step <= QUANTILES - 2 and 0 <= rate <= 1

    def gaps(pairs: Any) -> bool:  # one class's
        return isinstance(pairs, list) and len(pairs) == MAX_GAPS and all(map(gap, pairs))

    ok = _shaped_as(switches, real, gaps)
    expected = (
        f"null or, per feature and class as in real, {MAX_GAPS} pairs of a quantile step "
        f"(0 to {QUANTILES - 2}) and crossings per step in [0, 1], or of nulls"
    )
    check(p, ok, "encoder.marginals.switches", expected, switches)


def _series_shares(p: list[str], shares: Any, real: list) -> None:
    """The training series' shares of time above each gap (`dgan.encoding.series_shares`):
    per feature and class as in ``real``, null or `MAX_GAPS` entries of `SHARES`
    ascending shares in [0, 1] or of nulls."""

    def gap(entry: Any) -> bool:
        if not (isinstance(entry, list) and len(entry) == SHARES):
            return False
        if all(v is None for v in entry):
            return True
        numbers = all(is_number(v) and 0 <= v <= 1 for v in entry)
        return numbers and all(a <= b for a, b in itertools.pairwise(entry))

    def gaps(entry: Any) -> bool:  # one class's
        return isinstance(entry, list) and len(entry) == MAX_GAPS and all(map(gap, entry))

    expected = f"null or, per feature and class as in real, {MAX_GAPS} lists of {SHARES} "
    expected += "ascending shares in [0, 1] or of nulls"
    check(p, _shaped_as(shares, real, gaps), "encoder.marginals.shares", expected, shares)


def _switch_ons(p: list[str], switch_ons: Any, real: list) -> None:
    """The training series' offsets after switching up (`dgan.encoding.transients`): per
    feature and class as in ``real``, null or `MAX_GAPS` lists of `STEPS` numbers or of
    nulls."""

    def gap(entry: Any) -> bool:
        if not (isinstance(entry, list) and len(entry) == STEPS):
            return False
        return all(v is None for v in entry) or all(map(is_number, entry))

    def gaps(entry: Any) -> bool:  # one class's
        return isinstance(entry, list) and len(entry) == MAX_GAPS and all(map(gap, entry))

    expected = f"null or, per feature and class as in real, {MAX_GAPS} lists of {STEPS} "
    expected += "numbers or of nulls"
    check(
        p, _shaped_as(switch_ons, real, gaps), "encoder.marginals.switch_ons", expected, switch_ons
    )


def _texture(p: list[str], data: Any, features: list | None, attributes: Any) -> None:
    """The training series' autocorrelations (`dgan.encoding.texture`): continuous
    features, a discrete attribute or none, its count of ``lags``, and per feature and
    class ``lags`` + 1 numbers in [-1, 1], the first 1 (null for a class without them);
    their hold shares, if any, one number in [0, 1] (or null) per feature and class."""
    where = "encoder.texture"
    if not (is_dict(p, data, where) and required(p, data, "lags", where)):
        return
    lags = data["lags"]
    expected = f"a whole number of lags from 1 to {MAX_LAGS} (dgan writes {LAGS})"
    if not check(p, is_int(lags) and 1 <= lags <= MAX_LAGS, f"{where}.lags", expected, lags):
        return
    expected = f"{lags + 1} numbers in [-1, 1], the first 1"
    _per_class(p, data, where, features, attributes, _autocorrelation(lags), expected)
    real = data.get("real")
    kept = {  # files from before holds, runs of them, reversals or moves were kept: none
        "holds": ("a share in [0, 1]", lambda v: 0 <= v <= 1),
        "runs": ("a run of 1 step or more", lambda v: v >= 1),
        "reversals": ("a share in [0, 1]", lambda v: 0 <= v <= 1),
        "moves": ("a move of 0 or more", lambda v: v >= 0),
    }
    for name, (entry, valid) in kept.items():
        table = data.get(name)
        if table is None or not isinstance(real, list):
            continue
        ok = _shaped_as(table, real, lambda v, ok=valid: v is None or (is_number(v) and ok(v)))
        expected = f"null or, per feature and class as in real, null or {entry}"
        check(p, ok, f"{where}.{name}", expected, table)


def _shaped_as(table: Any, real: list, valid: Callable[[Any], bool]) -> bool:
    """Whether ``table`` holds an entry per feature and class as ``real`` (a per-class
    table's ``real``) does, each one that ``valid`` accepts."""
    return (
        isinstance(table, list)
        and len(table) == len(real)
        and all(
            isinstance(t, list) and isinstance(r, list) and len(t) == len(r)
            for t, r in zip(table, real, strict=True)
        )
        and all(valid(entry) for per in table for entry in per)
    )


def _per_class(
    p: list[str],
    data: Any,
    where: str,
    features: list | None,
    attributes: Any,
    valid: Callable[[Any], bool],
    expected_entry: str,
) -> None:
    """What the value map and the texture share: ``features``, indices of continuous
    features; ``attribute``, a discrete attribute's index or null; ``real``, per feature
    and class a ``valid`` entry or null."""
    if not is_dict(p, data, where) or features is None:
        return
    if not all([required(p, data, k, where) for k in ("features", "attribute", "real")]):
        return
    mapped, index = data["features"], data["attribute"]
    ok = isinstance(mapped, list) and all(
        is_int(i) and 0 <= i < len(features) and features[i] == "continuous" for i in mapped
    )
    if not check(p, ok, f"{where}.features", "indices of continuous features", mapped):
        return
    classes = 1
    if index is not None:
        categories = _discrete_categories(attributes, index)
        expected = "null or a discrete attribute's index"
        if not check(p, categories is not None, f"{where}.attribute", expected, index):
            return
        classes = len(categories)
    real = data["real"]
    ok = (
        isinstance(real, list)
        and len(real) == len(mapped)
        and all(isinstance(per, list) and len(per) == classes for per in real)
        and all(q is None or valid(q) for per in real for q in per)
    )
    expected = f"a {len(mapped)} x {classes} list of null or {expected_entry}"
    check(p, ok, f"{where}.real", expected, real)


def _autocorrelation(lags: int) -> Callable[[Any], bool]:
    """Whether an entry is an autocorrelation at lags 0..``lags``."""

    def valid(values: Any) -> bool:
        return (
            isinstance(values, list)
            and len(values) == lags + 1
            and all(is_number(v) and math.isfinite(v) and -1 <= v <= 1 for v in values)
            and values[0] == 1
        )

    return valid


def _ascending(values: Any) -> bool:
    return (
        isinstance(values, list)
        and len(values) == QUANTILES
        and all(is_number(v) and math.isfinite(v) for v in values)
        and all(a <= b for a, b in itertools.pairwise(values))
    )


def _class_shares(p: list[str], data: Any, attributes: Any) -> None:
    """The training classes' shares (`dgan.encoding.class_shares`): a discrete
    attribute's index and one share in [0, 1] per category, summing to 1."""
    where = "encoder.class_shares"
    if not is_dict(p, data, where):
        return
    if not all([required(p, data, k, where) for k in ("attribute", "shares")]):
        return
    categories = _discrete_categories(attributes, data["attribute"])
    expected = "a discrete attribute's index"
    if not check(p, categories is not None, f"{where}.attribute", expected, data["attribute"]):
        return
    shares = data["shares"]
    ok = (
        isinstance(shares, list)
        and len(shares) == len(categories)
        and all(is_number(v) and 0 <= v <= 1 for v in shares)
        and abs(sum(shares) - 1) < 1e-6
    )
    expected = f"{len(categories)} shares in [0, 1] summing to 1"
    check(p, ok, f"{where}.shares", expected, shares)


def _standardized(p: list[str], data: Any, features: list | None) -> None:
    """The mean and deviation every training series has (`dgan.encoding.standardized`):
    [continuous feature index, mean, deviation > 0, ddof 0 or 1] per kept feature."""
    where = "encoder.standardized"
    if not is_dict(p, data, where) or not required(p, data, "moments", where):
        return
    moments = data["moments"]
    continuous = {i for i, kind in enumerate(features or []) if kind == "continuous"}
    ok = (
        isinstance(moments, list)
        and len(moments) > 0
        and all(
            isinstance(entry, list)
            and len(entry) == 4
            and is_int(entry[0])
            and entry[0] in continuous
            and is_number(entry[1])
            and is_number(entry[2])
            and entry[2] > 0
            and is_int(entry[3])
            and entry[3] in (0, 1)
            for entry in moments
        )
        and len({entry[0] for entry in moments}) == len(moments)
    )
    expected = (
        "a list of [continuous feature index, mean, deviation > 0, ddof 0 or 1], one per feature"
    )
    check(p, ok, f"{where}.moments", expected, moments)


def _discrete_categories(attributes: Any, index: Any) -> list | None:
    """The categories of the header's attribute encoder ``index``, or None where that is
    no discrete attribute (the classes of per-class ranges and of the value map)."""
    if not (isinstance(attributes, list) and is_int(index) and 0 <= index < len(attributes)):
        return None
    owner = attributes[index]
    categories = owner.get("categories") if isinstance(owner, dict) else None
    return categories if isinstance(categories, list) else None


def _groups(p: list[str], data: Any, attributes: Any, additional: list | None) -> None:
    """Per-class ranges (`dgan.encoding.groups`): a row per category of a discrete
    attribute, a column per example-scaling attribute, each within [0, 1], low <= high."""
    where = "encoder.groups"
    if not is_dict(p, data, where):
        return
    if additional is None or not isinstance(attributes, list):
        p.append(f"{where} needs attribute_encoders and additional_encoders")
        return
    keys = ("attribute", "name", "low", "high", "normalization")
    if not all([required(p, data, k, where) for k in keys]):
        return
    index = data["attribute"]
    valid = is_int(index) and 0 <= index < len(attributes)
    if not check(p, valid, f"{where}.attribute", "an attribute's index", index):
        return
    categories = _discrete_categories(attributes, index)
    if categories is None:
        p.append(f"{where}.attribute={index} is not a discrete attribute")
        return
    _normalization(p, data["normalization"], f"{where}.normalization")
    shape = (len(categories), len(additional))
    rows = {}
    for key in ("low", "high"):
        value = data[key]
        ok = (
            isinstance(value, list)
            and len(value) == shape[0]
            and all(isinstance(r, list) and len(r) == shape[1] for r in value)
            and all(is_number(v) and 0.0 <= v <= 1.0 for r in value for v in r)
        )
        expected = f"a {shape[0]} x {shape[1]} list of numbers in [0, 1]"
        if check(p, ok, f"{where}.{key}", expected, value):
            rows[key] = value
    if len(rows) == 2:
        rows_paired = zip(rows["low"], rows["high"], strict=True)
        if any(lo > hi for los, his in rows_paired for lo, hi in zip(los, his, strict=True)):
            p.append(f"{where}.low is above {where}.high somewhere")


def _variable(p: list[str], data: Any, where: str) -> str | None:
    """Check one variable's encoder; its type ("continuous", "discrete") or None."""
    if not is_dict(p, data, where) or not required(p, data, "type", where):
        return None
    kind = data["type"]
    if not check(
        p, kind in ("continuous", "discrete"), f"{where}.type", "'continuous' or 'discrete'", kind
    ):
        return None
    if required(p, data, "name", where):
        check(p, isinstance(data["name"], str), f"{where}.name", "a string", data["name"])
    if kind == "continuous":
        if required(p, data, "normalization", where):
            _normalization(p, data["normalization"], f"{where}.normalization")
        if required(p, data, "apply_scaling", where):
            value = data["apply_scaling"]
            check(p, isinstance(value, bool), f"{where}.apply_scaling", "true or false", value)
        ok = [
            required(p, data, k, where) and in_range(p, data[k], f"{where}.{k}")
            for k in ("min", "max")
        ]
        if all(ok) and data["min"] > data["max"]:
            p.append(f"{where}.min={data['min']!r} is above its max={data['max']!r}")
    else:
        if required(p, data, "binary_encoder_cutoff", where):
            value = data["binary_encoder_cutoff"]
            check(
                p,
                is_int(value) and value >= 1,
                f"{where}.binary_encoder_cutoff",
                "a positive integer",
                value,
            )
        if required(p, data, "categories", where):
            _categories(p, data["categories"], f"{where}.categories")
    return kind


def _categories(p: list[str], values: Any, where: str) -> None:
    if not is_list(p, values, where):
        return
    if not values:
        p.append(f"{where} must not be empty")
    seen = set()
    for i, value in enumerate(values):
        scalar = value is None or isinstance(value, (str, bool)) or is_number(value)
        if not check(p, scalar, f"{where}[{i}]", "a string, number, bool or null", value):
            return
        key = (type(value).__name__, value)
        if key in seen:
            p.append(f"{where}[{i}]={short_repr(value)} is listed twice")
            return
        seen.add(key)


def _normalization(p: list[str], value: Any, where: str) -> None:
    names = [n.name for n in Normalization]
    check(p, isinstance(value, str) and value in names, where, f"one of {names}", value)
