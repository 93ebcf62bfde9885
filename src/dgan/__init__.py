"""dgan: DoppelGANger time-series GANs with fast, numerically safe mixed precision.

Example:
    >>> from dgan import DGAN, DGANConfig
    >>> model = DGAN(DGANConfig(max_sequence_len=20, sample_len=5))
"""

from dgan import errors
from dgan.config import DfStyle, DGANConfig, Normalization, OutputType
from dgan.model import DGAN
from dgan.training import ProgressInfo

__all__ = [
    "DGAN",
    "DGANConfig",
    "DfStyle",
    "Normalization",
    "OutputType",
    "ProgressInfo",
    "errors",
]
__version__ = "0.1.0"
