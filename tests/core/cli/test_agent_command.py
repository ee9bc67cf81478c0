"""`gpu-train-monitor agent` as a command: its stdout carries the protocol and nothing else (a stray print goes to
stderr), and a store it cannot open is one error line where the hello would be, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli import ENV, command

STRAY = """
from gpu_train_monitor.cli.agent_command import protocol_output
out = protocol_output()
print("a stray print", flush=True)
out.write(b'{"hello": {}}\\n')
out.flush()
"""


def test_only_protocol_lines_reach_stdout() -> None:
    result = subprocess.run([sys.executable, "-c", STRAY], capture_output=True, timeout=60, env=ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b'{"hello": {}}\n'
    assert b"a stray print" in result.stderr


def test_a_store_that_cannot_be_opened_is_one_error_line_instead_of_hello(tmp_path: Path) -> None:
    result = subprocess.run(
        command("agent", "--runs-db", str(tmp_path)), capture_output=True, text=True, timeout=60, env=ENV, input=""
    )
    assert result.returncode == 2
    (line,) = result.stdout.splitlines()
    answer = json.loads(line)
    assert answer["ok"] is False and answer["kind"] == "user_error" and answer["id"] is None
    assert "is a folder" in answer["error"]
    assert result.stderr.splitlines() == [f"gpu-train-monitor: error: {answer['error']}"]
