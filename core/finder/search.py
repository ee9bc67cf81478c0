"""The batch-size finder: the largest batch whose training peak stays under a memory limit.

It runs a few real training steps per candidate batch size (doubling, then binary search), records the
peak of each, fits peak = fixed + per_sample * batch, and answers the largest batch the fit puts under
capacity * (1 - margin), never beyond what the trials showed. On CUDA the peak is the caching
allocator's, measured in this process and released after each trial. The CPU has no allocator
counters: each trial runs in a fresh subprocess and its peak is that process's peak RSS, so one
trial's memory cannot hide in the next. With `capacity` set, a CPU can plan for a GPU it does not have.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..base.errors import ConfigError, UserError
from ..base.text import Message, message_from_json
from ..config.run_config import FINDER_BOUNDS, RunConfig

TRIAL_STEPS = 2


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
        return {
            "batch_size": self.batch_size,
            "fixed_bytes": self.fixed_bytes,
            "bytes_per_sample": self.bytes_per_sample,
            "capacity_bytes": self.capacity_bytes,
            "limit_bytes": self.limit_bytes,
            "margin": self.margin,
            "device": self.device,
            "trials": [asdict(t) for t in self.trials],
        }

    def predicted_peak(self, batch_size: int) -> int:
        return self.fixed_bytes + self.bytes_per_sample * batch_size


def measure_trial(config: RunConfig, batch_size: int, steps: int = TRIAL_STEPS) -> int | None:
    """Peak bytes of `steps` real training steps at `batch_size`; None when it ran out of memory."""
    from ..device.devices import resolve_device

    device = resolve_device(config.device)
    if device.type == "cpu":
        return _measure_in_subprocess(config, batch_size, steps)
    return _measure_in_process(config, batch_size, steps)


def _measure_in_process(config: RunConfig, batch_size: int, steps: int) -> int | None:
    import torch

    from ..device.devices import resolve_device
    from ..memory import oom
    from ..memory.probe import MemoryProbe, clear_cache

    device = resolve_device(config.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)  # the current device is per thread, and this runs in a worker
    probe = MemoryProbe(device)
    oom.collect_garbage()
    clear_cache(device)
    probe.reset_peak()
    failed = False
    try:
        trainer, images, labels = trial_parts(config, batch_size, device)
        for _ in range(steps):
            trainer.step(images, labels)
        peak = probe.sample().peak_allocated_bytes
    except (torch.OutOfMemoryError, RuntimeError, MemoryError) as exc:
        if not oom.is_out_of_memory(exc):
            raise
        failed = True
    # recover outside the except block: the exception's frames hold the trial's tensors
    trainer = images = labels = None  # noqa: F841
    oom.release(device)
    return None if failed else peak + _resident_data_bytes(config, device)


def trial_parts(config: RunConfig, batch_size: int, device):
    """The run's own trainer (`core.engine.recipe.build_trainer`) and one batch shaped like the run's (random
    values: memory depends on shapes)."""
    import torch

    from ..data.datasets import dataset_shape
    from ..engine.recipe import build_trainer
    from ..model.models import model_spec

    channels, height, width, classes, _ = dataset_shape(config)
    spec = model_spec(config.model, channels)
    side = max(height, spec.input_size or 0), max(width, spec.input_size or 0)
    torch.manual_seed(config.seed)
    trainer = build_trainer(config, device, spec.in_channels, classes, side)  # your own model: checked as a run's
    fmt = torch.channels_last if config.channels_last else torch.contiguous_format
    images = torch.randn(batch_size, spec.in_channels, *side, device=device).contiguous(memory_format=fmt)
    labels = torch.randint(0, classes, (batch_size,), device=device)
    return trainer, images, labels


def _resident_data_bytes(config: RunConfig, device) -> int:
    """Device memory the real run's resident dataset will hold beside the model (0 when streamed)."""
    if config.placement == "stream" or device.type == "cpu":
        return 0
    from ..data.datasets import dataset_shape, resident_bytes, train_size_hint

    channels, height, width, _, count = dataset_shape(config)
    if count is None:
        return 0
    train = train_size_hint(config) or count  # an image folder: all its images, an upper bound
    return resident_bytes(count, train, channels * height * width)


def _measure_in_subprocess(config: RunConfig, batch_size: int, steps: int) -> int | None:
    """Run one trial as `core.finder.trial` in a child process that never outlives this one.

    Two guards: the finally below kills the child whenever this call unwinds (Ctrl+C, the CLI's SIGTERM,
    an error); on Linux the child also asks the kernel for SIGKILL when its parent dies (PR_SET_PDEATHSIG),
    which covers a SIGKILL of this process. The child sets that itself, not through preexec_fn, which is
    unsafe in a process with threads (the window runs the finder in one)."""
    import os

    request = json.dumps({"config": config.to_dict(), "batch_size": batch_size, "steps": steps})
    bootstrap = (
        "import ctypes, os, runpy, sys\n"
        "if sys.platform.startswith('linux'):\n"
        "    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9\n"
        f"    if os.getppid() != {os.getpid()}:  # the parent died before the line above ran\n"
        "        os._exit(1)\n"
        "runpy.run_module('core.finder.trial', run_name='__main__', alter_sys=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", bootstrap],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = proc.communicate(request, timeout=3600)
    except subprocess.TimeoutExpired:
        raise UserError(
            Message(
                "the batch-size trial at {batch_size} took over an hour; try a smaller --max-batch",
                batch_size=batch_size,
            )
        ) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if proc.returncode != 0:
        if proc.returncode in (3, -9, 137) or "MemoryError" in proc.stderr:
            return None  # the trial process ran out of memory (or the kernel's OOM killer ended it)
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UserError(
            Message("the batch-size trial at {batch_size} failed: {error}", batch_size=batch_size, error=last)
        )
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    if "user_error" in answer:  # bad input the trial met (your own model or dataset): as the run reports it
        raise trial_error(answer)
    return int(answer["peak_bytes"])


def trial_error(answer: dict) -> UserError:
    """The bad input a trial process met (core.finder.trial's answer), as the run would have raised it: a
    ConfigError naming its field, else a UserError, with the message's template and values when it sent them."""
    field, text = answer.get("field"), answer["user_error"]
    said = message_from_json(answer.get("message"))
    if not isinstance(said, str):  # not sent, or not rebuilt: the English text, without the field's name
        said = text.removeprefix(f"{field}: ") if field else text
    return ConfigError(field, said) if field else UserError(said)


def default_capacity(config: RunConfig) -> int:
    """The device's memory; on the CPU, the memory available now (the process's peak must fit there), or the
    process's limit when it has one (`ulimit -v`, a cgroup): the capacity the memory plot shows. The trials
    run under the same limit, so a batch the limit refuses fails its trial."""
    import psutil

    from ..device.devices import resolve_device
    from ..device.host_memory import process_limit
    from ..memory.probe import MemoryProbe

    device = resolve_device(config.device)
    if device.type == "cpu":
        limit = process_limit()
        available = int(psutil.virtual_memory().available)
        return available if limit is None else min(available, limit.limit_bytes)
    return MemoryProbe(device).sample().capacity_bytes


def check_search_options(margin: float, start: int, max_batch: int) -> None:
    """ConfigError for a margin or batch bounds the search cannot use (checked before any trial runs).

    The ranges are FINDER_BOUNDS': a --max-batch above what `run --batch-size` accepts would answer a
    batch size that the run then refuses."""
    from ..config.run_config import validate_field

    validate_field("margin", margin)
    validate_field("max_batch", max_batch)
    if isinstance(start, bool) or not isinstance(start, int) or not 1 <= start <= max_batch:
        raise ConfigError(
            "start",
            Message(
                "must be an integer from 1 to the largest batch ({max_batch}), got {start!r}",
                max_batch=max_batch,
                start=start,
            ),
        )


def find_batch_size(
    config: RunConfig,
    capacity: int | None = None,
    margin: float = FINDER_BOUNDS["margin"].default,
    start: int = FINDER_BOUNDS["start"].default,
    max_batch: int = FINDER_BOUNDS["max_batch"].default,
    steps: int = TRIAL_STEPS,
    measure: Callable[[RunConfig, int, int], int | None] = measure_trial,
    on_trial: Callable[[Trial], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> BatchSizeResult:
    """Search for the largest batch size whose peak stays under capacity * (1 - margin)."""
    check_search_options(margin, start, max_batch)
    from ..device.devices import resolve_device
    from ..engine.recipe import config_for_device

    device = resolve_device(config.device)
    # the model `auto` stands for here; trials run eagerly: torch.compile would spend ~30 s per trial building
    # graphs, and a compiled step's peak is rarely above the eager one's, so the answer stays on the safe side
    config = config_for_device(config, device)
    if config.compile:
        config = config.replace(compile=False)
    capacity = default_capacity(config) if capacity is None else int(capacity)
    if capacity <= 0:
        raise ConfigError("capacity", Message("must be a positive number of bytes, got {capacity}", capacity=capacity))
    limit = int(capacity * (1.0 - margin))
    trials: dict[int, Trial] = {}

    def run(batch: int) -> bool:
        if should_stop is not None and should_stop():
            raise UserError(Message("the batch-size search was stopped"))
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
        raise UserError(
            Message(
                "even batch size {start} needs more than {limit_gb:.2f} GB (capacity {capacity_gb:.2f} "
                "GB with a {margin:.0%} margin) on {device}",
                start=start,
                limit_gb=limit / 1e9,
                capacity_gb=capacity / 1e9,
                margin=margin,
                device=str(device),
            )
        )
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
