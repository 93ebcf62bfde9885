"""Entry point of the ``dgan`` command: threads first, then the command line.

It prepares OpenMP before anything imports torch (`dgan.cli.threads.prepare_openmp`), so this
module and ``dgan/__init__`` import nothing heavy at load time.
"""

from __future__ import annotations

from collections.abc import Sequence

from dgan.cli.threads import prepare_openmp


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dgan`` (see `dgan.cli.main.main`) with OpenMP's passive wait policy by default."""
    prepare_openmp()
    from dgan.cli.main import main as cli_main  # imports torch: after the policy is set

    return cli_main(argv)
