"""`OptimizerCapture`: the step capture of gpu_train_monitor.watch.step_capture tied to one optimizer that a framework
names (the Trainer's, the LightningModule's). Left to itself a capture follows the largest optimizer alive, which may
be another one: a finished training's, not yet collected, or a second model in a notebook."""

from __future__ import annotations

from typing import Any

from torch.optim import Optimizer

from .step_capture import StepCallback, StepCapture


def unwrapped_optimizer(optimizer: Any) -> Any:
    """The optimizer itself inside a framework's wrapper (accelerate's AcceleratedOptimizer, Lightning's
    LightningOptimizer): the one whose step() torch's step hooks see, and whose class is worth naming."""
    for attribute in ("optimizer", "_optimizer"):
        inner = getattr(optimizer, attribute, None)
        if isinstance(inner, Optimizer):
            return inner
    return optimizer


class OptimizerCapture(StepCapture):
    """`on_step(optimizer, loss, samples)` after each step of `optimizer` only, with the sum of the scalars
    `backward()` ran on since its previous step (kept on the device)."""

    follows_any_optimizer = False  # never the largest optimizer alive, never backward()s for steps

    def __init__(self, on_step: StepCallback, optimizer: Optimizer) -> None:
        super().__init__(on_step)
        self._lead(unwrapped_optimizer(optimizer), 0)  # from the start: a step the GradScaler skips is then this one's

    def _leads(self, optimizer: Optimizer) -> bool:
        return unwrapped_optimizer(optimizer) is self.leader
