"""dgan: DoppelGANger time-series GANs with fast, numerically safe mixed precision.

Example:
    >>> from dgan import DGAN, DGANConfig
    >>> model = DGAN(DGANConfig(max_sequence_len=20, sample_len=5))
"""

from typing import TYPE_CHECKING

from dgan import errors
from dgan.config import DfStyle, DGANConfig, Normalization, OutputType
from dgan.version import __version__

if TYPE_CHECKING:
    from dgan import datasets
    from dgan.model import DGAN
    from dgan.train.loop import ProgressInfo

__all__ = [
    "DGAN",
    "DGANConfig",
    "DfStyle",
    "Normalization",
    "OutputType",
    "ProgressInfo",
    "__version__",
    "datasets",
    "errors",
]

# Loaded on first use, so that `import dgan` (and the `dgan` command's start-up) does not
# import torch: the command sets OpenMP's wait policy first (dgan.cli.threads).
_LAZY = {"DGAN": "dgan.model", "ProgressInfo": "dgan.train.loop", "datasets": "dgan.datasets"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        value = module if name == "datasets" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dgan' has no attribute {name!r}")
