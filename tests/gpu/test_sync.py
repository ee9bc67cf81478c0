"""The loop's promise: a training step never waits for the GPU, nor does a report (its losses go to the host in
a copy nothing waits for, read a report later). The host reads the device once per epoch (the validation totals).

torch's sync debug mode ("warn") raises a UserWarning, "called a synchronizing CUDA operation", each time
an operation blocks the host on the device: `.item()`, `.cpu()`, `.tolist()` of a CUDA tensor, a blocking
host<->device copy, `nonzero` and boolean masks, GradScaler's inf check with an unfused optimizer. An
explicit `torch.cuda.synchronize()` is not flagged by the mode, so it would pass unseen here.

`SyncWatch` (an observer; observers run synchronously in the session's thread) turns the mode on only
while steps run: from RunStarted (setup is over: dataset generated, model and optimizer built) or
EpochStarted, to EpochEnded or RunFinished. Every sync warning is charged to the event that closes its
window: an EpochEnded may carry the one validation fetch, and any other window (a StepsReported, a
MemoryBreakdown after a sampled step, an EpochStarted) none. The CPU tests below check
that bookkeeping against a real CPU run; the GPU tests run it on CUDA.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import (
    EpochEnded,
    EpochStarted,
    MemoryBreakdown,
    RunFinished,
    RunStarted,
    StepsReported,
)

SYNC_WARNING = "called a synchronizing CUDA operation"
# syncs a window may hold, by the event that closes it: the validation fetch (a report's losses make none)
ALLOWED = {"EpochEnded": 1}


@dataclass(frozen=True)
class Window:
    """The syncs between two events while the mode was on, charged to the event that closed the window."""

    closed_by: str
    step: int | None  # the closing event's step
    syncs: tuple[str, ...]  # "file:line" of the Python call that blocked, one per sync

    @property
    def excess(self) -> int:
        return max(len(self.syncs) - ALLOWED.get(self.closed_by, 0), 0)


class SyncWatch:
    """Observer that keeps CUDA's sync debug mode on only while training steps run, and sorts the sync
    warnings recorded in `caught` (from `warnings.catch_warnings(record=True)`) into windows."""

    def __init__(self, caught: list[warnings.WarningMessage], set_mode: Callable[[str], None]) -> None:
        """`set_mode`: torch.cuda.set_sync_debug_mode on CUDA; a recorder in the CPU tests."""
        self.caught = caught
        self.set_mode = set_mode
        self.active = False
        self.windows: list[Window] = []
        self._seen = len(caught)

    def __call__(self, event: object) -> None:
        new = [w for w in self.caught[self._seen :] if SYNC_WARNING in str(w.message)]
        self._seen = len(self.caught)
        if self.active:
            self.windows.append(
                Window(
                    type(event).__name__, getattr(event, "step", None), tuple(f"{w.filename}:{w.lineno}" for w in new)
                )
            )
        if isinstance(event, (RunStarted, EpochStarted)) and not self.active:
            self.set_mode("warn")
            self.active = True
        elif isinstance(event, (EpochEnded, RunFinished)) and self.active:
            self.set_mode("default")  # validation's fetch is in; the run's teardown is not counted
            self.active = False

    def syncs(self) -> int:
        return sum(len(w.syncs) for w in self.windows)

    def excessive(self) -> list[Window]:
        return [w for w in self.windows if w.excess]

    def describe(self) -> str:
        """The windows over their allowance, with the calls that synced: what a failure should show."""
        lines = [
            f"{w.closed_by} at step {w.step}: {len(w.syncs)} syncs (allowed {ALLOWED.get(w.closed_by, 0)}) "
            f"from {sorted(set(w.syncs))}"
            for w in self.excessive()
        ]
        return "host syncs inside training steps:\n" + "\n".join(lines[:20])


def of_type(events: list[object], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


# --- the bookkeeping, on the CPU --------------------------------------------------------------------------

CPU = RunConfig(
    device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, max_steps=20, report_interval=0.01
)  # 8 steps an epoch: epochs 1 and 2 whole, 4 steps of epoch 3


def fake_syncs(on: dict[type, int]) -> Callable[[object], None]:
    """An observer placed before the watch that warns as the device would: `on[kind]` times just before
    each event of that kind, i.e. inside the window that event closes."""

    def observer(event: object) -> None:
        for _ in range(on.get(type(event), 0)):
            warnings.warn(SYNC_WARNING, UserWarning, stacklevel=1)

    return observer


def watched_cpu_run(on: dict[type, int]) -> tuple[SyncWatch, list[str], list[object]]:
    events: list[object] = []
    modes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        watch = SyncWatch(caught, modes.append)
        finished = TrainingSession(CPU, [events.append, fake_syncs(on), watch]).run()
    assert (finished.status, finished.step) == ("completed", 20), finished.message
    return watch, modes, events


def test_the_mode_is_on_from_each_epochs_start_to_its_validation() -> None:
    watch, modes, events = watched_cpu_run({})
    epochs = len(of_type(events, EpochStarted))
    assert epochs == 3 and len(of_type(events, EpochEnded)) == 3
    assert modes == ["warn", "default"] * epochs and not watch.active
    closers = {w.closed_by for w in watch.windows}
    assert {"EpochStarted", "StepsReported", "EpochEnded"} <= closers
    assert "RunStarted" not in closers and "RunFinished" not in closers  # setup and teardown are not watched
    assert sum(w.closed_by == "StepsReported" for w in watch.windows) == len(of_type(events, StepsReported))
    assert watch.syncs() == 0 and not watch.excessive()


def test_one_fetch_per_validation_is_allowed_and_setup_is_not_counted() -> None:
    watch, _, events = watched_cpu_run({RunStarted: 3, EpochEnded: 1})
    assert not watch.excessive(), watch.describe()
    assert watch.syncs() == len(of_type(events, EpochEnded))


def test_a_sync_inside_a_step_is_caught_and_located() -> None:
    # a sampled step's breakdown is emitted right after the step, before any report: a sync there is
    # inside a step; and a report that fetched its losses is over its allowance too
    watch, _, events = watched_cpu_run({MemoryBreakdown: 1, StepsReported: 1})
    over = watch.excessive()
    assert {w.closed_by for w in over} == {"MemoryBreakdown", "StepsReported"}
    assert all(w.excess == 1 for w in over)
    assert sum(w.closed_by == "StepsReported" for w in over) == len(of_type(events, StepsReported))
    assert __file__.rsplit("/", 1)[-1] in watch.describe() and "allowed 0" in watch.describe()


def test_unrelated_warnings_are_not_syncs() -> None:
    caught: list[warnings.WarningMessage] = []
    watch = SyncWatch(caught, lambda mode: None)
    watch(EpochStarted(1, 0))
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        warnings.warn("a deprecation", DeprecationWarning, stacklevel=1)
        warnings.warn(SYNC_WARNING, UserWarning, stacklevel=1)
    caught.extend(recorded)
    watch(EpochEnded(1, 8, None, None, None))
    assert [len(w.syncs) for w in watch.windows] == [1] and not watch.excessive()


# --- on CUDA ----------------------------------------------------------------------------------------------

STEPS, BATCH = 300, 64
SYNC_RUN = RunConfig(
    device="cuda:0",
    model="tiny-cnn",
    dataset="synthetic",
    synthetic_samples=100 * BATCH,
    batch_size=BATCH,
    max_steps=STEPS,
    report_interval=0.1,
)  # 100 steps an epoch: 3 epochs
CASES = [
    pytest.param(placement, amp, "sgd", id=f"{placement}-{amp}")
    for placement in ("stream", "resident")
    for amp in ("off", "bf16", "fp16")
] + [
    pytest.param("resident", "fp16", "adamw", id="resident-fp16-adamw"),
    pytest.param("stream", "off", "adamw", id="stream-off-adamw"),
]


def fused_unsupported(optimizer: str) -> str | None:
    """Why this torch cannot run `optimizer` fused on CUDA under GradScaler (the fp16 path without a
    per-step `.item()`), or None when it can."""
    param = torch.zeros(8, device="cuda:0", requires_grad=True)
    try:
        opt = (
            torch.optim.SGD([param], lr=0.1, momentum=0.9, fused=True)
            if optimizer == "sgd"
            else torch.optim.AdamW([param], lr=0.1, fused=True)
        )
        if not getattr(opt, "_step_supports_amp_scaling", False):
            return f"torch {torch.__version__}: fused {optimizer} does not take GradScaler's inf check"
        scaler = torch.amp.GradScaler("cuda")
        scaler.scale((param * 2).sum()).backward()
        scaler.step(opt)
        scaler.update()
    except (RuntimeError, TypeError, ValueError) as exc:
        return f"torch {torch.__version__} cannot run {optimizer} fused on CUDA: {exc}"
    return None


@pytest.mark.gpu
def test_the_sync_debug_mode_is_seen_here() -> None:
    """Without this the step test could pass by recording nothing."""
    one = torch.ones(1, device="cuda:0")  # CUDA initialised outside the mode
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.cuda.set_sync_debug_mode("warn")
            one.sum().item()
        finally:
            torch.cuda.set_sync_debug_mode("default")
        flagged = sum(SYNC_WARNING in str(w.message) for w in caught)
        one.sum().item()  # the mode is off again: not flagged
    assert flagged >= 1, [str(w.message) for w in caught]
    assert sum(SYNC_WARNING in str(w.message) for w in caught) == flagged


@pytest.mark.gpu
@pytest.mark.parametrize("placement, amp, optimizer", CASES)
def test_training_steps_never_wait_for_the_gpu(placement: str, amp: str, optimizer: str) -> None:
    if amp == "fp16":
        reason = fused_unsupported(optimizer)
        if reason is not None:
            pytest.skip(reason)
    config = SYNC_RUN.replace(placement=placement, amp=amp, optimizer=optimizer)
    # a short run first: cuBLAS/cuDNN handles, kernel loading and the allocator's first segments belong to
    # the process, not to the steps under test
    warm = TrainingSession(config.replace(synthetic_samples=4 * BATCH, max_steps=2)).run()
    assert warm.status == "completed", warm.message

    events: list[object] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # not thread-safe: the run stays in this thread
            warnings.simplefilter("always")  # every sync, not once per calling line
            watch = SyncWatch(caught, torch.cuda.set_sync_debug_mode)
            finished = TrainingSession(config, [events.append, watch]).run()
    finally:
        torch.cuda.set_sync_debug_mode("default")

    assert (finished.status, finished.step) == ("completed", STEPS), finished.message
    started = of_type(events, RunStarted)[0]
    assert (started.placement, started.config["amp"], started.config["optimizer"]) == (placement, amp, optimizer)
    reports, epochs = of_type(events, StepsReported), of_type(events, EpochEnded)
    assert len(epochs) == 3 and not watch.active
    assert sum(w.closed_by == "StepsReported" for w in watch.windows) == len(reports)  # every report watched
    assert not watch.excessive(), watch.describe()
    assert watch.syncs() <= len(epochs)


class ErrorOnSync:
    """Observer that keeps CUDA's sync debug mode at "error" from RunStarted to the report of each epoch's last
    step (the validation after it reads its totals: one sync an epoch), and again from each EpochStarted: any
    sync in a step or a report raises inside the run, which then ends `failed` naming it."""

    def __init__(self, steps_per_epoch: int) -> None:
        self.steps_per_epoch = steps_per_epoch
        self.reports = 0

    def __call__(self, event: object) -> None:
        if isinstance(event, (RunStarted, EpochStarted)):
            torch.cuda.set_sync_debug_mode("error")
        elif isinstance(event, StepsReported):
            self.reports += 1
            if event.step % self.steps_per_epoch == 0:
                torch.cuda.set_sync_debug_mode("default")
        elif isinstance(event, RunFinished):
            torch.cuda.set_sync_debug_mode("default")


@pytest.mark.gpu
@pytest.mark.parametrize("placement", ["stream", "resident"])
def test_a_whole_run_with_its_reports_makes_no_sync_in_the_error_mode(placement: str) -> None:
    config = SYNC_RUN.replace(placement=placement, report_interval=0.01, pin_memory=True, non_blocking=True)
    warm = TrainingSession(config.replace(synthetic_samples=4 * BATCH, max_steps=2)).run()
    assert warm.status == "completed", warm.message
    errors = ErrorOnSync(steps_per_epoch=config.synthetic_samples // BATCH)
    try:
        finished = TrainingSession(config, [errors]).run()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert (finished.status, finished.step) == ("completed", STEPS), finished.message
    assert errors.reports >= 10  # the reports ran under the mode too
