"""Fixtures for the GUI tests: a window with its own settings file, and small, fast run configs.

Runs use tiny-cnn on the CPU with a few hundred synthetic images, so a real run takes about a second.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from PySide6.QtCore import QLocale, QSettings

import gpu_train_monitor.device.devices
import gpu_train_monitor.device.nvml
import gpu_train_monitor.engine.recipe
import gpu_train_monitor.engine.session
import gpu_train_monitor.finder.search
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.i18n import language as i18n
from gpu_train_monitor.gui.window.main_window import MainWindow
from gpu_train_monitor.model.models import build_model
from tests.support.gui_support import FAST, fail_if_qthreads_left
from tests.support.gui_support import running_qthreads as _running_qthreads
from tests.support.out_of_memory import LinearMemory, OutOfMemoryAbove


@pytest.fixture(scope="session", autouse=True)
def long_lived_objects_frozen():
    """The QThread-leak check collects garbage after each test, and runs that hit an out-of-memory error collect
    too (on the GUI thread): with torch, Qt and the collected tests in the heap each collection
    took a quarter of a second. What exists once the tests are collected lives to the end of the session, so it
    is moved out of the collector's sight (gc.freeze); what tests create is collected as before."""
    import gc

    import torch  # noqa: F401 - both loaded before the freeze: the window's TorchLoader imports them
    import torchvision  # noqa: F401

    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def no_qthread_left_running(qtbot):
    """Fail a test that leaves a QThread running after it (and after its fixtures' own cleanup): the next
    test would inherit its events, and a QThread destroyed while running aborts the whole process."""
    yield
    fail_if_qthreads_left(qtbot)


@pytest.fixture(autouse=True)
def numbers_as_on_any_machine():
    """Each test starts with Qt's C locale, whatever the machine's (a German one wrote a loss of 1.376 as
    '1,376'): the same digits on every machine. A test about another locale sets it itself, and some restore
    `QLocale.system()` after them, so this is set before every test, not once."""
    QLocale.setDefault(QLocale.c())
    yield


@pytest.fixture
def settings(tmp_path) -> QSettings:
    """A settings file of the test's own: tests never read or change the user's settings."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, settings):
    """Build MainWindows (torch ready, shown offscreen); each is closed at teardown like a user would."""
    from gpu_train_monitor.gui.window.main_window import MainWindow

    windows = []

    def make(config: RunConfig | None = FAST, settings_: QSettings | None = None) -> MainWindow:
        window = MainWindow(settings=settings_ if settings_ is not None else settings)
        qtbot.addWidget(window)  # closeEvent runs at teardown: a run still going is stopped
        window.on_torch_ready()
        if config is not None:
            window.parts.form.set_config(config)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:  # a test that failed mid-run must not leave a thread to abort the process
        if window.controller.running:
            window.controller.shutdown(30_000)
        window.shutdown_predictions()  # predictions being worked out: ended before the QThread check


@pytest.fixture
def window(make_window):
    return make_window()


@pytest.fixture
def running_qthreads():
    """A function listing the QThreads still running (the lifecycle tests want none after a run)."""
    return _running_qthreads


@pytest.fixture
def chinese(tmp_path, qapp):
    installed = i18n.install(i18n.CHINESE, cache=tmp_path / "qm", system=QLocale("zh_CN"))
    assert installed.language == i18n.CHINESE, installed.problem
    yield installed
    installed.remove()
    QLocale.setDefault(QLocale.system())


@pytest.fixture
def batches_above_16_run_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        gpu_train_monitor.engine.recipe,
        "build_model",
        lambda name, classes, channels: OutOfMemoryAbove(build_model(name, classes, channels), 16),
    )


@pytest.fixture
def fast_trials(monkeypatch: pytest.MonkeyPatch) -> Callable[[int, int], LinearMemory]:
    """The finder tab searches with an injected measure instead of real trials (seconds each)."""

    def install(fixed: int, per_sample: int) -> LinearMemory:
        memory = LinearMemory(fixed, per_sample)
        monkeypatch.setattr(
            gpu_train_monitor.finder.search,
            "find_batch_size",
            functools.partial(gpu_train_monitor.finder.search.find_batch_size, measure=memory),
        )
        return memory

    return install
