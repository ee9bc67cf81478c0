"""What a data-parallel run's ranks are called on the memory plot and in the stats panel: a GPU per rank by its
number, CPU ranks by rank and device, each line a whole name through Qt's translator, numbers in the locale's
digits. (The ranks' lines drawn in the window: tests/gui/plots/test_rank_lines.py.)"""

from __future__ import annotations

from PySide6.QtCore import QLocale

from gpu_train_monitor.events.events import SAMPLE_COLUMNS
from gpu_train_monitor.gui.plots.memory_plot import SERIES
from gpu_train_monitor.gui.plots.rank_series import SERIES_COLUMNS, RankLayout, rank_names, speeds_text
from tests.support.context_marks import marking_translator


def test_names_of_gpu_and_cpu_ranks():
    assert rank_names(("cuda:0", "cuda:1")) == ("GPU 0", "GPU 1")
    assert rank_names(("cuda:0", "cuda:0")) == ("rank 0 (cuda:0)", "rank 1 (cuda:0)")  # two machines' GPU 0
    assert [line.name for line in RankLayout(("cuda:0", "cuda:1")).lines()][:3] == [
        "GPU 0 allocated",
        "GPU 0 reserved",
        "GPU 0 peak",
    ]
    assert [line.name for line in RankLayout(("cpu", "cpu")).lines()] == [
        "rank 0 (cpu) RSS",
        "rank 0 (cpu) peak RSS",
        "rank 1 (cpu) RSS",
        "rank 1 (cpu) peak RSS",
        "system used",
    ]


def test_each_plot_line_draws_a_sample_column_in_the_memory_plot_s_column_order():
    assert [SERIES[key][0] for key in SERIES_COLUMNS] == list(range(1, len(SERIES) + 1))
    assert set(SERIES_COLUMNS.values()) <= set(SAMPLE_COLUMNS)


def test_each_line_name_is_translated_whole(qapp):
    with marking_translator():
        names = [line.name for line in RankLayout(("cuda:0", "cuda:1")).lines()]
        cpu = [line.name for line in RankLayout(("cpu", "cpu")).lines()]
    assert names[0] == "[rank_series]{rank} allocated".format(rank="[rank_series]GPU 0")
    assert names[-1] == "[rank_series]{device} used (all processes)".format(device="[rank_series]GPU 1")
    assert cpu[1] == "[rank_series]{rank} peak RSS".format(rank="[rank_series]rank 0 (cpu)")
    assert cpu[-1] == "[rank_series]system used"


def test_speeds_follow_the_locale_and_name_each_rank(qapp):
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    try:
        shown, tooltip = speeds_text(("GPU 0",), [1210.4, None])
    finally:
        QLocale.setDefault(QLocale.system())
    assert shown == "1.210 · – img/s"
    assert tooltip == "GPU 0: 1.210 images/s\nrank 1: – images/s"  # a rank the names do not cover yet
    with marking_translator():
        assert speeds_text(("GPU 0",), [5.0])[0] == "[rank_series]5 img/s"
