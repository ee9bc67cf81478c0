"""`gpu-train-monitor` as fresh processes, where the process itself is what a test is about: screenshot mode
(the window run unattended to a PNG, in the system's language or the one asked for), its exit on a signal,
bad input found once torch is up, the installed console script, and core never loading Qt. The entry point's
in-process checks (options, CLI dispatch, the import rules read from the source): tests/gui/test_app.py."""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph")


def run_python(code_or_args: list[str], timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    # one torch thread: the test machines share two cores, and two threads fighting for them are slower
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1", **env}
    return subprocess.run(
        [sys.executable, *code_or_args], cwd=REPO, env=environment, capture_output=True, text=True, timeout=timeout
    )


def chinese_system(cache: Path) -> dict[str, str]:
    """The environment of a user whose system is Chinese, with a cache folder of the test's own."""
    cache.mkdir()
    return {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": "", "XDG_CACHE_HOME": str(cache)}


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_screenshot_mode_writes_a_png_of_the_whole_window(tmp_path):
    """On a Chinese system (LANG=zh_CN.UTF-8), `--language en` keeps the window English: no Chinese catalogue is
    compiled into the user's cache (the Chinese start itself: the next test)."""
    path = tmp_path / "shot.png"
    result = run_python(
        [
            "-m",
            "gpu_train_monitor.gui",
            "--language",
            "en",
            "--screenshot",
            str(path),
            "--steps",
            "5",
            "--model",
            "tiny-cnn",
            "--device",
            "cpu",
            "--synthetic-samples",
            "512",
            "--batch-size",
            "64",
        ],
        **chinese_system(tmp_path / "cache"),
    )
    assert result.returncode == 0, result.stderr
    assert not list((tmp_path / "cache").rglob("*.qm"))  # --language en overrode the system's Chinese
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


def test_installed_console_script_dispatches_devices():
    script = Path(sys.executable).with_name("gpu-train-monitor")
    assert script.is_file(), "the project is not installed in this environment"
    result = subprocess.run([str(script), "devices"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split()[:2] == ["device", "kind"]
    assert any(line.startswith("cpu ") for line in result.stdout.splitlines())


def test_core_never_imports_qt_pyqtgraph_or_gui():
    # in a fresh process: pytest-qt has already imported Qt into this one
    code = (
        "import importlib, pkgutil, sys, gpu_train_monitor\n"
        "for m in pkgutil.walk_packages(gpu_train_monitor.__path__, 'gpu_train_monitor.'):\n"
        "    if m.name != 'gpu_train_monitor.__main__' and not m.name.startswith('gpu_train_monitor.gui'):\n"
        "        importlib.import_module(m.name)\n"
        "import gpu_train_monitor.engine.session, gpu_train_monitor.cli.main\n"
        f"bad = sorted(n for n in sys.modules if n.split('.')[0] in {QT_MODULES!r}\n"
        "             or n.startswith('gpu_train_monitor.gui'))\n"
        "print(len([n for n in sys.modules if n.startswith('gpu_train_monitor.')]), bad)\n"
    )
    result = run_python(["-c", code])
    assert result.returncode == 0, result.stderr
    count, bad = result.stdout.strip().split(" ", 1)
    assert int(count) >= 10  # the whole core package was imported
    assert bad == "[]"


def test_gui_imports_core():
    code = (
        "import sys, gpu_train_monitor.gui.window.main_window; "
        "print('gpu_train_monitor.config.run_config' in sys.modules, 'gpu_train_monitor.events.events' in sys.modules)"
    )
    result = run_python(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


def test_screenshot_run_refusing_its_input_exits_2_naming_the_option(tmp_path):
    # found by the session once torch is up, as the CLI finds it: the same line and exit code
    path = tmp_path / "shot.png"
    result = run_python(
        [
            "-m",
            "gpu_train_monitor.gui",
            "--screenshot",
            str(path),
            "--steps",
            "2",
            "--model",
            "tiny-cnn",
            "--device",
            "cpu:1",
            "--synthetic-samples",
            "256",
            "--batch-size",
            "32",
        ]
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        "gpu-train-monitor: error: --device: cpu:1 does not exist: the CPU is one device (use cpu)"
        in result.stderr.splitlines()
    )


def _start_window(*args: str, python_options: tuple[str, ...] = ()) -> subprocess.Popen:
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, *python_options, "-m", "gpu_train_monitor.gui", *args],
        cwd=REPO,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


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
    process = _start_window(
        "--screenshot",
        str(tmp_path / "shot.png"),
        "--steps",
        "100000",
        "--model",
        "tiny-cnn",
        "--device",
        "cpu",
        "--synthetic-samples",
        "2560",
        "--batch-size",
        "8",
    )
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


def test_screenshot_of_a_ready_made_comparison(tmp_path):
    path = tmp_path / "compare.png"
    common = [
        "-m",
        "gpu_train_monitor.gui",
        "--steps",
        "3",
        "--model",
        "tiny-cnn",
        "--device",
        "cpu",
        "--synthetic-samples",
        "256",
        "--batch-size",
        "32",
    ]
    result = run_python([*common, "--screenshot", str(path), "--compare", "stream vs resident"])
    assert result.returncode == 0, result.stderr
    assert png_size(path) == (1280, 860)
    # an unknown NAME: tests/gui/test_app.py::test_a_screenshot_of_an_unknown_comparison_exits_2_naming_the_offer


def test_a_chinese_system_opens_the_window_in_chinese(tmp_path):
    """LANG=zh_CN.UTF-8 is all a user sets: the Chinese catalogue is compiled into the user's cache and
    installed (the translated window itself is checked in test_window_in_chinese; `--language en` overriding
    it: test_screenshot_mode_writes_a_png_of_the_whole_window). The stderr lines of screenshot mode stay
    English, as the CLI's do."""
    cache = tmp_path / "zh"
    chinese = run_python(
        [
            "-m",
            "gpu_train_monitor.gui",
            "--screenshot",
            str(tmp_path / "shot.png"),
            "--steps",
            "2",
            "--model",
            "tiny-cnn",
            "--device",
            "cpu",
            "--synthetic-samples",
            "256",
            "--batch-size",
            "64",
        ],
        **chinese_system(cache),
    )
    assert chinese.returncode == 0, chinese.stderr
    assert "PyTorch ready after" in chinese.stderr
    assert len(list(cache.rglob("gpu_train_monitor_zh_CN-*.qm"))) == 1
