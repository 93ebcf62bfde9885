"""Learned metrics: a small GRU reads the series (discriminative score, TSTR).

`discriminative_score` asks how easily a classifier tells real from synthetic series;
`train_synthetic_test_real` how well a model trained on synthetic data predicts real data.
Both use attributes and lengths as well as the features; the papers' protocol versions,
for comparison with published tables, are in `dgan.metrics.protocol`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from dgan.errors import ParameterError
from dgan.metrics._common import _check_count, _number, _real_scale, _skipped
from dgan.metrics.data import SeriesData, _columns_of, check_same_columns
from dgan.metrics.distances import factorize_pair
from dgan.metrics.standard_error import accuracy_standard_error, seed_spread
from dgan.noise import seeded_cpu_rng

_CLIP = 10.0
"""Standardized inputs are clipped to +-_CLIP so wild synthetic outliers cannot blow up
the small classifiers (they still make the series easy to tell apart)."""


@dataclass
class _Encoded:
    """One side's series as classifier inputs, encoded with a code book shared by both sides."""

    steps: np.ndarray  # (N, T, D) float32: standardized continuous + one-hot discrete features
    continuous: np.ndarray  # (N, T, Fc) float32: the standardized continuous features alone
    lengths: np.ndarray  # (N,) int64
    static: dict[str, np.ndarray]  # attribute name -> (N, k) float32 block; "__length__" too
    attribute_codes: dict[str, np.ndarray]  # discrete attribute name -> (N,) int64 codes
    attribute_labels: dict[str, list[Any]]  # discrete attribute name -> category of each code

    def static_matrix(self, exclude: str | None = None) -> np.ndarray:
        blocks = [b for name, b in self.static.items() if name != exclude]
        return np.concatenate(blocks, axis=1)  # (N, S)


def _encode_pair(real: SeriesData, synthetic: SeriesData) -> tuple[_Encoded, _Encoded]:
    """Encode both sides for the classifiers: real statistics scale both (no leakage of
    synthetic statistics into the units), and discrete code books span both sides."""
    longest = int(max(real.lengths.max(), synthetic.lengths.max()))
    sides = (real, synthetic)
    step_blocks: tuple[list, list] = ([], [])
    continuous_blocks: tuple[list, list] = ([], [])
    for name, discrete in zip(real.feature_names, real.feature_discrete, strict=True):
        columns = [side.feature_column(name) for side in sides]
        if discrete:
            real_codes, synth_codes, labels = factorize_pair(
                np.concatenate(columns[0]), np.concatenate(columns[1])
            )
            pooled = _cap_categories(real_codes, synth_codes, len(labels))
            n_categories = int(max(pooled[0].max(), pooled[1].max())) + 1
            for k in range(2):
                codes = np.split(pooled[k], np.cumsum(sides[k].lengths)[:-1])
                padded = _pad(codes, longest, fill=n_categories)
                one_hot = np.eye(n_categories + 1, dtype=np.float32)[padded][..., :-1]
                step_blocks[k].append(one_hot)  # (N, T, K); padding is all zero
        else:
            real_pool = np.concatenate(columns[0])
            mean, scale = real_pool.mean(), _real_scale(real_pool)
            for k in range(2):
                scaled = [np.clip((x - mean) / scale, -_CLIP, _CLIP) for x in columns[k]]
                padded = _pad(scaled, longest, fill=0.0)[..., None]  # (N, T, 1)
                step_blocks[k].append(padded)
                continuous_blocks[k].append(padded)
    static, codes, labels = _encode_attributes(real, synthetic)
    encoded = []
    for k, side in enumerate(sides):
        n = side.n_examples
        lengths = side.lengths
        side_static = {name: blocks[k] for name, blocks in static.items()}
        side_static["__length__"] = (lengths / real.lengths.max()).astype(np.float32)[:, None]
        encoded.append(
            _Encoded(
                steps=np.concatenate(step_blocks[k], axis=2).astype(np.float32),
                continuous=(
                    np.concatenate(continuous_blocks[k], axis=2).astype(np.float32)
                    if continuous_blocks[k]
                    else np.zeros((n, longest, 0), np.float32)
                ),
                lengths=lengths,
                static=side_static,
                attribute_codes={name: c[k] for name, c in codes.items()},
                attribute_labels=labels,
            )
        )
    return encoded[0], encoded[1]


def _encode_attributes(real: SeriesData, synthetic: SeriesData) -> tuple[dict, dict, dict]:
    static: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    labels: dict[str, list[Any]] = {}
    for name, discrete in zip(real.attribute_names, real.attribute_discrete, strict=True):
        real_values, synth_values = real.attribute_column(name), synthetic.attribute_column(name)
        if discrete:
            real_codes, synth_codes, labels[name] = factorize_pair(real_values, synth_values)
            codes[name] = (real_codes, synth_codes)  # targets keep every category
            capped = _cap_categories(real_codes, synth_codes, len(labels[name]))
            eye = np.eye(int(max(capped[0].max(), capped[1].max())) + 1, dtype=np.float32)
            static[name] = (eye[capped[0]], eye[capped[1]])  # (N, K) one-hot
        else:
            mean, scale = real_values.mean(), _real_scale(real_values)
            static[name] = tuple(
                np.clip((v - mean) / scale, -_CLIP, _CLIP).astype(np.float32)[:, None]
                for v in (real_values, synth_values)
            )
    return static, codes, labels


_MAX_ONE_HOT = 50
"""Classifier inputs one-hot encode at most this many categories per variable."""


def _cap_categories(
    real_codes: np.ndarray, synth_codes: np.ndarray, n_categories: int
) -> tuple[np.ndarray, np.ndarray]:
    """Keep the most frequent categories (over both sides); pool the rest into one.

    Bounds the one-hot width, and so memory, for variables with thousands of categories.
    """
    if n_categories <= _MAX_ONE_HOT:
        return real_codes, synth_codes
    counts = np.bincount(np.concatenate([real_codes, synth_codes]), minlength=n_categories)
    keep = np.argsort(-counts, kind="stable")[: _MAX_ONE_HOT - 1]
    mapping = np.full(n_categories, _MAX_ONE_HOT - 1, dtype=np.int64)  # "other"
    mapping[keep] = np.arange(keep.size)
    return mapping[real_codes], mapping[synth_codes]


def _pad(series: Sequence[np.ndarray], length: int, fill: float) -> np.ndarray:
    dtype = np.int64 if series and series[0].dtype.kind in "iu" else np.float32
    padded = np.full((len(series), length), fill, dtype=dtype)
    for row, x in enumerate(series):
        padded[row, : len(x)] = x
    return padded


class _SeriesNet(nn.Module):
    """GRU over the steps; a linear head reads its state plus the static (per-series) inputs.

    ``per_step=False``: one output per series, from the state at the series' last step.
    ``per_step=True``: one output per time step (next-step prediction).
    """

    def __init__(self, step_dim: int, static_dim: int, out_dim: int, hidden: int = 16):
        super().__init__()
        self.gru = nn.GRU(step_dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden + static_dim, out_dim)

    def forward(
        self, steps: torch.Tensor, lengths: torch.Tensor, static: torch.Tensor, per_step: bool
    ) -> torch.Tensor:
        states, _ = self.gru(steps)  # (B, T, H)
        if per_step:
            expanded = static[:, None, :].expand(-1, states.shape[1], -1)  # (B, T, S)
            return self.head(torch.cat([states, expanded], dim=2))  # (B, T, out)
        # The GRU is causal, so the state at the last real step never saw the padding.
        last = states[torch.arange(states.shape[0]), lengths - 1]  # (B, H)
        return self.head(torch.cat([last, static], dim=1))  # (B, out)


@dataclass
class _Task:
    """Inputs and targets of one supervised problem, as tensors."""

    steps: torch.Tensor  # (N, T, D)
    lengths: torch.Tensor  # (N,)
    static: torch.Tensor  # (N, S)
    target: torch.Tensor  # (N,) class index, or (N, T, Fc) next-step values

    @staticmethod
    def of(
        steps: np.ndarray,
        lengths: np.ndarray,
        static: np.ndarray,
        target: np.ndarray,
        rows: np.ndarray,
    ) -> _Task:
        """The task restricted to ``rows``, without padding that none of them uses."""
        longest = int(lengths[rows].max())
        return _Task(
            steps=torch.from_numpy(steps[rows, :longest]),
            lengths=torch.from_numpy(lengths[rows]),
            static=torch.from_numpy(static[rows]),
            target=torch.from_numpy(target[rows, :longest] if target.ndim == 3 else target[rows]),
        )

    def __len__(self) -> int:
        return self.steps.shape[0]


def _loss(net: _SeriesNet, task: _Task, rows: torch.Tensor | slice, per_step: bool):
    """Mean cross-entropy (classification) or masked mean absolute error (next step).

    Returns ``(loss, correct_or_error_sum, count)`` so callers can also compute the
    metric itself without a second pass.
    """
    lengths = task.lengths[rows]
    output = net(task.steps[rows], lengths, task.static[rows], per_step)
    target = task.target[rows]
    if not per_step:
        loss = nn.functional.cross_entropy(output, target)
        return loss, (output.argmax(dim=1) == target).sum(), target.shape[0]
    # Predict step t+1 from steps 0..t: valid where t+1 is inside the series.
    error = (output[:, :-1] - target[:, 1:]).abs().mean(dim=2)  # (B, T-1)
    steps = torch.arange(error.shape[1])[None, :]
    mask = steps < (lengths[:, None] - 1)
    count = mask.sum().clamp(min=1)
    total = (error * mask).sum()
    return total / count, total, count


def _fit_and_score(
    train: _Task, test: _Task, out_dim: int, per_step: bool, seed: int, min_updates: int = 0
) -> float:
    """Train a fresh `_SeriesNet` on ``train``; return accuracy (or MAE) on ``test``.

    Trains for 12 epochs, or more if that is fewer than ``min_updates`` optimizer steps.
    Deterministic for a given seed: the global torch RNG is forked, so the caller's random
    state is untouched.
    """
    batch_size = 64
    batches_per_epoch = math.ceil(len(train) / batch_size)
    epochs = max(12, math.ceil(min_updates / batches_per_epoch))
    with _one_thread(), seeded_cpu_rng(seed):
        net = _SeriesNet(train.steps.shape[2], train.static.shape[1], out_dim)
        optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
        for _ in range(epochs):
            for batch in torch.randperm(len(train)).split(batch_size):
                loss, _, _ = _loss(net, train, batch, per_step)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
        with torch.no_grad():
            _, total, count = _loss(net, test, slice(None), per_step)
    return float(total) / float(count)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one CPU thread, then restore the caller's setting.

    The models here are tiny: extra threads only add synchronisation, and on a busy
    machine with few cores they made training 20x slower in our measurements.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _sample_rows(n: int, cap: int | None, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.permutation(n)[:cap]) if cap is not None and n > cap else np.arange(n)


def _split(n: int, rng: np.random.Generator, train_fraction: float = 0.7) -> tuple:
    order = rng.permutation(n)
    cut = round(train_fraction * n)
    return order[:cut], order[cut:]


_MIN_EXAMPLES = 10
"""Fewer series than this per side make the learned metrics meaningless; they are skipped."""


def discriminative_score(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    seed: int = 0,
    n_seeds: int = 3,
    max_examples: int | None = 1000,
) -> dict[str, Any]:
    """How easily a small classifier tells real series from synthetic ones.

    The same number n of series is drawn from each side (at most ``max_examples``), so
    guessing scores 0.5. A one-layer GRU (16 units) reads each series' features, and a
    linear head reads its last state together with the series' attributes and length; it
    is trained for a few epochs on 70% of the 2n series and its accuracy measured on the
    other 30%. The score is |accuracy - 0.5|: 0 means indistinguishable, 0.5 perfectly
    separated. Repeated with ``n_seeds`` seeds (split and initialisation), reporting the
    mean (``score``) and standard deviation (with one seed, the accuracy's binomial
    standard error; ``std_from`` says which), and the mean raw ``accuracy``: an accuracy
    clearly *below* 0.5 means the synthetic data holds copies of real series (the
    classifier met a series' twin in training, with the other label). Deterministic for a
    given ``seed``.

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(40, 5, 1)))
        >>> result = discriminative_score(data, data, n_seeds=1)
        >>> result["score"] < 0.3
        True
    """
    check_same_columns(real, synthetic)
    _check_count(n_seeds, "n_seeds", minimum=1)
    rng = np.random.default_rng(seed)
    n = min(real.n_examples, synthetic.n_examples, max_examples or math.inf)
    if n < _MIN_EXAMPLES:
        return _skipped(f"It needs at least {_MIN_EXAMPLES} series on each side, got {n}.")
    real_rows = _sample_rows(real.n_examples, n, rng)
    synth_rows = _sample_rows(synthetic.n_examples, n, rng)
    real_enc, synth_enc = _encode_pair(real.subset(real_rows), synthetic.subset(synth_rows))
    steps = np.concatenate([real_enc.steps, synth_enc.steps])  # (2n, T, D)
    lengths = np.concatenate([real_enc.lengths, synth_enc.lengths])
    static = np.concatenate([real_enc.static_matrix(), synth_enc.static_matrix()])
    labels = np.repeat(np.array([0, 1], dtype=np.int64), n)  # 0 real, 1 synthetic
    # A fixed, short training (12 epochs): longer training lets the classifier memorise
    # series, and when synthetic series copy real ones it then learns each twin with the
    # opposite label and scores below chance on held-out data.
    accuracies = []
    for k in range(n_seeds):
        train, test = _split(2 * n, np.random.default_rng([seed, k]))
        accuracy = _fit_and_score(
            _Task.of(steps, lengths, static, labels, train),
            _Task.of(steps, lengths, static, labels, test),
            out_dim=2,
            per_step=False,
            seed=seed * 1000 + k,
        )
        accuracies.append(accuracy)
    scores = np.abs(np.array(accuracies) - 0.5)
    return {
        "score": _number(np.mean(scores)),
        **seed_spread(scores, accuracy_standard_error(accuracies[0], len(test))),
        "per_seed": [_number(s) for s in scores],
        "accuracy": _number(np.mean(accuracies)),
        "n_per_side": int(n),
        "better": "lower",
    }


def train_synthetic_test_real(
    real: SeriesData,
    synthetic: SeriesData,
    *,
    target_attribute: str | None = None,
    seed: int = 0,
    max_examples: int | None = 1000,
) -> dict[str, Any]:
    """Train on synthetic, test on real (TSTR), beside train on real, test on real.

    The real series are split 70/30. Two identical small GRU models are trained, one on
    the 70% real split and one on as many synthetic series (all of them if there are
    fewer), and both are tested on the same 30% of real series. At most ``max_examples``
    series are used from each side.

    * Classification, when ``target_attribute`` names a discrete attribute (by default the
      first discrete attribute with two or more real categories): predict it from the
      features and the other attributes; ``synthetic_accuracy`` vs ``real_accuracy``, and
      ``score = synthetic_accuracy / real_accuracy``.
    * Next-step prediction, when there is no discrete attribute: predict each continuous
      feature at step t+1 from steps 0..t; mean absolute errors in real standard
      deviations, ``synthetic_mae`` vs ``real_mae``, and ``score = real_mae / synthetic_mae``.

    In both cases 1 means the synthetic data teaches as much as the real data; higher is
    better (it can exceed 1 slightly by chance).

    Example:
        >>> import numpy as np
        >>> data = SeriesData.from_arrays(np.random.default_rng(0).normal(size=(30, 6, 1)))
        >>> train_synthetic_test_real(data, data)["task"]
        'next_step'
    """
    check_same_columns(real, synthetic)
    target = _choose_target(real, target_attribute)
    rng = np.random.default_rng(seed)
    n_real, n_synth = real.n_examples, synthetic.n_examples
    if min(n_real, n_synth) < _MIN_EXAMPLES:
        return _skipped(
            f"It needs at least {_MIN_EXAMPLES} series on each side, got {min(n_real, n_synth)}.",
            better="higher",
        )
    real = real.subset(_sample_rows(n_real, max_examples, rng))
    synthetic = synthetic.subset(_sample_rows(n_synth, max_examples, rng))
    real_enc, synth_enc = _encode_pair(real, synthetic)
    train_rows, test_rows = _split(real.n_examples, rng)
    if target is None:
        return _next_step(real_enc, synth_enc, train_rows, test_rows, seed)
    return _classify(real_enc, synth_enc, target, train_rows, test_rows, seed)


def _choose_target(real: SeriesData, target_attribute: str | None) -> str | None:
    discrete = [n for n, d in _columns_of(real, "attribute") if d]
    if target_attribute is None:
        usable = [n for n in discrete if len(set(map(str, real.attribute_column(n)))) > 1]
        return usable[0] if usable else None
    if target_attribute not in discrete:
        raise ParameterError(
            f"target_attribute={target_attribute!r} is not a discrete attribute; choose one "
            f"of {discrete} or pass None."
        )
    return target_attribute


def _classify(real_enc, synth_enc, target, train_rows, test_rows, seed) -> dict[str, Any]:
    n_classes = len(real_enc.attribute_labels[target])
    synthetic_accuracy, real_accuracy = _train_both_test_real(
        real_enc,
        synth_enc,
        targets=lambda enc: enc.attribute_codes[target],
        exclude=target,  # predicting an attribute from itself would be trivial
        split=(train_rows, test_rows),
        out_dim=n_classes,
        per_step=False,
        seed=seed,
    )
    real_target = real_enc.attribute_codes[target]
    majority = np.bincount(real_target[train_rows], minlength=n_classes).argmax()
    result = {
        "task": "classification",
        "target": target,
        "synthetic_accuracy": _number(synthetic_accuracy),
        "real_accuracy": _number(real_accuracy),
        "majority_class_accuracy": _number(np.mean(real_target[test_rows] == majority)),
        "score": _number(synthetic_accuracy / real_accuracy) if real_accuracy > 0 else None,
        "better": "higher",
    }
    if result["score"] is None:
        others = [repr(n) for n, c in real_enc.attribute_labels.items() if n != target and c[1:]]
        result["reason"] = (
            f"Trained on {len(train_rows)} real series, the model predicts none of the "
            f"{len(test_rows)} held-out series' {target!r} right: no baseline to compare with"
            + (f"; choose another target_attribute ({', '.join(others)})." if others else ".")
        )
    return result


def _next_step(real_enc, synth_enc, train_rows, test_rows, seed) -> dict[str, Any]:
    n_continuous = real_enc.continuous.shape[2]
    if n_continuous == 0:
        return _skipped(
            "There is neither a discrete attribute nor a continuous feature to predict.",
            better="higher",
        )
    if real_enc.lengths.max() < 2:
        return _skipped("Next-step prediction needs series of length 2 or more.", "higher")
    synthetic_mae, real_mae = _train_both_test_real(
        real_enc,
        synth_enc,
        targets=lambda enc: enc.continuous,
        exclude=None,
        split=(train_rows, test_rows),
        out_dim=n_continuous,
        per_step=True,
        seed=seed,
    )
    result = {
        "task": "next_step",
        "synthetic_mae": _number(synthetic_mae),
        "real_mae": _number(real_mae),
        "score": _number(real_mae / synthetic_mae) if synthetic_mae > 0 else None,
        "better": "higher",
    }
    if result["score"] is None:
        result["reason"] = "The model trained on synthetic data predicts real data exactly."
    return result


def _train_both_test_real(
    real_enc: _Encoded,
    synth_enc: _Encoded,
    *,
    targets: Callable[[_Encoded], np.ndarray],
    exclude: str | None,
    split: tuple[np.ndarray, np.ndarray],
    out_dim: int,
    per_step: bool,
    seed: int,
) -> tuple[float, float]:
    """Scores on the real test rows of a model trained on synthetic series and of an
    identical one (same seed) trained on as many real training rows."""

    def task(enc: _Encoded, rows: np.ndarray) -> _Task:
        return _Task.of(enc.steps, enc.lengths, enc.static_matrix(exclude), targets(enc), rows)

    train_rows, test_rows = split
    test = task(real_enc, test_rows)
    # Same number of training series on both sides, so only their quality differs.
    synth_rows = np.random.default_rng(seed).permutation(len(synth_enc.lengths))
    synth_train = task(synth_enc, np.sort(synth_rows[: len(train_rows)]))
    # Enough updates that small data sets are learned too, or the ratio measures noise.
    synthetic = _fit_and_score(synth_train, test, out_dim, per_step, seed, min_updates=100)
    real = _fit_and_score(task(real_enc, train_rows), test, out_dim, per_step, seed, 100)
    return synthetic, real
