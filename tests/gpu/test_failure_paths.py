"""CUDA-only halves of the failure-path fixes (their CPU halves are in test_failure_paths.py and
test_oom_module.py): the resident dataset as its own breakdown row, free memory under a per-process
memory fraction, and an out-of-memory error while a resident epoch is augmented. Skipped without CUDA."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.datasets import resident_bytes
from gpu_train_monitor.data.datasets.synthetic import val_samples
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import MemoryBreakdown, OutOfMemory, RunFinished, RunStarted
from gpu_train_monitor.memory.probe import MemoryProbe

pytestmark = pytest.mark.gpu

GiB = 2**30
TRAIN = 50_000  # CIFAR-10's size: its per-epoch buffers are the ~155 MB once counted as activations


def run(**overrides: object) -> tuple[RunFinished, list[object]]:
    events: list[object] = []
    config = RunConfig(
        **{
            "device": "cuda:0",
            "model": "tiny-cnn",
            "synthetic_samples": TRAIN,
            "batch_size": 256,
            "max_steps": 20,
            "report_interval": 0.05,
            **overrides,
        }
    )  # type: ignore[arg-type]
    return TrainingSession(config, [events.append]).run(), events


def largest_breakdown(events: list[object]) -> MemoryBreakdown:
    breakdowns = [e for e in events if isinstance(e, MemoryBreakdown)]
    assert breakdowns
    return max(breakdowns, key=lambda b: b.total_bytes)


@pytest.fixture
def limited_gpu() -> Iterator[None]:
    """A per-process memory fraction for the test, back to the whole GPU afterwards, whatever happens."""
    torch.cuda.set_device(0)
    yield
    torch.cuda.set_per_process_memory_fraction(1.0, 0)
    gc.collect()
    torch.cuda.empty_cache()


def test_the_resident_dataset_is_its_own_row_not_activations() -> None:
    resident_run, resident_events = run(placement="resident")
    stream_run, stream_events = run(placement="stream")
    assert resident_run.status == stream_run.status == "completed"
    resident, stream = largest_breakdown(resident_events), largest_breakdown(stream_events)
    expected = resident_bytes(TRAIN + val_samples(TRAIN), TRAIN, 3 * 32 * 32)
    assert resident.dataset_bytes == expected and stream.dataset_bytes == 0
    # the same model and batch: activations agree within a small margin once the data is its own row
    assert abs(resident.activations_bytes - stream.activations_bytes) < 0.2 * expected
    assert resident_run.summary.memory_breakdown is not None
    assert resident_run.summary.memory_breakdown["dataset_bytes"] == expected


def test_free_memory_is_what_this_process_may_use(limited_gpu: None) -> None:
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(0.01, 0)
    assert MemoryProbe("cuda:0").free_bytes() <= 0.01 * total
    # and a resident dataset larger than that is refused with the fraction's figure, not the whole GPU's
    finished, _ = run(placement="resident", synthetic_samples=200_000)
    assert finished.status == "failed" and finished.user_error and "--placement stream" in finished.message


def test_an_out_of_memory_error_while_making_batches_shrinks_and_completes(limited_gpu: None) -> None:
    """resnet18 at a batch that cannot fit in 2 GiB: whether the failure comes in the step or in making
    its batch, the run halves the batch, trains every planned step and says `completed` only then."""
    torch.cuda.set_per_process_memory_fraction(2 * GiB / torch.cuda.get_device_properties(0).total_memory, 0)
    finished, events = run(model="resnet18", synthetic_samples=8192, batch_size=4096, max_steps=4, on_oom="shrink")
    ooms = [e for e in events if isinstance(e, OutOfMemory)]
    assert ooms and finished.status == "completed", finished.message
    assert finished.step == 4 and finished.summary.batch_size == ooms[-1].new_batch_size
    started = [e for e in events if isinstance(e, RunStarted)][0]
    assert started.total_steps == 4
    assert [c["from"] for c in finished.summary.batch_size_changes][0] == 4096
