"""``python -m dgan``: the ``dgan`` command line, also under torchrun.

Example:
    ``torchrun --nproc-per-node=2 -m dgan train data.csv -o model.dgan`` trains one model
    with two processes (see dgan.train.distributed); ``python -m dgan --help`` lists commands.
"""

import contextlib
import os
import sys

from dgan.cli.launch import main  # sets OpenMP's wait policy before torch loads

if __name__ == "__main__":
    # Under torchrun every process runs the command; rank 0 alone prints its output, and
    # the errors all processes meet alike (dgan.cli.ranks).
    with contextlib.ExitStack() as stack:
        if os.environ.get("RANK", "0") != "0":
            stack.enter_context(contextlib.redirect_stdout(open(os.devnull, "w")))  # noqa: SIM115
        status = main()
    sys.exit(status)
