"""CPU threads: keep OpenMP from collapsing on shared machines, and choose a thread count.

OpenMP's default wait policy spins idle threads for a while before sleeping. When another
job shares the cores, spinning torch threads train several times slower than one thread;
with the passive policy they do not collapse (docs/precision.md, "Threads"). The policy is
read once, when torch loads its OpenMP runtime, so it must be set before ``import torch``:
the ``dgan`` command does that (`prepare_openmp`); Python users set ``OMP_WAIT_POLICY``
themselves (or use ``torch.set_num_threads(1)``), since a library must not change a
process-wide setting behind its user's back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping


def prepare_openmp(environ: MutableMapping[str, str] | None = None) -> str | None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the user chose a policy or torch is loaded.

    Returns the policy set, or None when nothing was changed.

    Example:
        >>> env = {}
        >>> prepare_openmp(env) if "torch" not in sys.modules else "PASSIVE"
        'PASSIVE'
        >>> prepare_openmp({"OMP_WAIT_POLICY": "ACTIVE"}) is None
        True
    """
    environ = os.environ if environ is None else environ
    if "OMP_WAIT_POLICY" in environ or "torch" in sys.modules:
        return None
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return "PASSIVE"


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one).

    Example:
        >>> usable_cores() >= 1
        True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def choose_threads(requested: int | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The torch thread count to use: ``requested`` (``--threads``), else the user's
    ``OMP_NUM_THREADS`` when it holds a positive number, else every usable core (shared
    evenly by the processes torchrun started on this machine, ``LOCAL_WORLD_SIZE``).

    With the passive wait policy, more threads than free cores cost little (see the
    module docstring), while on an idle machine every core helps large batches.

    Example:
        >>> choose_threads(3)
        3
        >>> choose_threads(environ={"OMP_NUM_THREADS": "1"})
        1
        >>> choose_threads(environ={}) == usable_cores()
        True
    """
    if requested is not None:
        return requested
    environ = os.environ if environ is None else environ
    given = _positive(environ.get("OMP_NUM_THREADS"))
    if given is not None:
        return given
    processes = _positive(environ.get("LOCAL_WORLD_SIZE")) or 1
    return max(1, usable_cores() // processes)


def _positive(text: str | None) -> int | None:
    """``text`` as a positive integer, or None (unset, empty or not one: OpenMP ignores it)."""
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None
