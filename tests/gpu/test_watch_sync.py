"""The watch's promise on CUDA: neither a watched step nor a report makes the host wait for the GPU. Between
reports the watch reads nothing from the device; a report sends the buffered losses to pinned host memory in one
copy that nothing waits for (read at a later report, once its event is done), and its memory sample and breakdown
read only the allocator's host-side counters.

torch's sync debug mode ("warn") raises a UserWarning, "called a synchronizing CUDA operation", each time an
operation blocks the host on the device (`.item()`, `.cpu()`, `.tolist()` of a CUDA tensor, a blocking copy). It is
on while the loop runs, after a few warm-up steps (first-use initialisation) and after the watch started (its
RunStarted is setup, not a step). An observer placed on the watch's controls charges each sync to the event that
closes its window: every window (a report, a breakdown, the steps after the last report, the end) holds none. The
user's loop here makes no sync itself, checked by the same run without the watch. The CPU side of this promise is
counted in tests/core/watch/test_no_host_sync.py.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

from gpu_train_monitor.model.models import build_model
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch import watch

pytestmark = pytest.mark.gpu

SYNC_WARNING = "called a synchronizing CUDA operation"
ALLOWED: dict[str, int] = {}  # syncs a window may hold, by the event that closes it: none
BATCH, BATCHES, WARMUP_STEPS = 64, 8, 5
SECONDS, MIN_STEPS = 2.5, 100  # long enough for many 0.02 s reports and two ~1 s memory breakdowns


@dataclass(frozen=True)
class Window:
    closed_by: str
    step: int | None
    syncs: tuple[str, ...]  # "file:line" of each call that blocked

    @property
    def excess(self) -> int:
        return max(len(self.syncs) - ALLOWED.get(self.closed_by, 0), 0)


class SyncWindows:
    """Observer of the watch's events: the sync warnings caught since the previous event, charged to this one.
    `close()` charges the rest (steps after the last report) to the end of the loop, which is allowed none."""

    def __init__(self, caught: list[warnings.WarningMessage]) -> None:
        self.caught = caught
        self.seen = len(caught)
        self.windows: list[Window] = []

    def __call__(self, event: object) -> None:
        self._close(type(event).__name__, getattr(event, "step", None))

    def close(self) -> None:
        self._close("end of the loop", None)

    def _close(self, closed_by: str, step: int | None) -> None:
        new = [w for w in self.caught[self.seen :] if SYNC_WARNING in str(w.message)]
        self.seen = len(self.caught)
        self.windows.append(Window(closed_by, step, tuple(f"{w.filename}:{w.lineno}" for w in new)))

    def closed_by(self, kind: str) -> list[Window]:
        return [w for w in self.windows if w.closed_by == kind]

    def excessive(self) -> str:
        """The windows over their allowance, with the calls that synced: what a failure shows."""
        over = [w for w in self.windows if w.excess]
        return "\n".join(
            f"{w.closed_by} at step {w.step}: {len(w.syncs)} syncs (allowed {ALLOWED.get(w.closed_by, 0)}) "
            f"from {sorted(set(w.syncs))}"
            for w in over[:20]
        )


def cuda_training(per_sample: bool) -> tuple[torch.nn.Module, torch.optim.Optimizer, Callable[[int], torch.Tensor]]:
    """Our tiny-cnn with SGD on batches already on the GPU: a step that makes no host sync of its own."""
    device = torch.device("cuda", 0)
    torch.manual_seed(0)
    model = build_model("tiny-cnn", 10, 3).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(BATCHES, BATCH, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (BATCHES, BATCH), device=device)

    def step(index: int) -> torch.Tensor:
        loss = F.cross_entropy(
            model(images[index % BATCHES]), labels[index % BATCHES], reduction="none" if per_sample else "mean"
        )
        loss.mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    for index in range(WARMUP_STEPS):  # first-use work (cuDNN, cuBLAS handles) is not a step's
        step(index)
    torch.cuda.synchronize()
    return model, optimizer, step


def steps_for_a_while(step: Callable[[int], torch.Tensor], on_step: Callable[[torch.Tensor], None]) -> int:
    """Train for SECONDS of wall time (and MIN_STEPS at least): the clock is the host's, no device read."""
    steps, deadline = 0, time.perf_counter() + SECONDS
    while steps < MIN_STEPS or time.perf_counter() < deadline:
        on_step(step(steps))
        steps += 1
    return steps


@pytest.fixture
def caught_syncs():
    """Sync warnings recorded (every one, not once per place) while the test turns the mode on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield caught
        finally:
            torch.cuda.set_sync_debug_mode("default")


def test_the_loop_itself_makes_no_sync(caught_syncs) -> None:
    _, _, step = cuda_training(per_sample=False)
    torch.cuda.set_sync_debug_mode("warn")
    steps_for_a_while(step, lambda loss: None)
    torch.cuda.set_sync_debug_mode("default")
    syncs = [f"{w.filename}:{w.lineno}" for w in caught_syncs if SYNC_WARNING in str(w.message)]
    assert syncs == []


@pytest.mark.parametrize("per_sample", [False, True], ids=["mean-loss", "per-sample-losses"])
def test_a_watched_step_makes_no_sync_nor_does_a_report(tmp_path, caught_syncs, per_sample: bool) -> None:
    db = tmp_path / "runs.db"
    model, optimizer, step = cuda_training(per_sample)
    w = watch(model, optimizer, runs_db=db, report_interval_s=0.02, signals=False).start()
    windows = SyncWindows(caught_syncs)
    w.controls.observers.append(windows)
    torch.cuda.set_sync_debug_mode("warn")
    try:
        steps = steps_for_a_while(step, lambda loss: w.step(loss, samples=BATCH))
        w.finish()  # its last reports too: they wait for their copies' events, which is no sync of the mode's
    finally:
        torch.cuda.set_sync_debug_mode("default")
        windows.close()
        w.controls.observers.remove(windows)
    assert w.status == "completed"
    reports, breakdowns = windows.closed_by("StepsReported"), windows.closed_by("MemoryBreakdown")
    assert len(reports) >= 10 and len(breakdowns) >= 2, [w.closed_by for w in windows.windows]
    assert windows.excessive() == ""
    assert sum(len(w.syncs) for w in reports) == 0  # that the mode flags syncs: tests/gpu/test_sync.py
    with RunStore(db, readonly=True) as store:
        (run,) = store.list_runs()
        assert run.steps == steps and len(store.steps(run.id).steps) == steps  # every loss recorded: no give-up
