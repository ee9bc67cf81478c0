"""Monitoring-only access, set up as the docs say: the client's key may run only
`gpu-train-monitor agent --allow PROJECTS` (a forced command in authorized_keys), over a real OpenSSH server.
Whatever the other side asks for, the machine runs the agent, and the agent runs only what the owner allowed: an
allowed script trains; a script outside the folder, a link or '..' out of it, `-m` of an installed module, a
factory from outside and a dataset folder outside are each refused in one line, and nothing of theirs starts.

Skipped, saying why, where sshd or ssh-keygen is not installed (CI installs openssh-server where it can).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_train_monitor.remote.client.failures import RemoteRequestFailed
from gpu_train_monitor.remote.client.link import AgentLink
from gpu_train_monitor.remote.client.target import RemoteTarget
from gpu_train_monitor.store.run_store import RunStore
from tests.support.processes import WAIT_S
from tests.support.sshd import SshServer, gpu_train_monitor_script, skip_reason, ssh_server

TRAIN = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
EVIL = "open(__file__ + '.ran', 'w').write('ran')\n"  # leaves a mark if it ever runs


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[SshServer, Path, Path]]:
    """A server whose only key is forced to the agent allowing `projects`; (server, projects, elsewhere)."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    projects, elsewhere = tmp_path / "projects", tmp_path / "elsewhere"
    projects.mkdir()
    elsewhere.mkdir()
    (projects / "train.py").write_text(TRAIN, encoding="utf-8")
    (elsewhere / "evil.py").write_text(EVIL, encoding="utf-8")
    (elsewhere / "models.py").write_text(EVIL + "def make():\n    return None\n", encoding="utf-8")
    (projects / "escape.py").symlink_to(elsewhere / "evil.py")
    store = tmp_path / "remote-store" / "runs.sqlite3"
    store.parent.mkdir()
    forced = shlex.join([str(gpu_train_monitor_script()), "agent", "--runs-db", str(store), "--allow", str(projects)])
    with ssh_server(tmp_path / "sshd", forced_command=forced) as server:
        monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", server.ssh_program)
        yield server, projects, elsewhere


def test_a_forced_command_key_gets_the_agent_whatever_it_asks_for(machine) -> None:
    server, _, _ = machine
    shell = server.ssh("sh", "-c", "echo a shell")  # what a shell would answer: the agent's hello instead
    assert "a shell" not in shell.stdout and '"hello"' in shell.stdout, shell.stdout + shell.stderr


def test_the_agent_runs_only_what_its_allowed_folder_holds(machine) -> None:
    server, projects, elsewhere = machine
    refused = {
        "a script outside": ("watch", {"argv": [str(elsewhere / "evil.py")], "cwd": str(projects)}),
        "'..' out": ("watch", {"argv": ["../elsewhere/evil.py"], "cwd": str(projects)}),
        "a link out": ("watch", {"argv": ["escape.py"], "cwd": str(projects)}),
        "a folder outside": ("watch", {"argv": ["evil.py"], "cwd": str(elsewhere)}),
        "-m of an installed module": ("watch", {"argv": ["-m", "http.server"], "cwd": "/usr/lib"}),
        "-m of the standard library here": ("watch", {"argv": ["-m", "json.tool"], "cwd": str(projects)}),
        "-c": ("watch", {"argv": ["-c", "print(1)"], "cwd": str(projects)}),
        "a factory from outside": ("start", {"config": {"model": f"{elsewhere}/models.py:make"}}),
        "a standard-library factory": ("start", {"config": {"model": "tempfile:mkdtemp"}}),
        "a dataset folder outside": ("start", {"config": {"dataset": "imagefolder", "data_dir": str(elsewhere)}}),
    }
    link = AgentLink(RemoteTarget.parse(server.alias))
    link.connect()
    try:
        for case, (op, args) in refused.items():
            with pytest.raises(RemoteRequestFailed) as error:
                link.request(op, **args)
            assert error.value.kind == "user_error" and "\n" not in str(error.value), case
        started = link.request("watch", argv=["train.py"], cwd=str(projects), uid="allowed-run")
    finally:
        link.close()
    assert started["uid"] == "allowed-run"
    store = server.folder.parent / "remote-store" / "runs.sqlite3"
    deadline = time.monotonic() + WAIT_S
    status = None
    while time.monotonic() < deadline and status not in ("completed", "failed", "interrupted"):
        time.sleep(0.5)
        with RunStore(store) as runs:
            run_id = runs.find_uid("allowed-run")
            status = runs.run(run_id).status if run_id is not None else None
    assert status == "completed"
    assert not list(elsewhere.glob("*.ran"))  # nothing of theirs ran
