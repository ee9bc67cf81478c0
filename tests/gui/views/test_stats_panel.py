"""The run's numbers say only what is known: a watched script's own loop gives no total and no epochs, so its
steps show without "/ 0", no time left, no progress percentage and no epoch; a run of ours keeps its totals."""

from __future__ import annotations

from gpu_train_monitor.gui.views.stats_panel import StatsPanel, planned_epochs


def test_a_run_without_a_total_or_epochs_shows_its_steps_alone(qtbot):
    stats = StatsPanel()
    qtbot.addWidget(stats)
    stats.reset(0, planned_epochs(None, 0, 0))
    assert stats.values["step"].text() == "–" and stats.values["epoch"].text() == "–"
    stats.update_progress(120, 1, 0.0, 0.0, 0)  # no samples counted, no time left to tell
    assert stats.values["step"].text() == "120"
    assert stats.values["epoch"].text() == "–"
    assert stats.values["eta"].text() == "–" and stats.values["speed"].text() == "–"
    assert stats.progress.text() == "no total" and stats.progress.value() == 0
    stats.update_progress(1_500, 1, 950.0, None, 0)
    assert stats.values["step"].text() == "1500" and stats.values["speed"].text() == "950"


def test_a_run_with_a_total_keeps_its_progress_and_epochs(qtbot):
    stats = StatsPanel()
    qtbot.addWidget(stats)
    stats.reset(0, None)  # Start pressed: the plan is not known yet, and nothing claims there is none
    assert stats.progress.text() == ""
    stats.reset(40, planned_epochs(None, 40, 8))
    stats.update_progress(10, 2, 1200.0, 30.0, 40)
    assert stats.values["step"].text() == "10 / 40" and stats.values["epoch"].text() == "2 / 5"
    assert stats.values["eta"].text() == "0:30" and stats.progress.text() == "25%"
