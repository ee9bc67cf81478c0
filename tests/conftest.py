"""Test configuration shared by every test: a store and checkpoint folder of the session's own (removed at its
end), Qt without a display, one torch thread, `gpu` tests skipped without CUDA, and every test under tests/e2e
marked `slow`.

The layout: tests/core/<package>/ and tests/gui/<package>/ mirror the code's packages (unit and in-process
tests); tests/e2e/ holds the scenarios that start fresh interpreters (the CLI as a process, data-parallel
runs, real signals, the window next to a terminal run); tests/gpu/ needs CUDA; tests/support/ holds the
helpers that tests share (no test file imports another).
"""

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

# Qt needs no display in tests: the offscreen platform renders pyqtgraph widgets too.
# Set before anything imports Qt; a value already in the environment (xcb under Xvfb) wins.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

# A suite started in the background by a non-interactive shell (`cmd &`) inherits SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler: every Ctrl+C test (and each process it starts) would ignore the Ctrl+C it
# sends. Give this process Python's own handler; the processes it starts then get the default again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _session_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Runs the tests start (in this process and in the CLI processes they spawn) are recorded in a store of the
    session's own, never in the user's (tests that check recording pass --runs-db themselves); likewise the
    checkpoints runs save by default (at epoch ends). The folder is removed when the session ends, and the
    variables are put back."""
    folder = tmp_path_factory.mktemp("gtm-tests")
    names = {
        "GPU_TRAIN_MONITOR_RUNS_DB": folder / "runs.sqlite3",
        "GPU_TRAIN_MONITOR_CHECKPOINTS": folder / "checkpoints",
    }
    before = {name: os.environ.get(name) for name in names}
    os.environ.update({name: str(path) for name, path in names.items()})
    yield folder
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    """The suite runs on small shared machines (2 cores), where one intra-op thread is faster than two
    fighting over busy cores. The product itself keeps torch's default."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


E2E = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(config, items):  # noqa: ANN001 - pytest hook
    """Mark the tests under tests/e2e `slow` (`pytest -m "not slow"` is the quick inner loop), and skip
    `@pytest.mark.gpu` tests where no CUDA device exists (CI without a GPU, laptops)."""
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.slow)
    gpu_tests = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_tests:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in gpu_tests:
        item.add_marker(skip)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()
