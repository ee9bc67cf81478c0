"""The watch API in a process of its own: from a research folder that has its own `core/` and `gui/` packages,
and a watched process killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from gpu_train_monitor.store.run_store import RunStore
from tests.support.processes import ENV, WAIT_S

LOOP = """
import sys, time, torch
from gpu_train_monitor.watch import watch

torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
with watch(model, optimizer, name="from-a-folder", runs_db=sys.argv[1], report_interval_s=0.01) as w:
    for step in range({steps}):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        w.step(loss, samples=4)
        time.sleep({sleep})
print("done", w.status)
"""


def test_the_api_works_from_a_folder_with_its_own_core_and_gui(tmp_path: Path) -> None:
    project = tmp_path / "research"
    for package in ("core", "gui"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text(f"WHOSE = 'the project {package}'\n")
    script = project / "train.py"
    script.write_text(
        "import core, gui\n" + textwrap.dedent(LOOP).format(steps=12, sleep=0) + "print(core.WHOSE, gui.WHOSE)\n"
    )
    db = tmp_path / "runs.db"
    result = subprocess.run(
        [sys.executable, str(script), str(db)], cwd=project, env=ENV, capture_output=True, text=True, timeout=WAIT_S
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == ["done completed", "the project core the project gui"]
    with RunStore(db) as store:
        (run,) = store.list_runs()
        assert (run.name, run.status, run.steps) == ("from-a-folder", "completed", 12)


def test_a_watched_process_killed_with_sigkill_shows_interrupted_with_its_steps(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(LOOP).format(steps=100000, sleep=0.01))
    db = tmp_path / "runs.db"
    process = subprocess.Popen([sys.executable, str(script), str(db)], env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + WAIT_S
        steps = 0
        while steps < 20 and time.monotonic() < deadline:
            time.sleep(0.2)
            if db.exists():
                with RunStore(db) as store:
                    runs = store.list_runs()
                    steps = runs[0].steps if runs else 0
        assert steps >= 20, "the watched run recorded nothing"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    with RunStore(db) as store:
        store.mark_interrupted()
        (run,) = store.list_runs()
        assert run.status == "interrupted" and not run.live and run.steps >= 20
        assert len(store.steps(run.id).steps) == run.steps
