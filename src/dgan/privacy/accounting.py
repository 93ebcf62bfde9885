"""Privacy accounting by Opacus: the noise a planned run needs, the epsilon a run spent.

dgan does not do its own privacy arithmetic. Opacus's Rényi-DP accountant
(``opacus.accountants.RDPAccountant``, Mironov 2017; the subsampled Gaussian of Mironov,
Talwar and Zhang 2019) composes the run's steps, each a Gaussian mechanism on a
Poisson-sampled batch (`dgan.privacy.sampling`), and converts to (epsilon, delta);
``opacus.accountants.utils.get_noise_multiplier`` finds the smallest noise whose planned
steps stay within the target. `Accountant` wraps one run's accounting: its history of
steps is plain JSON, so saved models and checkpoints carry it and a resumed run continues
it exactly.

Opacus is an optional dependency (``pip install "dgan[dp]"``); it is imported only when
a private run starts.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from dgan.errors import ParameterError

INSTALL = 'pip install "dgan[dp]"'
"""How to install what differential privacy needs (Opacus)."""
EPSILON_TOLERANCE = 0.01
"""The planned noise gives an epsilon at most this far below the target (Opacus's search)."""


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Opacus warns when its best RDP order is its largest (the bound could be tighter,
    and is still a bound): nothing a user can act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Optimal order is the largest alpha")
        yield


def opacus_accounting() -> Any:
    """The ``opacus.accountants`` module, or a ParameterError saying how to install it.

    Example:
        >>> import pytest; _ = pytest.importorskip("opacus")
        >>> opacus_accounting().RDPAccountant.mechanism()
        'rdp'
    """
    try:
        import opacus.accountants as accountants
        import opacus.accountants.utils  # noqa: F401  (get_noise_multiplier)
    except ImportError as e:
        raise ParameterError(
            f"Differential privacy (dp_epsilon) needs Opacus, which is not installed "
            f"({e}); install it with: {INSTALL}"
        ) from e
    return accountants


def noise_multiplier_for(epsilon: float, delta: float, sample_rate: float, steps: int) -> float:
    """The smallest noise multiplier (noise std / clipping bound) with which ``steps``
    steps at ``sample_rate`` spend at most ``epsilon`` at ``delta`` (Opacus's RDP search).

    Example:
        >>> import pytest; _ = pytest.importorskip("opacus")
        >>> sigma = noise_multiplier_for(4.0, 1e-5, 0.01, 1000)
        >>> 0.5 < sigma < 2.0 and Accountant.spent_by(sigma, 0.01, 1000, 1e-5) <= 4.0
        True
    """
    accountants = opacus_accounting()
    with _quiet():
        return float(
            accountants.utils.get_noise_multiplier(
                target_epsilon=epsilon,
                target_delta=delta,
                sample_rate=sample_rate,
                steps=max(1, steps),
                accountant="rdp",
                epsilon_tolerance=EPSILON_TOLERANCE,
            )
        )


class Accountant:
    """One private run's accounting: its target, its noise and the steps it took.

    Attributes:
        epsilon, delta: the target.
        noise_multiplier: the noise of every step (std = noise_multiplier x clipping bound);
            None until `plan` (or a loaded state) sets it.
        history: ``[noise_multiplier, sample_rate, steps]`` runs, as Opacus keeps them.

    Example:
        >>> import pytest; _ = pytest.importorskip("opacus")
        >>> accountant = Accountant(epsilon=4.0, delta=1e-5)
        >>> accountant.plan(sample_rate=0.01, steps=1000)
        >>> for _ in range(10):
        ...     accountant.step(0.01)
        >>> 0 < accountant.spent() < 4.0, accountant.history[0][2]
        (True, 10)
    """

    def __init__(self, epsilon: float, delta: float):
        self.epsilon = epsilon
        self.delta = delta
        self.noise_multiplier: float | None = None
        self.history: list[list[float]] = []

    def plan(self, sample_rate: float, steps: int) -> None:
        """Set the noise for ``steps`` steps at ``sample_rate`` (once: a resumed or
        continued run keeps the noise it started with)."""
        if self.noise_multiplier is None:
            self.noise_multiplier = noise_multiplier_for(
                self.epsilon, self.delta, sample_rate, steps
            )

    def step(self, sample_rate: float) -> None:
        """Count one step (at the planned noise) on a batch sampled at ``sample_rate``."""
        last = self.history[-1] if self.history else None
        if last is not None and last[0] == self.noise_multiplier and last[1] == sample_rate:
            last[2] += 1
        else:
            self.history.append([self.noise_multiplier, sample_rate, 1])

    @property
    def steps(self) -> int:
        """Steps counted so far."""
        return int(sum(run[2] for run in self.history))

    def spent(self, more: int = 0, sample_rate: float | None = None) -> float:
        """Epsilon spent (at ``delta``) by the steps so far, plus ``more`` at
        ``sample_rate``: Opacus's RDP accountant on this history."""
        history = [tuple(run) for run in self.history]
        if more:
            history.append((self.noise_multiplier, sample_rate, more))
        return _epsilon(history, self.delta)

    @staticmethod
    def spent_by(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> float:
        """Epsilon of ``steps`` steps at one noise and sample rate (Opacus's RDP)."""
        return _epsilon([(noise_multiplier, sample_rate, steps)], delta)

    def steps_left(self, sample_rate: float) -> int:
        """How many more steps at ``sample_rate`` keep the spent epsilon within the target
        (a binary search on Opacus's epsilon, which grows with the steps)."""
        if self.spent(1, sample_rate) > self.epsilon:
            return 0
        low, high = 1, 2
        while self.spent(high, sample_rate) <= self.epsilon:
            low, high = high, high * 2
            if high > 10**9:  # more steps than any run takes: no privacy limit in sight
                return high
        while high - low > 1:
            middle = (low + high) // 2
            if self.spent(middle, sample_rate) <= self.epsilon:
                low = middle
            else:
                high = middle
        return low

    def state_dict(self) -> dict[str, Any]:
        """The accounting as JSON: target, noise and history."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "noise_multiplier": self.noise_multiplier,
            "history": [list(run) for run in self.history],
            "mechanism": "rdp",
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the accounting `state_dict` returned (the same target)."""
        self.noise_multiplier = state["noise_multiplier"]
        self.history = [[float(s), float(q), int(k)] for s, q, k in state["history"]]


def _epsilon(history: list[tuple], delta: float) -> float:
    """Opacus's RDP accountant's epsilon at ``delta`` for a history of steps."""
    accountant = opacus_accounting().RDPAccountant()
    accountant.history = history
    with _quiet():
        return float(accountant.get_epsilon(delta=delta))


def check_sample_rate(batch_size: int, n_examples: int) -> float:
    """The Poisson sampling rate of an expected batch of ``batch_size`` from ``n_examples``
    (the number of series is public: see docs/privacy.md); at most 1.

    Example:
        >>> check_sample_rate(64, 3200)
        0.02
    """
    if n_examples < 1:
        raise ParameterError("A private run needs at least one series to train on.")
    return min(1.0, batch_size / n_examples)
