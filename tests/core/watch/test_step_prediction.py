"""A watched run's first step predicted in the training process (gpu_train_monitor.watch.step_prediction): the
prediction is recorded beside the measured breakdowns and agrees with the same step counted for real; a model that
cannot be traced records why and trains on; the trace is no step of the run and no hook of the script or of the capture
sees it."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.optim.optimizer import register_optimizer_step_post_hook

from gpu_train_monitor.events.events import MemoryBreakdown, StepPredicted
from gpu_train_monitor.memory.like_measured import STEP_PARTS, as_measured
from gpu_train_monitor.memory.live_bytes import LiveBytes
from gpu_train_monitor.watch import watch
from gpu_train_monitor.watch.script import ScriptWatch
from tests.support.watched_loops import BATCH, recorded_run, tiny_model, train

STEPS = 5


def predicted_events(events: list) -> list[dict]:
    return [event.data for event in events if event.kind == "StepPredicted"]


def real_step_peak(model: nn.Module, optimizer: torch.optim.Optimizer) -> int:
    """The same step as the loop's, on real tensors, counted as a prediction counts (tests/core/memory/test_predict):
    parameters, optimizer state and the batch held before it, then the peak of forward, loss, backward, update."""
    x, y = torch.randn(BATCH, 12), torch.randint(0, 3, (BATCH,))
    optimizer.zero_grad(set_to_none=True)
    tracker = LiveBytes()
    with tracker:
        tracker.held(itertools.chain(model.parameters(), model.buffers()))
        tracker.held(t for state in optimizer.state.values() for t in state.values() if isinstance(t, torch.Tensor))
        tracker.held([x, y])
        tracker.restart_peak()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return tracker.peak


def test_the_first_step_is_predicted_within_10_percent_of_the_same_step_measured(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
        train(model, optimizer, STEPS, w.step)
    _, _, _, events = recorded_run(db)
    (predicted,) = predicted_events(events)
    assert predicted["reason"] == "" and predicted["step"] == 1 and predicted["batch_size"] == BATCH
    assert predicted["device_kind"] == predicted["traced_on"] == "cpu"
    measured = next(event.data for event in events if event.kind == "MemoryBreakdown")
    assert predicted["params_bytes"] == measured["params_bytes"]  # the same weights, none of them copied
    assert predicted["optimizer_bytes"] == measured["optimizer_bytes"]  # AdamW's moments and step counters
    assert predicted["batch_bytes"] == BATCH * 12 * 4  # the inputs the forward received
    parts = ("params_bytes", "grads_bytes", "optimizer_bytes", "batch_bytes", "activations_bytes")
    assert sum(predicted[key] for key in parts) == predicted["peak_bytes"]
    real = real_step_peak(model, optimizer)
    assert abs(predicted["peak_bytes"] - real) <= 0.10 * real, (predicted["peak_bytes"], real)
    assert "Sequential at batch 16" in predicted["what"] and "AdamW" in predicted["what"]
    assert 0 < predicted["elapsed_s"] < 5


def test_told_as_its_breakdown_is_measured_each_predicted_part_equals_the_measured_one(tmp_path: Path) -> None:
    """A watched breakdown has no batch of its own (what the model received is within its activations) and reads
    every gradient once the step is done: the recorded prediction, told the same way, agrees part by part."""
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
        train(model, optimizer, STEPS, w.step)
    events = recorded_run(db)[3]
    (predicted,) = predicted_events(events)
    measured = next(event.data for event in events if event.kind == "MemoryBreakdown")
    assert measured["method"] == "saved-tensors" and measured["batch_bytes"] == 0
    like = as_measured(
        StepPredicted(**{key: value for key, value in predicted.items() if key in StepPredicted.__dataclass_fields__}),
        MemoryBreakdown(
            **{key: value for key, value in measured.items() if key in MemoryBreakdown.__dataclass_fields__}
        ),
    )
    for key in STEP_PARTS[:-1]:
        assert like.part(key) == measured[key], key
    # the script's loss (cross entropy saves its log-probabilities and targets: 320 B) stands in as a sum
    assert like.activations_bytes == pytest.approx(measured["activations_bytes"], rel=0.15)
    assert predicted["grads_bytes"] < measured["grads_bytes"]  # at the peak: not every gradient made yet


def test_a_watched_resnet18_step_is_predicted_within_10_percent_of_the_same_step_measured(tmp_path: Path) -> None:
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))

    db = tmp_path / "runs.db"
    with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
        for _ in range(2):
            x, y = batch()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            w.step(loss, len(x))
    (predicted,) = predicted_events(recorded_run(db)[3])
    x, y = batch()
    tracker = LiveBytes()
    with tracker:  # the same step for real, counted the same way
        tracker.held(itertools.chain(model.parameters(), model.buffers()))
        tracker.held(t for state in optimizer.state.values() for t in state.values() if isinstance(t, torch.Tensor))
        tracker.held([x, y])
        tracker.restart_peak()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    assert abs(predicted["peak_bytes"] - tracker.peak) <= 0.10 * tracker.peak, (predicted["peak_bytes"], tracker.peak)
    assert predicted["optimizer_bytes"] == predicted["params_bytes"] - sum(b.nbytes for b in model.buffers())
    # by module: torchvision's resnet18 by its stages, adding up to the predicted peak
    rows = {row["name"]: row for row in predicted["modules"]}
    assert {"conv1", "layer1", "layer4", "fc", "(outside modules)"} <= set(rows)
    assert sum(row[key] for row in rows.values() for key in row if key.endswith("_bytes")) == predicted["peak_bytes"]
    assert rows["layer4"]["params_bytes"] == sum(
        t.nbytes for t in [*model.layer4.parameters(), *model.layer4.buffers()]
    )


class Positives(nn.Module):
    """A forward whose shapes depend on the batch's values."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(12, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kept = x[x > 0]  # as many as are positive: known only with the values
        return self.linear(x) + kept.mean()


class ReadsAValue(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 2.0 if x.abs().max().item() > 100 else 1.0  # a host read: no value on a fake tensor
        return super().forward(x) * scale


@pytest.mark.parametrize(("build", "why"), [(Positives, "depends on the values"), (lambda: ReadsAValue(12, 3), "")])
def test_a_model_that_cannot_be_traced_records_why_and_trains_on_with_its_own_losses(tmp_path, build, why) -> None:
    def run(db: Path | None) -> list[float]:
        torch.manual_seed(1)
        model = build()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if db is None:
            return [loss.item() for loss in train(model, optimizer, STEPS, lambda loss, n: None)]
        with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
            return [loss.item() for loss in train(model, optimizer, STEPS, w.step)]

    db = tmp_path / "runs.db"
    losses = run(db)
    assert losses == run(None)  # the same training as unwatched
    row, steps, _, events = recorded_run(db)
    assert row.status == "completed" and steps.steps == tuple(range(1, STEPS + 1))
    assert steps.losses == pytest.approx(losses, rel=1e-6)
    (predicted,) = predicted_events(events)
    assert predicted["peak_bytes"] == 0 and "cannot be predicted without running it" in predicted["reason"]
    assert why in predicted["reason"]


def test_the_trace_is_no_step_and_no_hook_sees_it(tmp_path: Path) -> None:
    seen = {"forward": 0, "model": 0, "step": 0}

    def count(kind: str):
        def hook(*_: object) -> None:
            seen[kind] += 1

        return hook

    def losses(db: Path | None) -> list[float]:
        model, optimizer = tiny_model()
        if db is None:
            return [loss.item() for loss in train(model, optimizer, STEPS, lambda loss, n: None)]
        handles = [
            register_module_forward_pre_hook(count("forward")),
            register_optimizer_step_post_hook(count("step")),
            model.register_forward_hook(count("model")),
        ]
        try:
            with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
                return [loss.item() for loss in train(model, optimizer, STEPS, w.step)]
        finally:
            for handle in handles:
                handle.remove()

    db = tmp_path / "runs.db"
    watched = losses(db)
    assert watched == losses(None)  # same weights, same random numbers: the trace touched neither
    assert seen == {"forward": STEPS * 4, "model": STEPS, "step": STEPS}  # Sequential and its 3 layers per step
    row, steps, reports, events = recorded_run(db)
    assert row.steps == STEPS and steps.steps == tuple(range(1, STEPS + 1))
    assert steps.losses == pytest.approx(watched, rel=1e-6)
    assert reports[-1].samples == STEPS * BATCH
    assert len(predicted_events(events)) == 1


def test_a_script_step_is_predicted_and_the_capture_counts_only_its_own_steps(monkeypatch, tmp_path) -> None:
    db = tmp_path / "runs.db"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(db))
    script = ScriptWatch().install()
    model, optimizer = tiny_model()
    try:
        losses = train(model, optimizer, STEPS, lambda loss, n: None)
    finally:
        script.uninstall()
    assert script.finish(None) == "completed"
    assert not script.inputs.following  # the global hook that recorded the first forward is gone
    row, steps, reports, events = recorded_run(db)
    assert row.steps == STEPS and steps.losses == pytest.approx([loss.item() for loss in losses], rel=1e-6)
    assert reports[-1].samples == STEPS * BATCH
    (predicted,) = predicted_events(events)
    assert predicted["reason"] == "" and predicted["step"] == 1 and predicted["batch_size"] == BATCH
    assert predicted["params_bytes"] == sum(p.numel() * 4 for p in model.parameters())


def test_autocast_is_traced_as_the_step_ran_and_prediction_can_be_turned_off(tmp_path: Path) -> None:
    model, optimizer = tiny_model()
    db = tmp_path / "runs.db"
    with watch(model, optimizer, runs_db=db) as w:
        x, y = torch.randn(BATCH, 12), torch.randint(0, 3, (BATCH,))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        w.step(loss, BATCH)
    (predicted,) = predicted_events(recorded_run(db)[3])
    assert predicted["reason"] == "" and "bfloat16 autocast" in predicted["what"]
    off = tmp_path / "off.db"
    with watch(model, optimizer, runs_db=off, predict=False) as w:
        train(model, optimizer, 2, w.step)
    assert predicted_events(recorded_run(off)[3]) == []


def test_a_model_whose_own_forward_is_never_called_is_predicted_from_the_submodule_that_trains(tmp_path) -> None:
    """A LightningModule's training_step calls `self.net(x)`, never the module itself."""
    holder = nn.Module()
    holder.net, _ = tiny_model()
    optimizer = torch.optim.SGD(holder.parameters(), lr=0.1)
    db = tmp_path / "runs.db"
    with watch(holder, optimizer, runs_db=db) as w:
        train(holder.net, optimizer, 2, w.step)
    (predicted,) = predicted_events(recorded_run(db)[3])
    assert predicted["reason"] == "" and predicted["what"].startswith("Sequential at batch 16")
    assert predicted["params_bytes"] == sum(p.numel() * 4 for p in holder.parameters())


def test_a_watch_leaves_no_global_hook_behind_so_torch_compile_does_not_warn_later() -> None:
    """torch leaves a `with_kwargs` hook's id in `_global_forward_hooks_with_kwargs` when its handle is removed;
    torch.compile then warns of global hooks for the rest of the process (and our CLI, warnings as errors in
    tests, failed a compiled run after any watched one)."""
    from torch.nn.modules import module as modules

    from gpu_train_monitor.watch.step_inputs import FirstInputs

    inputs = FirstInputs().follow_all()
    torch.nn.Linear(2, 2)(torch.ones(1, 2, requires_grad=True))
    inputs.forget()
    assert not modules._has_any_global_hook()


def test_autocast_entered_inside_the_models_forward_is_traced_as_the_step_ran(tmp_path: Path) -> None:
    """accelerate (a transformers Trainer with --bf16) wraps `model.forward` in autocast: the model's own hooks run
    outside it, so the prediction said "no autocast"; the modules its forward calls ran under it."""
    model, optimizer = tiny_model()
    forward = model.forward

    def forward_in_autocast(*args, **kwargs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return forward(*args, **kwargs)

    model.forward = forward_in_autocast  # as accelerate's prepare_model does
    db = tmp_path / "runs.db"
    with watch(model, optimizer, runs_db=db) as w:
        x, y = torch.randn(BATCH, 12), torch.randint(0, 3, (BATCH,))
        loss = nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        optimizer.step()
        w.step(loss, BATCH)
    (predicted,) = predicted_events(recorded_run(db)[3])
    assert predicted["reason"] == "" and "bfloat16 autocast" in predicted["what"], predicted["what"]


class GatedTrace(nn.Module):
    """A layer whose forward on the trace's fake tensors waits until the test opens the gate (a real forward never
    waits): if the trace held up the training thread, the gate would not be open when the trace reaches it."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.traced: list[bool] = []  # whether the gate was open when the trace reached it (shared with the copy)

    @property
    def open_when_traced(self) -> bool | None:
        return self.traced[0] if self.traced else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if isinstance(x, FakeTensor):
            self.traced.append(self.gate.wait(timeout=10))
        return x


def gated_model() -> tuple[nn.Module, torch.optim.Optimizer, GatedTrace]:
    model, optimizer = tiny_model()
    gated = GatedTrace()
    return nn.Sequential(*model, gated), optimizer, gated


def test_the_trace_runs_beside_the_training_which_steps_on_unseen_by_it(tmp_path: Path) -> None:
    """A short run is not held up by its first step's trace (~0.1-1 s): the steps made while it runs, and those
    whose backward and update interleave with the trace's, are the loop's own, with their own losses."""
    db = tmp_path / "runs.db"
    unwatched, unwatched_optimizer, _ = gated_model()
    expected = [loss.item() for loss in train(unwatched, unwatched_optimizer, STEPS, lambda *_: None)]
    model, optimizer, gated = gated_model()  # the same weights and, after them, the same random batches
    losses: list[torch.Tensor] = []
    with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
        losses += train(model, optimizer, 2, w.step)  # the trace starts at the first step and waits at the gate
        gated.gate.set()
        losses += train(model, optimizer, STEPS - 2, w.step)
    assert gated.open_when_traced is True  # the training went on while the first step was traced
    row, steps, reports, events = recorded_run(db)
    assert row.steps == STEPS and steps.steps == tuple(range(1, STEPS + 1))
    assert steps.losses == pytest.approx([loss.item() for loss in losses], rel=1e-6)
    assert [loss.item() for loss in losses] == pytest.approx(expected, rel=1e-6)  # the trace touched no weight
    assert reports[-1].samples == STEPS * BATCH
    (predicted,) = predicted_events(events)
    assert predicted["reason"] == "" and predicted["step"] == 1 and predicted["batch_size"] == BATCH
    assert predicted["params_bytes"] == sum(p.numel() * 4 for p in model.parameters())


def test_an_unchanged_script_steps_on_while_its_first_step_is_traced(monkeypatch, tmp_path: Path) -> None:
    """Under `watch --` the capture's hooks are global: the trace's forward, backward, optimizer made and update
    on the thread beside the training count for nothing, and the steps made meanwhile each count once."""
    db = tmp_path / "runs.db"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(db))
    script = ScriptWatch().install()
    model, optimizer, gated = gated_model()
    try:
        losses = train(model, optimizer, 2, lambda *_: None)
        gated.gate.set()
        losses += train(model, optimizer, STEPS - 2, lambda *_: None)
    finally:
        script.uninstall()
    assert script.finish(None) == "completed"
    assert gated.open_when_traced is True
    row, steps, reports, events = recorded_run(db)
    assert row.steps == STEPS and steps.losses == pytest.approx([loss.item() for loss in losses], rel=1e-6)
    assert reports[-1].samples == STEPS * BATCH
    (predicted,) = predicted_events(events)
    assert predicted["reason"] == "" and predicted["params_bytes"] == sum(p.numel() * 4 for p in model.parameters())


def test_a_script_with_global_hooks_of_its_own_is_traced_where_none_of_them_sees_a_fake_tensor(tmp_path) -> None:
    """Its hooks would fire on the trace's thread: that trace waits for the gate on the training thread instead,
    with every global hook set aside."""
    seen_fake: list[bool] = []
    handle = register_module_forward_pre_hook(lambda _m, args: seen_fake.append(isinstance(args[0], FakeTensor)))
    db = tmp_path / "runs.db"
    model, optimizer, gated = gated_model()
    gated.gate.set()  # a trace on the training thread would otherwise wait its full timeout
    try:
        with watch(model, optimizer, runs_db=db) as w:
            train(model, optimizer, 2, w.step)
    finally:
        handle.remove()
    assert seen_fake and not any(seen_fake)
    (predicted,) = predicted_events(recorded_run(db)[3])
    assert predicted["reason"] == ""


def test_an_optimizer_being_made_on_another_thread_does_not_stop_the_watching(monkeypatch, tmp_path) -> None:
    """A prediction's trace makes its optimizers on a thread beside the training (another run's trace, in a
    process that trains twice, may still be at it): the capture's scan of live optimizers meets one whose
    __init__ has not set param_groups yet. It is no candidate, and the capture goes on."""
    being_made = torch.optim.AdamW.__new__(torch.optim.AdamW)  # as __init__ has not set param_groups yet
    db = tmp_path / "runs.db"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(db))
    script = ScriptWatch().install()
    model, optimizer = tiny_model()
    try:
        losses = train(model, optimizer, STEPS, lambda *_: None)
        assert script.watch is not None and script.watch.optimizers == [optimizer]
    finally:
        script.uninstall()
    assert script.finish(None) == "completed"
    row, steps, _, _ = recorded_run(db)
    assert row.steps == STEPS and steps.losses == pytest.approx([loss.item() for loss in losses], rel=1e-6)
    assert being_made is not None  # alive throughout
