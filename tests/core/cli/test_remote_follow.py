"""gpu_train_monitor.cli.remote_follow without a remote: what `run --remote` does with the signals a window steers it
by."""

from __future__ import annotations

import argparse
import json
import queue
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_train_monitor.base.text import Message, message_to_json
from gpu_train_monitor.cli import remote_follow
from gpu_train_monitor.cli.watch_command import settle_run
from gpu_train_monitor.events.signals import Control
from gpu_train_monitor.events.status import Status
from gpu_train_monitor.remote.client.failures import RemoteError, Unreachable
from gpu_train_monitor.remote.client.follow import RunGone
from gpu_train_monitor.remote.client.target import RemoteTarget
from gpu_train_monitor.store.run_store import RunStore


@pytest.fixture
def restored_signals() -> Iterator[None]:
    numbers = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.getsignal(number) for number in numbers}
    for number in (signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_DFL)  # as a fresh process has them: their default ends it
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class _Unreachable:
    def __init__(self, target: RemoteTarget) -> None:
        self.target = target

    def connect(self) -> dict:
        raise Unreachable("cannot reach gpu-box: Connection refused")


def test_pause_and_clear_cache_never_end_run_remote_outside_its_forwarding(
    restored_signals: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The window may press Pause as the remote run ends (or before it started): SIGUSR2's default would kill
    this process with an exit code that is no run's status."""
    monkeypatch.setattr(remote_follow, "AgentLink", _Unreachable)
    target = RemoteTarget.parse("gpu-box")
    with pytest.raises(Unreachable):
        remote_follow.start_and_follow(argparse.Namespace(), target, "start", {}, tmp_path / "runs.sqlite3")
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGUSR2) is signal.SIG_IGN


class _Starts:
    """A link whose agent starts the run (the follow then fails on its own link)."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target
        self.alive = True

    def connect(self) -> dict:
        return {}

    def request(self, op: str, **args: object) -> dict:
        return {"uid": args.get("uid"), "pid": 4321}

    def close(self) -> None:
        self.alive = False


@pytest.mark.parametrize(
    ("failure", "goes_on"),
    [
        (Unreachable("cannot reach gpu-box: Connection refused"), True),
        (RunGone("the run on gpu-box ended before it recorded anything: no such device"), False),
    ],
)
def test_a_follow_that_fails_after_the_start_says_whether_the_run_goes_on_there(
    restored_signals: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, failure: Exception, goes_on: bool
) -> None:
    def follow_into_store(*args: object, **kwargs: object) -> str:
        raise failure

    monkeypatch.setattr(remote_follow, "AgentLink", _Starts)
    monkeypatch.setattr(remote_follow, "follow_into_store", follow_into_store)
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUN_UID", "u-7")
    target = RemoteTarget.parse("gpu-box")
    with pytest.raises(RemoteError) as raised:
        remote_follow.start_and_follow(argparse.Namespace(), target, "start", {}, tmp_path / "runs.sqlite3")
    message = str(raised.value)
    assert message.startswith(str(failure))
    assert ("the run goes on on gpu-box (uid u-7)" in message) is goes_on


def test_ctrl_c_stops_the_run_then_stops_following_then_ends_this_process(
    restored_signals: None, capsys: pytest.CaptureFixture
) -> None:
    """A second Ctrl+C leaves the follow to end (a reconnect under way may take its timeouts); a third must not
    wait for that."""
    controls: queue.Queue = queue.Queue()
    with remote_follow._forwarded_signals(controls) as seen:
        seen.following = True
        interrupt = signal.getsignal(signal.SIGINT)
        assert callable(interrupt)
        interrupt(signal.SIGINT, None)
        assert controls.get_nowait() is Control.STOP
        interrupt(signal.SIGINT, None)
        assert controls.get_nowait() is None  # stop following
        with pytest.raises(KeyboardInterrupt):
            interrupt(signal.SIGINT, None)
    assert "no longer following" in capsys.readouterr().err


def _finished_run(path: Path, uid: str, status: str, message: str = "") -> None:
    """A finished run in the store at `path`, as a mirror leaves a remote one."""
    with RunStore(path) as store:
        columns = ("uid", "started_at", "heartbeat_at", "status", "pid", "pid_started_at", "host", "model")
        columns += ("dataset", "device", "device_name", "placement", "batch_size", "total_steps", "config", "started")
        columns += ("message", "message_json", "finished_at")
        values = (uid, 1.0, 2.0, status, 1, 1.0, "gpu-box", "m", "d", "cpu", "cpu", "stream", 8, 5, "{}", "{}")
        values += (str(message), json.dumps(message_to_json(message)), 2.0)
        store.connection.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * 19)})", values)
        store.connection.commit()


def test_a_watched_script_that_failed_there_exits_with_its_own_code_as_a_local_watch_does(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    _finished_run(store, "w1", "completed")
    assert settle_run(store, "w1", 3)  # what the remote's `core watch` does when its script exits with 3
    args = argparse.Namespace(summary_json=None)
    assert remote_follow._report_end(args, store, "w1", Status.FAILED, terminated=False) == 3
    _finished_run(store, "w2", "failed", Message("out of patience"))  # any other failure: the status' code
    assert remote_follow._report_end(args, store, "w2", Status.FAILED, terminated=False) == 1


def test_how_a_remote_run_ended_is_printed_with_its_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The message is the remote's: an escape sequence in it must not clear this terminal, nor a carriage return
    rewrite the line it is on."""
    store = tmp_path / "runs.sqlite3"
    _finished_run(store, "w3", "failed", "boom\x1b[2J\rall fine")
    args = argparse.Namespace(summary_json=None)
    assert remote_follow._report_end(args, store, "w3", Status.FAILED, terminated=False) == 1
    captured = capsys.readouterr()
    assert "failed: boom\\x1b[2J\\rall fine" in captured.err
    assert "\x1b" not in captured.err + captured.out and "\r" not in captured.err + captured.out
