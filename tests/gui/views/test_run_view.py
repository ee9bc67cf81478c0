"""The run view's redraw timer: one plot per tick, the memory plot at most 5 times a second, nothing lost; the
config as the log shows it."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import TEXT_FIELDS
from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.gui.form.text import label
from gpu_train_monitor.gui.views.event_display import config_text
from gpu_train_monitor.gui.views.run_view import MEMORY_REDRAW_INTERVAL_S, RunView
from tests.support.translator_support import translated

GB = 1_000_000_000
FAST_CONFIG = RunConfig(model="tiny-cnn", device="cpu", max_steps=76).to_dict()


def sample(t: float, allocated: int = GB) -> MemorySample:
    return MemorySample(t, "cpu", allocated, 0, allocated, 0, 64 * GB, 20 * GB, allocated, False)


@pytest.fixture
def view(qtbot) -> RunView:
    view = RunView()
    view.redraw.stop()  # the test ticks by hand, on a clock of its own
    now = [100.0]
    view.clock = lambda: now[0]
    view.now = now  # type: ignore[attr-defined]
    view.host = host = QWidget()  # type: ignore[attr-defined]  # kept alive with the view
    qtbot.addWidget(host)
    qtbot.addWidget(view.step_time)  # closed and deleted at the end, as the window's tabs would
    layout = QVBoxLayout(host)
    layout.addWidget(view.loss_plot)
    layout.addWidget(view.memory_plot)
    host.resize(800, 700)
    host.show()
    return view


def drawn(curve) -> int:
    x, _ = curve.getData()
    return 0 if x is None else len(x)


def test_one_plot_per_tick_and_the_other_on_the_next(view):
    view.loss_plot.add_losses(1, (2.0, 1.9))
    view.memory_plot.add_sample(sample(0.0))
    view.redraw.tick()
    assert (drawn(view.loss_plot.raw_curve), drawn(view.memory_plot.curves["allocated"])) == (2, 0)
    view.redraw.tick()
    assert drawn(view.memory_plot.curves["allocated"]) == 1


def test_the_memory_plot_waits_its_interval_then_draws_every_sample(view):
    view.memory_plot.add_sample(sample(0.0))
    view.redraw.tick()
    view.redraw.tick()
    assert drawn(view.memory_plot.curves["allocated"]) == 1
    for i in range(1, 4):  # three reports within the interval
        view.memory_plot.add_sample(sample(i * 0.05, allocated=(1 + i) * GB))
        view.now[0] += 0.05
        view.redraw.tick()
        view.redraw.tick()
    assert drawn(view.memory_plot.curves["allocated"]) == 1  # not redrawn yet
    view.now[0] += MEMORY_REDRAW_INTERVAL_S
    view.redraw.tick()
    view.redraw.tick()
    assert drawn(view.memory_plot.curves["allocated"]) == 4  # all the samples that waited


def test_the_logged_config_names_every_field_as_the_form_does():
    config = RunConfig(model="tiny-cnn", device="cpu", lr=3e-4, download=True, epochs=None).to_dict()
    text = config_text(config)
    fields = text.split(", ")
    shown = [name for name in config if name not in TEXT_FIELDS]  # an image run's: its sequences' fields left out
    assert [field.split("=", 1)[0] for field in fields] == [label(name) for name in shown]  # every field, in order
    assert "Model=tiny-cnn" in fields and "Learning rate=0.0003" in fields
    assert "Download=yes" in fields and "channels_last=no" in fields and "Epochs=auto" in fields  # the form's word
    assert "Max steps=no limit" in fields
    text_run = config_text(RunConfig(model="gpt-tiny", dataset="synthetic-text", seq_len=64, layers=3).to_dict())
    assert "Sequence length=64" in text_run.split(", ") and "Layers=3" in text_run.split(", ")


def test_in_chinese_the_logged_config_has_chinese_names_and_words_and_keeps_names(qapp):
    """The config line said 'amp=off' beside '是': names and words in one language, names (tiny-cnn) as they are."""
    config = RunConfig(model="tiny-cnn", device="cpu", amp="off", dataset="synthetic", download=True).to_dict()
    with translated(
        {
            ("form_text", "Mixed precision"): "混合精度",
            ("form_widgets", "off"): "关闭",
            ("form_text", "Dataset"): "数据集",
            ("form_widgets", "synthetic"): "合成数据",
            ("form_text", "Model"): "模型",
            ("form_text", "Download"): "下载",
            ("run_view", "yes"): "是",
        }
    ):
        fields = config_text(config).split(", ")
    assert "混合精度=关闭" in fields and "数据集=合成数据" in fields and "下载=是" in fields
    assert "模型=tiny-cnn" in fields and "device=cpu" not in fields


def test_an_out_of_memory_that_stops_the_run_is_logged_once_in_the_window_s_words(view):
    """The failure was logged twice (its event, then the run's end repeating it) and the end spoke of the
    CLI's --on-oom shrink: the end now says only what to try, naming the form's setting."""
    from gpu_train_monitor.base.text import Message
    from gpu_train_monitor.engine.oom_recovery import stop_message
    from gpu_train_monitor.events.events import OutOfMemory, RunFinished

    oom = OutOfMemory(
        0,
        64,
        2**29,
        10**9,
        0,
        "stop",
        None,
        Message("out of memory at step {step} with batch size {batch}", step=1, batch=64),
    )
    view.show(oom)
    view.show(RunFinished("oom", 0, stop_message(oom, "stop"), False, None))
    lines = view.log.lines()
    assert sum("out of memory at step 1 with batch size 64" in line for line in lines) == 1
    assert "--on-oom" not in lines[-1]
    assert "oom: try a smaller batch size, or set On out of memory to shrink" in lines[-1]


def test_pause_and_resume_are_logged_and_the_eta_says_paused(view):
    from gpu_train_monitor.events.events import RunPaused, RunResumed

    view.stats.values["eta"].setText("0:42")
    view.show(RunPaused(120))
    assert view.log.lines()[-1].endswith("paused at step 120")
    assert view.stats.values["eta"].text() == "paused"  # no time left counts down while paused
    view.show(RunResumed(120))
    assert view.log.lines()[-1].endswith("resumed at step 120")


def test_a_run_of_max_steps_shows_its_epoch_of_how_many(view):
    """'Epoch 3' had no total when the run's length was given in steps: it is counted from them."""
    from gpu_train_monitor.events.events import RunStarted

    started = RunStarted(
        config=FAST_CONFIG,
        device="cpu",
        device_name="test",
        placement="stream",
        steps_per_epoch=8,
        total_steps=76,
        train_samples=256,
        val_samples=64,
        parameters=1000,
        dataset_bytes=0,
        memory=sample(0.0),
        epochs=None,
    )
    view.show(started)
    assert view.stats.values["epoch"].text() == "1 / 10"  # 76 steps of 8 an epoch: 10 epochs, the last short


def test_the_panel_shows_the_run_s_median_speed_and_peak_as_its_log_line_does_and_keeps_them_at_rest(view):
    """The panel showed the last report's images/s, unlabelled, and the last report's peak (1.33 GB) where the
    log and the Runs table said 1.45 GB; at rest the idle poll then pulled the peak line down."""
    import dataclasses

    from gpu_train_monitor.events.events import RunFinished, StepsReported
    from gpu_train_monitor.events.summary import RunSummary

    def report(step: int, rate: float, peak: int) -> StepsReported:
        memory = dataclasses.replace(sample(float(step), GB), peak_allocated_bytes=peak)
        return StepsReported(step, 1, step, (2.0,), step * 32, rate, float(step), None, 32, memory, 10)

    for step, rate in enumerate((40.0, 100.0, 130.0, 80.0), start=1):  # the first report is the warm-up
        view.show(report(step, rate, 1_330_000_000))
    assert view.stats.values["speed"].text() == "100"  # the median after the warm-up, not the last report's 80
    from PySide6.QtWidgets import QLabel

    assert "Images/s (median)" in [label.text() for label in view.stats.findChildren(QLabel)]  # named as it is
    summary = RunSummary(
        "completed", 4, 128, 2.0, 100.0, 2.0, 2.0, None, "cpu", "", 1_450_000_000, 0, 1_450_000_000, {}
    )
    view.show(RunFinished("completed", 4, "", False, summary))
    assert "100 images/s, peak 1.45 GB" in view.log.lines()[-1]
    assert (view.stats.values["speed"].text(), view.stats.values["peak"].text()) == ("100", "1.45 GB")
    view.show_sample(sample(9.0, GB))  # the idle poll: the window's own probe, which did not watch the run
    assert view.stats.values["peak"].text() == "1.45 GB"
    assert view.memory_plot.data.column(3)[-1] == 1_450_000_000  # the peak line does not fall at the run's end
