"""One optimisation step, shared by the training session and the batch-size finder so both measure
the same work. The loss comes back as a device tensor: no sync. With fp16 AMP, `GradScaler.step`
reads its inf/NaN check on the host (`.item()`, a sync per step) unless the optimizer is fused: a
fused optimizer takes the check on the device, which is why CUDA runs use fused optimizers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from ..base.text import Message
from ..memory.breakdown import StepMemoryRecorder


class PhaseMarks(Protocol):
    """Told when each phase of a step ends (gpu_train_monitor.engine.step_phases.PhaseTimer)."""

    def mark(self, phase: str) -> None: ...


@dataclass
class TrainingStep:
    """The parts a step needs, built once per run."""

    model: nn.Module
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    device_type: str
    autocast_dtype: torch.dtype | None  # None: full precision
    compiled: nn.Module | None = None  # torch.compile(model) for training steps; validation runs `model` eagerly
    parallel: nn.Module | None = None  # a data-parallel run: DistributedDataParallel(model), for training steps
    reduce_sum: Callable[[torch.Tensor], None] | None = None  # a data-parallel run: sums a tensor over the ranks
    # in place (validation's totals, once per epoch)

    @property
    def compiles(self) -> bool:
        return self.compiled is not None

    def step(
        self,
        images: torch.Tensor,
        labels: torch.Tensor,
        recorder: StepMemoryRecorder | None = None,
        timer: PhaseMarks | None = None,
    ) -> torch.Tensor:
        """One update on a batch; `recorder` (a sampled step) and `timer` are told where each phase ends."""
        # Free the previous step's gradients before this step's activations exist: a lower peak.
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast(self.device_type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None):
            net = next(m for m in (self.compiled, self.parallel, self.model) if m is not None)
            loss = loss_of(net(images), labels)
        if recorder is not None:
            recorder.mark("forward")
        if timer is not None:
            timer.mark("forward")
        self.scaler.scale(loss).backward()
        if recorder is not None:
            recorder.mark("backward")
        if timer is not None:
            timer.mark("backward")
        self.scaler.step(self.optimizer)
        self.scaler.update()
        if recorder is not None:
            recorder.mark("optimizer")
        if timer is not None:
            timer.mark("optimizer")
        return loss


def loss_of(logits: torch.Tensor, targets: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of a batch: per image (batch x classes against batch labels) or per token (a language model's
    batch x sequence x vocabulary against batch x sequence next tokens: the mean over every position)."""
    return F.cross_entropy(logits.flatten(0, -2), targets.flatten(), reduction=reduction)


def build_optimizer(
    model: nn.Module, name: str, lr: float, momentum: float, weight_decay: float, fused: bool = False
) -> torch.optim.Optimizer:
    """SGD or AdamW; `fused` (CUDA) runs the update as one kernel and keeps GradScaler's check on the device."""
    if name == "sgd":
        return torch.optim.SGD(
            model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay, fused=fused or None
        )
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, fused=fused or None)


def compile_failure(model_name: str, exc: BaseException) -> RuntimeError:
    """What a failed first compiled step tells the user: torch.compile's first line, and the way out."""
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return RuntimeError(
        Message(
            "torch.compile could not compile {model} ({kind}: {error}); run without compile",
            model=model_name,
            kind=type(exc).__name__,
            error=first,
        )
    )
