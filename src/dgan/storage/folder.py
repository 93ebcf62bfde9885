"""The checkpoint folder rule: one run writes into a checkpoint folder, and it writes,
replaces and deletes only its own files.

- **The lock.** A run that checkpoints into a folder holds ``DIR/dgan.lock`` from before
  its first epoch until its training call ends: an exclusive lock (``flock``) on that
  file, whose contents say which run holds it (run id, process id, host, start time;
  JSON). The operating system releases the lock when the process ends, however it ends
  (an exception, Ctrl-C, SIGKILL, a crash), so a lock file left by a killed run is stale:
  the next run takes it over and says so in the log; nobody deletes it by hand. A run
  that finds the lock held is refused at once, with the holder's identity. Taking the
  lock also proves the folder usable before any training: it is created if missing and
  must accept a new file, so a path that is a file, lies below one, or is read-only is a
  `ParameterError` naming it. The lock file is opened without following links and must
  be a regular file of one name: a ``dgan.lock`` that is a symbolic or hard link (say, to
  a file of the user's) is refused, never truncated or written through.
- **Ownership.** Every checkpoint records its run's id (``run_id``). A fresh run gets a
  new id; a run resumed from a checkpoint in the same folder keeps that checkpoint's id
  (it is the same run, continued); a run resumed into another folder is a new run there.
  A run refuses a folder that holds another run's checkpoints, or files named like
  checkpoints that it cannot read (unless it resumes from that folder: then they are its
  own damaged ones, skipped when choosing where to resume), or its own loadable
  checkpoints from beyond the epoch it starts at (a second future of the same run, which
  a later resume would mix up with this one).
- **Pruning and leftovers.** Only the run's own checkpoints are pruned to the newest
  ``checkpoint_keep``; half-written temporaries (``.checkpoint-*.tmp``) left by a killed
  write are deleted only when their name carries this run's id.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> run = RunFolder.open(folder, "a1b2", start=0)
    >>> try:
    ...     RunFolder.open(folder, "c3d4", start=0)
    ... except ParameterError as error:
    ...     print(str(error).split(" (")[0].replace(folder, "DIR"))
    checkpoint_dir 'DIR' is in use by another training run
    >>> run.close()
    >>> RunFolder.open(folder, "c3d4", start=0).close()  # free again
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import logging
import os
import re
import secrets
import socket
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dgan.errors import ParameterError, SerializationError
from dgan.storage.format import read_header, read_model_file

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None
    import msvcrt

logger = logging.getLogger(__name__)

LOCK_NAME = "dgan.lock"
CHECKPOINT_NAME = re.compile(r"checkpoint-(\d+)\.dgan")
_WINDOWS_LOCK_OFFSET = 1 << 20  # a byte past the identity, so that others can still read it


def checkpoint_path(folder: str | os.PathLike, epochs_trained: int) -> Path:
    """Where the checkpoint after ``epochs_trained`` epochs (in all) goes.

    Example:
        >>> checkpoint_path("ckpt", 12).name
        'checkpoint-000012.dgan'
    """
    return Path(folder) / f"checkpoint-{epochs_trained:06d}.dgan"


def list_checkpoints(folder: str | os.PathLike) -> list[tuple[int, Path]]:
    """``(epochs trained, path)`` of the checkpoints in ``folder``, oldest first.

    Example:
        >>> list_checkpoints("/no/such/folder")
        []
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.iterdir():
        match = CHECKPOINT_NAME.fullmatch(path.name)
        if match and path.is_file():
            found.append((int(match.group(1)), path))
    return sorted(found)


def new_run_id() -> str:
    """A new run's id: 16 random hex digits.

    Example:
        >>> len(new_run_id()), new_run_id() != new_run_id()
        (16, True)
    """
    return secrets.token_hex(8)


def run_id_of(path: str | os.PathLike) -> str | None:
    """The id of the run that wrote the checkpoint ``path`` (None in a checkpoint from
    before dgan recorded run ids); SerializationError when its header cannot be read.

    Example:
        >>> run_id_of("no-such-checkpoint.dgan")
        Traceback (most recent call last):
        ...
        dgan.errors.SerializationError: No model file at 'no-such-checkpoint.dgan'; check the path.
    """
    run = read_header(path).get("checkpoint")
    if not isinstance(run, dict):
        raise SerializationError(f"{str(path)!r} is not a training checkpoint.")
    run_id = run.get("run_id")
    return run_id if isinstance(run_id, str) else None


def check_resume_path(path: str | os.PathLike) -> Path:
    """``path`` as a place to resume from: a checkpoint file, or a folder of them (which
    may not exist yet: the run then starts). ParameterError for a missing file (a path
    ending in ``.dgan``, e.g. a misspelt checkpoint name, which would otherwise start the
    run from scratch) and for anything else that is neither a file nor a folder.

    Example:
        >>> check_resume_path("ckpt/checkpoint-00002.dgan")
        Traceback (most recent call last):
        ...
        dgan.errors.ParameterError: resume_from='ckpt/checkpoint-00002.dgan': there is no such checkpoint file. Give an existing checkpoint (e.g. the newest in its folder) or the checkpoint folder itself.
    """  # noqa: E501
    path = Path(path)
    given = f"resume_from={str(path)!r}"
    if "\0" in str(path):
        raise ParameterError(f"{given} contains a NUL character; give a path.")
    if path.is_file() or path.is_dir():
        return path
    if path.exists():
        raise ParameterError(
            f"{given} is neither a checkpoint file nor a folder; give either of those."
        )
    if path.suffix.lower() == ".dgan":
        raise ParameterError(
            f"{given}: there is no such checkpoint file. Give an existing checkpoint (e.g. "
            "the newest in its folder) or the checkpoint folder itself."
        )
    return path


def resume_folder(path: str | os.PathLike) -> Path:
    """The checkpoint folder of a `check_resume_path` path: the folder a checkpoint file
    is in, else the path itself.

    Example:
        >>> str(resume_folder("ckpt/checkpoint-000002.dgan")), str(resume_folder("ckpt"))
        ('ckpt', 'ckpt')
    """
    path = Path(path)
    return path.parent if path.is_file() or path.suffix.lower() == ".dgan" else path


class RunFolder:
    """A checkpoint folder as one run holds it: locked, knowing which checkpoints are its
    own (see the module). `open` it before the first epoch; `close` it at the end.

    Attributes:
        folder: the checkpoint folder.
        run_id: the id of the run holding it.
        owned: ``{epochs trained: path}`` of this run's checkpoints in the folder.
    """

    def __init__(self, folder: Path, run_id: str, lock: FolderLock, owned: dict[int, Path]):
        self.folder = folder
        self.run_id = run_id
        self.lock = lock
        self.owned = owned

    @classmethod
    def open(
        cls,
        folder: str | os.PathLike,
        run_id: str,
        *,
        start: int,
        also_owned: Iterable[str | None] = (),
        resumed_here: bool = False,
    ) -> RunFolder:
        """Lock ``folder`` for the run ``run_id`` starting after ``start`` epochs (in all),
        check that no other run's checkpoints are in it, and delete this run's leftover
        temporaries. ``also_owned``: older ids of this run (a checkpoint from before run
        ids has None); ``resumed_here``: the run resumes from a checkpoint in this folder.

        Raises ParameterError (the lock held, the folder unusable, or holding files of
        another run), saying what to do.

        Example:
            >>> import tempfile
            >>> run = RunFolder.open(tempfile.mkdtemp(), new_run_id(), start=0)
            >>> run.owned
            {}
            >>> run.close()
        """
        folder = Path(folder)
        lock = FolderLock.acquire(folder, run_id)
        try:
            owned = _owned(folder, {run_id, *also_owned}, start, resumed_here)
            for leftover in folder.glob(f".checkpoint-*.{run_id}-*.tmp"):
                leftover.unlink(missing_ok=True)  # a write of this run that was killed
        except BaseException:
            lock.release()
            raise
        return cls(folder, run_id, lock, owned)

    @property
    def temporary_tag(self) -> str:
        """What this run's temporary files carry in their names (`write_model_file`'s tag)."""
        return f"{self.run_id}-"

    def prune(self, written: tuple[int, Path], keep: int) -> None:
        """Record the checkpoint just ``written`` as this run's and delete this run's
        checkpoints older than the newest ``keep`` up to it; no other file is touched.

        The one just written is the newest: higher-numbered ones of this run are damaged
        leftovers of its interrupted future (loadable ones are refused when the folder is
        opened), which resuming skips and this run's later checkpoints replace. Counting
        them would delete the checkpoint just written and keep only damaged ones.
        """
        self.owned[written[0]] = written[1]
        up_to = sorted(epochs for epochs in self.owned if epochs <= written[0])
        for epochs in up_to[:-keep]:
            self.owned.pop(epochs).unlink(missing_ok=True)

    def close(self) -> None:
        """Release the folder."""
        self.lock.release()


def _owned(folder: Path, ids: set[str | None], start: int, resumed_here: bool) -> dict[int, Path]:
    """This run's checkpoints in ``folder``; ParameterError for anything that is not."""
    owned, others, unreadable, beyond = {}, [], [], []
    for epochs, path in list_checkpoints(folder):
        try:
            mine = run_id_of(path) in ids
        except SerializationError:
            if not resumed_here:
                unreadable.append(path.name)
                continue
            mine = True  # this run's own, damaged: skipped when choosing where to resume
        else:
            if mine and epochs > start and _loads(path):  # not one skipped as damaged
                beyond.append(path.name)
        if mine:
            owned[epochs] = path
        else:
            others.append(path.name)
    where = f"checkpoint_dir {str(folder)!r}"
    if others:
        raise ParameterError(
            f"{where} holds checkpoints of another training run ({_names(others)}), and a "
            f"run never replaces or deletes another run's files; resume it with "
            f"resume_from={str(folder)!r}, or give this run an empty checkpoint_dir."
        )
    if unreadable:
        raise ParameterError(
            f"{where} holds files named like checkpoints that are not readable dgan "
            f"checkpoints ({_names(unreadable)}); move them away, or give this run an "
            "empty checkpoint_dir."
        )
    if beyond:
        raise ParameterError(
            f"{where} holds checkpoints of this run from after epoch {start}, where it now "
            f"starts ({_names(beyond)}); resume from the newest (resume_from="
            f"{str(folder)!r}), or give this run another checkpoint_dir."
        )
    return owned


def _loads(path: Path) -> bool:
    try:
        read_model_file(path)
    except SerializationError:
        return False
    return True


def _names(names: list[str]) -> str:
    return ", ".join(names[-3:]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


class FolderLock:
    """The lock a training run holds on its checkpoint folder (see the module).

    Attributes:
        path: the lock file, ``folder / "dgan.lock"``.
        identity: what the file says about the run holding it.
    """

    def __init__(self, path: Path, fd: int, identity: dict[str, Any]):
        self.path = path
        self.identity = identity
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: str | os.PathLike, run_id: str) -> FolderLock:
        """Create ``folder`` if needed and lock it for the run ``run_id``.

        Raises ParameterError when another live run holds the folder, or when the folder
        cannot be created or written (the message names it and the fix).

        Example:
            >>> import tempfile
            >>> lock = FolderLock.acquire(tempfile.mkdtemp(), "run-a")
            >>> lock.identity["run_id"], lock.path.name
            ('run-a', 'dgan.lock')
            >>> lock.release()
        """
        folder = Path(folder)
        path = folder / LOCK_NAME
        identity = {
            "run_id": run_id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        }
        try:
            folder.mkdir(parents=True, exist_ok=True)
            while True:
                fd = _open_lock_file(path)
                try:
                    lock = cls._lock(fd, path, folder, identity)
                except BaseException:
                    os.close(fd)
                    raise
                if lock is not None:
                    return lock
                os.close(fd)  # the file was removed by a run releasing it: lock the new one
        except OSError as e:
            raise ParameterError(
                f"checkpoint_dir {str(folder)!r} cannot hold checkpoints: "
                f"{e.strerror or e} ({str(e.filename or folder)!r}). Give a folder this "
                "process can create and write, or leave checkpoint_dir out."
            ) from e

    @classmethod
    def _lock(
        cls, fd: int, path: Path, folder: Path, identity: dict[str, Any]
    ) -> FolderLock | None:
        if not _try_lock(fd):
            holder = _read(fd)
            for _ in range(20):  # a run that has just locked it writes its identity next
                if holder is not None:
                    break
                time.sleep(0.05)
                holder = _read(fd)
            raise ParameterError(_in_use(folder, holder))
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                previous = _read(fd)
                if previous:
                    logger.warning(
                        "Taking over %s: the run that held it (%s) ended without releasing it.",
                        path,
                        _who(previous),
                    )
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, json.dumps(identity).encode())
                os.fsync(fd)
                return cls(path, fd, identity)
        return None

    def release(self) -> None:
        """Remove the lock file and let go of the lock (the folder is free again)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # already gone, or Windows (open files stay)
            if os.path.samestat(os.fstat(self._fd), os.lstat(self.path)):  # still ours
                self.path.unlink()
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = None

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open_lock_file(path: Path) -> int:
    """A descriptor of the lock file at ``path``, created if missing, never through a link
    (``O_NOFOLLOW``; where it is missing, as on Windows, the path is checked first):
    ParameterError for a link, or for anything but a regular file with one name."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    fix = (
        f"dgan never writes its lock through a link, so as not to overwrite the file it "
        f"points to; remove {str(path)!r} (it is not dgan's) or give another checkpoint_dir."
    )
    if not nofollow and os.path.islink(path):  # pragma: no cover - Windows
        raise ParameterError(f"{str(path)!r} is a symbolic link: {fix}")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | nofollow, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ParameterError(f"{str(path)!r} is a symbolic link: {fix}") from e
        raise
    status = os.fstat(fd)  # no names: removed by a run releasing it (`acquire` retries)
    if not stat.S_ISREG(status.st_mode) or status.st_nlink > 1:
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(status.st_mode) else "a hard link"
        raise ParameterError(f"{str(path)!r} is {what}: {fix}")
    return fd


def _try_lock(fd: int) -> bool:
    """Lock ``fd`` exclusively without waiting; False when another process holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)  # pragma: no cover - Windows
    try:  # pragma: no cover - Windows
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:  # pragma: no cover - Windows
        return False
    return True  # pragma: no cover - Windows


def _read(fd: int) -> dict[str, Any] | None:
    """The identity in a lock file (None when empty or unreadable)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 4096).decode() or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _who(identity: dict[str, Any]) -> str:
    return (
        f"run {identity.get('run_id')}, process {identity.get('pid')} on "
        f"{identity.get('host')}, since {identity.get('started')}"
    )


def _in_use(folder: Path, holder: dict[str, Any] | None) -> str:
    who = f" ({_who(holder)})" if holder else ""
    return (
        f"checkpoint_dir {str(folder)!r} is in use by another training run{who}: one run "
        "writes into a checkpoint folder at a time. Give this run another checkpoint_dir, "
        "or wait until that run ends."
    )
