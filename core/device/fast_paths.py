"""Whether each fast path can run on a device, and the reason when it cannot.

The fast paths are RunConfig fields: `amp` (bf16/fp16 autocast), `channels_last`, `compile`
(torch.compile), `cudnn_benchmark`, `fused_optimizer`, and the `resident` placement (checked where the
data is placed, against free memory). A run asks here before it builds anything, so a choice that cannot
work on the chosen device is refused at once with a `ConfigError` naming the field and the reason,
never a failure after the data has loaded or a setting that silently does nothing.
"""

from __future__ import annotations

import os
import shutil
import sys

import torch

from ..base.errors import ConfigError
from ..base.text import Message
from ..config.run_config import RunConfig
from .devices import check_amp


def check_fast_paths(config: RunConfig, device: torch.device) -> None:
    """ConfigError for the first fast path of `config` that `device` cannot run."""
    check_amp(device, config.amp)
    if config.cudnn_benchmark and device.type != "cuda":
        raise ConfigError(
            "cudnn_benchmark",
            Message(
                "cuDNN's autotuner runs on CUDA devices only, not on {device}; "
                "untick it (it would change nothing here)",
                device=device.type,
            ),
        )
    if config.compile:
        reason = compile_problem(device)
        if reason:
            raise ConfigError("compile", reason)
    if config.fused_optimizer:
        reason = fused_problem(device)
        if reason:
            raise ConfigError("fused_optimizer", reason)


def compile_problem(device: torch.device) -> str | None:
    """Why torch.compile cannot compile for `device` here, or None when its backend has what it needs
    (TorchDynamo for this Python; Inductor's C++ compiler on the CPU, Triton on CUDA)."""
    import torch._dynamo

    if not torch._dynamo.is_dynamo_supported():
        return Message(
            "torch.compile does not support Python {python} on {platform} with torch {torch}; run without compile",
            python=f"{sys.version_info.major}.{sys.version_info.minor}",
            platform=sys.platform,
            torch=str(torch.__version__),
        )
    if device.type == "cpu":
        compiler = _cpp_compiler()
        if compiler is None:
            return Message(
                "torch.compile needs a C++ compiler for the CPU (g++ or clang++; none found on PATH or "
                "in $CXX); install one (e.g. apt install g++) or run without compile"
            )
    elif device.type == "cuda":
        try:
            from torch.utils._triton import has_triton
        except ImportError:  # a torch without the helper: look for the package itself
            import importlib.util

            available = importlib.util.find_spec("triton") is not None
        else:
            available = has_triton()
        if not available:
            return Message(
                "torch.compile needs Triton for CUDA and it is missing or does not support this GPU; "
                "pip install triton, or run without compile"
            )
    return None


def _cpp_compiler() -> str | None:
    """The C++ compiler Inductor would call ($CXX first, as Inductor does), if it exists."""
    named = os.environ.get("CXX")
    if named:
        return shutil.which(named)
    return next((path for name in ("c++", "g++", "clang++") if (path := shutil.which(name))), None)


def fused_problem(device: torch.device) -> str | None:
    """Why a fused optimizer cannot run on `device`, or None. Asked of torch itself with one parameter."""
    try:
        param = torch.zeros(1, device=device, requires_grad=True)
        torch.optim.SGD([param], lr=0.1, momentum=0.9, fused=True)
    except (RuntimeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]  # some list every backend
        return Message(
            "torch has no fused optimizer for {device} ({error}); untick it", device=device.type, error=first
        )
    return None
