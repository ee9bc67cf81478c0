"""The CLI's observer: a progress bar on stderr while a run goes, log lines above it.

The sentences come from `gpu_train_monitor.events.event_text`, the same ones the window's log shows.
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from tqdm import tqdm

from ..base.text import printable
from ..config.sequences import IMAGES, throughput
from ..events import event_text
from ..events.events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    Event,
    LogMessage,
    OutOfMemory,
    RunFinished,
    RunStarted,
    SnapshotSaved,
    StepsReported,
)


def thread_lock_for_progress_bars() -> None:
    """tqdm's default lock is a multiprocessing semaphore, registered with the launcher's resource tracker: a
    rank that exits at once (or is killed) leaves it registered, and the tracker prints a 'leaked semaphore'
    warning. A rank's bar is drawn by one process: a thread lock does."""
    tqdm.set_lock(threading.RLock())


class ProgressBar:
    """Shows step, epoch, loss, images/s (tokens/s for a text run), memory and ETA; prints epoch results and
    warnings."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr  # read now: stderr may be replaced after import
        self.bar: tqdm | None = None
        self.epochs: int | None = 1  # None: as many epochs as max_steps needs
        self.unit = IMAGES  # the run's throughput unit, from its config
        self.checkpoint: str | None = None  # the newest checkpoint saved: a stopped run says how to continue

    def __call__(self, event: Event) -> None:
        match event:
            case RunStarted():
                self.epochs = event.epochs
                self.unit = throughput(event.config)
                self._write(event_text.run_started(event))
                self.bar = tqdm(
                    total=event.total_steps,
                    initial=event.start_step,
                    file=self.stream,
                    unit="step",
                    dynamic_ncols=True,
                    mininterval=0.25,
                    leave=True,
                )
            case StepsReported() if self.bar is not None:
                self.bar.set_postfix_str(event_text.steps_postfix(event, self.epochs, self.unit), refresh=False)
                if event.total_steps and event.total_steps != self.bar.total:  # an OOM shrink adds steps
                    self.bar.total = event.total_steps
                self.bar.update(event.step - self.bar.n)
            case EpochEnded():
                self._write(event_text.epoch_ended(event))
            case CacheCleared():
                self._write(event_text.cache_cleared(event))
            case SnapshotSaved():
                self._write(event_text.snapshot_saved(event))
            case CheckpointSaved():
                self.checkpoint = event.path
                self._write(event_text.checkpoint_saved(event))
            case OutOfMemory():
                self._write(f"warning: {event_text.out_of_memory(event)}")
                for line in event_text.oom_autopsy(event):
                    self._write(f"  {line}")
            case LogMessage():
                self._write(event_text.log_message(event))
            case RunFinished():
                if self.bar is not None:
                    self.bar.close()
                    self.bar = None
                if event.status == "stopped" and self.checkpoint:
                    self._write(event_text.resume_hint(self.checkpoint))

    def _write(self, text: str) -> None:
        text = printable(text, newlines=True)  # a remote run's events carry the remote's words: never escapes
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)
