"""`DGANConfig` settings from a TOML or JSON file, checked before any data is read.

`read_config_file` reads the table of fields (from a regular file of at most 1 MiB of
UTF-8, each key once); `check_settings` rejects unknown fields
(suggesting the closest valid name) and values of the wrong type, by building a
`DGANConfig` from them, so that ``batch_size = "64"`` fails in a second, not after the
data has loaded.

Example:
    >>> check_settings({"epochs": 5, "bach_size": 64}, source="dgan.toml")
    Traceback (most recent call last):
    dgan.errors.ParameterError: 'dgan.toml' has an unknown DGANConfig field: 'bach_size' (did you mean 'batch_size'?). Fix the spelling; the README's configuration tables list every field.
"""  # noqa: E501

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import stat
from pathlib import Path
from typing import Any

from dgan.config import DGANConfig
from dgan.errors import ParameterError

MAX_CONFIG_BYTES = 1 << 20
"""The longest config file read (1 MiB; a table of every DGANConfig field is ~2 KB)."""


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The table of DGANConfig fields in a TOML (``.toml``) or JSON (``.json``) file.

    Example:
        >>> import json, tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "config.json"
        >>> _ = path.write_text(json.dumps({"epochs": 5}))
        >>> read_config_file(path)
        {'epochs': 5}
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise ParameterError(
            f"Config file {str(path)!r} must end in .toml or .json, so dgan knows how to read it."
        )
    text = _read_text(path)
    try:
        if suffix == ".toml":
            data = _toml_module(path).loads(text)
        else:
            data = json.loads(text, object_pairs_hook=lambda pairs: _table(path, pairs))
    except RecursionError:
        raise ParameterError(
            f"Config file {str(path)!r} is nested too deeply to read; a config file is a "
            'table of DGANConfig fields and their values, like {"epochs": 100}.'
        ) from None
    except ParameterError:
        raise
    except ValueError as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ParameterError(
            f"Config file {str(path)!r} is not valid {suffix[1:].upper()}: {error}."
        ) from error
    if not isinstance(data, dict):
        raise ParameterError(
            f"Config file {str(path)!r} must hold a table of DGANConfig fields (like "
            f'{{"epochs": 100}}), not a {type(data).__name__}.'
        )
    return data


def _read_text(path: Path) -> str:
    """The text of a config file: a regular file (a device or a pipe could give endless
    bytes, or none and block), at most `MAX_CONFIG_BYTES` long, in UTF-8 (a BOM allowed)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a pipe: no waiting
    # Checked before the descriptor becomes a file object: opening a folder's descriptor
    # raises an error that names the descriptor's number, not the path.
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ParameterError(
            f"Config file {str(path)!r} is not a regular file (it is a device, a pipe or "
            "a folder, or a link to one); give a TOML or JSON file."
        )
    with os.fdopen(fd, "rb") as f:
        raw = f.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ParameterError(
            f"Config file {str(path)!r} is more than {MAX_CONFIG_BYTES:,} bytes long; a "
            "config file is a short table of DGANConfig fields. Check that it is the "
            "right file."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ParameterError(
            f"Config file {str(path)!r} is not UTF-8 text (byte {raw[error.start]:#04x} at "
            f"position {error.start}); save it as UTF-8, as TOML and JSON require."
        ) from None


def _table(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice (json keeps the last silently; TOML
    refuses it too)."""
    table: dict[str, Any] = {}
    for key, value in pairs:
        if key in table:
            raise ParameterError(
                f"Config file {str(path)!r} gives {key!r} twice; keep the one you mean."
            )
        table[key] = value
    return table


def _toml_module(path: Path):
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ParameterError(
                f"Reading the TOML config {str(path)!r} needs Python 3.11+ or the tomli "
                "package (pip install tomli); or write the config as JSON."
            ) from None
    return tomllib


def check_settings(settings: dict[str, Any], source: str = "the settings") -> None:
    """Raise a `ParameterError` for unknown fields or invalid values in ``settings``.

    ``max_sequence_len`` and ``sample_len`` may be missing (they can be inferred from
    the data later); every other field is checked as `DGANConfig` checks it.
    """
    known = [f.name for f in dataclasses.fields(DGANConfig)]
    unknown = [name for name in settings if name not in known]
    if unknown:
        described = ", ".join(_with_suggestion(name, known) for name in unknown)
        plural = "s" if len(unknown) > 1 else ""
        raise ParameterError(
            f"{source!r} has {'an ' if not plural else ''}unknown DGANConfig field{plural}: "
            f"{described}. Fix the spelling; the README's configuration tables list every field."
        )
    DGANConfig(**_with_placeholder_lengths(settings))


def _with_suggestion(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)


def _with_placeholder_lengths(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with valid stand-ins for lengths still to be inferred from the data."""
    filled = dict(settings)
    sample_len = settings.get("sample_len")
    if filled.get("max_sequence_len") is None:
        usable = isinstance(sample_len, int) and not isinstance(sample_len, bool)
        filled["max_sequence_len"] = sample_len if usable and sample_len > 0 else 1
    if filled.get("sample_len") is None:
        filled["sample_len"] = 1
    return filled
