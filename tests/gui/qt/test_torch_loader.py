"""The torch loader: the import runs in a thread of its own, and what it brings back arrives in the GUI thread."""

from __future__ import annotations

import threading
import time

from gpu_train_monitor.gui.qt.torch_loader import TorchLoader


def test_loaded_arrives_in_the_gui_thread_for_a_plain_function(qtbot, monkeypatch):
    import gpu_train_monitor.gui.qt.torch_loader

    # TorchDynamo: seconds
    monkeypatch.setattr(gpu_train_monitor.gui.qt.torch_loader, "warm_fast_path_checks", lambda: None)
    loader = TorchLoader(time.time() - 5)
    arrived: list[tuple[float, bool]] = []
    loader.loaded.connect(lambda after: arrived.append((after, threading.current_thread() is threading.main_thread())))
    with qtbot.waitSignal(loader.loaded, timeout=120_000):
        loader.start()
    assert len(arrived) == 1
    after, in_gui_thread = arrived[0]
    assert after >= 5 and in_gui_thread


def test_a_broken_install_is_failed_with_the_error_in_the_gui_thread(qtbot, monkeypatch):
    import importlib

    real = importlib.import_module

    def broken(name, *args):
        if name == "torchvision":
            raise ImportError("libtorchvision.so: cannot open shared object file")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", broken)
    loader = TorchLoader(time.time())
    failed: list[tuple[str, bool]] = []
    loader.failed.connect(lambda text: failed.append((text, threading.current_thread() is threading.main_thread())))
    with qtbot.waitSignal(loader.failed, timeout=120_000):
        loader.start()
    assert failed == [("ImportError: libtorchvision.so: cannot open shared object file", True)]
