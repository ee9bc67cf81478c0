"""The batch-size finder: the largest batch whose training peak stays under a memory limit.

It starts from the prediction (gpu_train_monitor.finder.confirm): the largest batch whose predicted peak, plus what the
trial holds outside the traced step, fits under capacity * (1 - margin), then at most 3 real trials confirm
it (one when the prediction holds); the answer is always a batch a real trial measured under the limit.
Where the step cannot be predicted, or no trial near the prediction fits, it searches as it did before
predictions (gpu_train_monitor.finder.doubling): a few real training steps per candidate (doubling, then binary search),
a line peak = fixed + per_sample * batch fitted through the peaks, and the largest batch that line puts under
the limit, never beyond what the trials showed.

On CUDA the peak is the caching allocator's, measured in this process and released after each trial. The
CPU has no allocator counters: the peak is the peak resident memory of a trial process (gpu_train_monitor.finder.warm):
one kept warm for the whole search, its peak reset before each trial, or, without predictions, a fresh one
per trial. With `capacity` set, a CPU can plan for a GPU it does not have, as far as its own memory goes.

The finder never takes the machine: on the CPU its default capacity is what a trial may use now, never the
machine's total; a trial process cannot grow far past what is available (beyond
gpu_train_monitor.finder.budget.guard_bytes it runs out of memory in its own process); no trial tries, and no answer
says, a batch larger than the training set; and Stop ends a running trial at once (gpu_train_monitor.finder.child).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ..base.errors import ConfigError
from ..base.text import Message
from ..config.bounds import FINDER_BOUNDS
from ..config.run_config import RunConfig
from ..config.sequences import is_text_dataset
from .budget import guard_bytes, largest_batch
from .child import stopped
from .doubling import search_with_trials
from .parts import trial_parts
from .warm import measure_in_subprocess
from .warm import trial_error as trial_error  # where the tests and callers have found it

if TYPE_CHECKING:
    from ..memory.predict import Prediction

TRIAL_STEPS = 2


@dataclass(frozen=True)
class Trial:
    batch_size: int
    peak_bytes: int | None  # None: the trial ran out of memory before a peak could be read
    fits: bool
    predicted_bytes: int | None = None  # what the prediction said before the trial (None: no prediction)


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
    predicted_batch: int | None = None  # the prediction's answer before any trial; None: no prediction
    prediction_note: str | None = None  # a Message: why the search did not start from, or end with, a prediction

    def to_dict(self) -> dict:
        """The JSON the CLI writes: batch_size, fixed_bytes, bytes_per_sample, trials (+ context)."""
        return {
            "predicted_batch": self.predicted_batch,
            "prediction_note": self.prediction_note,
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
        return measure_in_subprocess(config, batch_size, steps)
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


def _resident_data_bytes(config: RunConfig, device) -> int:
    """Device memory the real run's resident dataset will hold beside the model (0 when streamed)."""
    if config.placement == "stream" or device.type == "cpu":
        return 0
    from ..data.datasets import dataset_shape, resident_bytes, train_size_hint

    channels, height, width, _, count = dataset_shape(config)
    if count is None:
        return 0
    if is_text_dataset(config.dataset):  # its tokens (a byte each) and an epoch's offsets
        from ..data.placement import resident_text_bytes

        return resident_text_bytes(count * config.seq_len, train_size_hint(config) or count)
    train = train_size_hint(config) or count  # an image folder: all its images, an upper bound
    return resident_bytes(count, train, channels * height * width)


def default_capacity(config: RunConfig) -> int:
    """The device's memory; on the CPU, what a trial may use now (`gpu_train_monitor.finder.budget.cpu_trial_bytes`:
    what other programs and this app leave, lowered by what the process's limit leaves), never the machine's
    total. The trials run under the same limit, so a batch the limit refuses fails its trial."""
    from ..device.devices import resolve_device
    from ..memory.probe import MemoryProbe
    from .budget import cpu_trial_bytes

    device = resolve_device(config.device)
    if device.type == "cpu":
        return cpu_trial_bytes()
    return MemoryProbe(device).sample().capacity_bytes


def check_one_process(config: RunConfig) -> None:
    """ConfigError for options a search cannot honour: it measures one process on one device."""
    if config.nproc > 1:
        raise ConfigError(
            "nproc",
            Message(
                "find-batch-size measures one process on one device; leave --nproc out "
                "(each process of a data-parallel run trains batch_size / nproc images, "
                "so it can take nproc times the batch size found)"
            ),
        )
    if config.sync_bn:
        raise ConfigError("sync_bn", Message("find-batch-size measures one process on one device; leave --sync-bn out"))


def check_search_options(margin: float, start: int, max_batch: int) -> None:
    """ConfigError for a margin or batch bounds the search cannot use (checked before any trial runs).

    The ranges are FINDER_BOUNDS': a --max-batch above what `run --batch-size` accepts would answer a
    batch size that the run then refuses."""
    from ..config.field_checks import validate_field

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
    predict: Callable[..., Prediction] | str | None = "auto",
    overhead_bytes: int | None = None,
) -> BatchSizeResult:
    """Search for the largest batch size whose peak stays under capacity * (1 - margin).

    `predict`: "auto" starts from the step's prediction (gpu_train_monitor.finder.confirm: at most 3 real trials) when
    the trials are the real ones (the default `measure`), else searches as before; a callable like
    gpu_train_monitor.engine.prediction.predict starts from its predictions whatever measures; None searches with real
    trials only, as before predictions (doubling, then bisection; on the CPU a fresh process per trial).
    `overhead_bytes`: what a trial holds outside the predicted step (default: on the CPU, the warm trial
    process's resident memory; on a GPU, the resident dataset; with your own `measure`, 0).
    `max_batch` is lowered to the training set's size where that is known
    (gpu_train_monitor.finder.budget.largest_batch), and `start` with it. `should_stop()` is asked before each
    trial and, on the CPU, every 50 ms during one: a running trial's process is then ended at once."""
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
    max_batch = largest_batch(config, max_batch)  # never a batch above the training set
    start = min(start, max_batch)
    trials: dict[int, Trial] = {}

    def run(batch: int, predicted: int | None = None) -> Trial:
        if batch in trials:  # the fallback's search may ask again for a batch a confirming trial measured
            return trials[batch]
        if should_stop is not None and should_stop():
            raise stopped()
        peak = measure(config, batch, steps)
        trial = Trial(batch, peak, peak is not None and peak <= limit, predicted)
        trials[batch] = trial
        if on_trial is not None:
            on_trial(trial)
        return trial

    if predict == "auto":
        predict = None if measure is not measure_trial else _engine_predict()
    if measure is measure_trial and device.type == "cpu" and not callable(predict):  # a fresh process per trial
        measure = functools.partial(measure_in_subprocess, should_stop=should_stop, data_limit=guard_bytes(capacity))
    note = None
    with contextlib.ExitStack() as stack:
        if callable(predict):
            from .confirm import confirm_prediction
            from .predicted import PredictedPeaks

            if measure is measure_trial and device.type == "cpu":
                from .warm import WarmTrials

                # one process for every trial (torch imported once), ended at once when the search is stopped
                warm = stack.enter_context(WarmTrials(should_stop, guard_bytes(capacity)))
                measure = warm.measure
                overhead_bytes = warm.idle_bytes(config) if overhead_bytes is None else overhead_bytes
            elif overhead_bytes is None:
                overhead_bytes = _resident_data_bytes(config, device) if measure is measure_trial else 0
            peaks = PredictedPeaks(config, device=device.type, overhead_bytes=overhead_bytes, predict=predict)
            from ..memory.predict import PredictionUnavailable

            try:
                confirmed = confirm_prediction(
                    peaks, lambda batch, predicted: run(batch, predicted).peak_bytes, limit, capacity, start, max_batch
                )
            except PredictionUnavailable as exc:  # the step cannot be traced: real trials measure it
                note = exc.reason
            else:
                if confirmed.answer:
                    ordered = tuple(sorted(trials.values(), key=lambda t: t.batch_size))
                    fixed, per_sample = confirmed.fixed_bytes, confirmed.bytes_per_sample
                    return BatchSizeResult(
                        confirmed.answer, fixed, per_sample, capacity, limit, margin, str(device), ordered,
                        confirmed.predicted_batch,
                    )  # fmt: skip
                note = Message(
                    "the prediction said batch {batch}; no trial near it fitted, so the search went on with "
                    "real trials only",
                    batch=confirmed.predicted_batch,
                )
                max_batch = min(max_batch, (confirmed.failed or max_batch + 1) - 1)
                start = max(max_batch // 2, 1)  # halving below the trials that failed, then as before
                while start > 1 and not run(start).fits:
                    max_batch, start = start - 1, start // 2
        answer, fixed, per_sample = search_with_trials(
            run, trials, capacity, limit, margin, start, max_batch, str(device)
        )
        ordered = tuple(sorted(trials.values(), key=lambda t: t.batch_size))
        return BatchSizeResult(answer, fixed, per_sample, capacity, limit, margin, str(device), ordered, None, note)


def _engine_predict() -> Callable[..., Prediction]:
    from ..engine.prediction import predict

    return predict
