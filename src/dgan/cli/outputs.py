"""Checks of the files a command will write, made before any work starts.

The rule (the command line's, stated in the README): an output is never one of the
command's input files (paths are compared after resolving links, so a link to the data
counts as the data), never the same file as another output, and never an existing file
unless overwriting is asked for (``--force``). Its folder must exist or be creatable,
and be writable; tables need a supported format. Every problem is reported at once,
before training, generating or evaluating, so a long run never fails at the end.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "data.csv").write_text("x\\n1\\n")
    4
    >>> try:
    ...     check_outputs({"-o": folder / "data.csv"}, inputs=[folder / "data.csv"])
    ... except ParameterError as error:
    ...     print(str(error).split("; ")[1])
    writing it would destroy the input. Choose another output name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from dgan.cli.messages import in_flag_words
from dgan.cli.tables import check_table_format
from dgan.errors import ParameterError, raise_all
from dgan.storage.folder import check_resume_path


def check_outputs(
    outputs: Mapping[str, str | os.PathLike | None],
    *,
    inputs: Iterable[str | os.PathLike | None] = (),
    tables: Iterable[str] = (),
    force: bool = False,
) -> dict[str, Path]:
    """Check every output path (by the flag that names it); create missing folders.

    Args:
        outputs: ``{flag: path}``, e.g. ``{"-o": "model.dgan", "--json": None}``; None
            means "not asked for" and is skipped.
        inputs: the files the command reads; an output may not be one of them.
        tables: the flags whose outputs are tables (their format is checked too).
        force: allow overwriting existing files (never inputs).

    Returns:
        ``{flag: Path}`` of the outputs asked for.

    Raises:
        ParameterError: listing every problem, each with its fix.
    """
    given = {flag: Path(path) for flag, path in outputs.items() if path is not None}
    tables = set(tables)
    input_files = [Path(p) for p in inputs if p is not None]
    problems: list[str] = []
    seen: dict[str, str] = {}
    for flag, path in given.items():
        where = f"{flag} {str(path)!r}"
        real = os.path.realpath(path)
        same_input = next((p for p in input_files if _same_file(path, p)), None)
        if same_input is not None:
            problems.append(
                f"{where} is the input file {str(same_input)!r}; writing it would destroy "
                "the input. Choose another output name."
            )
            continue
        if real in seen:
            problems.append(f"{where} is the same file as {seen[real]}; give each output its own.")
            continue
        seen[real] = flag
        if path.is_dir():
            problems.append(f"{where} is a folder; give a file name.")
            continue
        if path.exists() and not force:
            problems.append(
                f"{where} exists; pass --force to overwrite it, or choose another name."
            )
        if (problem := _folder_problem(path, where)) is not None:
            problems.append(problem)
        if flag in tables:
            try:
                check_table_format(path)
            except ParameterError as error:  # names the file or the missing package
                problems.append(str(error))
    raise_all(problems, ParameterError, "the output files")
    for path in given.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    return given


def check_checkpoint_paths(resume: str | None, checkpoint_dir: str | None) -> None:
    """Check ``--resume`` and the checkpoint folder before any work, as outputs are: a
    resume path must be a checkpoint file or a folder (`check_resume_path`), the
    checkpoint folder a folder that exists or can be created, and writable. (Training
    then takes the folder for its run before the first epoch: `dgan.storage.folder`.)

    Example:
        >>> check_checkpoint_paths("ckpt/checkpoint-00002.dgan", None)
        Traceback (most recent call last):
        ...
        dgan.errors.ParameterError: --resume 'ckpt/checkpoint-00002.dgan': there is no such checkpoint file. Give an existing checkpoint (e.g. the newest in its folder) or the checkpoint folder itself.
    """  # noqa: E501
    problems = []
    if resume is not None:
        try:
            check_resume_path(resume)
        except ParameterError as error:
            problems.append(in_flag_words(str(error)))
    if checkpoint_dir is not None:
        folder, where = Path(checkpoint_dir), f"--checkpoint-dir {checkpoint_dir!r}"
        if not checkpoint_dir.strip():
            problems.append("--checkpoint-dir is empty; give a folder ('.' for the current one).")
        elif folder.exists() and not folder.is_dir():
            problems.append(f"{where} is a file, not a folder; give a folder for the checkpoints.")
        elif (problem := _folder_problem(folder / "checkpoint", where)) is not None:
            problems.append(problem)
    raise_all(problems, ParameterError, "the checkpoint paths")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths are one file: same resolved path, or (both existing) same inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _folder_problem(path: Path, where: str) -> str | None:
    """Why ``path``'s folder cannot hold it (None if it can, or can be created)."""
    existing = path.parent  # as the user wrote it, for the message
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{where}: {str(existing)!r} is a file, not a folder; choose another location."
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{where}: the folder {str(existing)!r} is not writable; choose another location."
    return None
