"""A watched run's step predicted at its first step: its own model traced on tensors without memory
(gpu_train_monitor.watch.step_trace), once, in the training process, to set beside the breakdowns measured while it
trains (`StepPredicted` in the run store). Nothing of the trace is seen by the step capture's patches or by any
global module or optimizer hook, and nothing of it may fail the training: a step that cannot be traced
(data-dependent shapes, an op without a fake implementation, ...) is recorded with the reason.
`watch(..., predict=False)` or GPU_TRAIN_MONITOR_PREDICT=0 turns it off.

Where it runs: the trace costs ~0.1-1 s once (`elapsed_s`), a tenth to a third of a short run, so it runs on a
thread of ours beside the training and its event is recorded at the first report after it is done (or at the
run's end, which waits for it a bounded while). FakeTensorMode, autograd's grad mode and autocast are thread-local
in torch; what is process-global is every global module and optimizer hook and the capture's patches: ours ask
`tracing_here()` (gpu_train_monitor.watch.trace_thread) and let the trace pass, and a script with global hooks of
its own, which would see the trace's fake tensors, is traced synchronously with every hook set aside (`unseen`).
On CPUs the steps beside the trace share the GIL with it: Python hands the GIL back every 20 us instead of 5 ms
while it runs (restored after).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence

import torch
from torch import nn

from ..events.events import StepPredicted
from ..memory.predict import PredictionUnavailable
from ..memory.tracing import untraceable
from .placement import unwrapped_model
from .step_inputs import FirstInputs, StepInputs
from .step_trace import MODULE_HOOKS, predict_watched
from .trace_thread import tracing

ENV_PREDICT = "GPU_TRAIN_MONITOR_PREDICT"  # "0": a watched run's step is not predicted
SWITCH_INTERVAL_S = 0.00002  # the GIL handed back this often while the trace runs (Python's default: 5 ms)
WAIT_AT_END_S = 30.0  # how long a run's end waits for a trace still running (then: recorded without it)
WAIT_AT_STOP_S = 2.0  # the same for a run that was stopped, interrupted or failed: its exit is not held up


def enabled_here(asked: bool = True) -> bool:
    return asked and os.environ.get(ENV_PREDICT, "1").strip() not in ("0", "false", "no", "off")


class StepPrediction:
    """A Watch's prediction: `follow()` at its start (or `use(inputs)`: a script's, following since its start-up),
    `start(step, model, optimizers)` at its first step begins the trace, `ready()` at each report and `wait(s)` at
    the end give the StepPredicted to record, once; `stop()` at its end."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled_here(enabled)
        self.inputs = FirstInputs()
        self.done = not self.enabled  # started (or off)
        self._thread: threading.Thread | None = None
        self._event: StepPredicted | None = None  # traced, not yet handed out
        self._handing = threading.Lock()  # ready() is called by the training thread and the idle flush's

    def use(self, inputs: FirstInputs) -> None:
        """Inputs recorded elsewhere (a script's, before its model was known)."""
        self.inputs.forget()
        self.inputs = inputs

    def follow(self) -> None:
        """Record the first forwards from now on (every module's: the model is known for sure at the first step)."""
        if not self.done:
            self.inputs.follow_all()

    def start(self, step: int, model: nn.Module | None, optimizers: Sequence[torch.optim.Optimizer]) -> None:
        """Trace the first step: on a thread of ours, or here when the script has global hooks of its own. Once;
        never raises."""
        if self.done:
            return
        self.done = True
        try:
            model = unwrapped_model(model)
            called = self.inputs.of(model)
            self.inputs.forget()
            traced, inputs = (called[0], called[1]) if called else (model, None)
            optimizers = list(optimizers)
        except Exception as exc:  # noqa: BLE001 - the watch must never fail the training
            self._event = _not_predicted(step, untraceable("", exc), 0.0)
            return
        if foreign_global_hooks():
            self._event = step_predicted(step, traced, optimizers, inputs, beside=False)
            return
        self._thread = threading.Thread(
            target=self._trace, args=(step, traced, optimizers, inputs), name="gpu-train-monitor-predict", daemon=False
        )  # not a daemon: Python waits for it before its exit handlers, which take torch's operators apart
        self._thread.start()

    def _trace(
        self, step: int, model: nn.Module | None, optimizers: list[torch.optim.Optimizer], inputs: StepInputs | None
    ) -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        try:
            with tracing():
                event = step_predicted(step, model, optimizers, inputs, beside=True)
        except BaseException as exc:  # noqa: BLE001 - a thread of ours: nothing may escape it
            event = _not_predicted(step, untraceable("", exc), 0.0)
        finally:
            sys.setswitchinterval(interval)
        self._event = event

    def ready(self) -> StepPredicted | None:
        """The traced step's event once the trace is done, else None; each event is handed out once."""
        if self._thread is not None and self._thread.is_alive():
            return None
        with self._handing:
            event, self._event = self._event, None
        return event

    def wait(self, timeout_s: float) -> StepPredicted | None:
        """The event, waiting up to `timeout_s` for a trace still running (None if it still is)."""
        if self._thread is not None:
            self._thread.join(timeout_s)
        return self.ready()

    def stop(self) -> None:
        self.inputs.forget()


def foreign_global_hooks() -> bool:
    """Whether torch holds a global module or optimizer hook that is not the watch's: it would see the trace's fake
    tensors if the trace ran beside the training."""
    from torch.nn.modules import module as modules
    from torch.optim import optimizer as optimizers

    ours = __name__.split(".")[0] + "."
    held = [getattr(modules, name) for name in MODULE_HOOKS if hasattr(modules, name)]
    held += [getattr(optimizers, name) for name in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")]
    hooks = [hook for table in held for hook in table.values() if callable(hook)]
    return any(not str(getattr(hook, "__module__", "") or "").startswith(ours) for hook in hooks)


def step_predicted(
    step: int,
    model: nn.Module | None,
    optimizers: Sequence[torch.optim.Optimizer],
    inputs: StepInputs | None,
    *,
    beside: bool = False,
) -> StepPredicted:
    """The event of `step`: `model`'s step predicted on `inputs`, or why it could not be (`beside`: traced on a
    thread beside the training, see the module doc)."""
    started = time.perf_counter()
    try:
        p = predict_watched(model, optimizers, inputs, beside=beside)
    except PredictionUnavailable as exc:
        return _not_predicted(step, exc.reason, time.perf_counter() - started)
    return StepPredicted(
        step,
        p.peak_bytes,
        p.params_bytes,
        p.grads_bytes,
        p.optimizer_bytes,
        p.batch_bytes,
        p.activations_bytes,
        p.phase_peaks,
        p.batch_size,
        p.device_kind,
        p.traced_on,
        p.what,
        p.elapsed_s,
        grads_end_bytes=p.grads_end_bytes,
        saved_activations_bytes=p.saved_activations_bytes,
        saved_inputs_bytes=p.saved_inputs_bytes,
        modules=p.modules,
    )


def _not_predicted(step: int, reason: str, elapsed_s: float) -> StepPredicted:
    return StepPredicted(step, 0, 0, 0, 0, 0, 0, (), 0, "", "", "", elapsed_s, reason=reason)
