"""The TimeGAN evaluation protocol: discriminative and predictive scores.

These are the two numbers most time-series GAN and diffusion papers report (TimeGAN,
NeurIPS 2019; Diffusion-TS, ICLR 2024; ...), implemented here from their definition so
dgan's results can be set beside published tables. Both take windows as float arrays of
shape (n, T, dim) **already scaled to [0, 1]** (the papers min-max scale each feature with
the real data's range), or lists of (T_i, dim) arrays for series of different lengths.

* `timegan_discriminative_score`: a one-layer GRU with ``int(dim / 2)`` hidden units and a
  linear output learns to tell real from synthetic windows (Adam, lr 1e-3, 2,000
  iterations of 128 real + 128 synthetic windows from an 80/20 train/test split of each
  set); the score is ``|0.5 - test accuracy|``, averaged over ``runs`` fresh classifiers.
  0 means indistinguishable, 0.5 means always told apart.
* `timegan_predictive_score`: a one-layer GRU with ``int(dim / 2)`` hidden units and a
  sigmoid output predicts the last feature one step ahead from the other features; it is
  trained on synthetic windows (5,000 iterations, batch 128, L1 loss) and scored by its
  mean absolute error on all real windows. The same network trained on real windows gives
  the "train on real" reference beside it. Lower is better.

These are deliberately the papers' tiny networks, not dgan's own learned metrics
(`discriminative_score`, `train_synthetic_test_real`), which use a larger classifier,
attributes and held-out data; use those for your own data and these to compare with
published numbers. Runs are seeded and reproducible; torch runs on one CPU thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import numpy as np
import torch
from torch import nn

from dgan.errors import DataError, ParameterError
from dgan.noise import seeded_cpu_rng

__all__ = ["timegan_discriminative_score", "timegan_predictive_score"]

Windows = np.ndarray | Sequence[np.ndarray]


@contextlib.contextmanager
def _protocol_context(seed: int) -> Iterator[None]:
    """One CPU thread and a private torch RNG stream; the caller's state is restored."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with seeded_cpu_rng(seed):
            yield
    finally:
        torch.set_num_threads(previous)


def _as_padded(windows: Windows, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(n, T, dim) float32 zero-padded array and the (n,) lengths, after checks."""
    if isinstance(windows, np.ndarray) and windows.dtype != object:
        if windows.ndim != 3:
            raise DataError(
                f"{what} must be a (n, T, dim) array or a list of (T, dim) arrays; got an "
                f"array of shape {windows.shape}. Reshape it to (examples, steps, features)."
            )
        series = list(windows)
    else:
        series = [np.asarray(s) for s in windows]
    if not series:
        raise DataError(f"{what} is empty; pass at least 2 windows.")
    dims = {s.shape[1] if s.ndim == 2 else None for s in series}
    if len(dims) != 1 or None in dims:
        raise DataError(
            f"every window of {what} must be a (T, dim) array with the same dim; got dims "
            f"{sorted(str(d) for d in dims)}."
        )
    lengths = np.array([len(s) for s in series])
    if lengths.min() < 1:
        raise DataError(f"{what} holds an empty window; drop windows of length 0.")
    out = np.zeros((len(series), lengths.max(), dims.pop()), dtype=np.float32)
    for i, s in enumerate(series):
        out[i, : len(s)] = s
    if not np.isfinite(out).all():
        raise DataError(
            f"{what} holds NaN or infinite values; the TimeGAN protocol needs finite data "
            "scaled to [0, 1]."
        )
    return out, lengths


def _check_pair(real: Windows, synthetic: Windows) -> tuple[tuple, tuple]:
    r, s = _as_padded(real, "real"), _as_padded(synthetic, "synthetic")
    if r[0].shape[2] != s[0].shape[2]:
        raise DataError(
            f"real windows have {r[0].shape[2]} features but synthetic ones have "
            f"{s[0].shape[2]}; compare the same features."
        )
    return r, s


def _check_positive(value: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}.")


class _GRUHead(nn.Module):
    """One-layer GRU, then a linear map of its output (at every step or the last one)."""

    def __init__(self, dim_in: int, hidden: int):
        super().__init__()
        self.gru = nn.GRU(dim_in, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.gru(x)[0]).squeeze(-1)  # (n, T)


def _last_step(per_step: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    return per_step.gather(1, (lengths - 1).unsqueeze(1)).squeeze(1)


def _split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(n)
    cut = int(0.8 * n)
    return order[:cut], order[cut:]


def _one_discriminative_run(
    real: tuple, synth: tuple, rng: np.random.Generator, iterations: int, batch_size: int
) -> float:
    dim = real[0].shape[2]
    x = torch.from_numpy(np.concatenate([_pad_to(real[0], synth[0]), _pad_to(synth[0], real[0])]))
    lengths = torch.from_numpy(np.concatenate([real[1], synth[1]]))
    labels = torch.cat([torch.ones(len(real[0])), torch.zeros(len(synth[0]))])
    r_train, r_test = _split(len(real[0]), rng)
    s_train, s_test = _split(len(synth[0]), rng)
    s_train, s_test = s_train + len(real[0]), s_test + len(real[0])
    if min(len(r_train), len(r_test), len(s_train), len(s_test)) < 1:
        raise DataError("the discriminative score needs at least 2 real and 2 synthetic windows.")
    net = _GRUHead(dim, max(1, dim // 2))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.BCEWithLogitsLoss()
    for _ in range(iterations):
        rows = torch.from_numpy(
            np.concatenate([rng.choice(r_train, batch_size), rng.choice(s_train, batch_size)])
        )
        logits = _last_step(net(x[rows]), lengths[rows])
        loss = loss_fn(logits, labels[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        rows = torch.from_numpy(np.concatenate([r_test, s_test]))
        predicted = _last_step(net(x[rows]), lengths[rows]) > 0
        accuracy = (predicted == labels[rows].bool()).float().mean().item()
    return abs(0.5 - accuracy)


def _pad_to(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a`` zero-padded in time to the longer of the two arrays."""
    steps = max(a.shape[1], b.shape[1])
    return np.pad(a, ((0, 0), (0, steps - a.shape[1]), (0, 0)))


def timegan_discriminative_score(
    real: Windows,
    synthetic: Windows,
    *,
    runs: int = 10,
    iterations: int = 2000,
    batch_size: int = 128,
    seed: int = 0,
) -> float:
    """TimeGAN-protocol discriminative score: ``|0.5 - accuracy|`` of a post-hoc GRU classifier.

    Args:
        real, synthetic: windows scaled to [0, 1]: (n, T, dim) arrays or lists of
            (T_i, dim) arrays (the classifier reads each window's last valid step).
        runs: fresh classifiers to train; the score is their mean (the protocol uses 10).
        iterations: Adam steps per classifier (protocol: 2,000).
        batch_size: real windows per step, and as many synthetic ones (protocol: 128).
        seed: seeds the train/test splits, batches and initial weights.

    Returns:
        The mean over runs of ``|0.5 - test accuracy|``: 0 when the classifier cannot tell
        the sets apart, 0.5 when it always can. The runs' scores are often bimodal (the
        small GRU either finds a difference or stays near chance; see
        `timegan_discriminative_runs`), so means over few runs are noisy.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> real = rng.random((60, 8, 2))
        >>> score = timegan_discriminative_score(real, real + 0.0, runs=1, iterations=20)
        >>> 0.0 <= score <= 0.5
        True
    """
    scores = timegan_discriminative_runs(
        real, synthetic, runs=runs, iterations=iterations, batch_size=batch_size, seed=seed
    )
    return float(np.mean(scores))


def timegan_discriminative_runs(
    real: Windows,
    synthetic: Windows,
    *,
    runs: int = 10,
    iterations: int = 2000,
    batch_size: int = 128,
    seed: int = 0,
) -> list[float]:
    """Each classifier's ``|0.5 - accuracy|``: what `timegan_discriminative_score` averages.

    Useful to see the spread: classifiers trained on one synthetic set can score near 0
    or near 0.3 from run to run (docs/quality.md, "How far to trust a discriminative
    score").

    Example:
        >>> import numpy as np
        >>> real = np.random.default_rng(0).random((60, 8, 2))
        >>> len(timegan_discriminative_runs(real, real + 0.0, runs=2, iterations=5))
        2
    """
    for value, name in ((runs, "runs"), (iterations, "iterations"), (batch_size, "batch_size")):
        _check_positive(value, name)
    real_p, synth_p = _check_pair(real, synthetic)
    rng = np.random.default_rng(seed)
    with _protocol_context(seed):
        return [
            _one_discriminative_run(real_p, synth_p, rng, iterations, batch_size)
            for _ in range(runs)
        ]


def _fit_predictor(
    train: tuple, rng: np.random.Generator, iterations: int, batch_size: int
) -> nn.Module:
    x, lengths = train
    dim = x.shape[2]
    inputs = torch.from_numpy(x[:, :-1, :-1])
    targets = torch.from_numpy(x[:, 1:, -1])
    mask = torch.from_numpy(np.arange(x.shape[1] - 1)[None, :] < (lengths[:, None] - 1))
    net = _GRUHead(dim - 1, max(1, dim // 2))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(iterations):
        rows = torch.from_numpy(rng.choice(len(x), batch_size))
        error = (torch.sigmoid(net(inputs[rows])) - targets[rows]).abs()
        loss = (error * mask[rows]).sum() / mask[rows].sum().clamp(min=1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return net


def _mae(net: nn.Module, test: tuple) -> float:
    """Mean over windows of each window's mean absolute error (TimeGAN's reduction)."""
    x, lengths = test
    with torch.no_grad():
        predicted = torch.sigmoid(net(torch.from_numpy(x[:, :-1, :-1]))).numpy()
    steps = np.arange(x.shape[1] - 1)[None, :] < (lengths[:, None] - 1)
    error = np.abs(predicted - x[:, 1:, -1]) * steps
    return float(np.mean(error.sum(axis=1) / np.maximum(steps.sum(axis=1), 1)))


def timegan_predictive_score(
    real: Windows,
    synthetic: Windows | None,
    *,
    iterations: int = 5000,
    batch_size: int = 128,
    seed: int = 0,
) -> float:
    """TimeGAN-protocol predictive score: MAE on real data of a GRU trained on synthetic data.

    The network sees features ``0..dim-2`` up to step t and predicts feature ``dim-1`` at
    step t+1 (through a sigmoid, so targets must be in [0, 1]).

    Args:
        real: windows scaled to [0, 1], (n, T, dim) with dim >= 2 and T >= 2, or a list of
            (T_i, dim) arrays; the test set (all of it).
        synthetic: the training set, same features; None trains on ``real`` itself, which
            gives the train-on-real reference to report beside the score.
        iterations: Adam steps (protocol: 5,000), each on ``batch_size`` windows (128).
        seed: seeds the batches and the initial weights.

    Returns:
        The mean absolute error on the real windows (lower is better; compare it with the
        train-on-real value for the same data).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> real = rng.random((40, 6, 3))
        >>> mae = timegan_predictive_score(real, real[::-1].copy(), iterations=10)
        >>> 0.0 < mae < 1.0
        True
        >>> timegan_predictive_score(real, None, iterations=10) > 0  # train on real
        True
    """
    for value, name in ((iterations, "iterations"), (batch_size, "batch_size")):
        _check_positive(value, name)
    real_p, train_p = _check_pair(real, real if synthetic is None else synthetic)
    for what, (x, lengths) in (("real", real_p), ("synthetic", train_p)):
        if x.shape[2] < 2 or lengths.min() < 2:
            raise DataError(
                f"the predictive score needs at least 2 features and 2 time steps per "
                f"window; {what} windows have {x.shape[2]} feature(s) and as few as "
                f"{lengths.min()} step(s)."
            )
    rng = np.random.default_rng(seed)
    with _protocol_context(seed):
        net = _fit_predictor(train_p, rng, iterations, batch_size)
        return _mae(net, real_p)
