"""A user's own loop under `watch`: every step's loss in the store, memory reports, the breakdown, and the
ending each way a training ends."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import torch

from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch import WatchStopped, watch
from tests.support.watched_loops import BATCH, tiny_model, train

STEPS = 60


def only_run(path):
    with RunStore(path) as store:
        (run,) = store.list_runs()
        return run, store.steps(run.id), store.reports(run.id), store.events(run.id), store.summary(run.id)


def test_a_plain_loop_is_recorded_step_by_step_with_its_own_losses(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, name="my-run", runs_db=db, report_interval_s=0.01) as w:
        losses = train(model, optimizer, STEPS, w.step)
    assert w.status == "completed"
    run, steps, reports, events, summary = only_run(db)
    assert (run.status, run.name, run.model, run.dataset, run.steps) == ("completed", "my-run", "Sequential", "api", 60)
    assert steps.steps == tuple(range(1, STEPS + 1))
    assert steps.losses == pytest.approx([loss.item() for loss in losses], rel=1e-6)
    assert len(reports) >= 2 and reports[-1].step == STEPS and reports[-1].samples == STEPS * BATCH
    assert all(r.allocated_bytes > 0 and r.capacity_bytes > 0 for r in reports)
    breakdowns = [e.data for e in events if e.kind == "MemoryBreakdown"]
    assert breakdowns, "no breakdown recorded"
    params = sum(p.numel() * 4 for p in model.parameters())
    assert breakdowns[0]["params_bytes"] == params
    assert breakdowns[0]["grads_bytes"] == params  # zero_grad() freed them: one per trainable parameter
    assert breakdowns[0]["optimizer_bytes"] >= 2 * params  # AdamW's two moments
    assert breakdowns[0]["activations_bytes"] > 0
    assert summary["steps"] == STEPS and summary["memory_breakdown"]["params_bytes"] == params


def test_an_exception_fails_the_run_with_its_message_and_reaches_the_caller(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with pytest.raises(ValueError, match="bad batch"):
        with watch(model, optimizer, runs_db=db) as w:
            train(model, optimizer, 10, w.step, fail_at=6, error=ValueError("bad batch"))
    run, steps, *_ = only_run(db)
    assert run.status == "failed" and run.message == "ValueError: bad batch"
    assert steps.steps == tuple(range(1, 6))  # the steps before the failure are kept


def test_out_of_memory_is_recorded_with_what_was_asked_and_free_and_reaches_the_caller(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    error = torch.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which "
        "1.50 GiB is free."
    )
    with pytest.raises(torch.OutOfMemoryError):
        with watch(model, optimizer, runs_db=db) as w:
            train(model, optimizer, 10, w.step, fail_at=4, error=error)
    run, steps, _, events, _ = only_run(db)
    assert run.status == "oom" and "Tried to allocate 2.00 GiB" in run.message
    (oom,) = [e.data for e in events if e.kind == "OutOfMemory"]
    assert oom["requested_bytes"] == 2 * 2**30 and oom["step"] == 4 and oom["batch_size"] == BATCH
    assert oom["free_bytes"] > 0
    assert [e.kind for e in events if e.step == 3][-1] == "MemoryBreakdown"  # what held the memory then
    assert steps.steps == (1, 2, 3)


def test_ctrl_c_stops_at_the_next_step_and_the_block_goes_on_after_it(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()

    def ctrl_c_at_step_5(loss, samples):
        w.step(loss, samples)
        if w.steps == 5:
            os.kill(os.getpid(), signal.SIGINT)  # what a terminal's Ctrl+C and the window's Stop send

    with watch(model, optimizer, runs_db=db) as w:
        train(model, optimizer, STEPS, ctrl_c_at_step_5)
    run, steps, *_ = only_run(db)
    assert run.status == "stopped" and w.status == "stopped"
    assert steps.steps[-1] in (5, 6)  # the signal is handled between bytecodes: at step 5's end or step 6's
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are given back


def test_a_stop_request_sets_stop_requested_for_loops_that_stop_themselves(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, raise_on_stop=False) as w:
        for step in range(STEPS):
            train(model, optimizer, 1, w.step)
            if step == 9:
                w.controls.request_stop()  # the window's Stop, as the signal handler applies it
            if w.stop_requested:
                break
        w.finish(WatchStopped())
    run, steps, *_ = only_run(db)
    assert run.status == "stopped" and steps.steps[-1] == 10


def test_pause_blocks_at_step_until_resumed_and_is_recorded(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db) as w:
        train(model, optimizer, 3, w.step)
        w.controls.pause()
        threading.Timer(0.3, w.controls.resume).start()
        train(model, optimizer, 1, w.step)  # blocks at its step() for the pause
        w.controls.request_cache_clear()
        train(model, optimizer, 1, w.step)
    run, _, _, events, _ = only_run(db)
    kinds = [e.kind for e in events]
    assert run.status == "completed"
    assert kinds.index("RunPaused") < kinds.index("RunResumed") < kinds.index("CacheCleared")
    paused, resumed = (e for e in events if e.kind in ("RunPaused", "RunResumed"))
    assert resumed.at - paused.at >= 0.25


def test_a_store_it_cannot_use_is_one_warning_and_the_training_goes_on(tmp_path, capfd):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=folder) as w:  # a folder, not a database file
        losses = train(model, optimizer, 20, w.step)
    assert len(losses) == 20 and w.status == "completed" and w.recorder is None
    warnings = capfd.readouterr().err.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("gpu-train-monitor: this run is not recorded:")


def test_a_nan_loss_is_a_warning_and_the_run_ends_diverged_without_stopping_the_loop(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db) as w:
        train(model, optimizer, 5, w.step)
        w.step(torch.tensor(float("nan")), BATCH)
        train(model, optimizer, 5, w.step)
    run, steps, _, events, _ = only_run(db)
    assert run.status == "diverged" and "step 6" in run.message and len(steps.steps) == 11
    assert any(e.kind == "LogMessage" and "step 6" in e.data["text"] for e in events)


def test_a_step_without_its_loss_is_no_value_in_the_store_not_a_divergence(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db) as w:
        train(model, optimizer, 3, w.step)
        train(model, optimizer, 2, lambda loss, samples: w.step(None, samples))
    run, steps, *_ = only_run(db)
    assert run.status == "completed" and len(steps.steps) == 5
    assert [loss != loss for loss in steps.losses] == [False, False, False, True, True]  # NaN: no value


def test_the_run_records_the_first_steps_batch_size_and_a_loop_without_samples_still_records(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, total_steps=8, report_interval_s=0) as w:
        train(model, optimizer, 4, w.step)
        train(model, optimizer, 4, lambda loss, samples: w.step(loss))  # no samples: no images/s, no ETA
    run, steps, reports, *_ = only_run(db)
    with RunStore(db) as store:
        assert store.config(run.id)["batch_size"] == BATCH
    assert run.status == "completed" and len(steps.steps) == 8 and reports[-1].step == 8


def test_values_the_store_cannot_keep_are_one_warning_each_and_the_run_still_ends(tmp_path, capsys):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    sizes = iter([BATCH, 2**70, -1, float("nan"), BATCH])
    with watch(model, optimizer, runs_db=db, report_interval_s=0.0, total_steps=2**80, config={"path": tmp_path}) as w:
        train(model, optimizer, 5, lambda loss, samples: w.step(loss, next(sizes)))
    run, steps, reports, _, summary = only_run(db)
    assert (run.status, run.steps) == ("completed", 5)  # recorded to its end, not left `running`
    assert reports[-1].samples == 2 * BATCH and summary["config"]["path"] == str(tmp_path)
    warnings = capsys.readouterr().err.splitlines()
    assert warnings == [
        "gpu-train-monitor: total_steps=1208925819614629174706176 cannot be recorded (a whole number from 0 to "
        "2**53 can): recorded as unknown",
        "gpu-train-monitor: samples=1180591620717411303424 cannot be recorded (a whole number from 0 to 2**53 can): "
        "recorded as unknown",
    ]


def test_a_stop_the_loop_honours_without_raising_is_recorded_stopped(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, raise_on_stop=False) as w:
        for step in range(1, 20):
            train(model, optimizer, 1, w.step)
            if step == 3:
                w.controls.request_stop()  # the window's Stop
            if w.stop_requested:
                break
    run, steps, *_ = only_run(db)
    assert (w.status, run.status, steps.steps) == ("stopped", "stopped", (1, 2, 3))


def test_steps_made_before_the_loop_went_quiet_are_reported(tmp_path):
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, report_interval_s=60.0) as w:  # no report at a step for a minute
        train(model, optimizer, 3, w.step)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # an evaluation, an upload: no step for a while
            with RunStore(db) as store:
                runs = store.list_runs()
                if runs and len(store.steps(runs[0].id).steps) == 3:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the steps before the pause were never reported")
    assert w.status == "completed"


def test_a_watched_models_measured_step_is_split_by_its_layers(tmp_path, monkeypatch):
    import gpu_train_monitor.engine.report
    import gpu_train_monitor.memory.measured_modules

    monkeypatch.setattr(gpu_train_monitor.engine.report, "BREAKDOWN_PERIOD_S", 0.0)
    monkeypatch.setattr(gpu_train_monitor.memory.measured_modules, "ATTRIBUTION_PERIOD_S", 0.0)
    db = tmp_path / "runs.db"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, report_interval_s=0.0) as w:  # a report and a breakdown every step
        train(model, optimizer, 8, w.step)
    events = only_run(db)[3]
    attributed = [e.data for e in events if e.kind == "MemoryBreakdown" and e.data.get("modules")]
    assert attributed, "no breakdown by module recorded"
    breakdown = attributed[-1]
    rows = {row["name"]: row for row in breakdown["modules"]}
    assert list(rows) == ["0", "1", "2", "(outside modules)"]
    assert rows["0"]["params_bytes"] == (12 * 32 + 32) * 4 and rows["2"]["params_bytes"] == (32 * 3 + 3) * 4
    assert rows["0"]["activations_bytes"] == BATCH * 12 * 4  # the first Linear keeps its input, the batch
    assert rows["1"]["activations_bytes"] == BATCH * 32 * 4  # ReLU keeps its output
    parts = ("params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes")
    total = sum(breakdown[key] for key in parts)
    assert sum(row[key] for row in rows.values() for key in (*parts, "temporaries_bytes")) == total
