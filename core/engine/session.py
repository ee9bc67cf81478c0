"""One training run: build everything from a RunConfig, train, and tell observers what happens.

`TrainingSession.run()` blocks (call it from a worker thread or the CLI's main thread) and reads top to
bottom as: build (`_build`, gpu_train_monitor.engine.session_build), loop (`_train`: for each epoch, for each step:
what was asked, the step, a checkpoint when due; then the epoch's end), report (`_report`), finish (`_finish`).
What differs for a process that is one rank of a data-parallel run is its strategy's
(gpu_train_monitor.engine.strategy): the loop is the same.
Other threads steer it only through `request_stop`, `pause`, `resume`, `request_cache_clear`,
`request_snapshot` and `request_checkpoint`, which set flags that the loop reads at step boundaries.

Checkpoints (gpu_train_monitor.engine.checkpointing) are saved at step boundaries: as the `CheckpointPolicy` says (epoch
ends, every N steps, a stop mid-epoch) and when requested. `resume=PATH` continues a checkpoint's run: its
run_uid, step count and losses go on, and the next losses equal those of a run never interrupted.

The loop never syncs with the device: losses stay on the device in a list and are copied to the host in one
transfer per report interval that nothing waits for (`_report`, gpu_train_monitor.engine.loss_transfer); a report
is emitted once its losses arrived, where NaN/inf is detected. A run that ends
`completed` has trained every planned step; out-of-memory errors are events (`OutOfMemory`) that stop
the run or halve the batch, in training and in validation alike (gpu_train_monitor.engine.oom_recovery). Every early
ending is an exception (gpu_train_monitor.events.outcome) that leaves through the one `try` in `run()`.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import time
from collections.abc import Iterator

import torch

from ..base.text import Message
from ..data.batches import BatchEpoch
from ..events import outcome as run_outcome
from ..events.events import CacheCleared, EpochEnded, EpochStarted, LogMessage, RunFinished, RunPaused, RunResumed
from ..memory import oom
from ..memory.probe import clear_cache, has_cache
from ..memory.snapshot import snapshot_event
from ..model.step import compile_failure
from . import oom_recovery
from . import report as loss_report
from .loop_state import EpochInProgress, epoch_exhausted
from .session_build import SessionBuild
from .strategy import Requests

MAX_OOM_RETRIES = oom_recovery.MAX_OOM_RETRIES  # halvings of the batch a run makes before it stops


class TrainingSession(SessionBuild):
    """Runs one RunConfig to its end and emits events; thread-safe commands (`RunControls`: request_stop,
    pause, resume, request_cache_clear, request_snapshot, request_checkpoint) steer it from other threads.
    What it holds and how it builds the run: `gpu_train_monitor.engine.session_build.SessionBuild`."""

    # ---- the run ---------------------------------------------------------------------------------
    def run(self) -> RunFinished:
        """Train to the end (completed, stopped, diverged, oom or failed); returns the final event."""
        self._state.t0 = time.perf_counter()  # the run's clock starts now, not when the session was made
        try:
            self._build()
            self._train()
            outcome = run_outcome.trained(self._state.step, self._state.total_steps)
        # an early ending (gpu_train_monitor.events.outcome), a user's mistake (sys.exit()
        except (Exception, SystemExit) as exc:
            # in a model's forward too), a bug: never kill the caller
            outcome = run_outcome.ended_by(exc)
        finished = self._finish(outcome)  # outside the except block: its frames would pin the run's tensors
        self.emit(finished)
        return finished

    # ---- the loop --------------------------------------------------------------------------------
    def _train(self) -> None:
        assert self._parts is not None
        self._state.last_report = time.perf_counter()
        self._parts.trainer.model.train()
        for epoch in self._epochs():
            while not self._steps_done():
                self._at_step_boundary(epoch.batches)  # what was asked: clear, save, pause, stop
                if not self._train_step(epoch.batches):  # the next batch and its step (a report when due)
                    epoch.exhausted = True  # its data ran out
                    break
                if self._checkpointer.every_due(self._state.step):
                    self._save_checkpoint("every", epoch.batches)
            self._close_epoch(epoch)  # report, validate, checkpoint

    def _epochs(self) -> Iterator[EpochInProgress]:
        """A resumed run's epoch first (it may start mid-epoch), then new ones until the epoch limit or max_steps."""
        cfg, loop = self.config, self._state
        assert self._parts is not None
        batch_size = self._parts.source.batch_size
        batches, self._resumed_epoch = self._resumed_epoch, None
        while batches is not None or (
            (cfg.epoch_limit is None or loop.epoch < cfg.epoch_limit) and not self._steps_done()
        ):
            if batches is None:
                batches = self._start_epoch()
            yield EpochInProgress(batches, batches.remaining_samples() // batch_size * batch_size, loop.samples)
            batches = None

    def _close_epoch(self, epoch: EpochInProgress) -> None:
        """The epoch's steps are done: report them, see whether its data ran out (else max_steps ended it), then
        validate and save the checkpoints due."""
        loop = self._state
        if loop.unreported:
            self._report()
        epoch.exhausted = epoch.exhausted or self._data_ran_out(epoch.batches)
        if epoch.exhausted:
            loop.skipped_samples += max(epoch.planned_samples - (loop.samples - epoch.samples_before), 0)
            if loop.samples == epoch.samples_before and epoch.planned_samples:  # (a resumed epoch may have none left)
                raise RuntimeError(Message("epoch {epoch} produced no batch", epoch=loop.epoch))  # would loop forever
        elif self._checkpointer.stop_due(loop.step):  # max_steps ends the run mid-epoch
            self._save_checkpoint("end", epoch.batches)  # before validating: as a longer run would go on
        self._end_epoch(complete=epoch.exhausted)
        if epoch.exhausted and self._checkpointer.policy.epoch_end:
            self._save_checkpoint("epoch", None)

    def _data_ran_out(self, batches: BatchEpoch) -> bool:
        """max_steps at the data's end: as the next step would find it."""
        assert self._parts is not None
        return batches.remaining_samples() < self._parts.source.batch_size and epoch_exhausted(batches)

    def _start_epoch(self) -> BatchEpoch:
        loop = self._state
        assert self._parts is not None and self.device is not None
        loop.epoch += 1
        loop.epoch_losses = []
        self.emit(EpochStarted(loop.epoch, loop.step))
        self._checkpointer.epoch_started(self.device, self._parts.source)  # before the epoch draws anything
        return self._parts.source.train_epoch()

    def _steps_done(self) -> bool:
        return self.config.max_steps is not None and self._state.step >= self.config.max_steps

    def _train_step(self, batches: BatchEpoch) -> bool:
        """One step; False at the end of the epoch. An out-of-memory error in the step or in making its
        batch is recovered from (the batch source retries the same images) or ends the run."""
        loop = self._state
        assert self._parts is not None and self._recorder is not None
        sample, recorder = loop.sample_next, self._recorder  # measure what holds memory, ~once a second
        failure: str | None = None
        taken = False
        compiling = loop.step == loop.start_step and self._parts.trainer.compiles
        timer = self._timer
        timer.start()
        try:
            images, labels = next(batches)  # allocates too: a resident epoch's augmented copy, the H2D copy
            taken = True
            timer.mark("data")
            timer.split("data", batches.copy_s, into="copy")
            started = time.perf_counter()
            with recorder.step() if sample else contextlib.nullcontext():
                loss = self._parts.trainer.step(images, labels, recorder if sample else None, timer)
            if compiling:
                self._timed_compile(started, loss)
        except StopIteration:
            timer.drop()
            return False
        except (torch.OutOfMemoryError, RuntimeError, MemoryError) as exc:
            if not oom.is_out_of_memory(exc):
                if compiling:
                    raise compile_failure(self.config.model, exc) from exc
                raise
            failure = str(exc)
        if failure is not None:  # outside the except block: its traceback pins the step's tensors
            timer.drop()
            images = labels = loss = None  # noqa: F841 - drop the step's tensors before recovering
            if taken:
                batches.give_back()  # the step failed, not the batch: its images are trained on the retry
            self._recover_from_oom(failure, "train", batches)
            return True
        loop.pending.append(loss.detach())  # stays on the device: no sync here
        loop.step += 1
        loop.samples += images.shape[0]  # a host-side shape: no sync
        if sample:
            self._emit_breakdown(images, labels)
        if self.strategy.report_due(loop, self.config.report_interval):
            self._report(wait=False)  # the losses sent to the host: no sync
        timer.mark("recording")
        timer.end()
        return True

    def _timed_compile(self, started: float, loss: torch.Tensor) -> None:
        """The first compiled step builds torch.compile's graphs: time it (one sync, once per run) and say so.
        Its report is the run's first, which images/s leaves out as warm-up."""
        loss.detach().float().cpu()  # sync point: once, so the time is the compile's and the step's
        self._state.compile_s = time.perf_counter() - started
        self.emit(
            LogMessage(
                "info",
                Message(
                    "torch.compile compiled the model in {seconds:.1f} s (the first step; "
                    "counted in the wall time, left out of images/s)",
                    seconds=self._state.compile_s,
                ),
            )
        )

    def _at_step_boundary(self, batches: BatchEpoch) -> None:
        """Apply what was asked from other threads (a data-parallel run: what its ranks agreed): cache clear,
        checkpoint, snapshot, pause (blocking), stop."""
        asked = self.strategy.requests(self)
        self._apply(asked, batches)
        for path in asked.snapshots:
            self._save_snapshot(path)
        stop = asked.stop
        if asked.pause:
            stop = self._pause(batches) or stop
        if stop:
            self._end_as_asked(batches)

    def _apply(self, asked: Requests, batches: BatchEpoch) -> None:
        """Cache clears and checkpoints asked for: answered between steps, and while paused."""
        if asked.clear:
            self._apply_cache_clear()
        for path in asked.checkpoints:
            self._save_checkpoint("request", batches, path)

    def _pause(self, batches: BatchEpoch) -> bool:
        """Paused until resumed; True when a stop ended the pause."""
        assert self.probe is not None
        loop = self._state
        if loop.unreported:
            self._report()
        self.emit(RunPaused(loop.step))
        apply = functools.partial(self._apply, batches=batches)
        stopped = self.strategy.wait_while_paused(self, apply, loop, self.probe)
        if not stopped:
            self.emit(RunResumed(loop.step))
        loop.reset_rate_clock()
        return stopped

    def _end_as_asked(self, batches: BatchEpoch) -> None:
        """The steps trained reported, a checkpoint when the policy keeps one at a stop, then the run ends."""
        if self._state.unreported:
            self._report()
        if self._checkpointer.stop_due(self._state.step):
            self._save_checkpoint("stop", batches)
        raise run_outcome.Stopped

    # ---- report ----------------------------------------------------------------------------------
    def _report(self, wait: bool = True) -> None:
        """The buffered losses sent to the host (every rank's, in a data-parallel run) with a StepsReported made of
        this moment's rate, memory and phases; then every report whose losses have arrived emitted and checked,
        oldest first. `wait`: every report now (an epoch's end, a pause, a stop, a save), waiting for the copies."""
        assert self._parts is not None and self.probe is not None
        loop = self._state
        if loop.pending:
            gathered = self.strategy.gather(loop, self.probe, self, self.config)
            self.loss_fetches += 1
            report = loss_report.steps_reported(
                loop,
                gathered.losses.count,
                gathered.now,
                self._parts.source.batch_size,
                self.probe.sample(),
                gathered.world,
                gathered.ranks,
                self._timer.take(),
            )
            loop.in_flight.add(report, gathered.losses)
        for report in loss_report.arrived_reports(loop, wait):
            self.emit(report)
            warning = loss_report.check_losses(loop, report.first_step, report.losses)  # Diverged at a nan/inf
            if warning is not None:  # the loss rose: said once
                self.emit(warning)

    def _emit_breakdown(self, images: torch.Tensor, labels: torch.Tensor) -> None:
        """Memory by holder for the step just sampled (host-side counters and tensor sizes: no sync)."""
        loop = self._state
        assert self._parts is not None and self._recorder is not None and self.device is not None
        loop.sample_next = False
        loop.last_breakdown = time.perf_counter()
        trainer = self._parts.trainer
        breakdown = self._recorder.breakdown(
            loop.step, trainer.model, trainer.optimizer, images, labels, self._parts.placement.device_bytes(self.device)
        )
        if loop.breakdown is None or breakdown.total_bytes >= loop.breakdown.total_bytes:
            loop.breakdown = breakdown
        self.strategy.breakdown_measured(breakdown, self.emit)  # a data-parallel rank: in its next report

    def _apply_cache_clear(self) -> None:
        assert self.device is not None and self.probe is not None
        freed = clear_cache(self.device)
        self.emit(CacheCleared(self._state.step, freed, self.probe.sample()))
        if not has_cache(self.device):
            self.emit(LogMessage("info", Message("the CPU has no caching allocator: nothing to clear")))

    # ---- validation ------------------------------------------------------------------------------
    def _end_epoch(self, complete: bool = True) -> None:
        """Validate (recovering from out-of-memory like a training step), then report the epoch (`complete`:
        its data ran out, rather than the run's steps)."""
        loop = self._state
        assert self._parts is not None and self.device is not None
        recover = functools.partial(self._recover_from_oom, phase="validation", epoch=None)
        accuracy, val_loss = oom_recovery.validate(self._parts, self.device, loop, recover)  # OOM: stop or halve
        if accuracy is not None:
            loop.val_accuracy = accuracy
        train_loss = statistics.fmean(loop.epoch_losses) if loop.epoch_losses else None
        self.emit(EpochEnded(loop.epoch, loop.step, train_loss, val_loss, accuracy, complete))
        self._state.reset_rate_clock()

    # ---- out of memory ---------------------------------------------------------------------------
    def _recover_from_oom(self, message: str, phase: str, epoch: BatchEpoch | None) -> None:
        """Free what the failed step held, report it, then stop or continue with half the batch
        (gpu_train_monitor.engine.oom_recovery decides)."""
        assert self.device is not None and self.probe is not None and self._parts is not None
        event = oom_recovery.recover(message, phase, self.config, self._state, self.device, self.probe, self._parts)
        self.emit(event)
        self.strategy.out_of_memory(event, self._state, self.device)  # a data-parallel rank ends here
        if event.new_batch_size is None:
            if self._state.unreported:  # the steps before the failure still reach the plot and the summary
                self._report()
            raise run_outcome.OutOfMemoryStop(oom_recovery.stop_message(event, self.config.on_oom))
        oom_recovery.continue_with(event, self.config, self._state, self._parts.source, epoch)

    # ---- finish ----------------------------------------------------------------------------------
    def _finish(self, outcome: run_outcome.Outcome) -> RunFinished:
        """The summary, the snapshot at the end, and the run's memory given back."""
        loss_report.emit_last_reports(self._state, outcome.status, self.emit)
        summary = self._state.summary(outcome.status, self.probe, self._config_as_run())
        self._finish_history()
        self._parts = None
        self._recorder = None
        self._state.pending = []
        if self.device is not None and has_cache(self.device):
            oom.release(self.device)  # unreachable tensors, then the allocator's cache: back to the baseline
        finished = RunFinished(
            outcome.status, self._state.step, outcome.message, outcome.user_error, summary, outcome.error_field
        )
        return self.strategy.finished(finished)  # a data-parallel run's summary: the world's

    # ---- checkpoints and memory snapshots ---------------------------------------------------------
    def _save_checkpoint(self, reason: str, batches: BatchEpoch | None, path: str | None = None) -> None:
        """At a step boundary (`batches` None: after the epoch's validation). Reports the buffered losses
        first, so the run's record holds every step the checkpoint does."""
        assert self._parts is not None and self.device is not None
        if self._state.unreported:
            self._report()
        self.emit(self._checkpointer.save(reason, path, self.config, self.device, self._parts, self._state, batches))
        self._state.reset_rate_clock()  # the save's time is not training time

    def _save_snapshot(self, path: str) -> None:
        self.emit(snapshot_event(self._history, path, self._state.step))

    def _finish_history(self) -> None:
        if self._history is not None:
            if self.snapshot_path:
                self._save_snapshot(self.snapshot_path)
            self._history.stop()
            self._history = None
