"""The CLI's observer: a progress bar on stderr while a run goes, log lines above it."""

from __future__ import annotations

import statistics
import sys
from typing import TextIO

from tqdm import tqdm

from core.events import (CacheCleared, EpochEnded, Event, LogMessage, OutOfMemory, RunFinished, RunStarted,
                         SnapshotSaved, StepsReported)
from core.units import format_bytes


class ProgressBar:
    """Shows step, epoch, loss, images/s, memory and ETA; prints epoch results and warnings."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr  # read now: stderr may be replaced after import
        self.bar: tqdm | None = None
        self.epochs = 1

    def __call__(self, event: Event) -> None:
        match event:
            case RunStarted():
                self.epochs = event.epochs or 0
                self._write(f"training {event.config['model']} on {event.device} ({event.device_name}), "
                            f"{event.config['dataset']} {event.train_samples} images, {event.placement} placement, "
                            f"batch {event.config['batch_size']}")
                self.bar = tqdm(total=event.total_steps, file=self.stream, unit="step", dynamic_ncols=True,
                                mininterval=0.25, leave=True)
            case StepsReported() if self.bar is not None:
                finite = [x for x in event.losses if x == x and abs(x) != float("inf")]
                loss = statistics.fmean(finite) if finite else float("nan")
                mem = event.memory
                used = mem.allocated_bytes if mem.has_allocator else mem.process_rss_bytes
                self.bar.set_postfix_str(f"epoch {event.epoch}/{self.epochs} loss {loss:.4f} "
                                         f"{event.samples_per_s:,.0f} img/s mem {format_bytes(used)}", refresh=False)
                if event.total_steps and event.total_steps != self.bar.total:  # an OOM shrink adds steps
                    self.bar.total = event.total_steps
                self.bar.update(event.step - self.bar.n)
            case EpochEnded():
                acc = "n/a" if event.val_accuracy is None else f"{event.val_accuracy:.2%}"
                loss = "n/a" if event.val_loss is None else f"{event.val_loss:.4f}"
                self._write(f"epoch {event.epoch}: val accuracy {acc}, val loss {loss}")
            case CacheCleared():
                self._write(f"cache cleared: {format_bytes(event.freed_bytes)} freed")
            case SnapshotSaved():
                self._write(f"memory snapshot saved to {event.path} ({format_bytes(event.size_bytes)}); "
                            "open it at https://pytorch.org/memory_viz")
            case OutOfMemory():
                self._write(f"warning: {event.message}")
            case LogMessage():
                self._write(event.text if event.level == "info" else f"{event.level}: {event.text}")
            case RunFinished():
                if self.bar is not None:
                    self.bar.close()
                    self.bar = None

    def _write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)
