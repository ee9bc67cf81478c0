"""`Watch`: a user's own training loop recorded in the run store like a run of ours, without a host sync.

`step(loss)` keeps the loss detached on its device; once per report interval the buffered losses go to the host
in one copy that nothing waits for (read at a later report once done, as `TrainingSession` does), with a memory
sample from the allocator's counters and, about once a second, what holds the memory
(gpu_train_monitor.watch.step_memory). The window steers a watched run as it steers ours, by the control signals of
gpu_train_monitor.events.signals, answered at the next step():
clear the cache, pause (step() blocks), stop (step() raises `WatchStopped`, or only sets `stop_requested`).

Steps buffered before the loop went quiet are reported within a second from a thread of ours
(gpu_train_monitor.watch.idle_flush): the training thread and that one share the buffer under a lock.

Nothing here may make the user's training fail: a store that cannot be used is one warning on stderr, a value the
store cannot keep (samples or total steps out of range) is one warning and stored as unknown, and a failure of the
watch itself ends the watching, not the training. Under torch.distributed only rank 0 records:
the other ranks' memory would need a collective per report, a sync the watch promises not to add.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..base.readonly import ReadOnlyDict
from ..base.text import Message, message_of
from ..device.devices import device_name
from ..distributed.env import ENV_RUN_UID
from ..engine.loop_state import LoopState
from ..engine.loss_transfer import ReportsInFlight
from ..engine.step_phases import PhaseTimer
from ..events.controls import RunControls
from ..events.events import LogMessage, MemoryBreakdown, RunFinished, StepPredicted
from ..events.signals import stop_on_signals
from ..events.status import Status
from ..memory.probe import MemoryProbe
from ..store.recorder import RunRecorder, open_recorder
from .batches import CommonBatchSize
from .endings import ending, oom_event
from .idle_flush import IdleFlush
from .loop_phases import timed_loop
from .placement import as_list, device_of, training_rank, warn
from .run_facts import checked_count, run_started, watched_config
from .steering import WatchStopped, answer_requests
from .step_losses import StepLosses
from .step_memory import WatchedStepMemory
from .step_prediction import StepPrediction, wait_at_end


class Watch:
    """One watched run. Use `with watch(model, optimizer, name=...) as w:` and call `w.step(loss, samples=...)`
    after each optimizer step; see `gpu_train_monitor.watch.watch`."""

    def __init__(
        self,
        model: nn.Module | None = None,
        optimizer: torch.optim.Optimizer | Sequence[torch.optim.Optimizer] | None = None,
        *,
        name: str = "",
        runs_db: str | Path | None = None,
        total_steps: int | None = None,
        source: str = "api",
        report_interval_s: float = 0.1,
        signals: bool = True,
        raise_on_stop: bool = True,
        config: Mapping[str, Any] | None = None,
        predict: bool = True,
    ) -> None:
        self.model = model
        self.optimizers = as_list(optimizer)
        self.name, self.runs_db, self.source = name, runs_db, source
        self._warned: set[str] = set()  # the values out of range said so once
        self.total_steps = checked_count(total_steps, "total_steps", self._warned)
        self.report_interval_s, self.raise_on_stop = report_interval_s, raise_on_stop
        self.extra_config = dict(config or {})
        self.controls = RunControls()
        self.rank = training_rank()
        self._signals = signals
        self._exits = contextlib.ExitStack()
        self._state = LoopState(t0=time.perf_counter())
        self._probe: MemoryProbe | None = None
        self._device = torch.device("cpu")
        self._memory: WatchedStepMemory | None = None
        self._recorder: RunRecorder | None = None
        self._run_uid = os.environ.get(ENV_RUN_UID) or os.urandom(16).hex()
        self._batches = CommonBatchSize()  # a partial last batch is not the batch size
        self._started, self._announced = False, False  # started; RunStarted recorded (at the first step)
        self._status: str | None = None
        self._broken = False  # the watch itself failed: the training goes on unwatched
        self._losses = StepLosses()  # queued on the device until a report, and where they diverged
        self.prediction = StepPrediction(predict)  # the first step's, traced without memory (step_prediction)
        self._notes: list[LogMessage] = []  # said before the run was recorded: recorded right after its start
        self._lock = threading.Lock()  # the buffered steps: the training thread's and the idle flush's
        self._last_step = 0.0
        self._idle = IdleFlush(self._flush, self._idle_since)
        self.timer: PhaseTimer | None = None  # where each step's time goes: hooks on the model given, or `watch --`'s

    # ---- what a caller reads -------------------------------------------------------------------------
    @property
    def run_uid(self) -> str:
        return self._run_uid

    @property
    def steps(self) -> int:
        return self._state.step

    @property
    def stop_requested(self) -> bool:
        return self.controls.stop_requested

    @property
    def status(self) -> str | None:
        """The run's ending (a Status word) once finished, None before."""
        return self._status

    @property
    def recorder(self) -> RunRecorder | None:
        return self._recorder

    # ---- start ---------------------------------------------------------------------------------------
    def set_model(
        self, model: nn.Module | None, optimizer: torch.optim.Optimizer | Sequence[torch.optim.Optimizer] | None
    ) -> None:
        """Name what is trained when it is known only later (an unchanged script: at its first optimizer step)."""
        self.model = model
        self.optimizers = as_list(optimizer)

    def start(self) -> Watch:
        """Open the run (idempotent; recorded from its first step). The run trains unrecorded when the store
        cannot be used."""
        if self._started:
            return self
        self._started = True
        try:
            self._start()
        except Exception as exc:  # noqa: BLE001 - the watch must never fail the training
            self._give_up(exc)
        return self

    def _start(self) -> None:
        self._device = device = device_of(self.model, self.optimizers)
        self._probe = MemoryProbe(device)
        self._probe.reset_peak()
        self._memory = WatchedStepMemory(self._probe)
        self._state = LoopState(
            t0=time.perf_counter(), total_steps=self.total_steps or 0, device_name=device_name(device)
        )
        self._state.last_report = time.perf_counter()
        if self._signals and threading.current_thread() is threading.main_thread():
            self._exits.enter_context(stop_on_signals(self.controls))
        if self.rank == 0:
            self._recorder = open_recorder(self.runs_db, warn, on_problem=warn)
        if self._recorder is not None:
            self.controls.observers.append(self._recorder)
            self.prediction.follow()
            self._idle.start()
            if self.timer is None and isinstance(self.model, nn.Module):  # a `watch --` script's has its own marks
                self.timer, hooks = timed_loop(self.model, self.optimizers, device)
                self._exits.callback(hooks.remove)  # taken off when the run ends

    def _announce(self) -> None:
        """The run's start, recorded at its first step (or its end, if it ends before one): only then are the
        batch size and the model's memory with its gradients and optimizer state known."""
        assert self._probe is not None
        self._announced = True
        memory = self._probe.sample()
        self.controls.emit(run_started(self._config(), self.model, self._state.device_name, memory, self._run_uid))
        notes, self._notes = self._notes, []
        for note in notes:
            self.controls.emit(note)

    def _config(self) -> ReadOnlyDict:
        return watched_config(
            self.model,
            self.optimizers,
            self._batches.size,
            self._device,
            self.source,
            self.name,
            self.total_steps,
            self.extra_config,
        )

    def log(self, level: str, text: str) -> None:
        """A line in the run's log (recorded once the run is, at its first step)."""
        note = LogMessage(level, text)
        if self._announced:
            self.controls.emit(note)
        else:
            self._notes.append(note)

    # ---- each step -----------------------------------------------------------------------------------
    def step(self, loss: torch.Tensor | float | None = None, samples: int | None = None) -> None:
        """One optimizer step done: `loss` (kept on its device) and the `samples` it trained on. The window's
        requests are answered here; a stop raises WatchStopped (or sets `stop_requested`)."""
        if not self._started:
            self.start()
        if self._status is not None:
            return
        if not self._broken:
            try:
                with self._lock:
                    self._record_step(loss, checked_count(samples, "samples", self._warned))
            except Exception as exc:  # noqa: BLE001 - the watch must never fail the training
                self._give_up(exc)
        if not self._broken:  # the window's requests (gpu_train_monitor.watch.steering)
            answer_requests(self.controls, self._probe, self._state, self._flush, self.raise_on_stop)
        if self.timer is not None:  # the step's end: the watch's own time was its recording
            self.timer.mark("recording")
            self.timer.end()
            self.timer.start()

    def _record_step(self, loss: torch.Tensor | float | None, samples: int | None) -> None:
        loop = self._state
        assert self._memory is not None
        if self._recorder is None:  # nobody will read it (another rank's, or no store): count, fetch nothing
            loop.step += 1
            loop.samples += int(samples or 0)
            return
        if not self._announced:
            self._batches.size = int(samples or 0)  # the first step's, until more are seen
            self._announce()
            self._emit_prediction(loop.step + 1)
        self._losses.add(loop, loss, self._device)
        loop.step += 1
        if samples:
            loop.samples += int(samples)
            self._batches.count(int(samples))
        now = time.perf_counter()
        if self._memory.measuring or (loop.sample_next and not self._memory.uses_allocator):
            if self._memory.measuring:
                self._emit_breakdown()
            else:
                loop.sample_next = False
                self._memory.begin()  # counts what the next step saves for backward
        if now - loop.last_report >= self.report_interval_s:
            self._report(wait=False)
        self._last_step = now

    def _report(self, wait: bool = True) -> None:
        """Send the buffered losses (no sync) with a memory sample; emit the reports that arrived (`wait`: all)."""
        loop = self._state
        assert self._probe is not None and self._memory is not None
        if not loop.unreported:
            return
        phases = self.timer.take() if self.timer is not None and loop.pending else None
        self._losses.report(loop, self._batches.size, self._probe, self.total_steps, self.controls.emit, phases, wait)
        self._emit_predicted(self.prediction.ready())
        if loop.sample_next and self._memory.uses_allocator:
            self._emit_breakdown()

    def _emit_prediction(self, step: int) -> None:
        """The first step's prediction: traced beside the training, recorded at a report once it is done."""
        self.prediction.start(step, self.model, self.optimizers)  # never raises
        self._emit_predicted(self.prediction.ready())

    def _emit_predicted(self, predicted: StepPredicted | None) -> None:
        if predicted is not None:
            self._state.predicted = predicted if predicted.predicted else False  # what an out of memory names
            self.controls.emit(predicted)

    def _emit_breakdown(self) -> MemoryBreakdown:
        loop = self._state
        assert self._memory is not None
        breakdown = self._memory.breakdown(loop.step, self.model, self.optimizers)
        loop.sample_next = False
        loop.last_breakdown = time.perf_counter()
        loop.keep_breakdown(breakdown)
        self.controls.emit(breakdown)
        return breakdown

    def _flush(self) -> None:
        with self._lock:
            if self._state.unreported and not self._broken and self._recorder is not None:
                try:
                    self._report()
                except Exception as exc:  # noqa: BLE001
                    self._give_up(exc)

    def _idle_since(self) -> float | None:
        """When the last step was made, while steps wait for a report (read without the lock: a hint)."""
        return self._last_step if self._state.unreported and self._status is None else None

    # ---- the end -------------------------------------------------------------------------------------
    def finish(self, error: BaseException | None = None) -> str:
        """End the run: completed, stopped (WatchStopped, Ctrl+C), oom, diverged (a loss became nan or inf) or
        failed; returns its status word. Idempotent."""
        if self._status is not None:
            return self._status
        if error is None and self.controls.stop_requested:  # a Stop the loop honoured (raise_on_stop=False)
            error = WatchStopped(Message("stopped by request"))
        status, message = ending(error)
        self._status = status
        try:
            if self._started and not self._broken and self._recorder is not None:
                if not self._announced:  # it ended before its first step (out of memory in it, say)
                    self._announce()
                self._flush()
                with self._lock:  # the idle flush's reports hand it out too
                    self._emit_predicted(self.prediction.wait(wait_at_end(status)))
                if status == Status.OOM and error is not None:
                    self._record_oom(error)
                if status == Status.COMPLETED and self._losses.nonfinite_step is not None:
                    self._status = status = Status.DIVERGED
                    message = self._losses.diverged_text()
                self._emit_finished(status, message)
        except Exception as exc:  # noqa: BLE001 - the watch must never fail the training
            self._give_up(exc)
        finally:
            self._close()
        return status

    def _record_oom(self, error: BaseException) -> None:
        """What was asked for, what was free, what held the memory when it ran out, and the batch that would fit."""
        assert self._probe is not None
        self._emit_breakdown()  # the step under way: split by module when it was being split (kept by the loop)
        self.controls.emit(oom_event(error, self._state, self._batches.size, self._probe))

    def _emit_finished(self, status: str, message: str) -> None:
        config = self._config()
        summary = self._state.summary(status, self._probe, config)
        self.controls.emit(RunFinished(status, self._state.step, message, False, summary))

    def _close(self) -> None:
        self._idle.stop()
        self.prediction.stop()
        if self._memory is not None:
            self._memory.end()
        self._exits.close()
        if self._recorder is not None:
            self._recorder.close()
        self._state.pending, self._state.in_flight = [], ReportsInFlight()

    def _give_up(self, exc: BaseException) -> None:
        """The watch failed (never the training): say so once and watch no more."""
        if not self._broken:
            self._broken = True
            warn(Message("watching stopped: {kind}: {error}", kind=type(exc).__name__, error=message_of(exc)))

    # ---- the with block ------------------------------------------------------------------------------
    def __enter__(self) -> Watch:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> bool:
        self.finish(error)
        return isinstance(error, WatchStopped)
