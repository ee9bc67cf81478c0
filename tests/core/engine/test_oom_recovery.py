"""Out of memory is an event, not a crash: the run reports it, frees the failed step, then stops with
status `oom` or halves the batch and carries on (`--on-oom stop|shrink`).

The CPU has no CUDA allocator to exhaust, so a wrapper around the real model raises torch's
OutOfMemoryError from inside its forward pass, after it has built real activations, exactly where a
GPU would raise it. The wrapper keeps only weak references to the step's tensors: they must be dead
once the session has recovered. A real allocation failure under `ulimit -v` (a process's limit) is in
tests/e2e/test_resource_limits.py.
"""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable

import pytest
import torch
from torch import nn

import gpu_train_monitor.engine.recipe
import gpu_train_monitor.engine.report
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
from gpu_train_monitor.engine.session import MAX_OOM_RETRIES, TrainingSession
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import MemoryBreakdown, OutOfMemory, RunFinished, StepsReported
from gpu_train_monitor.events.module_bytes import modules_total
from gpu_train_monitor.memory.oom_autopsy import holders_of
from gpu_train_monitor.model.models import build_model

BATCH = 32
MESSAGE = (
    "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.06 GiB is free."
)


class OutOfMemoryWhen(nn.Module):
    """The real model, except that a training forward pass for which `fails(call, batch)` is true runs
    the model (its activations now exist) and then raises CUDA's out-of-memory error."""

    def __init__(self, inner: nn.Module, fails: Callable[[int, int], bool], build_activations: bool = True) -> None:
        super().__init__()
        self.inner, self.fails, self.build_activations = inner, fails, build_activations
        self.calls = 0
        self.failed_steps: list[tuple[weakref.ref, ...]] = []  # (input batch, output with its graph)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.calls += 1
            if self.fails(self.calls, x.shape[0]):
                refs: tuple[weakref.ref, ...] = (weakref.ref(x),)
                if self.build_activations:
                    half_done = self.inner(x)  # activations held by the failing frame
                    refs += (weakref.ref(half_done),)
                self.failed_steps.append(refs)
                raise torch.OutOfMemoryError(MESSAGE)
        return self.inner(x)


class Models:
    """What the patched build_model made: weak references only, so nothing here keeps tensors alive."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref] = []

    @property
    def last(self) -> OutOfMemoryWhen:
        model = self.refs[-1]()
        assert model is not None
        return model


def patch_model(
    monkeypatch: pytest.MonkeyPatch, fails: Callable[[int, int], bool], build_activations: bool = True
) -> Models:
    models = Models()

    def build(name: str, classes: int, channels: int) -> nn.Module:
        model = OutOfMemoryWhen(build_model(name, classes, channels), fails, build_activations)
        models.refs.append(weakref.ref(model))
        return model

    monkeypatch.setattr(gpu_train_monitor.engine.recipe, "build_model", build)
    return models


def run(models: Models, **overrides: object) -> tuple[RunFinished, list[object], list[bool]]:
    """Run; at each OutOfMemory event (emitted after recovery) note whether the failed step's tensors
    are all gone, without collecting garbage ourselves."""
    events: list[object] = []
    released: list[bool] = []

    def observer(event: object) -> None:
        if isinstance(event, OutOfMemory):
            released.append(all(ref() is None for ref in models.last.failed_steps[-1]))
        events.append(event)

    config = RunConfig(
        **{
            "device": "cpu",
            "model": "tiny-cnn",
            "synthetic_samples": 256,
            "batch_size": BATCH,
            "report_interval": 0.01,
            **overrides,
        }
    )  # type: ignore[arg-type]
    finished = TrainingSession(config, [observer]).run()
    return finished, events, released


def of_type(events: list[object], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def test_stop_reports_the_failure_releases_the_step_and_ends_oom(monkeypatch: pytest.MonkeyPatch) -> None:
    # step 1 is always one whose memory is measured (saved-tensor hooks on the CPU): those must not
    # keep the failed step's tensors alive either
    models = patch_model(monkeypatch, lambda call, batch: call == 1)
    finished, events, released = run(models, on_oom="stop")

    assert (finished.status, finished.step, finished.user_error) == ("oom", 0, False)
    assert finished.summary.status == "oom" and finished.summary.steps == 0
    [oom] = of_type(events, OutOfMemory)
    assert (oom.step, oom.batch_size, oom.action, oom.new_batch_size) == (0, BATCH, "stop", None)
    assert oom.requested_bytes == int(1.5 * 2**30)  # read from the error message
    assert oom.free_bytes > 0 and oom.reserved_unallocated_bytes == 0  # the CPU has no cache
    assert "out of memory at step 1 with batch size 32: asked for 1.61 GB" in oom.message
    assert released == [True]  # the batch and the half-built activations were freed before the report
    assert events[-1] is finished and "--on-oom shrink" in finished.message

    gc.collect()
    assert models.refs[-1]() is None  # the run let go of its model: memory is back to where it started


def test_an_out_of_memory_at_the_first_step_names_the_predicted_holders_and_the_batch_that_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no step was split by module yet: the step as predicted names the holders, and says what batch fits
    models = patch_model(monkeypatch, lambda call, batch: call == 1)
    finished, events, released = run(models, on_oom="stop")

    [oom] = of_type(events, OutOfMemory)
    predicted = predict(RunConfig(device="cpu", model="tiny-cnn", batch_size=BATCH), BATCH, device="cpu")
    assert (oom.holders_source, oom.holders_step) == ("predicted", BATCH)
    assert oom.holders == holders_of(predicted.modules) and len(oom.holders) == 4  # tiny-cnn's four blocks
    assert oom.holders_total_bytes == modules_total(predicted.modules) == predicted.peak_bytes
    assert oom.fits_batch is not None and 0 <= oom.fits_batch < BATCH
    holders, fits = event_text.oom_autopsy(oom)
    assert holders.startswith("largest holders by module (predicted for batch 32): features.0 ")
    assert fits in ("not even batch 1 is predicted to fit", f"batch {oom.fits_batch} is predicted to fit")
    assert released == [True]  # predicting did not keep the failed step's tensors


def test_an_out_of_memory_after_a_split_step_names_what_that_step_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_train_monitor.engine.report, "BREAKDOWN_PERIOD_S", 0.0)  # a breakdown every report
    patch_model(monkeypatch, lambda call, batch: call == 5)
    events: list[object] = []

    def observe(event: object) -> None:
        if isinstance(event, MemoryBreakdown):
            time.sleep(0.02)  # a report interval passes during the step: the next step is sampled too
        events.append(event)

    config = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=BATCH, on_oom="stop")
    finished = TrainingSession(config.replace(report_interval=0.01), [observe]).run()

    assert finished.status == "oom", finished.message
    [split] = [e for e in of_type(events, MemoryBreakdown) if e.modules]
    [oom] = of_type(events, OutOfMemory)
    assert (oom.holders_source, oom.holders_step) == ("measured", split.step)
    assert [row.name for row in oom.holders] == [
        "inner.features.0",
        "inner.features.1",
        "inner.features.2",
        "inner.head",
    ]
    assert oom.holders == holders_of(split.modules) and oom.holders_total_bytes == split.total_bytes
    assert oom.fits_batch is not None  # the step was predicted all the same: it says the batch that fits
    assert event_text.oom_autopsy(oom)[0].startswith(f"largest holders by module (measured at step {split.step}): ")


def test_shrink_halves_the_batch_until_it_fits_and_completes(monkeypatch: pytest.MonkeyPatch) -> None:
    models = patch_model(monkeypatch, lambda call, batch: batch > 8)  # only batches of 8 or fewer fit
    finished, events, released = run(models, on_oom="shrink", max_steps=6)

    assert (finished.status, finished.step) == ("completed", 6), finished.message
    ooms = of_type(events, OutOfMemory)
    assert [(e.step, e.batch_size, e.action, e.new_batch_size) for e in ooms] == [
        (0, 32, "shrink", 16),
        (0, 16, "shrink", 8),
    ]
    assert released == [True, True]
    assert all(e.fits_batch is None and e.holders == () for e in ooms)  # a run that goes on is not predicted for
    reports = of_type(events, StepsReported)
    assert reports and all(r.batch_size == 8 for r in reports)
    assert finished.summary.samples == 6 * 8
    assert [e.message.endswith(f"continuing with batch size {e.new_batch_size}") for e in ooms] == [True, True]
    # the summary and its config say what ran, not what was asked for, and how it got there
    assert finished.summary.batch_size == 8 and finished.summary.config["batch_size"] == 8
    assert [dict(c) for c in finished.summary.batch_size_changes] == [
        {"step": 0, "from": 32, "to": 16},
        {"step": 0, "from": 16, "to": 8},
    ]
    from gpu_train_monitor.events.event_text import run_finished

    assert "batch size 8 (requested 32; halved 2x after out of memory)" in run_finished(finished)


def test_shrink_after_some_steps_keeps_them_and_halves_later_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    models = patch_model(monkeypatch, lambda call, batch: call == 4)
    finished, events, released = run(models, on_oom="shrink", max_steps=7)

    assert (finished.status, finished.step) == ("completed", 7), finished.message
    [oom] = of_type(events, OutOfMemory)
    assert (oom.step, oom.batch_size, oom.new_batch_size) == (3, BATCH, BATCH // 2)
    assert released == [True]
    reports = of_type(events, StepsReported)
    assert [r.batch_size for r in reports if r.step > 3] and all(
        r.batch_size == BATCH // 2 for r in reports if r.first_step > 3
    )
    assert finished.summary.samples == 3 * BATCH + 4 * (BATCH // 2)


def test_shrink_stops_at_batch_1(monkeypatch: pytest.MonkeyPatch) -> None:
    models = patch_model(monkeypatch, lambda call, batch: True)
    finished, events, _ = run(models, on_oom="shrink", batch_size=2)
    assert finished.status == "oom" and finished.step == 0
    assert [(e.batch_size, e.action, e.new_batch_size) for e in of_type(events, OutOfMemory)] == [
        (2, "shrink", 1),
        (1, "stop", None),
    ]
    assert [e.fits_batch for e in of_type(events, OutOfMemory)] == [None, 0]  # predicted once it stops: below 1


def test_shrink_retries_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    models = patch_model(monkeypatch, lambda call, batch: True, build_activations=False)
    # the epoch must hold all the batches tried: a failed batch's images are not offered again
    finished, events, _ = run(models, on_oom="shrink", synthetic_samples=1024, batch_size=512)
    assert finished.status == "oom"
    ooms = of_type(events, OutOfMemory)
    assert [e.batch_size for e in ooms] == [512 >> i for i in range(MAX_OOM_RETRIES + 1)]
    assert [e.action for e in ooms] == ["shrink"] * MAX_OOM_RETRIES + ["stop"]


class RealCpuAllocationFailure(nn.Module):
    """The real model, then a real allocation the CPU allocator refuses (it raises RuntimeError, not
    torch.OutOfMemoryError) on the first training forward pass."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.failed = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.inner(x)
        if self.training and not self.failed:
            self.failed = True
            torch.empty(2**62, dtype=torch.uint8)  # far beyond any machine: DefaultCPUAllocator refuses
        return out


def test_a_real_cpu_allocation_failure_is_an_out_of_memory_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        gpu_train_monitor.engine.recipe,
        "build_model",
        lambda name, classes, channels: RealCpuAllocationFailure(build_model(name, classes, channels)),
    )
    events: list[object] = []
    config = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=BATCH, on_oom="stop")
    finished = TrainingSession(config, [events.append]).run()

    assert finished.status == "oom", finished.message
    [oom] = of_type(events, OutOfMemory)
    assert oom.requested_bytes == 2**62  # read from the CPU allocator's message
    assert "try a smaller batch size or --on-oom shrink" in finished.message


def test_after_a_shrink_progress_counts_the_extra_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu_train_monitor.events.events import RunStarted

    models = patch_model(monkeypatch, lambda call, batch: batch > 16)  # only batches of 16 or fewer fit
    # 256 images, batch 32: 8 steps planned; the failed step's batch is given back, so all 256 images
    # go in steps of 16: 16, and no image is skipped
    finished, events, _ = run(models, on_oom="shrink")
    assert finished.status == "completed", finished.message
    planned = of_type(events, RunStarted)[0].total_steps
    reports = of_type(events, StepsReported)
    assert planned == 256 // BATCH and finished.step == 256 // 16
    assert finished.summary.samples == 256 and finished.summary.skipped_samples == 0
    assert reports[-1].total_steps == finished.step  # the progress bar ends at 100%, not 200%


def test_a_data_parallel_process_is_predicted_at_its_own_share_of_the_batch() -> None:
    from gpu_train_monitor.engine.loop_state import LoopState
    from gpu_train_monitor.engine.oom_recovery import autopsy_of

    config = RunConfig(device="cpu", model="tiny-cnn", batch_size=64, nproc=2)  # each process trains 32
    found = autopsy_of(config, LoopState(t0=0.0), 32, torch.device("cpu"), 10**12, predicting=True)
    assert (found.holders_source, found.holders_step) == ("predicted", 32)
    assert found.holders == holders_of(predict(config.replace(nproc=1), 32, device="cpu").modules)
    nothing = autopsy_of(config, LoopState(t0=0.0), 32, torch.device("cpu"), 10**12, predicting=False)
    assert (nothing.holders, nothing.fits_batch) == ((), None)  # a run that goes on is not predicted for
