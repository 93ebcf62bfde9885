"""dgan: DoppelGANger time-series GANs with fast, numerically safe mixed precision."""

from dgan import errors
from dgan.config import DfStyle, DGANConfig, Normalization, OutputType

__all__ = ["DGANConfig", "DfStyle", "Normalization", "OutputType", "errors"]
__version__ = "0.1.0"
