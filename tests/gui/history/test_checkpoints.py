"""Resume from the Runs tab: a run's recorded checkpoints listed by step, the one picked resumed as File ▸
Resume from checkpoint… resumes a file (checkpoint folders are named by a 32-character uid)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QInputDialog

from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.store.run_store import RunStore
from tests.support.gui_support import FAST

RUN_TIMEOUT_MS = 60_000
ONE_EPOCH = FAST.replace(synthetic_samples=256, batch_size=32, max_steps=None, epochs=1)  # 8 steps an epoch


def test_a_run_is_resumed_from_the_runs_tab_by_picking_one_of_its_checkpoints(qtbot, make_window, monkeypatch):
    window = make_window(ONE_EPOCH)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.start_run(ONE_EPOCH)
    history = window.parts.history
    history.reveal()
    history.refresh()
    with RunStore(window.controller.store_path, readonly=True) as store:
        run_id = max(row.id for row in store.list_runs())  # this test's run: the newest
    history.select(run_id)
    assert history.resume_action.isEnabled()
    found, recorded = history.resumer.checkpoints(run_id)
    assert recorded == 1 and [(c.step, c.text) for c in found] == [
        (8, f"step 8 (end of epoch 1): {Path(found[0].path).name}")
    ]
    offered: list[list[str]] = []

    def pick(parent, title, label, items, current, editable):
        offered.append(list(items))
        return items[0], True

    monkeypatch.setattr(QInputDialog, "getItem", pick)
    monkeypatch.setattr(QInputDialog, "getInt", lambda *args: (2, True))  # train up to epoch 2
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        history.resume_action.trigger()
    assert ended.args == [WindowState.FINISHED] and offered == [[found[0].text]]
    with RunStore(window.controller.store_path, readonly=True) as store:
        run = store.run(run_id)
        assert (run.steps, run.resumes, run.status) == (16, 1, "completed")  # the same run went on


def test_a_run_without_checkpoints_says_so_in_the_panel(qtbot, make_window, monkeypatch):
    window = make_window(FAST)
    from gpu_train_monitor.engine.checkpoint_files import ON_REQUEST

    window.controller.checkpoints = ON_REQUEST  # saves none unless asked
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.start_run(FAST)
    history = window.parts.history
    history.reveal()
    history.refresh()
    history.select(history.proxy.run_id(0))
    monkeypatch.setattr(QInputDialog, "getItem", lambda *args: (_ for _ in ()).throw(AssertionError("no list")))
    history.resume_action.trigger()
    assert "saved no checkpoint to resume from" in history.info.text()
    assert not window.controller.running
