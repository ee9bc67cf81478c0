"""A language model from the form: gpt-tiny on synthetic text, sized in the form, trains to the end and the window
says its speed in tokens/s; a text file too short for the sequence length keeps Start off, saying why."""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Qt

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.views.window_state import WindowState

TEXT = RunConfig(
    device="cpu", model="gpt-tiny", dataset="synthetic-text", layers=1, width=32, heads=2, seq_len=16,
    synthetic_samples=256, batch_size=16, max_steps=6, report_interval=0.02,
)  # fmt: skip


def test_a_gpt_trains_from_the_form_and_its_speed_is_in_tokens_per_second(qtbot, make_window):
    window = make_window(TEXT)
    form = window.parts.form
    assert form.config() == TEXT.replace(pin_memory=False, non_blocking=False)  # greyed out on the CPU
    assert form.widgets["seq_len"].isEnabled() and form.widgets["layers"].isEnabled()
    assert view_speed_title(window) == "Tokens/s (median)"  # named before the first run, from the form
    form.set_config(TEXT.replace(model="tiny-cnn", dataset="synthetic", layers=None, width=None, heads=None))
    assert view_speed_title(window) == "Images/s (median)"
    form.set_config(TEXT)
    with qtbot.waitSignal(window.run_ended, timeout=60_000) as ended:
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    assert ended.args == [WindowState.FINISHED]
    view = window.parts.view
    assert len(view.loss_plot.data) == 6 and all(math.isfinite(x) for x in view.loss_plot.data.column(1))
    stats = view.stats
    assert stats.titles["speed"].text() == "Tokens/s (median)"
    rate = float(stats.values["speed"].text().replace(",", ""))
    assert rate > 0
    log = "\n".join(view.log.lines())
    assert "sequences of 16 tokens" in log and "tokens/s" in log and "Sequence length=16" in log
    window.parts.form.set_config(
        TEXT.replace(model="tiny-cnn", dataset="synthetic", layers=None, width=None, heads=None)
    )
    assert not form.widgets["seq_len"].isEnabled()  # an image run has no sequences
    assert view_speed_title(window) == "Tokens/s (median)"  # the finished run's figure keeps its unit


def view_speed_title(window) -> str:
    return window.parts.view.stats.titles["speed"].text()


def test_a_text_file_shorter_than_a_sequence_keeps_start_off(qtbot, make_window, tmp_path: Path):
    short = tmp_path / "short.txt"
    short.write_text("to be or not to be", encoding="utf-8")
    window = make_window(TEXT.replace(dataset=f"text:{short}", seq_len=64))
    start = window.parts.buttons.start_button
    qtbot.waitUntil(lambda: not start.isEnabled(), timeout=5000)
    assert "longer than the text" in start.toolTip() or "longer than the text" in window.parts.form.message_label.text()
