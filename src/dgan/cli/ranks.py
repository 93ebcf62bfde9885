"""Errors and warnings under torchrun: every process runs the command; rank 0 alone
reports what all of them meet alike.

The processes of a torchrun job check the same arguments, read the same files and train
on the same data, so they fail alike: the same error once per process only buries it
(and torchrun's own failure report follows). Rank 0 alone prints those errors, the
argument errors and the warnings. An error of one process (`DistributedError`, naming
the rank that failed, or a bug) is printed by every process that has one, with its rank.

Every failing process also writes its line to torchrun's error file
(``TORCHELASTIC_ERROR_FILE``): torchrun's failure summary then shows the error instead of
"<N/A>", also for a process that kept quiet because it failed alone.

Example (one process, not under torchrun):
    >>> prints_shared_errors()
    True
    >>> report("dgan: error: something", shared=True)  # printed on stderr
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Iterator

from dgan.train.distributed import is_main_process, launched


def prints_shared_errors() -> bool:
    """Whether this process prints the errors and warnings every process meets alike:
    outside torchrun, and on rank 0.

    Example:
        >>> prints_shared_errors() == is_main_process()
        True
    """
    return is_main_process()


def report(line: str, shared: bool) -> None:
    """Print the error ``line`` ("dgan: error: ...") to stderr, unless it is ``shared`` by
    every process and another one prints it; name the rank on a process other than rank 0.
    Record it for torchrun's failure summary either way.

    Example:
        >>> report("dgan: error: no such file", shared=False)  # printed on stderr
    """
    if not shared or prints_shared_errors():
        if launched() and not is_main_process():
            line = line.replace("dgan:", f"dgan (rank {os.environ.get('RANK')}):", 1)
        print(line, file=sys.stderr)
    if launched():
        _record_for_torchrun(line)


@contextlib.contextmanager
def shared_output_on_rank_0() -> Iterator[None]:
    """Keep what the other processes would print alike (argument errors) off stderr.

    Example:
        >>> with shared_output_on_rank_0():
        ...     pass
    """
    if prints_shared_errors():
        yield
        return
    with contextlib.redirect_stderr(io.StringIO()):
        yield


def _record_for_torchrun(line: str) -> None:
    """Write ``line`` where torchrun reads a failed process's error (its report shows it)."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    # A nicety of the report: never fail the exit over it.
    with contextlib.suppress(OSError), open(path, "w", encoding="utf-8") as file:
        # The layout torchrun's own @record writes: its summary shows "py_callstack".
        extra = {"py_callstack": line, "timestamp": str(int(time.time()))}
        json.dump({"message": {"message": line, "extraInfo": extra}}, file)
