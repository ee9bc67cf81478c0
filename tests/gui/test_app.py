"""The `gpu-train-monitor` entry point in this process: screenshot mode's input checks, CLI dispatch, and the
gui -> core dependency rule read from the source. Its fresh-process scenarios (a screenshot taken, signals, the
console script, core imported without Qt): tests/e2e/gui/test_app_processes.py."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpu_train_monitor.gui.app import main
from tests.support.gui_support import FAST

REPO = Path(__file__).resolve().parents[2]
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph")
WINDOW = "gpu_train_monitor.gui"


def test_screenshot_mode_rejects_bad_options_with_exit_code_2(capsys, tmp_path):
    path = tmp_path / "x.png"
    assert main(["--screenshot", str(path), "--steps", "0"]) == 2
    assert capsys.readouterr().err == (
        "gpu-train-monitor: error: --steps: must be an integer from 1 to 100000000, got 0\n"
    )
    assert main(["--screenshot", str(path), "--steps", "100000001"]) == 2  # --steps, the option typed
    assert capsys.readouterr().err.startswith("gpu-train-monitor: error: --steps: must be an integer from 1")
    assert main(["--screenshot", str(path), "--batch-size", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-train-monitor: error: --batch-size: must be an integer from 1 to 65536")
    assert "Traceback" not in err
    assert not path.exists()  # no window was opened


def test_devices_subcommand_goes_to_the_cli(capsys):
    assert main(["devices", "--json"]) == 0
    devices = json.loads(capsys.readouterr().out)
    assert devices[0]["spec"] == "cpu" and devices[0]["capacity_bytes"] > 0


def test_models_subcommand_goes_to_the_cli(capsys):
    assert main(["models"]) == 0
    names = capsys.readouterr().out.split()
    assert "tiny-cnn" in names and "resnet18" in names


def test_run_subcommand_trains_headless(capsys, tmp_path):
    summary = tmp_path / "summary.json"
    code = main(
        [
            "run",
            "--model",
            "tiny-cnn",
            "--device",
            "cpu",
            "--synthetic-samples",
            "256",
            "--batch-size",
            "64",
            "--max-steps",
            "2",
            "--summary-json",
            str(summary),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "status      completed" in out
    assert json.loads(summary.read_text())["steps"] == 2


def test_run_subcommand_bad_input_is_one_line_and_exit_2(capsys):
    assert main(["run", "--lr", "50"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpu-train-monitor: error: --lr: must be a number from 1e-08 to 10")
    assert len(err.splitlines()) == 1


def test_no_core_module_imports_qt_even_inside_a_function():
    # the subprocess check above only sees module-level imports; this one reads every import statement
    offenders = []
    for path in sorted((REPO / "core").rglob("*.py")):
        package = ["gpu_train_monitor", *path.relative_to(REPO / "core").parent.parts]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [_absolute(package, node.level, node.module)]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{path.name}: {n}"
                for n in names
                if n.split(".")[0] in QT_MODULES or n == WINDOW or n.startswith(f"{WINDOW}.")
            ]
    assert offenders == []


def _absolute(package: list[str], level: int, module: str | None) -> str:
    """The module a `from` import names, with a relative one (`from ..gui import x`) resolved in `package`."""
    base = package[: len(package) - level + 1] if level else []
    return ".".join([*base, *([module] if module else [])])


def test_screenshot_path_is_checked_before_a_window_opens(capsys, tmp_path):
    assert main(["--screenshot", str(tmp_path), "--steps", "1"]) == 2
    assert (
        capsys.readouterr().err == f"gpu-train-monitor: error: --screenshot: {tmp_path} is a folder; give a file name\n"
    )
    assert main(["--screenshot", str(tmp_path / "missing" / "x.png")]) == 2
    assert "--screenshot: the folder for" in capsys.readouterr().err
    assert main(["--screenshot", "/proc/x.png"]) == 2  # nothing can be created there, not even by root
    assert capsys.readouterr().err.startswith("gpu-train-monitor: error: --screenshot: cannot write to /proc/x.png")


def test_a_screenshot_over_the_run_store_is_refused_and_the_store_kept(capsys, tmp_path):
    store = tmp_path / "v.db"
    store.write_bytes(b"the runs")
    assert main(["--runs-db", str(store), "--screenshot", str(store), "--steps", "1"]) == 2
    assert capsys.readouterr().err == (
        f"gpu-train-monitor: error: --screenshot: {store} is the same file as "
        "--runs-db (the run store); give another path\n"
    )
    assert store.read_bytes() == b"the runs"


def test_compare_is_for_a_screenshot_and_says_so_otherwise(capsys):
    assert main(["--compare", "stream vs resident"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-train-monitor: error: --compare: races a comparison for a screenshot")
    assert "Traceback" not in err


def test_a_screenshot_of_an_unknown_comparison_exits_2_naming_the_offer(window, capsys, monkeypatch, tmp_path):
    """--compare NAME is looked up once torch is up (the Compare menu's ready-made comparisons depend on the
    machine): an unknown one is refused with what this machine offers, exit 2, before a run starts or a picture
    is saved. (A known one raced to a picture, as a process: tests/e2e/gui/test_app_processes.py.)"""
    from gpu_train_monitor.gui.window import screenshot

    monkeypatch.setattr(screenshot, "follow_run", lambda *args: None)  # nothing is saved: no timer left behind
    exits: list[int] = []
    path = tmp_path / "no.png"
    driver = screenshot.ScreenshotDriver(window, SimpleNamespace(exit=exits.append), str(path), FAST, "CPU vs TPU", [0])
    driver.start()  # what the app does once torch is ready
    assert exits == [2]
    err = capsys.readouterr().err
    assert (
        "gpu-train-monitor: error: --compare: no ready-made comparison 'CPU vs TPU' here; this machine offers: " in err
    )
    assert "stream vs resident" in err
    assert not window.controller.running and not window.isVisible()
    assert not path.exists()


def test_a_screenshot_of_a_comparison_this_machine_lacks_says_what_it_needs(window, capsys, monkeypatch, tmp_path):
    """A ready-made comparison that exists but needs what this machine lacks (expandable segments: a CUDA GPU) is
    refused saying so, exit 2, rather than as unknown."""
    import torch

    from gpu_train_monitor.gui.window import screenshot

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: expandable segments off vs on is offered")
    monkeypatch.setattr(screenshot, "follow_run", lambda *args: None)
    exits: list[int] = []
    name = "expandable segments off vs on"
    driver = screenshot.ScreenshotDriver(
        window, SimpleNamespace(exit=exits.append), str(tmp_path / "no.png"), FAST, name, [0]
    )
    driver.start()
    assert exits == [2]
    err = capsys.readouterr().err
    assert err.startswith(f"gpu-train-monitor: error: --compare: '{name}' needs a CUDA GPU: expandable segments are ")
    assert not window.controller.running


def test_torch_loads_only_once_the_window_has_painted(qtbot, settings):
    """torch's import holds the GIL for seconds: started before the first paint it left the window black
    that long. The loading starts after the window's first paint."""
    from PySide6.QtCore import QEvent, QObject

    from gpu_train_monitor.gui.app import after_first_paint
    from gpu_train_monitor.gui.window.main_window import MainWindow

    window = MainWindow(settings, record=False)
    qtbot.addWidget(window)
    painted: list[bool] = []

    class Painted(QObject):
        def eventFilter(self, watched, event) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                painted.append(True)
            return False

    watcher = Painted()
    window.menuBar().installEventFilter(watcher)
    started: list[bool] = []
    after_first_paint(window, lambda: started.append(bool(painted)))
    qtbot.wait(100)
    assert started == []  # not shown, not painted: nothing loads yet
    window.show()
    qtbot.waitUntil(lambda: bool(started), timeout=1500)  # well before the fallback's 2 s
    assert started == [True]


def test_version_is_answered_before_any_window(capsys):
    import pytest

    import gpu_train_monitor

    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0
    assert capsys.readouterr().out.startswith(f"gpu-train-monitor {gpu_train_monitor.__version__} (torch ")
