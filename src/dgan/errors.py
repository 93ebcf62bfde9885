"""Exceptions raised by dgan.

Every message names what is wrong (the field, column or example) and ends with the fix.
Validation collects all problems of one input and raises once, so a user fixes their
data in one pass rather than one error at a time.
"""

from __future__ import annotations

from collections.abc import Iterable


class DGANError(Exception):
    """Base class of every error dgan raises on purpose."""


class ParameterError(DGANError, ValueError):
    """A configuration value or argument is invalid."""


class DataError(DGANError, ValueError):
    """Training or conditioning data cannot be used as given."""


class SequenceLengthError(ParameterError, DataError):
    """Series are longer than ``max_sequence_len`` (or a fixed-length array has another
    length): a setting and the data disagree. gretel raises a ParameterError here, dgan
    used to raise a DataError; this is both, so either ``except`` clause catches it."""


class SerializationError(DGANError):
    """A saved model file is missing, corrupt, or not a dgan model."""


class NotTrainedError(DGANError, RuntimeError):
    """A method that needs a trained model was called before training."""


class DistributedError(DGANError, RuntimeError):
    """Another process of a distributed training run failed, was killed or timed out."""


def raise_all(problems: Iterable[str], error: type[DGANError], what: str) -> None:
    """Raise ``error`` listing every problem at once, or do nothing if there are none.

    Example:
        >>> raise_all([], DataError, "features")  # nothing to report
    """
    problems = list(problems)
    if not problems:
        return
    if len(problems) == 1:
        raise error(problems[0])
    listing = "\n".join(f"  - {p}" for p in problems)
    raise error(f"{len(problems)} problems with {what}:\n{listing}")
