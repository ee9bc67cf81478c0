"""Texts a Chinese window used to show in English, each now said through Qt's translator (a marking translator
shows under which context): a comparison's run labels and the separator between them in the log, a remote CPU's
"(N threads)", a watched run's config fields in the log, and the precision a prediction names ("no autocast")."""

from __future__ import annotations

from types import SimpleNamespace

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.compare.plan import plan
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.compare.mode import CompareMode
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.remote.devices import remote_devices
from gpu_train_monitor.gui.views.event_display import config_text
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.run_view import RunView
from tests.gui.remote.fake_link import CPU, H200
from tests.support.context_marks import marking_translator


def test_a_comparisons_log_line_says_its_labels_and_their_separator_through_the_translator(qtbot):
    contenders = plan(
        RunConfig(device="cpu", model="tiny-cnn", max_steps=6),
        [{"placement": "stream", "compile": False}, {"placement": "resident", "compile": True}],
    )
    log, run_view = LogPanel(), RunView()
    mode = CompareMode(run_view, log)
    widgets = (run_view.loss_plot, run_view.memory_plot, run_view.stats, run_view.breakdown_view, run_view.step_time)
    for widget in (log, mode.view, *widgets):
        qtbot.addWidget(widget)  # closed and deleted at the end, as a window would
    with marking_translator():
        mode.begin(SimpleNamespace(contenders=contenders, steps=6), "placements")
    run_view.stop()
    line = log.lines()[-1]
    assert "[form_widgets]stream" in line and "[form_widgets]resident" in line  # the placements, as the form says
    assert "[compare_race]no compile" in line  # "no {setting}": the words around the setting's name
    assert "[CompareMode]; " in line  # the separator between the runs, Chinese has its own


def test_a_remote_cpus_threads_are_said_in_the_users_language(qtbot):
    form = SettingsForm()
    qtbot.addWidget(form)
    with marking_translator():
        form.set_remote_devices(remote_devices("gpu-box", "gpu-box-7", [CPU, H200]))
        combo = form.widgets["device"]
        items = [combo.itemText(i) for i in range(combo.count())]
    assert any("[]CPU (16 threads)" in item for item in items), items  # core's "{cpu} ({threads} threads)"


def test_a_watched_runs_config_line_names_its_fields_through_the_translator(qapp):
    config = {
        "model": "Sequential",
        "dataset": "script",
        "optimizer": "SGD",
        "batch_size": 64,
        "device": "cpu",
        "source": "script",
        "name": "",
        "total_steps": None,
        "script": "/home/me/proj/train.py",
        "argv": ["--lr", "0.1"],
        "counted": "samples",
    }
    with marking_translator():
        text = config_text(config)
    fields = dict(field.split("=", 1) for field in text.split("[run_view], "))
    for key in ("source", "name", "total_steps", "script", "argv", "counted"):
        assert key not in fields, text  # no field left under its identifier
    assert fields["[run_view]Script"] == "/home/me/proj/train.py"
    assert fields["[run_view]Counted"] == "[run_view]samples"
    assert fields["[form_text]Dataset"] == "[]an unchanged script (watch --)"  # who trained it, not "script"


def test_the_precision_a_prediction_names_is_said_in_the_users_language(qapp):
    def described(precision: str) -> str:
        template = "{model} at batch {batch} ({precision}, {optimizer}) on {device}"
        return core_text(Message(template, model="Net", batch=8, precision=precision, optimizer="SGD", device="cpu"))

    with marking_translator():
        none, bf16, fp32 = described("no autocast"), described("bf16 autocast"), described("fp32")
    assert "([core_text]no autocast, SGD)" in none
    assert "([core_text]bf16 autocast, SGD)" in bf16  # the words around the dtype: "{dtype} autocast"
    assert "(fp32, SGD)" in fp32  # a name alone stays as it is
