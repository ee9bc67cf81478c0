"""A Lightning `Callback` that records a `Trainer.fit` in the run store like a run of ours, around one `Watch`:

    trainer = L.Trainer(..., callbacks=[GpuTrainMonitorCallback(name="my-run")])

One step of the run is one optimizer step: with `accumulate_grad_batches > 1` its loss is the mean of its
micro-batches' losses (summed on the device, never read here) and its samples are theirs together. The window's
Stop sets `trainer.should_stop` (Lightning ends the fit cleanly, the run is `stopped`); an exception reaches
`on_exception` (failed, oom; Ctrl+C, which Lightning turns into an exit, is `stopped`).

In manual optimization a step's loss is what `training_step` returned (their mean over the step's batches) or,
when it returns nothing, the sum of what `manual_backward()` ran on since the largest optimizer's previous step
(gpu_train_monitor.watch.step_capture), the objective of everything that trained in between (a GAN's two losses).

Needs the `lightning` extra (`lightning>=2.4`); `PytorchLightningMonitorCallback` is the same callback for the
older `pytorch_lightning` package name. Only this module imports Lightning: `gpu_train_monitor.watch` never needs it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from .batches import batch_samples
from .optimizer_capture import OptimizerCapture
from .session import Watch
from .steering import WatchStopped

try:
    from lightning.pytorch import Callback
    from lightning.pytorch import __version__ as LIGHTNING_VERSION
except ImportError:  # only the older package name is installed
    try:
        from pytorch_lightning import Callback
        from pytorch_lightning import __version__ as LIGHTNING_VERSION
    except ImportError as missing:
        raise ImportError(
            'the Lightning callback needs Lightning: pip install ".[lightning]" in a clone of the project'
        ) from missing


def _loss_of(outputs: Any) -> torch.Tensor | None:
    """The loss `training_step` returned (Lightning hands it on in `outputs`), detached."""
    if isinstance(outputs, Mapping):
        outputs = outputs.get("loss")
    return outputs.detach() if isinstance(outputs, torch.Tensor) else None


class _WatchHooks:
    """The hooks, on whichever Lightning's Callback class they are mixed into."""

    def __init__(self, name: str = "", runs_db: str | Path | None = None, **options: Any) -> None:
        """`name` and `runs_db` as `watch()`'s; `options`: the rest of `Watch`'s (report_interval_s, signals,
        config)."""
        self.config = dict(options.pop("config", None) or {})
        self.name, self.runs_db, self.options = name, runs_db, options
        self.watch: Watch | None = None  # the run of the fit in progress (or of the last one)
        self._loss: torch.Tensor | None = None  # the micro-batches' losses since the last optimizer step, summed
        self._losses = 0
        self._samples = 0
        self._global_step = 0
        self._capture: OptimizerCapture | None = None  # manual optimization: what manual_backward() ran on
        self._captured: torch.Tensor | None = None

    def __getstate__(self) -> dict[str, Any]:
        """What it was made with, never the run in progress: pickling it (a saved Trainer, a deep copy of its
        callbacks) must not meet the recorder's SQLite connection, and a copy records runs of its own."""
        return {"name": self.name, "runs_db": self.runs_db, "options": dict(self.options), "config": dict(self.config)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["runs_db"], config=state["config"], **state["options"])  # type: ignore[misc]

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        config = {"framework": f"lightning {LIGHTNING_VERSION}", "accumulate_grad_batches": _accumulation(trainer)}
        self.watch = Watch(
            pl_module,
            list(trainer.optimizers),
            name=self.name,
            runs_db=self.runs_db,
            total_steps=_steps_left(trainer),
            source="lightning",
            raise_on_stop=False,  # the trainer is told to stop instead: Lightning then ends the fit cleanly
            config={**config, **self.config},
            **self.options,
        ).start()
        self._loss, self._losses, self._samples = None, 0, 0
        self._global_step = trainer.global_step
        self._captured = None
        if not pl_module.automatic_optimization and trainer.optimizers:
            largest = max(trainer.optimizers, key=_parameter_count)
            self._capture = OptimizerCapture(self._optimizer_stepped, largest).install()

    def _optimizer_stepped(self, optimizer: Any, loss: torch.Tensor | None, samples: int | None) -> None:
        if loss is not None:
            self._captured = loss if self._captured is None else self._captured + loss

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if self.watch is None or self.watch.status is not None:
            return
        loss = _loss_of(outputs)
        if loss is not None:
            self._loss = loss if self._loss is None else self._loss + loss  # on the device: no sync
            self._losses += 1
        self._samples += batch_samples(batch)
        if trainer.global_step == self._global_step:
            return  # a micro-batch whose gradients wait for the next one
        self._global_step = trainer.global_step
        loss = self._step_loss(trainer, pl_module)
        self.watch.step(self._captured if loss is None else loss, self._samples or None)
        self._loss, self._losses, self._samples, self._captured = None, 0, 0, None
        if self.watch.stop_requested:
            trainer.should_stop = True

    def _step_loss(self, trainer: Any, pl_module: Any) -> torch.Tensor | None:
        """The mean of the step's micro-batch losses. Automatic optimization hands on each loss divided by
        `accumulate_grad_batches`, so their sum is that mean, except at an epoch's end with fewer micro-batches."""
        if self._loss is None:
            return None
        normalized = _accumulation(trainer) if pl_module.automatic_optimization else 1
        return self._loss if normalized == self._losses else self._loss * (normalized / self._losses)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self._end(None)

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        """Lightning reports every exception of a fit here; Ctrl+C (a KeyboardInterrupt) ends `stopped`."""
        self._end(exception)

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._end(None)  # a fit that ended without on_train_end or on_exception (a tuner's exit)

    def _end(self, error: BaseException | None) -> None:
        if self._capture is not None:
            self._capture.uninstall()
            self._capture = None
        if self.watch is not None:
            stopped = error is None and self.watch.stop_requested
            self.watch.finish(WatchStopped() if stopped else error)


def _accumulation(trainer: Any) -> int:
    return int(getattr(trainer, "accumulate_grad_batches", 1) or 1)


def _parameter_count(optimizer: Any) -> int:
    return sum(p.numel() for group in optimizer.param_groups for p in group["params"])


def _steps_left(trainer: Any) -> int | None:
    """The optimizer steps this fit will make, when Lightning knows (not for an endless or iterable dataset)."""
    try:
        total = float(trainer.estimated_stepping_batches)
    except Exception:  # noqa: BLE001 - an estimate Lightning cannot make is an unknown length, not a failure
        return None
    if not math.isfinite(total):
        return None
    return max(int(total) - int(trainer.global_step), 0) or None


class GpuTrainMonitorCallback(_WatchHooks, Callback):
    """Records each `Trainer.fit` as a run: `Trainer(callbacks=[GpuTrainMonitorCallback(name="my-run")])`."""


def __getattr__(name: str) -> Any:
    """`PytorchLightningMonitorCallback`: the callback for `import pytorch_lightning as pl` (a Trainer accepts only
    its own package's Callback), built on first use so that importing this module never loads both packages."""
    if name == "PytorchLightningMonitorCallback":
        import pytorch_lightning

        built = type(name, (_WatchHooks, pytorch_lightning.Callback), {"__doc__": GpuTrainMonitorCallback.__doc__})
        built.__module__ = __name__
        globals()[name] = built
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
