"""The batch-size finder: the largest batch whose training peak stays under a memory limit.

It runs a few real training steps per candidate batch size (doubling, then binary search), records the
peak of each, fits peak = fixed + per_sample * batch, and answers the largest batch the fit puts under
capacity * (1 - margin), never beyond what the trials showed. On CUDA the peak is the caching
allocator's, measured in this process and released after each trial. The CPU has no allocator
counters: each trial runs in a fresh subprocess and its peak is that process's peak RSS, so one
trial's memory cannot hide in the next. With `capacity` set, a CPU can plan for a GPU it does not have.
"""

from __future__ import annotations

import gc
import json
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from core.config import BOUNDS, RunConfig
from core.errors import ConfigError, UserError

TRIAL_STEPS = 2
MAX_BATCH = int(BOUNDS["batch_size"].maximum)


@dataclass(frozen=True)
class Trial:
    batch_size: int
    peak_bytes: int | None  # None: the trial ran out of memory before a peak could be read
    fits: bool


@dataclass(frozen=True)
class BatchSizeResult:
    batch_size: int
    fixed_bytes: int
    bytes_per_sample: int
    capacity_bytes: int
    limit_bytes: int  # capacity * (1 - margin)
    margin: float
    device: str
    trials: tuple[Trial, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        """The JSON the CLI writes: batch_size, fixed_bytes, bytes_per_sample, trials (+ context)."""
        return {"batch_size": self.batch_size, "fixed_bytes": self.fixed_bytes,
                "bytes_per_sample": self.bytes_per_sample, "capacity_bytes": self.capacity_bytes,
                "limit_bytes": self.limit_bytes, "margin": self.margin, "device": self.device,
                "trials": [asdict(t) for t in self.trials]}

    def predicted_peak(self, batch_size: int) -> int:
        return self.fixed_bytes + self.bytes_per_sample * batch_size


def measure_trial(config: RunConfig, batch_size: int, steps: int = TRIAL_STEPS) -> int | None:
    """Peak bytes of `steps` real training steps at `batch_size`; None when it ran out of memory."""
    from core.devices import resolve_device

    device = resolve_device(config.device)
    if device.type == "cpu":
        return _measure_in_subprocess(config, batch_size, steps)
    return _measure_in_process(config, batch_size, steps)


def _measure_in_process(config: RunConfig, batch_size: int, steps: int) -> int | None:
    import torch

    from core.devices import resolve_device
    from core.memory import MemoryProbe, clear_cache

    device = resolve_device(config.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)  # the current device is per thread, and this runs in a worker
    probe = MemoryProbe(device)
    gc.collect()
    clear_cache(device)
    probe.reset_peak()
    failed = False
    try:
        trainer, images, labels = _trial_parts(config, batch_size, device)
        for _ in range(steps):
            trainer.step(images, labels)
        peak = probe.sample().peak_allocated_bytes
    except (torch.OutOfMemoryError, RuntimeError) as exc:
        from core.session import is_out_of_memory

        if not is_out_of_memory(exc):
            raise
        failed = True
    # recover outside the except block: the exception's frames hold the trial's tensors
    trainer = images = labels = None  # noqa: F841
    gc.collect()
    clear_cache(device)
    return None if failed else peak + _resident_data_bytes(config, device)


def _trial_parts(config: RunConfig, batch_size: int, device):
    """A model, optimizer and one batch like the real run's (random values: memory depends on shapes)."""
    import torch

    from core.datasets import dataset_shape
    from core.devices import amp_dtype
    from core.models import build_model, model_spec
    from core.step import Trainer, build_optimizer

    channels, height, width, classes, _ = dataset_shape(config)
    spec = model_spec(config.model, channels)
    side = max(height, spec.input_size or 0), max(width, spec.input_size or 0)
    torch.manual_seed(config.seed)
    fmt = torch.channels_last if config.channels_last else torch.contiguous_format
    model = build_model(config.model, classes, spec.in_channels).to(device, memory_format=fmt)
    optimizer = build_optimizer(model, config.optimizer, config.lr, config.momentum, config.weight_decay)
    trainer = Trainer(model, optimizer, torch.amp.GradScaler(device.type, enabled=config.amp == "fp16"),
                      device.type, amp_dtype(config.amp))
    images = torch.randn(batch_size, spec.in_channels, *side, device=device).contiguous(memory_format=fmt)
    labels = torch.randint(0, classes, (batch_size,), device=device)
    return trainer, images, labels


def _resident_data_bytes(config: RunConfig, device) -> int:
    """Device memory the real run's resident dataset will hold beside the model (0 when streamed)."""
    if config.placement == "stream" or device.type == "cpu":
        return 0
    from core.datasets import dataset_shape, resident_bytes

    channels, height, width, _, count = dataset_shape(config)
    if count is None:
        return 0
    train = config.synthetic_samples if config.dataset == "synthetic" else count  # else: an upper bound
    return resident_bytes(count, train, channels * height * width)


def _measure_in_subprocess(config: RunConfig, batch_size: int, steps: int) -> int | None:
    request = json.dumps({"config": config.to_dict(), "batch_size": batch_size, "steps": steps})
    try:
        proc = subprocess.run([sys.executable, "-m", "core.batch_trial"], input=request, capture_output=True,
                              text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        raise UserError(f"the batch-size trial at {batch_size} took over an hour; try a smaller --max-batch") from None
    if proc.returncode != 0:
        if proc.returncode in (3, -9, 137) or "MemoryError" in proc.stderr:
            return None  # the trial process ran out of memory (or the kernel's OOM killer ended it)
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UserError(f"the batch-size trial at {batch_size} failed: {last}")
    return int(json.loads(proc.stdout.strip().splitlines()[-1])["peak_bytes"])


def default_capacity(config: RunConfig) -> int:
    """The device's memory; on the CPU, the memory available now (the process's peak must fit there)."""
    from core.devices import resolve_device
    from core.memory import MemoryProbe, host_free_bytes

    device = resolve_device(config.device)
    if device.type == "cpu":
        return host_free_bytes()
    return MemoryProbe(device).sample().capacity_bytes


def check_search_options(margin: float, start: int, max_batch: int) -> None:
    """ConfigError for a margin or batch bounds the search cannot use (checked before any trial runs)."""
    if not 0.0 <= margin < 1.0:
        raise ConfigError("margin", f"must be a number from 0 to 0.99, got {margin}")
    if start < 1 or max_batch < start:
        raise ConfigError("start", f"must be from 1 to the largest batch ({max_batch}), got {start}")


def find_batch_size(config: RunConfig, capacity: int | None = None, margin: float = 0.1, start: int = 1,
                    max_batch: int = MAX_BATCH, steps: int = TRIAL_STEPS,
                    measure: Callable[[RunConfig, int, int], int | None] = measure_trial,
                    on_trial: Callable[[Trial], None] | None = None,
                    should_stop: Callable[[], bool] | None = None) -> BatchSizeResult:
    """Search for the largest batch size whose peak stays under capacity * (1 - margin)."""
    check_search_options(margin, start, max_batch)
    from core.devices import resolve_device

    device = resolve_device(config.device)
    capacity = default_capacity(config) if capacity is None else int(capacity)
    if capacity <= 0:
        raise ConfigError("capacity", f"must be a positive number of bytes, got {capacity}")
    limit = int(capacity * (1.0 - margin))
    trials: dict[int, Trial] = {}

    def run(batch: int) -> bool:
        if should_stop is not None and should_stop():
            raise UserError("the batch-size search was stopped")
        peak = measure(config, batch, steps)
        trial = Trial(batch, peak, peak is not None and peak <= limit)
        trials[batch] = trial
        if on_trial is not None:
            on_trial(trial)
        return trial.fits

    # Doubling: find a fitting batch and the first one that does not fit.
    lo, hi, batch = 0, None, start
    while batch <= max_batch:
        if run(batch):
            lo = batch
            batch *= 2
        else:
            hi = batch
            break
    if lo == 0:
        raise UserError(f"even batch size {start} needs more than {limit / 1e9:.2f} GB "
                        f"(capacity {capacity / 1e9:.2f} GB with a {margin:.0%} margin) on {device}")
    # Binary search between them, to within an eighth of the answer: the fit resolves the rest.
    if hi is not None:
        while hi - lo > max(1, lo // 8):
            mid = (lo + hi) // 2
            if run(mid):
                lo = mid
            else:
                hi = mid
    fixed, per_sample = _fit([t for t in trials.values() if t.peak_bytes is not None])
    answer = lo
    if per_sample > 0:
        predicted = math.floor((limit - fixed) / per_sample)
        upper = (hi - 1) if hi is not None else max_batch
        answer = min(max(predicted, lo), upper)  # the fit may not contradict a measured trial
    ordered = tuple(sorted(trials.values(), key=lambda t: t.batch_size))
    return BatchSizeResult(answer, fixed, per_sample, capacity, limit, margin, str(device), ordered)


def _fit(trials: list[Trial]) -> tuple[int, int]:
    """Least-squares peak = fixed + per_sample * batch over measured trials (per_sample >= 0)."""
    if not trials:
        return 0, 0
    if len(trials) == 1:
        return int(trials[0].peak_bytes or 0), 0
    import numpy as np

    x = np.array([t.batch_size for t in trials], dtype=float)
    y = np.array([t.peak_bytes for t in trials], dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    slope = max(float(slope), 0.0)
    if slope == 0.0:
        intercept = float(y.max())
    return int(round(intercept)), int(math.ceil(slope))
