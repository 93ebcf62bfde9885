"""Shared test setup: small thread pools, GPU-marked tests skipped without CUDA, and
fixtures (those owned by one module's tests are prefixed with its name, e.g. metrics_*)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

from dgan.metrics import SeriesData, evaluate

# One thread: these models are tiny, and with two, OpenMP spin-waits made training
# 5-40x slower whenever anything else shared the two cores (measured on this VM).
torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


KINDS = np.array(["calm", "wavy", "spiky"], dtype=object)


def make_metrics_toy_data(rng: np.random.Generator, n: int = 200) -> SeriesData:
    """Small variable-length data whose features depend on time, each other and attributes.

    Attributes: ``kind`` (discrete, strings, unbalanced) and ``scale`` (continuous).
    Features: ``level`` (AR(1) or sine depending on kind, times scale), ``flow`` (strongly
    correlated with level at the same step) and ``state`` (discrete: "high"/"low").
    """
    kinds = rng.choice(KINDS, size=n, p=[0.5, 0.3, 0.2])
    scales = rng.lognormal(0.0, 0.3, size=n)
    series = []
    for kind, scale in zip(kinds, scales, strict=True):
        length = int(rng.integers(12, 25))
        if kind == "calm":
            level = np.zeros(length)
            for t in range(1, length):
                level[t] = 0.9 * level[t - 1] + 0.3 * rng.normal()
        elif kind == "wavy":
            level = 2 * np.sin(np.arange(length) * 0.6 + rng.uniform(0, 6)) + 0.2 * rng.normal(
                size=length
            )
        else:
            level = 3.0 * (rng.random(length) < 0.3) + 0.1 * rng.normal(size=length)
        level = scale * level
        flow = 0.8 * level + 0.3 * rng.normal(size=length)
        state = np.where(level > 0, "high", "low").astype(object)
        series.append(np.column_stack([level, flow, state]).astype(object))
    attributes = np.column_stack([kinds, scales]).astype(object)
    return SeriesData(
        features=series,
        feature_names=["level", "flow", "state"],
        feature_discrete=[False, False, True],
        attributes=attributes,
        attribute_names=["kind", "scale"],
        attribute_discrete=[True, False],
    )


@pytest.fixture
def metrics_rng() -> np.random.Generator:
    """A seeded generator so every metrics test sees the same data."""
    return np.random.default_rng(20240611)


@pytest.fixture
def metrics_toy_data(metrics_rng) -> Callable[..., SeriesData]:
    """Factory: ``metrics_toy_data(n=200)`` draws a fresh `make_metrics_toy_data` sample."""
    return lambda n=200: make_metrics_toy_data(metrics_rng, n)


@pytest.fixture(scope="session")
def metrics_toy_evaluation() -> tuple[SeriesData, SeriesData, dict]:
    """``(real, synthetic, evaluate(real, synthetic))`` on small toy data, computed once.

    Shared by several tests because evaluate trains small models; do not modify it. Two
    seeds (the default is three): enough for spreads, a third of the time less.
    """
    rng = np.random.default_rng(7)
    real, synthetic = make_metrics_toy_data(rng, 60), make_metrics_toy_data(rng, 50)
    return real, synthetic, evaluate(real, synthetic, n_seeds=2)
