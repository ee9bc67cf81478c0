"""Events a `TrainingSession` emits, named after the phases of the loop.

Frozen dataclasses of plain values (never tensors): they cross threads and are shared by every
observer, so nobody can change what another one sees. An observer is `Callable[[Event], None]` and
dispatches with `match`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Union, get_args, get_type_hints

from .module_bytes import ModuleBytes
from .summary import RunSummary


@dataclass(frozen=True)
class MemorySample:
    """One memory reading (gpu_train_monitor.memory.probe takes them), in bytes. `device_used_bytes` is device-wide (all
    processes), None where unknown. Its byte counts are `SAMPLE_COLUMNS`; reserved minus allocated is the
    allocator's cache (free blocks it keeps for reuse)."""

    time_s: float  # time.monotonic() when read
    device: str
    allocated_bytes: int
    reserved_bytes: int  # 0 where the device has no caching allocator (CPU)
    peak_allocated_bytes: int
    peak_reserved_bytes: int
    capacity_bytes: int
    device_used_bytes: int | None
    process_rss_bytes: int
    has_allocator: bool  # True on CUDA/MPS: allocated/reserved are the allocator's own counters
    capacity_limit: str | None = None  # on the CPU: the limit capacity is (a ProcessLimit's kind), None: system memory
    # CUDA's caching allocator since the process started (memory_stats' num_alloc_retries, num_ooms): allocations that
    # had to free the cache and call cudaMalloc again (a sign of fragmentation), and cudaMalloc failures. None where
    # there is no CUDA allocator (CPU, MPS) or the reading did not carry them (an older agent, a stored report).
    alloc_retries: int | None = None
    allocator_ooms: int | None = None

    def byte_counts(self) -> dict[str, int | None]:
        """`SAMPLE_COLUMNS` with their values: what a stored row or a gather row keeps of the sample."""
        return {name: getattr(self, name) for name in SAMPLE_COLUMNS}


# The byte counts of a sample, in field order: what the run store's `reports` and `rank_reports` rows, the CSV
# and TensorBoard exports and a data-parallel report's gather row keep of it (time, device and flags aside).
SAMPLE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(MemorySample) if f.name.endswith("_bytes"))
# those a sample may not know (None): `int | None` in MemorySample
UNKNOWN_SAMPLE_COLUMNS = frozenset(
    name
    for name, hint in get_type_hints(MemorySample).items()
    if name in SAMPLE_COLUMNS and type(None) in get_args(hint)
)


@dataclass(frozen=True)
class RunStarted:
    config: Mapping[str, Any]  # the RunConfig as plain values (read-only), device and placement resolved
    device: str  # "cuda:0", "cpu", "mps"
    device_name: str
    placement: str  # the placement actually used ("stream" or "resident")
    steps_per_epoch: int
    total_steps: int
    train_samples: int
    val_samples: int
    parameters: int
    dataset_bytes: int
    memory: MemorySample
    epochs: int | None = 1  # epochs planned; None: as many as max_steps needs
    run_uid: str = ""  # the run's identity across processes and resumes (the run store's key)
    start_step: int = 0  # steps already trained before this start (a resumed run continues from here)
    world_size: int = 1  # processes training together (data-parallel); 1: an ordinary run
    rank_devices: tuple[str, ...] = ()  # a data-parallel run: each rank's device, by rank
    branch_of: str = ""  # a resume from a checkpoint its run went on past: that run's uid (this one is a branch)
    name: str = ""  # the run's name as its trainer gave it (a watched run's `name=`); "": none


@dataclass(frozen=True)
class EpochStarted:
    epoch: int  # 1-based
    step: int  # steps completed before this epoch


@dataclass(frozen=True)
class RankSample:
    """One rank of a data-parallel run at a report: its own device, throughput and memory."""

    rank: int  # global rank, 0..world_size-1
    device: str  # this rank's device ("cuda:1", "cpu")
    samples_per_s: float  # this rank's images/s over the report's steps
    memory: MemorySample


STEP_PHASES = ("data", "copy", "forward", "backward", "optimizer", "recording")  # a step's time, in order


@dataclass(frozen=True)
class StepPhases:
    """Where a report's steps spent their time: each phase's median seconds per step over the report's steps, in
    STEP_PHASES order (data: the next batch made ready on the host, or a resident batch cut on the device; copy: to
    the device, with its augmentation there; forward, backward, optimizer; recording: the loop's own work after
    the update), and the median step's time from one step's start to the next's. Host clock: on a GPU the host
    runs ahead of the device, so a phase is the time its launches took, not its kernels'. On CUDA also the GPU's
    own clock (`device_seconds`, from events at the same boundaries on sampled steps; the copy is inside data's
    span there) and `caught_up`: the share of step starts at which the GPU had already run all it was given, so it
    idled until the host launched more."""

    seconds: tuple[float, ...]
    step_s: float
    device_seconds: tuple[float, ...] | None = None
    caught_up: float | None = None

    def as_dict(self) -> dict[str, float]:
        return dict(zip(STEP_PHASES, self.seconds, strict=True))


@dataclass(frozen=True)
class StepsReported:
    """Everything since the previous report. Its losses were buffered on the device and copied to the host in one
    transfer that nothing waited for: a report is emitted once they arrived, usually at the next report."""

    step: int  # steps completed
    epoch: int
    first_step: int  # step number (1-based) of losses[0]
    losses: tuple[float, ...]  # one per step; may hold nan/inf (the run then ends `diverged`)
    samples: int  # images trained on so far
    samples_per_s: float  # over this report's steps
    elapsed_s: float
    eta_s: float | None
    batch_size: int
    memory: MemorySample
    total_steps: int = 0  # the run's expected steps; it grows when an out-of-memory shrink halves the batch
    ranks: tuple[RankSample, ...] = ()  # a data-parallel run: every rank's sample (losses, samples,
    # samples_per_s and batch_size above are then the whole run's: mean loss over ranks, total images)
    phases: StepPhases | None = None  # where this report's steps spent their time (None: not measured)


@dataclass(frozen=True)
class EpochEnded:
    epoch: int
    step: int
    train_loss: float | None  # mean of this epoch's step losses
    val_loss: float | None
    val_accuracy: float | None  # 0..1
    complete: bool = True  # False: the run's steps ended mid-epoch (--max-steps); a resume finishes the epoch


@dataclass(frozen=True)
class CacheCleared:
    step: int | None  # None when cleared at rest (outside a run)
    freed_bytes: int
    memory: MemorySample  # right after the clear


@dataclass(frozen=True)
class SnapshotSaved:
    step: int
    path: str  # a pickle that pytorch.org/memory_viz opens
    size_bytes: int


@dataclass(frozen=True)
class CheckpointSaved:
    """A checkpoint a run can be resumed from (`gpu-train-monitor run --resume PATH`)."""

    step: int  # steps trained when it was saved
    epoch: int  # the epoch under way (or just ended, for reason "epoch")
    path: str
    size_bytes: int
    reason: str  # "epoch" (an epoch ended), "every" (--checkpoint-every), "request" (asked for), "stop" (the
    # run was stopped mid-epoch) or "end" (max_steps ended the run mid-epoch)


@dataclass(frozen=True)
class RunPaused:
    step: int


@dataclass(frozen=True)
class RunResumed:
    step: int


@dataclass(frozen=True)
class OutOfMemory:
    step: int
    batch_size: int  # the batch that did not fit (the validation batch when phase is "validation")
    requested_bytes: int | None  # what the failing allocation asked for, when the error says
    free_bytes: int  # free for new allocations after recovery
    reserved_unallocated_bytes: int  # cached by the allocator but not in use, at the failure
    action: str  # "stop" or "shrink"
    new_batch_size: int | None  # after "shrink"
    message: str
    phase: str = "train"  # "train" (a training step or the batch it needed) or "validation"


PHASES = ("forward", "backward", "optimizer")


@dataclass(frozen=True)
class MemoryBreakdown:
    """One sampled step's memory, by what holds it. Bytes."""

    step: int
    params_bytes: int  # parameters and buffers (the model's state)
    grads_bytes: int
    optimizer_bytes: int  # momentum buffers, Adam moments, step counters on the device
    batch_bytes: int  # the step's input images and labels, as the model receives them
    activations_bytes: int  # activations + workspace (CUDA); bytes saved for backward elsewhere
    dataset_bytes: int  # the resident dataset on the device (and its per-epoch buffers); 0 when streamed
    phase_peaks: tuple[tuple[str, int], ...]  # (phase, bytes) in PHASES order
    method: str  # "allocator" (CUDA peak counters) or "saved-tensors" (autograd's saved bytes)
    rank: int = 0  # the rank it was measured on (a data-parallel run samples every rank at the same step)
    modules: tuple[ModuleBytes, ...] = ()  # by module, on an attributed step (adding up to total_bytes); else ()

    @property
    def total_bytes(self) -> int:
        return (
            self.params_bytes
            + self.grads_bytes
            + self.optimizer_bytes
            + self.batch_bytes
            + self.activations_bytes
            + self.dataset_bytes
        )

    def to_summary(self) -> dict[str, int]:
        """The `memory_breakdown` object of the summary JSON."""
        return {
            "params_bytes": self.params_bytes,
            "grads_bytes": self.grads_bytes,
            "optimizer_bytes": self.optimizer_bytes,
            "batch_bytes": self.batch_bytes,
            "activations_bytes": self.activations_bytes,
            "dataset_bytes": self.dataset_bytes,
        }


@dataclass(frozen=True)
class StepPredicted:
    """A watched run's step predicted at its first step (gpu_train_monitor.watch.step_prediction): its model's step
    traced on tensors without memory, to set beside the measured breakdown. Bytes at the predicted peak, as
    `gpu_train_monitor.memory.predict.Prediction` has them; when the step could not be traced, `reason` says why (for
    people) and every count is 0."""

    step: int
    peak_bytes: int
    params_bytes: int
    grads_bytes: int
    optimizer_bytes: int
    batch_bytes: int  # the input tensors the model's forward received
    activations_bytes: int  # activations saved for backward and temporaries: the rest of the peak
    phase_peaks: tuple[tuple[str, int], ...]  # (phase, bytes) in PHASES order
    batch_size: int
    device_kind: str  # the device predicted for
    traced_on: str  # the device the fake step ran on: the same, or "cpu" standing in
    what: str  # what was traced and what stands in for the user's own code, for people
    elapsed_s: float  # the trace's cost, paid once in the training process
    reason: str = ""  # why nothing was predicted; empty when predicted
    overhead_bytes: int = 0  # outside the trace (allocator, CUDA context): not added for a watched run
    # the step as its breakdown measures it (gpu_train_monitor.memory.like_measured); 0 in runs recorded before
    grads_end_bytes: int = 0  # the gradients when the step is done
    saved_activations_bytes: int = 0  # saved for backward, less the weights and the inputs
    saved_inputs_bytes: int = 0  # the inputs' share of what was saved
    modules: tuple[ModuleBytes, ...] = ()  # the peak by module (adding up to peak_bytes); () in runs recorded before

    @property
    def predicted(self) -> bool:
        return not self.reason

    @property
    def total_bytes(self) -> int:
        return self.peak_bytes + self.overhead_bytes


@dataclass(frozen=True)
class LogMessage:
    level: str  # "info", "warning" or "error"
    text: str


@dataclass(frozen=True)
class RunFinished:
    status: str  # completed | stopped | diverged | oom | failed
    step: int
    message: str  # why it ended, for people; empty when completed
    user_error: bool  # the failure is the user's input (bad option, missing dataset): no traceback
    summary: RunSummary
    error_field: str | None = None  # the RunConfig field a configuration error names (user_error only)


@dataclass(frozen=True)
class ContenderEvent:
    """An event of run `index` of a comparison (every run's events arrive wrapped, in order).

    `label` is that run's label ("batch_size=256"), so whoever records or shows the run needs nothing else
    from the comparison (its start and end are `gpu_train_monitor.compare.events`)."""

    index: int
    event: "Event"
    label: str


Event = Union[
    RunStarted,
    EpochStarted,
    StepsReported,
    EpochEnded,
    CacheCleared,
    RunPaused,
    RunResumed,
    MemoryBreakdown,
    StepPredicted,
    SnapshotSaved,
    CheckpointSaved,
    OutOfMemory,
    LogMessage,
    RunFinished,
    ContenderEvent,
]
Observer = Callable[[Event], None]
