"""`core` (the package `gpu_train_monitor`) stands alone: it never loads Qt, pyqtgraph or `gpu_train_monitor.gui`.

Checked in fresh interpreters: pytest-qt loads Qt into this test process, so looking at this
process's sys.modules would prove nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

GUI_ROOTS = ("PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "shiboken2", "pyqtgraph", "qtpy", "pytestqt")
WINDOW = "gpu_train_monitor.gui"

IMPORT_ALL_OF_CORE = f"""
import importlib, json, pkgutil, sys
import gpu_train_monitor
names = sorted(
    m.name
    for m in pkgutil.walk_packages(gpu_train_monitor.__path__, "gpu_train_monitor.")
    if m.name != "gpu_train_monitor.__main__" and not m.name.startswith({WINDOW!r})  # a wheel has gui/ inside
)
for name in names:
    importlib.import_module(name)
gui = sorted(m for m in sys.modules if m.split(".")[0] in {GUI_ROOTS!r} or m.startswith({WINDOW!r}))
print(json.dumps({{"imported": names, "gui": gui}}))
"""


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_every_core_module_imports_without_qt_pyqtgraph_or_gui() -> None:
    report = json.loads(run_python(IMPORT_ALL_OF_CORE))
    assert {
        "gpu_train_monitor.engine.session",
        "gpu_train_monitor.cli.main",
        "gpu_train_monitor.data.batches",
        "gpu_train_monitor.memory.probe",
        "gpu_train_monitor.data.datasets.mnist",
    } <= set(report["imported"])
    assert report["gui"] == []


def test_the_config_loads_without_torch_so_the_window_can_build_its_form_first() -> None:
    loaded = json.loads(
        run_python(
            "import json, sys\nimport gpu_train_monitor.config.run_config, gpu_train_monitor.base.errors\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torchvision', 'numpy'))))"
        )
    )
    assert loaded == []


# The packages the window imports before torch has loaded (in a background thread): none of their modules may
# import torch at module level. The others (device, memory, data, model, engine, distributed, finder) may.
TORCH_FREE = (
    "gpu_train_monitor.base",
    "gpu_train_monitor.config",
    "gpu_train_monitor.events",
    "gpu_train_monitor.store",
    "gpu_train_monitor.export",
    "gpu_train_monitor.cli.options",
    "gpu_train_monitor.compare.plan",
    "gpu_train_monitor.compare.result",
    "gpu_train_monitor.remote",  # the agent loads torch only for devices and readings; the client never
    "gpu_train_monitor.memory.snapshot_reader",  # a snapshot from another machine opens where torch has not loaded
    "gpu_train_monitor.memory.snapshot_file",
)

IMPORT_ONE_PACKAGE = f"""
import importlib, json, pkgutil, sys
target = importlib.import_module(sys.argv[1])
names = [target.__name__] + sorted(m.name for m in pkgutil.walk_packages(getattr(target, "__path__", []),
                                                                         target.__name__ + "."))
for name in names:
    importlib.import_module(name)
roots = ("torch", "torchvision") + {GUI_ROOTS!r}
print(json.dumps({{"imported": names, "loaded": sorted({{m.split(".")[0] for m in sys.modules}} & set(roots))}}))
"""


@pytest.mark.parametrize("package", TORCH_FREE)
def test_a_torch_free_package_imports_neither_torch_nor_qt(package: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_ONE_PACKAGE, package], capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    a_package = package.count(".") == 1  # gpu_train_monitor.<package>, not one module of one
    assert report["imported"][0] == package and (len(report["imported"]) > 1 or not a_package)  # all its modules
    assert report["loaded"] == [], f"importing {package} loads {report['loaded']}"


def _loaded_after(imports: str, prefixes: tuple[str, ...]) -> list[str]:
    """Modules starting with one of `prefixes` that a fresh interpreter has loaded after `imports`."""
    code = (
        f"import json, sys\n{imports}\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_window_does_not_load_the_cli() -> None:
    # gpu_train_monitor.gui.app shares gpu_train_monitor.cli.options with the CLI; only a headless subcommand loads
    # gpu_train_monitor.cli.main
    assert (
        _loaded_after(
            "import gpu_train_monitor.gui.app, gpu_train_monitor.gui.window.main_window",
            ("gpu_train_monitor.cli.main",),
        )
        == []
    )


def test_the_batch_finder_does_not_load_the_training_session() -> None:
    assert _loaded_after("import gpu_train_monitor.finder.search", ("gpu_train_monitor.engine.session",)) == []
