"""Every run status has words and a colour in the window's one table, and the window's ending states agree."""

from __future__ import annotations

from PySide6.QtGui import QColor

from gpu_train_monitor.events.status import Status
from gpu_train_monitor.gui.i18n.status_text import LIVE_COLOUR, STATUS_LOOKS, status_colour, status_text
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.views.window_state import WindowState


def test_every_status_has_words_and_a_colour() -> None:
    assert set(STATUS_LOOKS) == set(Status)
    for status in Status:
        assert status_text(status) == STATUS_LOOKS[status].words != ""  # English: no translator installed
        assert QColor(status_colour(status)).isValid()
    assert status_text("oom") == "out of memory" and status_text("a newer version's") == "a newer version's"


def test_colours_say_how_a_run_ended_and_whether_it_is_live() -> None:
    assert {status_colour(s) for s in Status if s.failed} == {palette.ERROR}
    assert status_colour("completed") == palette.DONE and status_colour("interrupted") == palette.WARNING
    assert status_colour("running", live=True) == LIVE_COLOUR != status_colour("running")  # its recorder is gone
    assert status_colour("a newer version's") == palette.NEUTRAL


def test_the_window_ends_in_its_run_status_colour() -> None:
    for status in (s for s in Status if s.finished and s is not Status.INTERRUPTED):
        assert WindowState.after(status).colour == status_colour(status)
