"""One training run: build everything from a RunConfig, train, and tell observers what happens.

`TrainingSession.run()` blocks (call it from a worker thread or the CLI's main thread). Other threads
steer it only through `request_stop`, `pause`, `resume` and `request_cache_clear`, which set flags that
the loop reads at step boundaries.

The loop never syncs with the device inside a step: losses stay on the device in a list and are
fetched in one transfer per report interval (`_report`), where NaN/inf is detected.
"""

from __future__ import annotations

import contextlib
import math
import queue
import re
import statistics
import threading
import time
from collections.abc import Iterable

import torch
import torch.nn.functional as F

from core.breakdown import StepMemoryRecorder
from core.batches import BatchSource, DevicePreprocess, ResidentBatches, StreamBatches
from core.config import RunConfig
from core.datasets import DatasetSplits, load_dataset, resident_bytes
from core.datasets.synthetic import CHANNELS, SIZE, val_samples
from core.devices import amp_dtype, check_amp, cpu_name, resolve_device
from core.errors import ConfigError, DatasetError, UserError
from core.events import (CacheCleared, EpochEnded, EpochStarted, Event, LogMessage, MemoryBreakdown, Observer, OutOfMemory,
                         RunFinished, RunPaused, RunResumed, RunStarted, SnapshotSaved, StepsReported)
from core.memory import MemoryProbe, clear_cache, has_cache
from core.snapshot import MemoryHistory
from core.models import build_model, count_parameters, model_spec
from core.step import Trainer, build_optimizer
from core.summary import RunSummary
from core.units import format_bytes

RESIDENT_FIT_FRACTION = 0.8  # the resident dataset may take at most this share of free memory
MAX_OOM_RETRIES = 8
BREAKDOWN_PERIOD_S = 1.0  # a sampled step costs ~1.5 ms on a CPU (hooks, counters): at most one a second


class _Stopped(Exception):
    """Raised inside the loop when a stop request is seen at a step boundary."""


class _Diverged(Exception):
    def __init__(self, step: int, loss: float) -> None:
        super().__init__(f"the loss became {loss} at step {step}; lower the learning rate or use --amp off")
        self.step = step


class TrainingSession:
    """Runs one RunConfig to its end and emits events; thread-safe commands steer it."""

    def __init__(self, config: RunConfig, observers: Iterable[Observer] = (), record_memory_history: bool = False,
                 snapshot_path: str | None = None) -> None:
        """`record_memory_history` (CUDA) records allocator events for snapshots; `snapshot_path`
        implies it and saves a snapshot there when the run ends, before its memory is released."""
        self.config = config
        self.observers: list[Observer] = list(observers)
        self.record_memory_history = record_memory_history or snapshot_path is not None
        self.snapshot_path = snapshot_path
        self._snapshot_requests: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._history: MemoryHistory | None = None
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._clear = threading.Event()
        self.loss_fetches = 0  # device->host loss transfers; equals the number of reports
        self.device: torch.device | None = None
        self.probe: MemoryProbe | None = None

    # ---- commands (any thread) -------------------------------------------------------------------
    def request_stop(self) -> None:
        self._stop.set()
        self._running.set()  # wake a paused loop so it can stop

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def request_cache_clear(self) -> None:
        self._clear.set()

    def request_snapshot(self, path: str) -> None:
        """Save a memory snapshot to `path` at the next step boundary (needs record_memory_history)."""
        self._snapshot_requests.put(path)

    # ---- the run ---------------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        for observer in self.observers:
            observer(event)

    def run(self) -> RunFinished:
        """Train to the end (completed, stopped, diverged, oom or failed); returns the final event."""
        self._t0 = time.perf_counter()
        self._step = 0
        self._samples = 0
        self._rates: list[float] = []
        self._report_losses: list[tuple[float, ...]] = []
        self._val_accuracy: float | None = None
        self._device_name = ""
        status, message, user_error = "failed", "", False
        try:
            self._setup()
            self._train()
            status = "completed"
        except _Stopped:
            status, message = "stopped", "stopped by request"
        except _Diverged as exc:
            status, message = "diverged", str(exc)
        except _OutOfMemoryStop as exc:
            status, message = "oom", str(exc)
        except UserError as exc:
            status, message, user_error = "failed", str(exc), True
        except Exception as exc:  # a bug or an environment failure: report it, never kill the caller
            status, message = "failed", f"{type(exc).__name__}: {exc}"
        summary = self._summary(status)
        self._finish_history()
        self._release()
        finished = RunFinished(status, self._step, message, user_error, summary)
        self.emit(finished)
        return finished

    # ---- setup -----------------------------------------------------------------------------------
    def _setup(self) -> None:
        cfg = self.config
        device = resolve_device(cfg.device)
        if device.type == "cuda":
            torch.cuda.set_device(device)  # the current device is per thread: set it in the worker
        self.device = device
        check_amp(device, cfg.amp)
        if self.record_memory_history:  # before any allocation, so the snapshot shows them all
            self._history = MemoryHistory(device)
            self._history.start()
        self._device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else (
            "Apple GPU (MPS)" if device.type == "mps" else cpu_name())
        self.probe = MemoryProbe(device)
        torch.manual_seed(cfg.seed)
        self.gen = torch.Generator(device=device).manual_seed(cfg.seed)

        splits, placement = self._load_data(device)
        if cfg.batch_size > len(splits.train):
            raise ConfigError("batch_size", f"{cfg.batch_size} is larger than the training set "
                                            f"({len(splits.train)} images); use at most {len(splits.train)}")
        spec = model_spec(cfg.model, splits.channels)
        model = build_model(cfg.model, splits.num_classes, spec.in_channels)
        model = model.to(device, memory_format=torch.channels_last if cfg.channels_last else torch.preserve_format)
        preprocess = DevicePreprocess(splits, device, spec.in_channels, spec.input_size, cfg.channels_last,
                                      flip=splits.name not in ("mnist", "fashion-mnist"), generator=self.gen)
        if placement == "resident":
            self.source: BatchSource = ResidentBatches(splits, device, cfg.batch_size, preprocess, self.gen)
        else:
            self.source = StreamBatches(splits, device, cfg.batch_size, preprocess, cfg.workers,
                                        cfg.pin_memory, cfg.non_blocking, cfg.seed)
        optimizer = build_optimizer(model, cfg.optimizer, cfg.lr, cfg.momentum, cfg.weight_decay)
        self.model, self.optimizer = model, optimizer
        self.autocast_dtype = amp_dtype(cfg.amp)
        self.trainer = Trainer(model, optimizer, torch.amp.GradScaler(device.type, enabled=cfg.amp == "fp16"),
                               device.type, self.autocast_dtype)
        self.recorder = StepMemoryRecorder(self.probe)
        # device memory held by neither the model nor a step: the resident dataset on a GPU
        self._other_bytes = splits.nbytes if placement == "resident" and device.type != "cpu" else 0
        self.breakdown: MemoryBreakdown | None = None  # the sampled step with the largest total
        limit = cfg.epoch_limit
        self.total_steps = cfg.max_steps if limit is None else self.source.steps_per_epoch() * limit
        if cfg.max_steps is not None:
            self.total_steps = min(self.total_steps, cfg.max_steps)
        self.probe.reset_peak()
        self.emit(RunStarted(
            config={**cfg.to_dict(), "device": str(device), "placement": placement}, device=str(device),
            device_name=self._device_name, placement=placement, steps_per_epoch=self.source.steps_per_epoch(),
            total_steps=self.total_steps, train_samples=len(splits.train), val_samples=len(splits.val),
            parameters=count_parameters(model), dataset_bytes=splits.nbytes, memory=self.probe.sample(),
            epochs=cfg.epoch_limit))
        if device.type == "cpu" and cfg.pin_memory and placement == "stream":
            self.emit(LogMessage("info", "pin_memory has no effect on the CPU; it is ignored"))

    def _load_data(self, device: torch.device) -> tuple[DatasetSplits, str]:
        """Load the dataset and pick the placement, checking that a resident dataset fits."""
        cfg = self.config
        assert self.probe is not None
        free = self.probe.free_bytes()
        budget = int(free * RESIDENT_FIT_FRACTION)
        if cfg.dataset == "synthetic":  # its size is known before it exists: generate it where it will live
            n = cfg.synthetic_samples
            needed = resident_bytes(n + val_samples(n), n, CHANNELS * SIZE * SIZE)
            placement = self._choose_placement(needed, budget, free, "synthetic")
            splits = load_dataset(cfg, device if placement == "resident" else torch.device("cpu"))
            return splits, placement
        splits = load_dataset(cfg, torch.device("cpu"))
        pixels = splits.channels * splits.image_size[0] * splits.image_size[1]
        needed = resident_bytes(len(splits.train) + len(splits.val), len(splits.train), pixels)
        return splits, self._choose_placement(needed, budget, free, cfg.dataset)

    def _choose_placement(self, needed: int, budget: int, free: int, name: str) -> str:
        placement = self.config.placement
        fits = needed <= budget
        if placement == "resident" and not fits:
            raise DatasetError(
                f"placement: the {name} dataset needs {format_bytes(needed)} on {self.device} (with the "
                f"augmented copy of its training images made each epoch) but only "
                f"{format_bytes(free)} is free (at most {RESIDENT_FIT_FRACTION:.0%} may be used for data); "
                f"use the stream placement (--placement stream)")
        if placement == "auto":
            placement = "resident" if fits else "stream"
            if not fits:
                self.emit(LogMessage("warning", f"the dataset ({format_bytes(needed)}) does not fit in free device "
                                                f"memory ({format_bytes(free)}): streaming it from the host"))
        return placement

    # ---- the loop --------------------------------------------------------------------------------
    def _train(self) -> None:
        cfg, model, trainer = self.config, self.model, self.trainer
        self._sample_next = True
        self._last_breakdown = -math.inf
        self._pending: list[torch.Tensor] = []  # losses on the device, not yet fetched
        self._epoch_losses: list[float] = []
        self._last_report = time.perf_counter()
        self._last_report_samples = 0
        self._warm = False  # the first report of a run includes start-up costs: not a throughput sample
        oom_retries = 0
        model.train()
        for epoch in range(1, (cfg.epoch_limit or 10**9) + 1):
            self._epoch = epoch
            self._epoch_losses = []
            self.emit(EpochStarted(epoch, self._step))
            batches = iter(self.source.train_epoch())
            while True:
                self._at_step_boundary()
                if cfg.max_steps is not None and self._step >= cfg.max_steps:
                    break
                sample = self._sample_next  # measure what holds memory on one step per report
                oom: Exception | None = None
                try:
                    images, labels = next(batches)  # allocates too: a resident epoch's augmented copy
                    with self.recorder.step() if sample else contextlib.nullcontext():
                        loss = trainer.step(images, labels, self.recorder if sample else None)
                except StopIteration:
                    break
                except (torch.OutOfMemoryError, RuntimeError) as exc:
                    if not is_out_of_memory(exc):
                        raise
                    oom = exc
                if oom is not None:  # recover outside the except block: the traceback pins the step's tensors
                    message = str(oom)
                    del oom
                    images = labels = loss = None  # noqa: F841 - drop the step's tensors
                    oom_retries += 1
                    self._recover_from_oom(message, oom_retries)
                    continue
                self._pending.append(loss.detach())  # stays on the device: no sync here
                self._step += 1
                self._samples += images.shape[0]  # a host-side shape: no sync
                if sample:
                    self._emit_breakdown(images, labels)
                if time.perf_counter() - self._last_report >= cfg.report_interval:
                    self._report()  # the one host sync per report interval
            if self._pending:
                self._report()
            stop_after = cfg.max_steps is not None and self._step >= cfg.max_steps
            self._end_epoch(epoch)
            if stop_after:
                break

    def _emit_breakdown(self, images: torch.Tensor, labels: torch.Tensor) -> None:
        """Memory by holder for the step just sampled (host-side counters and tensor sizes: no sync)."""
        self._sample_next = False
        self._last_breakdown = time.perf_counter()
        breakdown = self.recorder.breakdown(self._step, self.model, self.optimizer, images, labels,
                                            self._other_bytes)
        if self.breakdown is None or breakdown.total_bytes >= self.breakdown.total_bytes:
            self.breakdown = breakdown
        self.emit(breakdown)

    def _save_snapshot(self, path: str) -> None:
        if self._history is None:
            self.emit(LogMessage("warning", "no memory history is being recorded in this run: snapshot not saved"))
            return
        try:
            size = self._history.save(path)
        except UserError as exc:
            self.emit(LogMessage("error", str(exc)))
            return
        self.emit(SnapshotSaved(self._step, path, size))

    def _finish_history(self) -> None:
        if self._history is None:
            return
        if self.snapshot_path:
            self._save_snapshot(self.snapshot_path)
        self._history.stop()
        self._history = None

    def _at_step_boundary(self) -> None:
        """Apply commands from other threads: cache clear, snapshot, pause (blocking), stop."""
        if self._clear.is_set():
            self._apply_cache_clear()
        while not self._snapshot_requests.empty():
            self._save_snapshot(self._snapshot_requests.get())
        if not self._running.is_set() and not self._stop.is_set():
            if self._pending:
                self._report()
            self.emit(RunPaused(self._step))
            while not self._running.wait(0.05):
                if self._clear.is_set():
                    self._apply_cache_clear()
            if not self._stop.is_set():
                self.emit(RunResumed(self._step))
            self._reset_rate_clock()
        if self._stop.is_set():
            if self._pending:
                self._report()
            raise _Stopped

    def _apply_cache_clear(self) -> None:
        self._clear.clear()
        assert self.device is not None and self.probe is not None
        freed = clear_cache(self.device)
        self.emit(CacheCleared(self._step, freed, self.probe.sample()))
        if not has_cache(self.device):
            self.emit(LogMessage("info", "the CPU has no caching allocator: nothing to clear"))

    def _reset_rate_clock(self) -> None:
        self._last_report = time.perf_counter()
        self._last_report_samples = self._samples

    def _report(self) -> None:
        """Fetch buffered losses in one transfer, check them, and emit a StepsReported."""
        losses = torch.stack(self._pending).float().cpu().tolist()  # sync point: one D2H copy per report
        self.loss_fetches += 1
        first = self._step - len(losses) + 1
        self._pending = []
        now = time.perf_counter()
        rate = (self._samples - self._last_report_samples) / max(now - self._last_report, 1e-9)
        if self._warm:
            self._rates.append(rate)
        self._warm = True
        self._last_report, self._last_report_samples = now, self._samples
        self._report_losses.append(tuple(losses))
        self._sample_next = now - self._last_breakdown >= BREAKDOWN_PERIOD_S  # at most ~1/s
        self._epoch_losses.extend(losses)
        eta = None
        if self._rates:
            step_time = self.source.batch_size / statistics.median(self._rates)
            eta = max(self.total_steps - self._step, 0) * step_time
        assert self.probe is not None
        self.emit(StepsReported(self._step, self._epoch, first, tuple(losses), self._samples, rate,
                                now - self._t0, eta, self.source.batch_size, self.probe.sample(), self.total_steps))
        for offset, value in enumerate(losses):
            if not math.isfinite(value):
                raise _Diverged(first + offset, value)

    @torch.no_grad()
    def _end_epoch(self, epoch: int) -> None:
        """Validate on the device; one fetch for accuracy and loss."""
        model = self.model
        model.eval()
        device_type = self.device.type  # type: ignore[union-attr]
        correct = torch.zeros((), device=self.device)
        loss_sum = torch.zeros((), device=self.device)
        count = 0
        for images, labels in self.source.val_batches():
            with torch.autocast(device_type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None):
                logits = model(images)
            loss_sum += F.cross_entropy(logits.float(), labels, reduction="sum")
            correct += (logits.argmax(dim=1) == labels).sum()
            count += labels.shape[0]
        model.train()
        accuracy, val_loss = (None, None)
        if count:
            correct_v, loss_v = torch.stack([correct, loss_sum]).cpu().tolist()  # sync point: once per epoch
            accuracy, val_loss = correct_v / count, loss_v / count
            self._val_accuracy = accuracy
        train_loss = statistics.fmean(self._epoch_losses) if self._epoch_losses else None
        self.emit(EpochEnded(epoch, self._step, train_loss, val_loss, accuracy))
        self._reset_rate_clock()

    # ---- out of memory ---------------------------------------------------------------------------
    def _recover_from_oom(self, message: str, retries: int) -> None:
        """Free what the failed step held, report it, then stop or continue with half the batch."""
        assert self.device is not None and self.probe is not None
        before = self.probe.sample()
        reserved_unallocated = max(before.reserved_bytes - before.allocated_bytes, 0)
        self.optimizer.zero_grad(set_to_none=True)
        import gc

        gc.collect()
        clear_cache(self.device)
        free = self.probe.free_bytes()
        batch = self.source.batch_size
        requested = _requested_bytes(message)
        shrink = self.config.on_oom == "shrink" and batch > 1 and retries <= MAX_OOM_RETRIES
        new_batch = max(batch // 2, 1) if shrink else None
        text = (f"out of memory at step {self._step + 1} with batch size {batch}"
                + (f": asked for {format_bytes(requested)}" if requested else "")
                + f", {format_bytes(free)} free, {format_bytes(reserved_unallocated)} reserved but unallocated")
        self.emit(OutOfMemory(self._step, batch, requested, free, reserved_unallocated,
                              "shrink" if shrink else "stop", new_batch, text))
        if not shrink:
            if self._pending:  # the steps before the failure still reach the plot and the summary
                self._report()
            hint = "try a smaller batch size or --on-oom shrink" if self.config.on_oom == "stop" else (
                "batch size 1 does not fit" if batch <= 1 else f"gave up after {MAX_OOM_RETRIES} halvings")
            raise _OutOfMemoryStop(f"{text}; {hint}")
        self.source.set_batch_size(new_batch)  # type: ignore[arg-type]
        # the images left after the failed batch (skipped this epoch), in smaller steps: progress and ETA
        remaining_samples = max(self.total_steps - self._step - 1, 0) * batch
        self.total_steps = self._step + math.ceil(remaining_samples / new_batch)  # type: ignore[operator]
        if self.config.max_steps is not None:
            self.total_steps = min(self.total_steps, self.config.max_steps)
        self.emit(LogMessage("warning", f"{text}; continuing with batch size {new_batch}"))

    # ---- the end ---------------------------------------------------------------------------------
    def _summary(self, status: str) -> RunSummary:
        peak_alloc = peak_res = peak_rss = 0
        if self.probe is not None:
            sample = self.probe.sample()
            peak_alloc, peak_res = sample.peak_allocated_bytes, sample.peak_reserved_bytes
            peak_rss = self.probe.peak_rss_bytes
        wall = time.perf_counter() - self._t0
        if self._rates:
            rate: float | None = statistics.median(self._rates)
        elif self._samples:
            rate = self._samples / wall
        else:
            rate = None
        mean = lambda xs: statistics.fmean(xs) if xs else None  # noqa: E731
        return RunSummary(
            status=status, steps=self._step, samples=self._samples, wall_s=wall, samples_per_s=rate,
            loss_first=mean(self._report_losses[0]) if self._report_losses else None,
            loss_last=mean(self._report_losses[-1]) if self._report_losses else None,
            val_accuracy=self._val_accuracy, device=str(self.device) if self.device else self.config.device,
            device_name=self._device_name, peak_allocated_bytes=peak_alloc, peak_reserved_bytes=peak_res,
            peak_rss_bytes=peak_rss,
            config={**self.config.to_dict(), "device": str(self.device) if self.device else self.config.device},
            memory_breakdown=self.breakdown.to_summary() if getattr(self, "breakdown", None) else None,
        )

    def _release(self) -> None:
        """Drop the run's tensors so device memory returns to its baseline after the run."""
        for name in ("model", "optimizer", "source", "trainer", "recorder", "_pending"):
            if hasattr(self, name):
                delattr(self, name)
        if self.device is not None and has_cache(self.device):
            import gc

            gc.collect()
            clear_cache(self.device)


class _OutOfMemoryStop(Exception):
    pass


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA/MPS raise torch.OutOfMemoryError; the CPU allocator raises a plain RuntimeError."""
    return isinstance(exc, torch.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and ("can't allocate memory" in str(exc) or "out of memory" in str(exc)))


def _requested_bytes(message: str) -> int | None:
    """Parse 'Tried to allocate 2.00 GiB' from a CUDA out-of-memory message."""
    cpu = re.search(r"you tried to allocate (\d+) bytes", message)  # the CPU allocator's wording
    if cpu:
        return int(cpu.group(1))
    match = re.search(r"Tried to allocate ([\d.]+) (B|KiB|MiB|GiB|TiB)", message)
    if not match:
        return None
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[match.group(2)]
    return int(float(match.group(1)) * scale)

