"""Generated datasets with known structure, shared by the tests and benchmarks."""

from __future__ import annotations

import numpy as np

# Cycles over the series per class: class 0 is slow, class 2 fast.
CLASS_CYCLES = (1.0, 2.0, 4.0)


def sine_dataset(n: int, length: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sinusoids whose frequency depends on a discrete class and amplitude on a
    continuous attribute. Returns (attributes (n, 2) [class, amplitude], features (n, T, 1)).

    Example:
        >>> attrs, feats = sine_dataset(10, length=8)
        >>> attrs.shape, feats.shape
        ((10, 2), (10, 8, 1))
    """
    rng = np.random.default_rng(seed)
    label = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    amplitude = rng.uniform(0.5, 2.0, size=n)
    phase = rng.uniform(0, 2 * np.pi, size=n)
    t = np.arange(length) / length
    cycles = np.asarray(CLASS_CYCLES)[label]
    wave = amplitude[:, None] * np.sin(2 * np.pi * cycles[:, None] * t[None, :] + phase[:, None])
    features = (wave + rng.normal(0, 0.05, size=wave.shape))[:, :, None]
    return np.stack([label.astype(float), amplitude], axis=1), features


def dominant_cycles(series: np.ndarray) -> np.ndarray:
    """Dominant frequency (cycles per series) of each row of (n, T) data."""
    spectrum = np.abs(np.fft.rfft(series - series.mean(axis=1, keepdims=True), axis=1))
    return spectrum[:, 1:].argmax(axis=1) + 1.0
