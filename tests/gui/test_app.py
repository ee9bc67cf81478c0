"""The `gpu-train-monitor` entry point: screenshot mode, CLI dispatch, and the gui -> core dependency rule."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from gui.app import main

REPO = Path(__file__).resolve().parents[2]
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "gui")


def run_python(code_or_args: list[str], timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    # one torch thread: the test machines share two cores, and two threads fighting for them are slower
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1", **env}
    return subprocess.run([sys.executable, *code_or_args], cwd=REPO, env=environment, capture_output=True,
                          text=True, timeout=timeout)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_screenshot_mode_writes_a_png_of_the_whole_window(tmp_path):
    path = tmp_path / "shot.png"
    result = run_python(["-m", "gui", "--screenshot", str(path), "--steps", "5", "--model", "tiny-cnn",
                         "--device", "cpu", "--synthetic-samples", "512", "--batch-size", "64"])
    assert result.returncode == 0, result.stderr
    assert path.stat().st_size > 10_000  # a real picture of a window, not an empty image
    width, height = png_size(path)
    match = re.search(r"saved a (\d+)x(\d+) screenshot to (.+)", result.stdout)
    assert match, result.stdout
    assert (int(match.group(1)), int(match.group(2))) == (width, height)
    assert (width, height) == (1280, 860)  # the window's default size: the whole window, frame excluded
    assert Path(match.group(3).strip()) == path

    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert (image.width(), image.height()) == (width, height)
    colours = {image.pixel(x, y) for x in range(0, width, 40) for y in range(0, height, 40)}
    assert len(colours) > 5  # widgets and plots were drawn, not a blank canvas


def test_screenshot_mode_rejects_bad_options_with_exit_code_2(capsys, tmp_path):
    path = tmp_path / "x.png"
    assert main(["--screenshot", str(path), "--steps", "0"]) == 2
    assert capsys.readouterr().err == ("gpu-train-monitor: error: --steps: must be an integer from 1 to "
                                       "100000000, got 0\n")
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
    code = main(["run", "--model", "tiny-cnn", "--device", "cpu", "--synthetic-samples", "256", "--batch-size", "64",
                 "--max-steps", "2", "--summary-json", str(summary)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "status      completed" in out
    assert json.loads(summary.read_text())["steps"] == 2


def test_run_subcommand_bad_input_is_one_line_and_exit_2(capsys):
    assert main(["run", "--lr", "50"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpu-train-monitor: error: --lr: must be a number from 1e-08 to 10")
    assert len(err.splitlines()) == 1


def test_installed_console_script_dispatches_devices():
    script = Path(sys.executable).with_name("gpu-train-monitor")
    assert script.is_file(), "the project is not installed in this environment"
    result = subprocess.run([str(script), "devices"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split()[:2] == ["device", "kind"]
    assert any(line.startswith("cpu ") for line in result.stdout.splitlines())


def test_core_never_imports_qt_pyqtgraph_or_gui():
    # in a fresh process: pytest-qt has already imported Qt into this one
    code = ("import importlib, pkgutil, sys, core\n"
            "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
            "    if m.name not in ('core.__main__',):\n"
            "        importlib.import_module(m.name)\n"
            "import core.engine.session, core.cli.main\n"
            f"bad = sorted(n for n in sys.modules if n.split('.')[0] in {QT_MODULES!r})\n"
            "print(len([n for n in sys.modules if n.startswith('core.')]), bad)\n")
    result = run_python(["-c", code])
    assert result.returncode == 0, result.stderr
    count, bad = result.stdout.strip().split(" ", 1)
    assert int(count) >= 10  # the whole core package was imported
    assert bad == "[]"


def test_gui_imports_core():
    code = "import sys, gui.window.main_window; print('core.config.run_config' in sys.modules, 'core.run.events' in sys.modules)"
    result = run_python(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


def test_no_core_module_imports_qt_even_inside_a_function():
    # the subprocess check above only sees module-level imports; this one reads every import statement
    offenders = []
    for path in sorted((REPO / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in QT_MODULES]
    assert offenders == []


def test_screenshot_path_is_checked_before_a_window_opens(capsys, tmp_path):
    assert main(["--screenshot", str(tmp_path), "--steps", "1"]) == 2
    assert capsys.readouterr().err == f"gpu-train-monitor: error: --screenshot: {tmp_path} is a folder; give a file name\n"
    assert main(["--screenshot", str(tmp_path / "missing" / "x.png")]) == 2
    assert "--screenshot: the folder for" in capsys.readouterr().err
    assert main(["--screenshot", "/proc/x.png"]) == 2  # nothing can be created there, not even by root
    assert capsys.readouterr().err.startswith("gpu-train-monitor: error: --screenshot: cannot write to /proc/x.png")


def test_a_screenshot_over_the_run_store_is_refused_and_the_store_kept(capsys, tmp_path):
    store = tmp_path / "v.db"
    store.write_bytes(b"the runs")
    assert main(["--runs-db", str(store), "--screenshot", str(store), "--steps", "1"]) == 2
    assert capsys.readouterr().err == (f"gpu-train-monitor: error: --screenshot: {store} is the same file as "
                                       "--runs-db (the run store); give another path\n")
    assert store.read_bytes() == b"the runs"


def test_screenshot_run_refusing_its_input_exits_2_naming_the_option(tmp_path):
    # found by the session once torch is up, as the CLI finds it: the same line and exit code
    path = tmp_path / "shot.png"
    result = run_python(["-m", "gui", "--screenshot", str(path), "--steps", "2", "--model", "tiny-cnn",
                         "--device", "cpu:1", "--synthetic-samples", "256", "--batch-size", "32"])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "gpu-train-monitor: error: --device: cpu:1 does not exist: the CPU is one device (use cpu)" in \
        result.stderr.splitlines()


def _start_window(*args: str, python_options: tuple[str, ...] = ()) -> subprocess.Popen:
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, *python_options, "-m", "gui", *args], cwd=REPO, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_line(process: subprocess.Popen, pattern: str) -> None:
    lines = []
    while True:
        line = process.stderr.readline()
        assert line, f"exited before {pattern!r}: {''.join(lines[-20:])}"
        lines.append(line)
        if re.search(pattern, line):
            return


def test_ctrl_c_while_qt_is_importing_exits_130_quietly():
    process = _start_window(python_options=("-X", "importtime"))
    try:
        _wait_for_line(process, r"\|\s+PySide6\.")  # a PySide6 submodule done: still importing
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_closes_the_window_during_a_run(tmp_path, signum, code):
    process = _start_window("--screenshot", str(tmp_path / "shot.png"), "--steps", "100000", "--model", "tiny-cnn",
                            "--device", "cpu", "--synthetic-samples", "2560", "--batch-size", "8")
    try:
        _wait_for_line(process, r"PyTorch ready after")  # the run starts right after this line
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, stderr[-2000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


def test_compare_is_for_a_screenshot_and_says_so_otherwise(capsys):
    assert main(["--compare", "stream vs resident"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-train-monitor: error: --compare: races a comparison for a screenshot")
    assert "Traceback" not in err


def test_screenshot_of_a_ready_made_comparison(tmp_path):
    path = tmp_path / "compare.png"
    common = ["-m", "gui", "--steps", "3", "--model", "tiny-cnn", "--device", "cpu", "--synthetic-samples",
              "256", "--batch-size", "32"]
    result = run_python([*common, "--screenshot", str(path), "--compare", "stream vs resident"])
    assert result.returncode == 0, result.stderr
    assert png_size(path) == (1280, 860)
    unknown = run_python([*common, "--screenshot", str(tmp_path / "no.png"), "--compare", "CPU vs TPU"])
    assert unknown.returncode == 2
    assert "--compare: no ready-made comparison 'CPU vs TPU' here; this machine offers: " in unknown.stderr
    assert "stream vs resident" in unknown.stderr
    assert not (tmp_path / "no.png").exists()


def test_a_chinese_system_opens_the_window_in_chinese_and_the_language_option_overrides_it(tmp_path):
    """LANG=zh_CN.UTF-8 is all a user sets: the Chinese catalogue is compiled into the user's cache and
    installed (the translated window itself is checked in test_window_in_chinese); --language en on the
    same system leaves it alone. The stderr lines of screenshot mode stay English, as the CLI's do."""
    def start(cache: Path, *language: str) -> subprocess.CompletedProcess:
        cache.mkdir()
        return run_python(["-m", "gui", *language, "--screenshot", str(cache / "shot.png"), "--steps", "2",
                           "--model", "tiny-cnn", "--device", "cpu", "--synthetic-samples", "256", "--batch-size",
                           "64"], LANG="zh_CN.UTF-8", LC_ALL="", LC_MESSAGES="", LANGUAGE="",
                          XDG_CACHE_HOME=str(cache))

    chinese = start(tmp_path / "zh")
    assert chinese.returncode == 0, chinese.stderr
    assert "PyTorch ready after" in chinese.stderr
    assert len(list((tmp_path / "zh").rglob("gpu_train_monitor_zh_CN-*.qm"))) == 1
    english = start(tmp_path / "en", "--language", "en")
    assert english.returncode == 0, english.stderr
    assert not list((tmp_path / "en").rglob("*.qm"))


def test_torch_loads_only_once_the_window_has_painted(qtbot, settings):
    """torch's import holds the GIL for seconds: started before the first paint it left the window black
    that long. The loading starts after the window's first paint."""
    from PySide6.QtCore import QEvent, QObject

    from gui.app import after_first_paint
    from gui.window.main_window import MainWindow

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
