"""Events as a run emits them, with plausible values, for tests of the sentences said about them."""

from __future__ import annotations

from gpu_train_monitor.events.events import MemorySample, OutOfMemory, RunStarted
from gpu_train_monitor.events.summary import RunSummary


def sample(allocated: int = 3_000_000_000, rss: int = 900_000_000, allocator: bool = True) -> MemorySample:
    return MemorySample(
        time_s=1.0,
        device="cuda:0",
        allocated_bytes=allocated,
        reserved_bytes=4_000_000_000,
        peak_allocated_bytes=allocated,
        peak_reserved_bytes=4_000_000_000,
        capacity_bytes=80_000_000_000,
        device_used_bytes=None,
        process_rss_bytes=rss,
        has_allocator=allocator,
    )


def started(epochs: int | None, total_steps: int = 1_950) -> RunStarted:
    return RunStarted(
        config=CONFIG,
        device="cuda:0",
        device_name="NVIDIA H200",
        placement="resident",
        steps_per_epoch=195,
        total_steps=total_steps,
        train_samples=50_000,
        val_samples=10_000,
        parameters=11_173_962,
        dataset_bytes=184_320_000,
        memory=sample(),
        epochs=epochs,
    )


def summary(**changes) -> RunSummary:
    values = dict(
        status="completed",
        steps=1_950,
        samples=499_200,
        wall_s=61.25,
        samples_per_s=8_150.4,
        loss_first=2.3,
        loss_last=0.4,
        val_accuracy=0.91,
        device="cuda:0",
        device_name="NVIDIA H200",
        peak_allocated_bytes=5_250_000_000,
        peak_reserved_bytes=6_000_000_000,
        peak_rss_bytes=10**9,
        config=CONFIG,
    )
    values.update(changes)
    return RunSummary(**values)


def oom(phase: str, action: str = "stop", message: str | None = None) -> OutOfMemory:
    message = message or "out of memory at step 7 with batch size 256: asked for 2.00 GB, 1.00 GB free"
    return OutOfMemory(
        step=6,
        batch_size=256,
        requested_bytes=2 * 10**9,
        free_bytes=10**9,
        reserved_unallocated_bytes=0,
        action=action,
        new_batch_size=128 if action == "shrink" else None,
        message=message,
        phase=phase,
    )


CONFIG = {"model": "resnet18", "dataset": "cifar10", "batch_size": 256}
