"""A transformers `TrainerCallback` that records a `Trainer.train()` in the run store like a run of ours, around
one `Watch`:

    trainer = Trainer(..., callbacks=[GpuTrainMonitorCallback(name="my-run")])

A callback is never handed the step's loss, so the loss comes from a step capture
(gpu_train_monitor.watch.step_capture), as for an unchanged script: the sum of the scalars `backward()` ran on since the
previous optimizer step (with gradient accumulation, the Trainer's own per-step loss, the one it logs), unscaled by a
GradScaler and kept on the device. The samples are counted here, from the inputs of the model's forward under gradients
(the Trainer calls it with keyword arguments), summed over a step's micro-batches. An optimizer step the GradScaler
skipped trained nothing and is not a step of the run. The window's Stop sets `control.should_training_stop` (the Trainer
ends cleanly, the run is `stopped`).

The Trainer tells its callbacks nothing of an exception: a run whose training raised is finished when the
process ends (failed, oom, or stopped for a second Ctrl+C, from the exception Python reports), or at the next
`train()` of the same callback (failed); a process that catches the exception and later ends without one leaves
the run `interrupted`, as a killed process does.

Needs the `transformers` extra (`transformers>=4.46`, `accelerate>=1.0`). Only this module imports transformers:
`gpu_train_monitor.watch` never needs it.
"""

from __future__ import annotations

import atexit
import sys
from pathlib import Path
from typing import Any

import torch

from ..base.text import Message
from .batches import batch_samples
from .model_hooks import forward_pre_hook
from .optimizer_capture import OptimizerCapture, unwrapped_optimizer
from .session import Watch
from .steering import WatchStopped

try:
    from transformers import TrainerCallback
    from transformers import __version__ as TRANSFORMERS_VERSION
except ImportError as missing:
    raise ImportError(
        'the transformers callback needs transformers: pip install ".[transformers]" in a clone of the project'
    ) from missing


class TrainingEndedUnseen(RuntimeError):
    """A `train()` that ended without `on_train_end`: an exception the Trainer does not pass to callbacks."""


class GpuTrainMonitorCallback(TrainerCallback):
    """Records each `Trainer.train()` as a run: `Trainer(callbacks=[GpuTrainMonitorCallback(name="my-run")])`."""

    def __init__(self, name: str = "", runs_db: str | Path | None = None, **options: Any) -> None:
        """`name` and `runs_db` as `watch()`'s; `options`: the rest of `Watch`'s (report_interval_s, signals,
        config)."""
        self.config = dict(options.pop("config", None) or {})
        self.name, self.runs_db, self.options = name, runs_db, options
        self.watch: Watch | None = None  # the run of the train() in progress (or of the last one)
        self._capture: OptimizerCapture | None = None
        self._forward_hook: Any = None
        self._samples = 0  # the forward's inputs since the last optimizer step
        self._pending: tuple[torch.Tensor | None, int] | None = None  # the last optimizer step's loss and samples

    def __getstate__(self) -> dict[str, Any]:
        """What it was made with, never the run in progress: pickling it (a saved Trainer, a deep copy of its
        callbacks) must not meet the recorder's SQLite connection, and a copy records runs of its own."""
        return {"name": self.name, "runs_db": self.runs_db, "options": dict(self.options), "config": dict(self.config)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["runs_db"], config=state["config"], **state["options"])  # type: ignore[misc]

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._end(
            TrainingEndedUnseen(Message("the training ended by an exception the Trainer does not pass to callbacks"))
        )
        optimizer = kwargs.get("optimizer")
        config = {
            "framework": f"transformers {TRANSFORMERS_VERSION}",
            "gradient_accumulation_steps": int(args.gradient_accumulation_steps),
        }
        self.watch = Watch(
            kwargs.get("model"),
            unwrapped_optimizer(optimizer) if optimizer is not None else None,
            name=self.name,
            runs_db=self.runs_db,
            total_steps=max(int(state.max_steps) - int(state.global_step), 0) or None,
            source="transformers",
            raise_on_stop=False,  # the Trainer is told to stop instead: it then ends the training cleanly
            config={**config, **self.config},
            **self.options,
        ).start()
        self._pending, self._samples = None, 0
        if optimizer is not None:
            self._capture = OptimizerCapture(self._optimizer_stepped, unwrapped_optimizer(optimizer)).install()
        model = kwargs.get("model")
        if isinstance(model, torch.nn.Module):
            self._forward_hook = forward_pre_hook(model, self._forward)  # never pickled nor copied with the model
        atexit.register(self._at_exit)

    def _forward(self, module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if torch.is_grad_enabled():  # an evaluation under no_grad trains nothing
            self._samples += batch_samples(args) or batch_samples(kwargs)

    def _optimizer_stepped(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor | None, samples: int | None):
        """Inside `optimizer.step()`: kept for on_step_end, where the Trainer has counted the step."""
        self._pending, self._samples = (loss, self._samples), 0

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.watch is None or self.watch.status is not None:
            return
        if self._pending is not None:  # None: the GradScaler skipped the step (inf gradients): nothing trained
            loss, samples = self._pending
            self._pending = None
            self.watch.step(loss, samples or None)
        if self.watch.stop_requested:
            control.should_training_stop = True

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._end(WatchStopped() if self.watch is not None and self.watch.stop_requested else None)

    def _end(self, error: BaseException | None) -> None:
        """Finish the run in progress, if any, and take the capture's patches out."""
        if self._capture is not None:
            self._capture.uninstall()
            self._capture = None
        if self._forward_hook is not None:
            self._forward_hook.remove()
            self._forward_hook = None
        if self.watch is not None and self.watch.status is None:
            self.watch.finish(error)
        atexit.unregister(self._at_exit)

    def _at_exit(self) -> None:
        """The process ends with a train() unfinished: the exception that ended the program, if one did."""
        error = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
        if isinstance(error, BaseException) and self.watch is not None and self.watch.status is None:
            self._end(error)
