"""Benchmark harness: time a fixed window of training steps, record the machine, save JSON.

Shared by the scripts in ``benchmarks/``. Following docs/design.md ("Measuring"), a
measurement burns in, synchronizes, then times a fixed window of training steps after
``torch.cuda.synchronize()`` on CUDA, and reports examples/s, seconds per batch, peak
memory and skipped (loss-scaler) steps. Absolute numbers from shared machines are noise:
compare configurations measured side by side in one run, as ratios.

Example:
    >>> from dgan import DGANConfig
    >>> attributes, features, types = synthetic_workload(16, length=4, n_features=1)
    >>> config = DGANConfig(max_sequence_len=4, sample_len=2, batch_size=16, cuda=False,
    ...                     attribute_num_units=8, feature_num_units=8,
    ...                     discriminator_num_units=8, discriminator_num_layers=1)
    >>> result = time_training(config, features, attributes, types, warmup_steps=1,
    ...                        timed_steps=1, device="cpu")
    >>> result["status"], result["precision"], result["examples_per_batch"]
    ('ok', 'fp32', 16)
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

import dgan
from dgan.config import DGANConfig, OutputType
from dgan.model import DGAN
from dgan.precision import cpu_bf16_hardware, cpu_fp16_hardware, loss_scale
from dgan.storage.format import json_safe
from dgan.train.batch import Accumulators, Batch
from dgan.train.memory import peak_rss_bytes

# CPU instruction sets that give native (not emulated) reduced-precision maths.
_NATIVE_LOW_PRECISION_FLAGS = ("avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16")


# ----- machine --------------------------------------------------------------------------
def machine_info(repo: str | os.PathLike | None = None) -> dict[str, Any]:
    """The machine, library versions and git commit a result was measured with.

    ``repo`` is the git checkout to read the commit from (default: the current folder);
    the commit is None outside a checkout, and ``git_dirty`` says whether it had changes.
    """
    flags = _cpu_flags()
    info: dict[str, Any] = {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_native_low_precision_flags": [f for f in _NATIVE_LOW_PRECISION_FLAGS if f in flags],
        "cpu_bf16_hardware": cpu_bf16_hardware(),  # what torch sees, None where emulated
        "cpu_fp16_hardware": cpu_fp16_hardware(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        # "highest" means fp32 matmuls really run in fp32 (no TF32): the fp32 baseline.
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "gpus": [],
        **_git(repo),
    }
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            info["gpus"].append(
                {
                    "name": props.name,
                    "memory_bytes": props.total_memory,
                    "capability": f"{props.major}.{props.minor}",
                }
            )
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _git(repo: str | os.PathLike | None) -> dict[str, Any]:
    def run(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=repo, capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None}


# ----- workload -------------------------------------------------------------------------
def synthetic_workload(
    n: int, length: int, n_features: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, list[OutputType]]:
    """A throughput workload: noisy sines whose frequency follows a 3-class attribute and
    amplitude a continuous one. Returns (attributes (n, 2), features (n, T, F), types).

    Example:
        >>> attributes, features, types = synthetic_workload(5, length=10, n_features=3)
        >>> attributes.shape, features.shape, [t.name for t in types]
        ((5, 2), (5, 10, 3), ['DISCRETE', 'CONTINUOUS'])
    """
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 3, size=n)
    amplitude = rng.uniform(0.5, 2.0, size=n).astype(np.float32)
    t = np.arange(length, dtype=np.float32) / length
    features = np.empty((n, length, n_features), dtype=np.float32)
    for f in range(n_features):  # one feature at a time keeps the peak at one (n, T) array
        phase = rng.uniform(0, 2 * np.pi, size=(n, 1)).astype(np.float32)
        cycles = (2.0**label * (f + 1))[:, None].astype(np.float32)
        wave = amplitude[:, None] * np.sin(2 * np.pi * cycles * t + phase)
        features[:, :, f] = wave + rng.normal(0, 0.05, size=(n, length)).astype(np.float32)
    attributes = np.stack([label.astype(np.float64), amplitude.astype(np.float64)], axis=1)
    return attributes, features, [OutputType.DISCRETE, OutputType.CONTINUOUS]


# ----- memory ---------------------------------------------------------------------------
def _current_rss_bytes() -> int | None:
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class _RssPeak:
    """Samples this process's RSS every ``interval`` s in a thread; ``peak`` is the maximum.

    ``getrusage``'s peak only ever grows over a process, so several measurements in one
    process need a peak per window. Where /proc is missing it falls back to getrusage.
    """

    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.peak = _current_rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, _current_rss_bytes())

    def __enter__(self) -> _RssPeak:
        if self.peak is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.peak is None:
            self.peak = peak_rss_bytes()
            return
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _current_rss_bytes())


# ----- timing ---------------------------------------------------------------------------
def time_training(
    config: DGANConfig,
    features: np.ndarray,
    attributes: np.ndarray | None = None,
    attribute_types: list[OutputType] | None = None,
    *,
    warmup_steps: int = 3,
    timed_steps: int = 10,
    windows: int = 1,
    device: str | torch.device | None = None,
) -> dict[str, Any]:
    """Time ``windows`` windows of ``timed_steps`` training steps of a fresh model.

    The model is built by `DGAN.train_numpy` for one epoch over the data (which should
    hold about one batch: that is the first burn-in step), then ``warmup_steps`` more
    steps run before the clock starts. Each timed step is one ``Trainer.train_step``
    (critic and generator rounds) on a batch gathered on the device from a fresh
    permutation, as in training; the divergence guard's checks, which training runs
    every ``log_every`` steps, are not part of the window.

    Returns a JSON-ready dict. ``status`` is "ok", or "oom" when the device ran out of
    memory (then only the error is reported). ``seconds_per_batch`` and
    ``examples_per_s`` are medians over the windows. ``peak_memory_bytes`` is
    ``torch.cuda.max_memory_allocated`` on CUDA; on CPU it is the highest RSS sampled in
    the windows, which counts the whole process (Python, torch, the data), so compare it
    only between runs of one process; ``baseline_memory_bytes`` (memory in use when the
    window starts) lets you subtract that. ``host_syncs_in_window`` counts what
    ``torch.cuda.set_sync_debug_mode`` reports on CUDA (None on CPU);
    ``tensor_reads_in_window`` counts dgan's own reads of tensor values on any device.
    """
    if device is not None:
        config = replace(config, cuda=torch.device(device).type == "cuda")
    config = replace(config, epochs=1)
    try:
        return _time_training(
            config, features, attributes, attribute_types, warmup_steps, timed_steps, windows
        )
    except (torch.OutOfMemoryError, RuntimeError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        if not _is_oom(error):
            raise
    # Outside the except block the traceback, and the tensors its frames hold, are freed.
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return {"status": "oom", "error": message[:300], "examples_per_batch": config.batch_size}


def _is_oom(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, torch.OutOfMemoryError) or (
        "out of memory" in text or "can't allocate memory" in text
    )


def _time_training(config, features, attributes, attribute_types, warmup, steps, windows):
    model, data = _build(config, features, attributes, attribute_types)
    trainer, device = model.trainer, model.device
    batch = min(config.batch_size, len(data))
    acc = Accumulators(device)

    def step() -> None:
        trainer.train_step(trainer.random_batch(data, batch), acc)

    for _ in range(warmup):
        step()
    burn_in_skipped = acc.skipped_steps()  # host sync, outside the window
    burn_in_nonfinite = int(acc.nonfinite_losses)
    acc.critic_skipped.zero_()
    acc.generator_skipped.zero_()
    acc.nonfinite_losses.zero_()
    measured = [_window(step, steps, device) for _ in range(windows)]
    skipped, nonfinite = acc.skipped_steps(), int(acc.nonfinite_losses)  # host sync, after
    loss_means = acc.mean_losses(batch * (warmup + steps * windows))
    seconds = [m["seconds"] for m in measured]
    per_batch = statistics.median(seconds) / steps
    # The process's CPU time: on a shared CPU, far steadier than wall time (other jobs
    # stretch the wall clock, not the work done); with one thread it is the step's cost.
    cpu_per_batch = statistics.median(m["cpu_seconds"] for m in measured) / steps
    cuda, policy = device.type == "cuda", trainer.policy
    syncs = [s for m in measured for s in m["syncs"]]
    reads = [r for m in measured for r in m["reads"]]
    return {
        "status": "ok",
        "device": str(device),
        "precision_requested": config.effective_precision,
        "precision": policy.name,  # in effect: a device may refuse or the guard lower it
        "gradient_penalty_precision": config.gradient_penalty_precision,
        "lstm_in_fp32": policy.lstm_in_fp32,
        "examples_per_batch": batch,
        "burn_in_steps": 1 + warmup,  # the build epoch is one step over one batch of data
        "timed_steps": steps,
        "windows": windows,
        "window_seconds": seconds,
        "seconds_per_batch": per_batch,
        "cpu_seconds_per_batch": None if cuda else cpu_per_batch,
        "examples_per_s": batch / per_batch,
        "peak_memory_bytes": max(m["peak"] for m in measured),
        "baseline_memory_bytes": min(m["baseline"] for m in measured),
        "memory_kind": "cuda_max_memory_allocated" if cuda else "cpu_rss_sampled_in_window",
        "process_peak_rss_bytes": peak_rss_bytes(),
        "skipped_steps": skipped,
        "skipped_steps_burn_in": burn_in_skipped,
        "nonfinite_losses": nonfinite + burn_in_nonfinite,
        "mean_losses": loss_means,
        "critic_loss_scale": loss_scale(policy.critic_scaler),
        "generator_loss_scale": loss_scale(policy.generator_scaler),
        "host_syncs_in_window": len(syncs) if cuda else None,
        "host_sync_sites": sorted(set(syncs))[:5],
        "tensor_reads_in_window": len(reads),
        "tensor_read_sites": sorted(set(reads))[:5],
    }


def _build(config, features, attributes, attribute_types) -> tuple[DGAN, Batch]:
    """A model trained one epoch on the data (its first burn-in step), and that data as
    training encoded it, on the model's device (encoded once: seconds for large data)."""
    model = DGAN(config)
    encoded = model.preprocess(features, attributes=attributes, attribute_types=attribute_types)
    model.train_encoded(encoded, progress_bar=False)
    return model, Batch.from_encoded(encoded, model.device)


def _window(step: Callable[[], None], steps: int, device: torch.device) -> dict[str, Any]:
    """Time ``steps`` calls of ``step``, synchronized on CUDA; peak and baseline memory."""
    gc.collect()
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        baseline = torch.cuda.memory_allocated(device)
    else:
        baseline = _current_rss_bytes() or peak_rss_bytes()
    sampler = contextlib.nullcontext() if cuda else _RssPeak()
    with sampler, _SyncCheck(cuda) as syncs, _TensorReads() as reads:
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    peak = torch.cuda.max_memory_allocated(device) if cuda else sampler.peak
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "peak": peak,
        "baseline": baseline,
        "syncs": syncs,
        "reads": reads,
    }


class _SyncCheck:
    """On CUDA, record host syncs in the window (docs/design.md, decision 2) as warning texts."""

    def __init__(self, cuda: bool):
        self.cuda = cuda
        self.caught: list[str] = []

    def __enter__(self) -> list[str]:
        if self.cuda:
            self._warnings = warnings.catch_warnings(record=True)
            self._records = self._warnings.__enter__()
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
        return self.caught

    def __exit__(self, *exc) -> None:
        if self.cuda:
            torch.cuda.set_sync_debug_mode("default")
            self._warnings.__exit__(*exc)
            self.caught += [str(r.message).splitlines()[0] for r in self._records]


# Reading a tensor's value on the host: on a GPU each waits for the device.
_TENSOR_READS = ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__")


class _TensorReads:
    """Record the reads of tensor values (``.item()``, ``bool(t)``, ...) that dgan's own code
    makes in the window, as "name at file:line", on every device.

    The same check as tests/test_training.py's (decision 2: a step never reads the device),
    so a CPU run shows what would be a host sync on a GPU; torch's own reads are not counted.
    """

    def __init__(self):
        self.package = str(Path(dgan.__file__).parent)
        self.caught: list[str] = []
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> list[str]:
        for name in _TENSOR_READS:
            self._saved[name] = vars(torch.Tensor).get(name)
            setattr(torch.Tensor, name, self._counting(name, getattr(torch.Tensor, name)))
        return self.caught

    def _counting(self, name: str, original: Callable) -> Callable:
        def read(tensor, *args, **kwargs):
            caller = sys._getframe(1).f_code
            if caller.co_filename.startswith(self.package):
                self.caught.append(f"{name} at {caller.co_filename}:{sys._getframe(1).f_lineno}")
            return original(tensor, *args, **kwargs)

        return read

    def __exit__(self, *exc) -> None:
        for name, original in self._saved.items():
            if original is None:  # inherited from torch's C base class
                delattr(torch.Tensor, name)
            else:
                setattr(torch.Tensor, name, original)


# ----- results --------------------------------------------------------------------------
def write_result(
    result: dict[str, Any],
    name: str,
    device: str,
    out_dir: str | os.PathLike = "benchmarks/results",
    date: dt.date | None = None,
) -> Path:
    """Write ``result`` to ``<out_dir>/<name>-<device>-<YYYY-MM-DD>.json``; returns the path.

    A second run on the same day with the same name and device replaces the file.
    """
    day = (date or dt.date.today()).isoformat()
    path = Path(out_dir) / f"{name}-{device}-{day}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(json_safe(result), indent=2, allow_nan=False)
    path.write_text(text + "\n")
    return path
