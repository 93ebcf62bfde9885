"""`EncodedData`: a dataset in the networks' representation, and its digest; `series_ends`,
where a generated series ends in it, and `flag_lengths` by that rule; `varies_in_length`,
whether data needs the end encoded at all; `encode_lengths` and `lengths_from_unit`, each
series' length as a generated attribute (``length_attribute``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np


@dataclass(eq=False)
class EncodedData:
    """A dataset in the networks' representation (float32), before moving to a device.

    ``attributes`` and ``additional_attributes`` are None when the model has none
    (absence is decided when the encoder is built, never NaN-filled). The arrays are not
    to be changed once made: the digest is computed once and kept.
    """

    attributes: np.ndarray | None  # (N, A_enc)
    # (N, 2 * continuous features [+ 1, the length, with length_attribute])
    additional_attributes: np.ndarray | None
    features: np.ndarray  # (N, T, F_enc), zero after each series' end
    lengths: np.ndarray  # (N,) int64
    _digest: str | None = field(default=None, init=False, repr=False)

    def digest(self) -> str:
        """SHA-256 of the arrays (names, dtypes, shapes and bytes): checkpoints and the
        processes of a distributed run compare it to be sure they hold the same data.
        Computed on the first call (reading the arrays in place, without a copy), then
        remembered.

        Example:
            >>> a = EncodedData(None, None, np.zeros((2, 3, 1), np.float32), np.array([3, 3]))
            >>> b = EncodedData(None, None, a.features + 1, a.lengths)
            >>> a.digest() == a.digest(), a.digest() == b.digest()
            (True, False)
        """
        if self._digest is not None:
            return self._digest
        digest = hashlib.sha256()
        for name in ("attributes", "additional_attributes", "features", "lengths"):
            array = getattr(self, name)
            if array is None:
                digest.update(f"{name}|none|".encode())
                continue
            array = np.ascontiguousarray(array)
            digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
            digest.update(memoryview(array.reshape(-1)).cast("B"))  # the bytes, uncopied
        self._digest = digest.hexdigest()
        return self._digest


def series_ends(continues, ends):
    """Where a series ends: the generation flag's "ends" output is at least "continues".

    The one end-of-series rule, used by the generator (which zeroes every step after
    the end) and by the decoder (which cuts each series there). A tie ends the series.
    Works element-wise on numpy arrays and torch tensors alike.

    Example:
        >>> series_ends(np.array([0.9, 0.5, 0.2]), np.array([0.1, 0.5, 0.8])).tolist()
        [False, True, True]
    """
    return ends >= continues


def flag_lengths(features: np.ndarray, flag: int | None) -> np.ndarray:
    """(N,) the lengths of encoded series ``features`` (N, T, F): up to and including the
    first step where `series_ends` by the flags at ``flag`` and ``flag + 1``; T for all
    where ``flag`` is None (series of one length).

    Example:
        >>> flags = np.array([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]])  # ends at step 1
        >>> flag_lengths(flags, 0).tolist(), flag_lengths(flags, None).tolist()
        ([2], [3])
    """
    n, t_max = features.shape[:2]
    if flag is None:
        return np.full(n, t_max, dtype=np.int64)
    ends = series_ends(features[:, :, flag], features[:, :, flag + 1])  # (N, T)
    ends[:, -1] = True
    return ends.argmax(axis=1).astype(np.int64) + 1


def varies_in_length(lengths: np.ndarray, max_sequence_len: int) -> bool:
    """Whether any of the series' ``lengths`` falls short of ``max_sequence_len``: then the
    encoder adds the generation flag (and the length attribute where asked for).

    Example:
        >>> varies_in_length(np.array([4, 4]), 4), varies_in_length(np.array([4, 3]), 4)
        (False, True)
    """
    return bool((np.asarray(lengths) != max_sequence_len).any())


def encode_lengths(lengths: np.ndarray, max_sequence_len: int, zero_one: bool) -> np.ndarray:
    """(N,) lengths in 1 .. max_sequence_len -> (N,) float32 in the attributes' output
    range ([0, 1] when ``zero_one``, else [-1, 1]), linear in the length. Fixed by
    ``max_sequence_len`` alone, never by the data's lengths (a private run reads none).

    Example:
        >>> encode_lengths(np.array([1, 5, 9]), 9, zero_one=True).tolist()
        [0.0, 0.5, 1.0]
    """
    unit = (np.asarray(lengths, np.float64) - 1) / max(max_sequence_len - 1, 1)
    return (unit if zero_one else 2 * unit - 1).astype(np.float32)


def lengths_from_unit(encoded, max_sequence_len: int, zero_one: bool):
    """The inverse of `encode_lengths` for generated values (torch): the nearest whole
    length, within 1 .. max_sequence_len, as int64.

    Example:
        >>> import torch
        >>> lengths_from_unit(torch.tensor([-0.2, 0.49, 0.51, 1.3]), 9, zero_one=True).tolist()
        [1, 5, 5, 9]
    """
    unit = encoded if zero_one else (encoded + 1) / 2
    steps = 1 + unit.clamp(0, 1) * max(max_sequence_len - 1, 1)
    return steps.round().clamp(1, max_sequence_len).long()
