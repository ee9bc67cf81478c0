"""Memory snapshots for pytorch.org/memory_viz: CUDA only, refused elsewhere with the reason.

The CUDA side (a snapshot that loads and has segments) is in test_gpu_memory.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import (
    LogMessage,
    MemoryBreakdown,
    RunFinished,
    RunStarted,
    SnapshotSaved,
    StepsReported,
)
from gpu_train_monitor.memory.snapshot import MemoryHistory, unsupported_reason

FAST = RunConfig(
    device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, max_steps=3, report_interval=0.01
)


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_devices_without_the_cuda_allocator_say_why(device: str) -> None:
    reason = unsupported_reason(device)
    assert reason is not None and "CUDA caching allocator" in reason and device in reason
    with pytest.raises(UserError, match=f"memory snapshot: .*{device} has none"):
        MemoryHistory(device)


def test_a_torch_without_memory_history_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(torch.cuda.memory, "_record_memory_history")
    assert "needs torch >= 2.1" in (unsupported_reason("cuda:0") or "")


def test_cli_memory_snapshot_on_the_cpu_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "x.pickle"
    code = main(["run", "--device", "cpu", "--model", "tiny-cnn", "--memory-snapshot", str(target)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "gpu-train-monitor: error: --memory-snapshot: memory history is recorded by the "
        "CUDA caching allocator; cpu has none"
    ]
    assert not target.exists()


def test_cli_memory_snapshot_into_a_missing_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "x.pickle"
    code = main(["run", "--device", "cpu", "--model", "tiny-cnn", "--memory-snapshot", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert "--memory-snapshot" in err and "does not exist" in err


def test_a_session_asked_to_record_on_the_cpu_fails_as_a_user_error(tmp_path: Path) -> None:
    events: list[object] = []
    finished = TrainingSession(FAST, [events.append], snapshot_path=str(tmp_path / "x.pickle")).run()
    assert finished.status == "failed" and finished.user_error
    assert "memory snapshot" in finished.message and "CUDA" in finished.message
    assert not any(isinstance(e, RunStarted) for e in events)  # refused before anything was built


def test_a_snapshot_requested_without_recording_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    target = tmp_path / "x.pickle"
    events: list[object] = []
    session = TrainingSession(FAST, [events.append])

    def request_once(event: object) -> None:
        if isinstance(event, MemoryBreakdown) and event.step == 1:
            time.sleep(0.02)  # a report interval passes during step 1: step 1 is reported on its own
        if isinstance(event, StepsReported) and event.step == 1:
            session.request_snapshot(str(target))  # what Save snapshot… does during the run

    session.observers.append(request_once)
    finished = session.run()
    assert isinstance(finished, RunFinished) and finished.status == "completed"
    warnings = [e.text for e in events if isinstance(e, LogMessage) and e.level == "warning"]
    assert any("no memory history is being recorded" in text for text in warnings)
    assert not any(isinstance(e, SnapshotSaved) for e in events) and not target.exists()
