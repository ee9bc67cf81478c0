"""The CUDA side of memory insight: real out-of-memory errors, recovery to the baseline, the finder's
answer really fitting, snapshots, phase peaks, the allocator breakdown and NVML. Skipped without CUDA.

A real out-of-memory error needs a small device: `set_per_process_memory_fraction` gives this process
2 GiB of the GPU (reset to the whole GPU afterwards, whatever happens).
"""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device import nvml
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import (
    CacheCleared,
    EpochStarted,
    MemoryBreakdown,
    OutOfMemory,
    RunFinished,
    RunPaused,
    RunResumed,
    SnapshotSaved,
    StepsReported,
)
from gpu_train_monitor.finder.search import find_batch_size
from gpu_train_monitor.memory.probe import MemoryProbe

pytestmark = pytest.mark.gpu

MiB, GiB = 2**20, 2**30
LIMIT = 2 * GiB
# resnet18 (CIFAR stem) keeps several MB of activations per 32x32 image: 4096 images need far more than 2 GiB
TOO_BIG = 4096
RESNET = RunConfig(
    device="cuda:0", model="resnet18", synthetic_samples=TOO_BIG, batch_size=TOO_BIG, max_steps=3, report_interval=0.05
)


def run(config: RunConfig, **kwargs: object) -> tuple[RunFinished, list[object]]:
    events: list[object] = []
    finished = TrainingSession(config, [events.append], **kwargs).run()  # type: ignore[arg-type]
    return finished, events


def of_type(events: list[object], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def settle() -> None:
    gc.collect()
    torch.cuda.synchronize(0)
    torch.cuda.empty_cache()


@pytest.fixture
def two_gib_gpu() -> Iterator[int]:
    """This process may use 2 GiB of cuda:0. Yields the allocated bytes at rest before the test's run."""
    torch.cuda.set_device(0)
    # One small real run first: cuBLAS/cuDNN handles and cuBLAS's workspace are created once per process
    # and stay allocated; they belong to the baseline, not to the run under test.
    warm, _ = run(RESNET.replace(synthetic_samples=256, batch_size=8, max_steps=1))
    assert warm.status == "completed", warm.message
    settle()
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(LIMIT / total, 0)
    try:
        yield torch.cuda.memory_allocated(0)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, 0)
        settle()


def test_a_real_out_of_memory_stops_oom_and_memory_returns_to_baseline(two_gib_gpu: int) -> None:
    baseline, reserved_before = two_gib_gpu, torch.cuda.memory_reserved(0)
    finished, events = run(RESNET.replace(on_oom="stop"))

    assert finished.status == "oom", finished.message
    [oom] = of_type(events, OutOfMemory)
    assert (oom.step, oom.batch_size, oom.action, oom.new_batch_size) == (0, TOO_BIG, "stop", None)
    assert oom.requested_bytes is not None and oom.requested_bytes > 0  # read from CUDA's message
    assert oom.reserved_unallocated_bytes >= 0 and oom.free_bytes > 0
    assert f"batch size {TOO_BIG}" in oom.message and "--on-oom shrink" in finished.message

    assert torch.cuda.memory_allocated(0) == baseline  # every tensor of the run is gone
    assert torch.cuda.memory_reserved(0) <= reserved_before + 64 * MiB  # and the cache was given back


def test_a_real_out_of_memory_names_what_held_it_and_the_batch_it_names_fits(two_gib_gpu: int) -> None:
    finished, events = run(RESNET.replace(on_oom="stop"))
    assert finished.status == "oom", finished.message
    [oom] = of_type(events, OutOfMemory)
    # the first step failed: no step was split by module, so the step as predicted names the holders
    assert (oom.holders_source, oom.holders_step) == ("predicted", TOO_BIG) and oom.holders
    assert {row.name for row in oom.holders} <= {"conv1", "bn1", "layer1", "layer2", "layer3", "layer4", "fc"}
    assert sum(row.total_bytes for row in oom.holders) <= oom.holders_total_bytes
    # the batch that fits is below the 2 GiB this process may use (its memory fraction), and it trains
    assert oom.fits_batch is not None and 0 < oom.fits_batch < TOO_BIG, oom
    settle()
    fitted, _ = run(RESNET.replace(batch_size=oom.fits_batch, on_oom="stop"))
    assert fitted.status == "completed", fitted.message


def test_shrink_halves_a_real_out_of_memory_batch_until_it_fits(two_gib_gpu: int) -> None:
    baseline = two_gib_gpu
    # a failed batch's images are not offered again in that epoch: enough for the failures and 3 steps
    finished, events = run(RESNET.replace(on_oom="shrink", synthetic_samples=4 * TOO_BIG))

    assert (finished.status, finished.step) == ("completed", 3), finished.message
    ooms = of_type(events, OutOfMemory)
    assert ooms and all(e.action == "shrink" for e in ooms)
    assert [e.batch_size for e in ooms] == [TOO_BIG >> i for i in range(len(ooms))]
    assert all(e.new_batch_size == e.batch_size // 2 for e in ooms)
    fitted = ooms[-1].new_batch_size
    assert all(r.batch_size == fitted for r in of_type(events, StepsReported))
    assert finished.summary.samples == 3 * fitted
    assert all(f"continuing with batch size {e.new_batch_size}" in e.message for e in ooms)
    assert finished.summary.peak_reserved_bytes <= LIMIT
    settle()
    assert torch.cuda.memory_allocated(0) == baseline


def test_the_finders_answer_really_fits(two_gib_gpu: int) -> None:
    config = RESNET.replace(synthetic_samples=2560, batch_size=128)
    result = find_batch_size(config, capacity=LIMIT, margin=0.1, start=16)

    sizes = [t.batch_size for t in result.trials]
    assert sizes == sorted(set(sizes))
    peaks = [t.peak_bytes for t in result.trials if t.peak_bytes is not None]
    assert peaks == sorted(peaks)  # a larger batch never peaks lower
    assert [t.fits for t in result.trials] == sorted((t.fits for t in result.trials), reverse=True)
    assert any(not t.fits for t in result.trials)  # the search found the edge, not --max-batch
    assert result.bytes_per_sample > 0 and result.device == "cuda:0"
    assert result.limit_bytes == int(LIMIT * 0.9)
    fitted = max(t.batch_size for t in result.trials if t.fits)
    failed = min(t.batch_size for t in result.trials if not t.fits)
    assert fitted <= result.batch_size < failed
    assert torch.cuda.memory_allocated(0) == two_gib_gpu  # the trials left nothing behind

    finished, events = run(config.replace(batch_size=result.batch_size, on_oom="stop"))
    assert finished.status == "completed", finished.message  # a few real steps at the answer, same 2 GiB
    assert not of_type(events, OutOfMemory)


def test_a_snapshot_saved_by_the_cli_loads_and_has_segments(tmp_path: Path) -> None:
    target = tmp_path / "snapshot.pickle"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_train_monitor",
            "run",
            "--device",
            "cuda:0",
            "--model",
            "tiny-cnn",
            "--synthetic-samples",
            "256",
            "--batch-size",
            "32",
            "--max-steps",
            "3",
            "--memory-snapshot",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr
    with target.open("rb") as f:
        snapshot = pickle.load(f)
    assert isinstance(snapshot, dict) and snapshot["segments"]  # what pytorch.org/memory_viz draws
    blocks = [block for segment in snapshot["segments"] for block in segment["blocks"]]
    assert any(b["state"] == "active_allocated" and b["frames"] for b in blocks)  # stacks were recorded
    assert any(entry["action"] == "alloc" for trace in snapshot["device_traces"] for entry in trace)


def test_a_snapshot_requested_mid_run_is_saved_and_loads(tmp_path: Path) -> None:
    target = tmp_path / "mid_run.pickle"
    events: list[object] = []
    session = TrainingSession(
        RunConfig(
            device="cuda:0", model="tiny-cnn", synthetic_samples=256, batch_size=32, max_steps=5, report_interval=0.01
        ),
        [events.append],
        record_memory_history=True,
    )

    def save_after_step_1(event: object) -> None:
        if isinstance(event, MemoryBreakdown) and event.step == 1:
            time.sleep(0.02)  # a report interval passes during step 1: step 1 is reported on its own
        if isinstance(event, StepsReported) and event.step == 1:
            session.request_snapshot(str(target))  # what Save snapshot… does: saved at the next step boundary

    session.observers.append(save_after_step_1)
    finished = session.run()
    assert finished.status == "completed", finished.message
    [saved] = of_type(events, SnapshotSaved)
    assert (saved.step, saved.path) == (1, str(target))
    assert saved.size_bytes == target.stat().st_size > 0
    with target.open("rb") as f:
        assert pickle.load(f)["segments"]


def test_a_cache_clear_while_paused_mid_run_gives_the_cache_back() -> None:
    """What Pause then Clear cache does in the window. Deterministic however fast the steps are: the run
    is paused at the step boundary that opens epoch 2 (not at a report, which may come only after the
    last step), and the clear is requested only once RunPaused has arrived."""
    settle()  # no cached segment from an earlier test for the run to share with the scratch block below
    steps_per_epoch = 8
    events: list[object] = []
    paused, cleared = threading.Event(), threading.Event()
    session = TrainingSession(
        RunConfig(
            device="cuda:0",
            model="tiny-cnn",
            synthetic_samples=32 * steps_per_epoch,
            batch_size=32,
            epochs=2,
            report_interval=0.01,
        ),
        [events.append],
    )

    def steer(event: object) -> None:  # runs in the session's thread, before its next step boundary
        if isinstance(event, EpochStarted) and event.epoch == 2:
            session.pause()
        elif isinstance(event, RunPaused):
            paused.set()
        elif isinstance(event, CacheCleared):
            cleared.set()

    session.observers.append(steer)
    seen: dict[str, int] = {}

    def controller() -> None:
        try:
            if not paused.wait(timeout=120):
                session.request_stop()
                return
            seen["reserved_before"] = torch.cuda.memory_reserved(0)
            # a cached block nothing uses (a segment of its own: tiny-cnn's segments are all smaller)
            scratch = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda:0")
            del scratch
            seen["cached"] = torch.cuda.memory_reserved(0) - torch.cuda.memory_allocated(0)
            seen["reports_before"] = len(of_type(events, StepsReported))
            session.request_cache_clear()  # applied by the paused loop, which polls while it waits
            seen["cleared"] = int(cleared.wait(timeout=60))
            seen["reports_while_paused"] = len(of_type(events, StepsReported)) - seen["reports_before"]
        finally:
            session.resume()

    thread = threading.Thread(target=controller)
    thread.start()
    finished = session.run()
    thread.join(timeout=60)

    assert (finished.status, finished.step) == ("completed", 2 * steps_per_epoch), finished.message
    assert seen.get("cleared") == 1, "no CacheCleared arrived while the run was paused"
    order = [e for e in events if isinstance(e, (RunPaused, CacheCleared, RunResumed))]
    assert [type(e).__name__ for e in order] == ["RunPaused", "CacheCleared", "RunResumed"]
    assert [e.step for e in order] == [steps_per_epoch] * 3  # all at the boundary that opens epoch 2
    assert seen["reports_while_paused"] == 0
    [clear] = of_type(events, CacheCleared)
    assert seen["cached"] >= 64 * MiB
    assert clear.freed_bytes >= 64 * MiB  # the scratch block's segment went back to the driver
    assert clear.memory.reserved_bytes <= seen["reserved_before"]
    assert clear.memory.reserved_bytes >= clear.memory.allocated_bytes > 0  # the run's tensors stay


def test_the_run_peak_survives_phase_resets() -> None:
    device = torch.device("cuda", 0)
    settle()
    probe = MemoryProbe(device)
    probe.reset_peak()
    base = torch.cuda.memory_allocated(device)
    big = torch.empty(256 * MiB, dtype=torch.uint8, device=device)
    del big
    first_phase = probe.reset_phase_peak()
    small = torch.empty(MiB, dtype=torch.uint8, device=device)
    second_phase = probe.reset_phase_peak()
    del small

    assert first_phase >= base + 256 * MiB
    assert base + MiB <= second_phase < base + 256 * MiB  # each phase has its own peak
    assert torch.cuda.max_memory_allocated(device) < base + 256 * MiB  # torch's counter was reset...
    assert probe.sample().peak_allocated_bytes >= base + 256 * MiB  # ...but the run's peak is kept
    probe.reset_peak()  # a new run starts afresh
    assert probe.sample().peak_allocated_bytes < base + 256 * MiB


TINY_CNN_GRADS_BYTES = 94_762 * 4  # tiny-cnn's float32 weights (counted by hand in test_breakdown.py)
TINY_CNN_PARAMS_BYTES = TINY_CNN_GRADS_BYTES + 2 * (32 + 64 + 128) * 4 + 3 * 8  # + BatchNorm buffers


def test_the_allocator_breakdown_counts_only_device_tensors() -> None:
    finished, events = run(
        RunConfig(
            device="cuda:0",
            model="tiny-cnn",
            synthetic_samples=256,
            batch_size=32,
            max_steps=3,
            optimizer="adamw",
            report_interval=0.01,
        )
    )
    assert finished.status == "completed", finished.message
    b = of_type(events, MemoryBreakdown)[0]
    assert b.method == "allocator"
    assert (b.params_bytes, b.grads_bytes) == (TINY_CNN_PARAMS_BYTES, TINY_CNN_GRADS_BYTES)
    assert b.batch_bytes == 32 * 3 * 32 * 32 * 4 + 32 * 8
    # AdamW: two moments per weight; its 11 float32 `step` counters (one per parameter tensor) are CPU
    # tensors unless AdamW runs fused or capturable, and only then are they GPU memory
    assert b.optimizer_bytes in (2 * TINY_CNN_GRADS_BYTES, 2 * TINY_CNN_GRADS_BYTES + 11 * 4)
    assert b.activations_bytes > 0
    peaks = dict(b.phase_peaks)
    assert all(peaks[phase] >= b.params_bytes for phase in ("forward", "backward", "optimizer"))
    assert finished.summary.memory_breakdown is not None


def test_nvml_sees_the_gpu_pytorch_uses() -> None:
    torch.cuda.set_device(0)
    keep = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda:0")  # this process now holds device memory
    status = nvml.status(0)
    assert status is not None, "NVML could not be read on a CUDA machine"
    total = torch.cuda.get_device_properties(0).total_memory
    assert abs(status.total_bytes - total) <= 0.05 * total
    assert torch.cuda.memory_reserved(0) <= status.used_bytes <= status.total_bytes
    memory = nvml.memory(0)
    assert memory is not None and memory.total_bytes == status.total_bytes
    del keep
