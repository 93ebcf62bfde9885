"""Editing a saved model file in tests: what another dgan version, another machine or a
hand-edited file would hold, written back with a valid checksum."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dgan import DGAN
from dgan.errors import SerializationError
from dgan.storage.format import read_model_file, write_model_file


@contextlib.contextmanager
def rewritten(path: Path) -> Iterator[tuple[dict, dict]]:
    """``(tensors, header state)`` of the model file at ``path`` to edit in place; the
    file is written back, checksum and all, when the block ends.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from dgan import DGAN
        >>> from tiny import tiny_config
        >>> model = DGAN(tiny_config())
        >>> model.train_numpy(np.zeros((8, 6, 1)), progress_bar=False)
        >>> path = model.save(Path(tempfile.mkdtemp()) / "m.dgan")
        >>> with rewritten(path) as (_, state):
        ...     state["steps_done"] = 99
        >>> read_model_file(path)[1]["steps_done"]
        99
    """
    tensors, state = read_model_file(path)
    yield tensors, state
    write_model_file(path, tensors, state)


def assert_named_when_broken(model: DGAN, path: Path, where: str, value: Any) -> None:
    """Save ``model`` to ``path`` with the header entry at dotted ``where`` (under the
    state, e.g. "encoder.marginals.steps") set to ``value``; loading it must fail with a
    `SerializationError` that names the entry ("<where> must be ...")."""
    path = model.save(path)
    *parents, key = where.split(".")
    with rewritten(path) as (_, state):
        for parent in parents:
            state = state[parent]
        state[key] = value
    with pytest.raises(SerializationError, match=re.escape(where) + " must be"):
        DGAN.load(path)


def assert_kept_in_file(model: DGAN, path: Path, where: str, calibrated: str | None) -> None:
    """Save ``model`` to ``path``: the entry at dotted ``where`` (the same path on the model
    as on its file's state, e.g. "encoder.marginals.steps") loads back equal, and the
    loaded model generates what ``model`` does; a file without the entry (from an older
    dgan) loads with it None and, given, its calibration's field ``calibrated`` None."""
    *parents, key = where.split(".")

    def entry(loaded: DGAN) -> Any:
        owner = loaded
        for parent in parents:
            owner = getattr(owner, parent)
        return getattr(owner, key)

    path = model.save(path)
    loaded = DGAN.load(path)
    np.testing.assert_array_equal(entry(loaded), entry(model))
    model.sampler.reseed(3)
    loaded.sampler.reseed(3)
    generated = np.stack(model.generate_numpy(4)[1])
    np.testing.assert_array_equal(generated, np.stack(loaded.generate_numpy(4)[1]))
    with rewritten(path) as (_, state):
        for parent in parents:
            state = state[parent]
        del state[key]
    older = DGAN.load(path)
    assert entry(older) is None
    if calibrated is not None:
        assert getattr(older.sampler.calibration(), calibrated) is None
