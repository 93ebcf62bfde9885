"""Numeric precision: `Precision`, what a device can run, the fallback order, and the policy.

A `PrecisionPolicy` is built once from the config (`PrecisionPolicy.from_config`). The
training loop reads the same in every precision: it enters ``policy.autocast()`` and calls
``policy.backward_and_step(...)``; the losses (losses.py) take the policy to run the
gradient penalty. In fp32 and bf16 the scalers are disabled `torch.amp.GradScaler`s,
which are no-ops. The divergence guard (guard.py) decides when to fall back along
`fallback_precision`'s order.

Platform facts handled here (docs/design.md, "Precision"):

* On CUDA, autocast runs cuDNN's LSTM in fp16 even when bf16 is asked for, and there is
  then no loss scaler to protect its gradients; on some CPUs oneDNN has no fp16 or bf16
  LSTM at all. `lstm_runs_safely` probes the device once and, where the LSTM would not run
  in the policy's dtype, the policy sets the generator's ``lstm_in_fp32``.
* oneDNN's bf16 LSTM runs on Intel AMX's tiles only for an even number of inputs: with an
  odd number it takes an AVX-512 kernel that is about three times slower. In 16 bits on a
  CPU the policy sets the generator's ``lstm_even_input``, which adds a zero input (and a
  zero weight column) where the number is odd: the same LSTM, on the fast kernel.
* fp16 gradients of the gradient penalty overflow at GradScaler's default initial scale
  of 2**16 (the scaled output gradient exceeds 65504), so dgan starts at 2**14.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from enum import Enum
from typing import Any

import torch

from dgan.errors import ParameterError

logger = logging.getLogger(__name__)


class Precision(str, Enum):
    """Numeric precision of training (and, optionally, generation)."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    AUTO = "auto"

    @property
    def dtype(self) -> torch.dtype | None:
        """The autocast dtype, or None for plain fp32."""
        return {Precision.FP16: torch.float16, Precision.BF16: torch.bfloat16}.get(self)


def _cpu_instructions(names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that torch's CPU capability probe reports, or None."""
    try:
        capability = torch._C._cpu._get_cpu_capability()  # private API: guarded
    except (AttributeError, RuntimeError):
        return None
    return next((name for name in names if capability.get(name)), None)


@functools.cache
def cpu_bf16_hardware() -> str | None:
    """The CPU's native bf16 matrix instructions: "amx_bf16", "avx512_bf16", or None.

    Intel AMX (4th-generation Xeon and later) and AVX-512-BF16 (also AMD Zen 4 and later)
    run bf16 matrix products in hardware; other CPUs emulate them, slower than fp32.

    Example:
        >>> cpu_bf16_hardware() in (None, "amx_bf16", "avx512_bf16")
        True
    """
    return _cpu_instructions(("amx_bf16", "avx512_bf16"))


@functools.cache
def cpu_fp16_hardware() -> str | None:
    """The CPU's native fp16 matrix instructions: "amx_fp16", "avx512_fp16", or None.

    AVX-512-FP16 (Intel Xeon from Sapphire Rapids on) and AMX-FP16 (Granite Rapids on) run
    fp16 matrix products in hardware (oneDNN uses them); other CPUs emulate fp16. Even with
    them, PyTorch runs oneDNN's fp16 LSTM only without gradients (inference), so fp16
    training runs PyTorch's own, slower LSTM kernel.

    Example:
        >>> cpu_fp16_hardware() in (None, "amx_fp16", "avx512_fp16")
        True
    """
    return _cpu_instructions(("amx_fp16", "avx512_fp16"))


def bf16_is_native(device: torch.device) -> bool:
    """True where bf16 matrix maths runs in hardware, not emulated: Ampere and later GPUs,
    CPUs with AMX or AVX-512-BF16 (`cpu_bf16_hardware`).

    Example:
        >>> bf16_is_native(torch.device("cpu")) == (cpu_bf16_hardware() is not None)
        True
    """
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported(including_emulation=False)
    return cpu_bf16_hardware() is not None


def runs_in_hardware(precision: Precision, device: torch.device) -> bool | None:
    """Whether ``device`` runs ``precision``'s 16-bit matrix products in hardware: None for
    fp32 (nothing to say); fp16 on CUDA GPUs and on CPUs with `cpu_fp16_hardware`; bf16
    where `bf16_is_native`. False means emulated, usually slower than fp32.

    Example:
        >>> cpu = torch.device("cpu")
        >>> runs_in_hardware(Precision.FP16, cpu) == (cpu_fp16_hardware() is not None)
        True
        >>> runs_in_hardware(Precision.FP32, cpu) is None
        True
    """
    if precision.dtype is None:
        return None
    if precision == Precision.FP16:
        return device.type == "cuda" or cpu_fp16_hardware() is not None
    return bf16_is_native(device)


@contextlib.contextmanager
def _gradients_on() -> Iterator[None]:
    """Run a capability probe with gradients on, whatever the caller's mode: probes are
    cached for the process, so a first call under ``no_grad`` or ``inference_mode`` (e.g.
    from generation) must not decide the answer for training."""
    with torch.inference_mode(False), torch.enable_grad():
        yield


@functools.cache
def _autocast_works(device_type: str, dtype: torch.dtype) -> bool:
    """Can this device run a Linear layer forward and backward under autocast(dtype)?"""
    try:
        with _gradients_on():
            layer = torch.nn.Linear(4, 4).to(device_type)
            with torch.autocast(device_type, dtype=dtype):
                out = layer(torch.randn(2, 4, device=device_type))
            out.float().sum().backward()
        return out.dtype == dtype
    except RuntimeError:
        return False


@functools.cache
def lstm_runs_safely(device_type: str, dtype: torch.dtype) -> bool:
    """Does ``nn.LSTM`` under autocast(dtype) run, forward and backward, in ``dtype``?

    False where it fails (oneDNN without fp16/bf16 LSTM) or silently runs in another
    dtype (cuDNN's fp16 LSTM under bf16 autocast, whose gradients no scaler protects).
    """
    try:
        with _gradients_on():
            lstm = torch.nn.LSTM(4, 8, batch_first=True).to(device_type)
            with torch.autocast(device_type, dtype=dtype):
                out, _ = lstm(torch.randn(2, 3, 4, device=device_type))
            out.float().sum().backward()
        return out.dtype == dtype
    except RuntimeError:
        return False


def resolve_precision(requested: str | Precision, device: torch.device) -> Precision:
    """Turn the requested precision into one this device can run, or raise.

    "auto" is fp32 on every device. On CPUs, bf16 hardware or not, bf16 training did not
    match fp32's quality on every dataset of the benchmark suite (docs/quality.md, "Mixed
    precision"). On a GPU (an H100, docs/precision.md) bf16 saved no memory (cuDNN's LSTM
    must stay in fp32 under it) and was no faster than fp32 with TF32, and fp16 paid only
    for a large model at large batches, where asking for "fp16" is the choice. An explicit
    request the device cannot honour raises ParameterError naming the fix.

    Example:
        >>> resolve_precision("auto", torch.device("cpu"))
        <Precision.FP32: 'fp32'>
    """
    try:
        precision = Precision(str(getattr(requested, "value", requested)).lower())
    except ValueError:
        names = ", ".join(repr(p.value) for p in Precision)
        raise ParameterError(f"precision must be one of {names}, got {requested!r}.") from None
    if precision == Precision.AUTO:
        return Precision.FP32
    if precision == Precision.BF16 and device.type == "cuda" and not bf16_is_native(device):
        raise ParameterError(
            f"precision='bf16' was asked for, but {torch.cuda.get_device_name(device)} only "
            "emulates bf16 (slower than fp32); use precision='fp16' or 'auto'."
        )
    if precision.dtype is not None and not _autocast_works(device.type, precision.dtype):
        raise ParameterError(
            f"precision={precision.value!r} is not supported on this {device.type} device "
            "(autocast failed); use precision='fp32', or train on a CUDA GPU (cuda=True)."
        )
    if device.type == "cpu" and runs_in_hardware(precision, device) is False:
        _warn_cpu_emulation(precision.value)
    return precision


@functools.cache
def _warn_cpu_emulation(name: str) -> None:
    hint = (
        "this CPU has no fp16 matrix hardware (AMX-FP16 or AVX-512-FP16)"
        if name == "fp16"
        else "this CPU has no bf16 matrix hardware (AMX or AVX-512-BF16)"
    )
    logger.warning(
        "precision=%r on CPU: %s, so %s maths is emulated and usually trains slower than "
        "fp32; use precision='fp32' (or 'auto') here.",
        name,
        hint,
        name,
    )


# Which precision to fall back to after a divergence, safest last.
def fallback_precision(current: Precision, device: torch.device) -> Precision | None:
    """fp16 -> bf16 (where native) -> fp32 -> None (nothing safer is left)."""
    if current == Precision.FP16 and bf16_is_native(device):
        return Precision.BF16
    if current in (Precision.FP16, Precision.BF16):
        return Precision.FP32
    return None


class PrecisionPolicy:
    """How one training run computes: autocast dtype, loss scalers, gradient penalty.

    Args:
        device: the training device.
        precision: a resolved `Precision` (not AUTO).
        loss_scale: "dynamic" or a number (a static scale); used by fp16 only.
        init_scale, growth_factor, backoff_factor, growth_interval: dynamic scaling.
        max_grad_norm: clip each network's gradient norm (after unscaling), or None.
        gradient_penalty_precision: "fp32" (penalty's critic pass and norm in full
            precision) or "autocast".

    Example:
        >>> policy = PrecisionPolicy(torch.device("cpu"), Precision.FP32)
        >>> with policy.autocast():
        ...     y = torch.ones(2) * 2
        >>> y.dtype, policy.critic_scaler.is_enabled()
        (torch.float32, False)
    """

    def __init__(
        self,
        device: torch.device,
        precision: Precision = Precision.FP32,
        *,
        loss_scale: str | float = "dynamic",
        init_scale: float = 2.0**14,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        max_grad_norm: float | None = None,
        gradient_penalty_precision: str = "fp32",
    ):
        if precision == Precision.AUTO:
            raise ValueError("resolve 'auto' with resolve_precision() first")
        self.device = device
        self.precision = precision
        self.max_grad_norm = max_grad_norm
        self.gradient_penalty_precision = gradient_penalty_precision
        self.settings = dict(
            loss_scale=loss_scale,
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            max_grad_norm=max_grad_norm,
            gradient_penalty_precision=gradient_penalty_precision,
        )
        scaled = precision == Precision.FP16
        self.static_scale = None if loss_scale == "dynamic" else float(loss_scale)
        start = init_scale if self.static_scale is None else self.static_scale

        def scaler() -> torch.amp.GradScaler:
            return torch.amp.GradScaler(
                device.type,
                init_scale=start,
                growth_factor=growth_factor,
                backoff_factor=backoff_factor,
                growth_interval=growth_interval,
                enabled=scaled,
            )

        # One scaler per independently stepped loss: the critics' (one backward of their
        # summed losses, both critic optimizers stepped, one update) and the generator's.
        # Their losses differ in size and overflow at different scales; a shared scaler
        # would let a critic overflow skip a healthy generator step, and update() must run
        # once per scaler per step.
        self.critic_scaler = scaler()
        self.generator_scaler = scaler()
        self.lstm_in_fp32 = precision.dtype is not None and not lstm_runs_safely(
            device.type, precision.dtype
        )
        self.lstm_even_input = device.type == "cpu" and precision.dtype is not None

    @classmethod
    def from_config(cls, config, device: torch.device) -> PrecisionPolicy:
        """Build the policy a `DGANConfig` asks for, resolved for ``device``."""
        return cls(
            device,
            resolve_precision(config.effective_precision, device),
            loss_scale=config.loss_scale,
            init_scale=config.init_scale,
            growth_factor=config.growth_factor,
            backoff_factor=config.backoff_factor,
            growth_interval=config.growth_interval,
            max_grad_norm=config.max_grad_norm,
            gradient_penalty_precision=config.gradient_penalty_precision,
        )

    def with_precision(self, precision: Precision) -> PrecisionPolicy:
        """The same settings at another precision (fresh scalers)."""
        return PrecisionPolicy(self.device, precision, **self.settings)

    @property
    def name(self) -> str:
        return self.precision.value

    def autocast(self) -> contextlib.AbstractContextManager:
        dtype = self.precision.dtype
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=dtype)

    def configure(self, generator: torch.nn.Module) -> tuple[bool, bool]:
        """Make the generator run its LSTM in fp32 where this device can't run it safely,
        with an even number of inputs in 16 bits on a CPU; what it ran before (to restore).
        """
        before = generator.lstm_in_fp32, generator.lstm_even_input
        generator.lstm_in_fp32, generator.lstm_even_input = self.lstm_in_fp32, self.lstm_even_input
        return before

    # ----- backward and optimizer steps -----------------------------------------------
    def backward_and_step(
        self,
        loss: torch.Tensor,
        scaler: torch.amp.GradScaler,
        optimizers: Sequence[torch.optim.Optimizer],
        after_backward: Callable[[Sequence[torch.optim.Optimizer]], None] | None = None,
    ) -> torch.Tensor:
        """Scaled backward, unscale, optional clipping, optimizer steps, one scaler update.

        ``after_backward(optimizers)`` runs right after the backward, on the still-scaled
        gradients (distributed training all-reduces them there).

        Returns a device bool tensor: True when the step was skipped (inf/NaN gradients,
        the normal fp16 overflow that the scaler backs off from). Without loss scaling
        (fp32, bf16) no step is skipped: a non-finite gradient is applied, and the
        divergence guard finds it in the weights at its next check. Never syncs with the
        host: GradScaler passes found-inf to fused optimizers on the device.
        """
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if after_backward is not None:
            after_backward(optimizers)
        skipped = torch.zeros((), dtype=torch.bool, device=self.device)
        if scaler.is_enabled() or self.max_grad_norm is not None:
            limit = float("inf") if self.max_grad_norm is None else self.max_grad_norm
            for opt in optimizers:
                scaler.unscale_(opt)  # true gradients: the clip threshold means what it says
                params = [p for g in opt.param_groups for p in g["params"] if p.grad is not None]
                # Returns the (unclipped) total norm as a device tensor: no host sync.
                norm = torch.nn.utils.clip_grad_norm_(params, limit)
                if scaler.is_enabled():  # the scaler skips a step with inf/NaN gradients
                    skipped = skipped | ~torch.isfinite(norm)
        for opt in optimizers:
            scaler.step(opt)
        if self.static_scale is not None and scaler.is_enabled():
            # Static scaling: skip steps with inf gradients but never change the scale.
            scaler.update(new_scale=torch.full((), self.static_scale, device=self.device))
        else:
            scaler.update()
        return skipped

    def diverged(
        self, loss: torch.Tensor, skipped: torch.Tensor, scaler: torch.amp.GradScaler
    ) -> torch.Tensor:
        """Device bool: ``loss`` is not finite, and not because of loss scaling.

        Under fp16 loss scaling a non-finite loss whose step the scaler skipped is the
        normal overflow that dynamic scaling provokes (e.g. the scaled gradients of the
        penalty's double backward): the scaler backs off and training goes on. Should it
        keep happening, the scale collapses, which the divergence guard catches. Any
        other non-finite loss is divergence.
        """
        nonfinite = ~torch.isfinite(loss.detach())
        if scaler.is_enabled():
            nonfinite = nonfinite & ~skipped
        return nonfinite


def loss_scale(scaler: torch.amp.GradScaler) -> float | None:
    """The scaler's current scale, or None when loss scaling is off."""
    return scaler.get_scale() if scaler.is_enabled() else None  # host sync (epoch end)


def precision_and_why(config: Any, device: torch.device) -> tuple[str, str]:
    """The precision training with ``config`` will use on ``device``, and why (the plan's
    line); raises what training would raise.

    Example:
        >>> from dgan import DGANConfig
        >>> precision_and_why(DGANConfig(max_sequence_len=4, sample_len=2), torch.device("cpu"))[0]
        'fp32'
    """
    requested = config.effective_precision
    precision = resolve_precision(requested, device)  # raises what training would raise
    if device.type == "cpu":
        fp16 = precision is Precision.FP16  # name the hardware the precision would use
        hardware = cpu_fp16_hardware() if fp16 else cpu_bf16_hardware()
        kind = "fp16" if fp16 else "bf16"
        cpu = f"this CPU has {hardware}" if hardware else f"this CPU has no {kind} hardware"
    else:
        native = bf16_is_native(device)
        cpu = "this GPU " + ("has native bf16" if native else "has no native bf16")
    if requested == Precision.AUTO.value:
        if device.type == "cpu":
            why = "'auto' on a CPU is fp32 (bf16 did not match its quality everywhere)"
        else:
            why = "'auto' on a GPU is fp32 (16 bits paid only for large models at large batches)"
        return precision.value, f"{why}; {cpu}" if device.type == "cpu" else why
    if config.precision is None:
        source = (
            "mixed_precision_training=True"
            if config.mixed_precision_training
            else ("the default (precision=None)")
        )
    else:
        source = f"precision={config.precision!r} was asked for"
    if precision is Precision.FP32:
        return precision.value, f"{source}; {cpu}"
    emulated = runs_in_hardware(precision, device) is False
    return precision.value, f"{source}; {cpu}" + (", so it is emulated (slow)" if emulated else "")
