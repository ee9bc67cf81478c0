"""File ▸ Resume from checkpoint: the window continues a run it checkpointed, as one run and one curve."""

from __future__ import annotations

import torch

from gpu_train_monitor.events.events import CheckpointSaved, StepsReported
from gpu_train_monitor.gui.run.checkpoint_resume import resumable_epochs
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.store.run_store import RunStore
from tests.support.gui_support import FAST, EventRecorder

RUN_TIMEOUT_MS = 60_000
ONE_EPOCH = FAST.replace(synthetic_samples=256, batch_size=32, max_steps=None, epochs=1)  # 8 steps a epoch


def run_to_end(qtbot, window, start) -> EventRecorder:
    recorder = EventRecorder()
    window.controller.event.connect(recorder.on_event)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        start()
    assert ended.args == [WindowState.FINISHED]
    return recorder


def test_a_window_run_resumed_from_its_epoch_checkpoint_continues_the_same_run_and_curve(qtbot, make_window):
    window = make_window(ONE_EPOCH)
    first = run_to_end(qtbot, window, lambda: window.start_run(ONE_EPOCH))
    saved = first.of(CheckpointSaved)
    assert [(c.step, c.reason) for c in saved] == [(8, "epoch")]  # the window checkpoints each epoch's end
    first_losses = [loss for e in first.of(StepsReported) for loss in e.losses]

    from gpu_train_monitor.engine.checkpoint_files import read_info

    assert resumable_epochs(read_info(saved[0].path)) == (2, 2)  # after epoch 1 of 1: one more is offered
    second = run_to_end(qtbot, window, lambda: window.parts.resumer.resume(saved[0].path, epochs=3))
    reports = second.of(StepsReported)
    assert reports[0].first_step == 9 and reports[-1].step == 24  # the step count goes on
    assert window.parts.form.config().epochs == 3 and window.parts.form.config().max_steps is None
    steps = list(window.parts.view.loss_plot.data.column(0))
    assert steps == list(range(1, 25))  # the recorded curve up to the checkpoint, then the resumed steps
    assert list(window.parts.view.loss_plot.data.column(1))[:8] == first_losses
    assert "recorded steps before the checkpoint" in "\n".join(window.parts.view.log.lines())
    with RunStore(window.controller.store_path) as store:
        run = store.run(store.find_uid(read_info(saved[0].path).run_uid))
        assert (run.steps, run.resumes, run.status) == (24, 1, "completed")
        assert store.steps(run.id).steps == tuple(range(1, 25))


def test_a_checkpoint_that_carries_code_is_refused_in_the_log_and_nothing_starts(qtbot, make_window, tmp_path):
    class Payload:
        def __reduce__(self):
            return (print, ("this must never run",))

    path = tmp_path / "evil.pt"
    torch.save({"model": Payload()}, path)  # a real checkpoint file whose pickle would call print on load
    window = make_window(ONE_EPOCH)
    message = window.parts.resumer.resume(str(path), epochs=2)
    assert message is not None and "carries code" in message
    assert window.state is WindowState.IDLE and not window.controller.running
    assert any("cannot resume:" in line and "carries code" in line for line in window.parts.view.log.lines())
    assert "cannot resume" in window.statusBar().currentMessage()
    assert window.parts.resumer.action.isEnabled()


def test_the_run_store_picked_as_a_checkpoint_is_refused_without_being_opened(qtbot, make_window, monkeypatch):
    import gpu_train_monitor.engine.checkpoint_files

    window = make_window(ONE_EPOCH)
    opened: list[str] = []
    monkeypatch.setattr(gpu_train_monitor.engine.checkpoint_files, "read_info", lambda path: opened.append(path))
    store = str(window.controller.store_path)
    for path in (store, store + "-wal"):  # opening and closing either would drop SQLite's locks on it
        window.parts.resumer.resume_file(path)
    assert opened == []
    assert sum("is a file of the run store, not a checkpoint" in line for line in window.parts.view.log.lines()) == 2
    assert window.state is WindowState.IDLE and not window.controller.running


def _header_only_checkpoint(path, config) -> None:
    """A file read_info accepts (the record a checkpoint starts with), without tensors: enough to resume from."""
    from gpu_train_monitor.engine.checkpoint_files import FORMAT, VERSION

    torch.save(
        {
            "format": FORMAT,
            "version": VERSION,
            "run_uid": "uid-1",
            "step": 8,
            "epoch": 1,
            "epoch_complete": True,
            "samples": 256,
            "config": config.to_dict(),
            "placement": "stream",
            "device_type": "cpu",
            "model": {},
            "optimizer": {},
            "scaler": {},
            "rng": {},
            "progress": {},
            "batch_size": 32,
            "data": {},
        },
        path,
    )


def test_checkpoint_resume_is_built_from_its_parts_and_asks_for_the_start_by_signal(qtbot, tmp_path):
    from gpu_train_monitor.gui.form.settings_form import SettingsForm
    from gpu_train_monitor.gui.plots.loss_plot import LossPlot
    from gpu_train_monitor.gui.run.checkpoint_resume import CheckpointResume
    from gpu_train_monitor.gui.views.log_panel import LogPanel

    form, log, plot, told = SettingsForm(), LogPanel(), LossPlot(), []
    for widget in (form, log, plot):
        qtbot.addWidget(widget)
    store = tmp_path / "runs.sqlite"
    resumer = CheckpointResume(form.set_config, log, store, plot, lambda text, ms: told.append(text))
    requested: list = []
    resumer.resume_requested.connect(lambda config, where: requested.append((config.epochs, where)))
    path = tmp_path / "step-8.pt"
    _header_only_checkpoint(path, ONE_EPOCH.replace(model="tiny-cnn"))
    assert resumer.resume(str(path), epochs=3) is None
    assert requested == [(3, str(path))] and form.config().epochs == 3  # the form shows the resumed run

    resumer.resume_requested.disconnect()
    resumer.resume_requested.connect(lambda config, where: resumer.refuse("the device is busy"))
    assert resumer.resume(str(path), epochs=3) == "the device is busy"  # the receiver could not start it
    assert told[-1] == "cannot resume: the device is busy" and log.lines()[-1].endswith(told[-1])
    resumer.resume_file(str(store) + "-wal")  # the store's own file: never read
    assert told[-1] == f"cannot resume: {store}-wal is a file of the run store, not a checkpoint"
