"""One event display for a live run and a recorded one: the same log lines (only the time stamp differs) and the
same marks on the memory plot, each text translated once (one context: the marking translator shows which)."""

from __future__ import annotations

import time

import pytest

from gpu_train_monitor.events.events import CacheCleared, EpochStarted, OutOfMemory, RunPaused
from gpu_train_monitor.events.module_bytes import ModuleBytes
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.qt.locale_format import clock
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.event_display import EventDisplay, plain_event_line
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.memory.probe import MemorySample
from tests.support.context_marks import marking_translator

GB = 1_000_000_000


def display(qtbot) -> EventDisplay:
    shown = EventDisplay(LossPlot(), MemoryPlot(), BreakdownView(), LogPanel())
    for widget in (shown.loss_plot, shown.memory_plot, shown.breakdown_view, shown.log):
        qtbot.addWidget(widget)
    return shown


def texts(shown: EventDisplay) -> list[str]:
    """The log's lines without their time stamps, and the marks' texts."""
    return [line.split("  ", 1)[1] for line in shown.log.lines()] + [
        mark.label.format for mark in shown.memory_plot.markers
    ]


@pytest.mark.parametrize(
    "event",
    [
        OutOfMemory(12, 64, 2**29, GB, 0, "stop", None, "out of memory at step 12 with batch size 64"),
        OutOfMemory(12, 64, 2**29, GB, 0, "shrink", 32, "out of memory at step 12 with batch size 64"),
        OutOfMemory(
            12,
            64,
            2**29,
            GB,
            0,
            "stop",
            None,
            "out of memory",
            "train",
            (ModuleBytes("head", 10**6),),
            4 * 10**6,
            "measured",
            10,
            32,
        ),
        CacheCleared(12, 2 * GB, MemorySample(3.0, "cpu", GB, 0, GB, 0, 64 * GB, 20 * GB, GB, False)),
        RunPaused(12),
    ],
    ids=["oom-stop", "oom-shrink", "oom-autopsy", "cache-cleared", "paused"],
)
def test_a_live_event_and_the_same_event_recorded_read_the_same(qtbot, event):
    live, recorded = display(qtbot), display(qtbot)
    recorded.started_at = time.time() - 3.0
    with marking_translator():
        assert live.show_event(event) and recorded.show_event(event, time.time())
    assert texts(live) == texts(recorded) and texts(live)


def test_an_out_of_memory_is_logged_with_its_autopsy_each_line_translated(qtbot):
    shown = display(qtbot)
    event = OutOfMemory(
        12,
        64,
        2**29,
        GB,
        0,
        "stop",
        None,
        "out of memory",
        "train",
        (ModuleBytes("head", 10**6),),
        4 * 10**6,
        "measured",
        10,
        32,
    )
    with marking_translator():
        shown.show_event(event)
    assert texts(shown)[:3] == [
        "[LogPanel]ERROR: out of memory",
        "[]largest holders by module ([]measured at step 10): head 1.00 MB (25%)",
        "[]batch 32 is predicted to fit",
    ]


def test_an_out_of_memory_mark_says_what_the_run_s_end_mark_says(qtbot):
    shown = display(qtbot)
    with marking_translator():
        shown.show_event(OutOfMemory(12, 64, 2**29, GB, 0, "shrink", 32, "out of memory"))
        shown.mark_status("oom")
    assert [mark.label.format for mark in shown.memory_plot.markers] == ["[status_text]out of memory"] * 2


def test_an_event_it_does_not_show_is_left_to_the_caller(qtbot):
    shown = display(qtbot)
    assert not shown.show_event(EpochStarted(1, 0)) and not shown.show_event(None)
    assert shown.log.lines() == [] and shown.memory_plot.markers == []


def test_a_recorded_line_carries_the_time_it_was_recorded_and_its_level(qtbot):
    log = LogPanel()
    qtbot.addWidget(log)
    at = time.time() - 3600
    log.add("text", at=at)
    log.add("text", "warning", at)
    log.add("text", "error", at)
    assert log.lines() == [f"{clock(at)}  text", f"{clock(at)}  warning: text", f"{clock(at)}  ERROR: text"]


def test_events_core_does_not_word():
    assert plain_event_line("RunPaused", {"step": 7}) == "paused at step 7"
    assert plain_event_line("RunResumed", {"step": 7}) == "resumed at step 7"
    assert plain_event_line("Unknown", {"a": 1}) == 'Unknown: {"a": 1}'
