"""`gpu-train-monitor snapshot PATH [--json]`: a snapshot's summary as text and JSON; bad files are one line, exit 2."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from tests.support import snapshots
from tests.support.cli import cli_in_process, user_error_line
from tests.support.snapshots import USER_STACK, block, event, segment, snapshot

JSON_KEYS = {
    "path",
    "device",
    "devices",
    "events",
    "start_bytes",
    "peak_bytes",
    "peak_event",
    "end_bytes",
    "reserved_bytes",
    "bound_bytes",
    "oom_events",
    "duration_s",
    "stacks_recorded",
    "largest_at_peak",
}


def _write(tmp_path: Path) -> Path:
    trace = [
        event("alloc", 0x1000, 3_000_000, 10, USER_STACK),
        event("alloc", 0x2000, 1_000_000, 20),
        event("free_requested", 0x1000, 3_000_000, 30),
        event("free_completed", 0x1000, 3_000_000, 40),
    ]
    data = snapshot([segment(0, 8_000_000, [block(0x2000, 1_000_000)])], [trace])
    return snapshots.write(tmp_path / "run.pickle", data)


def test_json_summary_has_the_documented_keys(tmp_path: Path) -> None:
    result = cli_in_process("snapshot", str(_write(tmp_path)), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert set(summary) == JSON_KEYS
    assert summary["events"] == 4 and summary["peak_bytes"] == 4_000_000 and summary["peak_event"] == 1
    largest = summary["largest_at_peak"]
    assert [a["size_bytes"] for a in largest] == [3_000_000, 1_000_000]
    assert set(largest[0]) == {"address", "size_bytes", "event", "freed_event", "stack_depth", "frames"}
    assert (largest[0]["event"], largest[0]["freed_event"]) == (0, 3) and largest[1]["freed_event"] is None
    assert largest[0]["frames"][0] == {"filename": "/home/me/project/model.py", "line": 42, "name": "forward"}
    assert largest[1]["frames"] == [] and largest[1]["stack_depth"] == 0
    documented = Path(__file__).resolve().parents[3] / "docs" / "command-line.md"
    text = documented.read_text()
    assert all(f"`{key}`" in text for key in JSON_KEYS)


def test_text_summary(tmp_path: Path) -> None:
    result = cli_in_process("snapshot", str(_write(tmp_path)), "--top", "1")
    assert result.returncode == 0, result.stderr
    assert "4.00 MB live after event 1" in result.stdout
    assert "/home/me/project/model.py:42 in forward" in result.stdout
    assert "1.00 MB  at" not in result.stdout  # --top 1


def test_a_malicious_file_is_refused_in_one_line(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self) -> tuple[object, ...]:
            return (os.system, (f"touch {marker}",))

    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [[Payload()]]}))
    user_error_line(cli_in_process("snapshot", str(path)), "refused", "nothing was run")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(None, "No such file"), (b"not a pickle", "not a pickle"), (pickle.dumps({"a": 1}), "not a PyTorch memory")],
)
def test_unreadable_or_not_a_snapshot_is_one_line(tmp_path: Path, content: bytes | None, fragment: str) -> None:
    path = tmp_path / "file.pickle"
    if content is not None:
        path.write_bytes(content)
    user_error_line(cli_in_process("snapshot", str(path), "--json"), fragment)


def test_a_device_not_in_the_file_and_a_bad_top(tmp_path: Path) -> None:
    path = str(_write(tmp_path))
    user_error_line(cli_in_process("snapshot", path, "--device", "3"), "no device 3")
    user_error_line(cli_in_process("snapshot", path, "--top", "0"), "--top")
