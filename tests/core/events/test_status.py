"""The run statuses: exit codes, which ended well, and that they are every word the run store writes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpu_train_monitor.store
from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.events.outcome import Diverged, OutOfMemoryStop, Stopped, ended_by, trained
from gpu_train_monitor.events.status import EXIT_CODES, EXIT_INTERRUPTED, Status
from gpu_train_monitor.store.run_store import FINISHED


def test_exit_codes_follow_the_status() -> None:
    assert [Status(word).exit_code for word in ("completed", "stopped", "diverged", "oom", "failed")] == [
        0,
        EXIT_INTERRUPTED,
        1,
        1,
        1,
    ]
    assert Status.INTERRUPTED.exit_code == 1  # the run did not end well
    with pytest.raises(KeyError):
        Status.RUNNING.exit_code  # a live run has no exit code yet
    assert set(EXIT_CODES) == {status for status in Status if status.finished}


def test_ended_well_and_failed_split_the_endings() -> None:
    assert {s for s in Status if s.ended_well} == {Status.COMPLETED, Status.STOPPED}
    assert {s for s in Status if s.failed} == {Status.DIVERGED, Status.OOM, Status.FAILED}
    assert not Status.INTERRUPTED.ended_well and not Status.INTERRUPTED.failed
    assert not Status.RUNNING.finished and all(s.finished for s in Status if s is not Status.RUNNING)


def test_a_status_is_the_stored_word() -> None:
    assert Status.OOM == "oom" and f"{Status.OOM}" == "oom" and {Status.OOM: 1}["oom"] == 1
    assert Status.of("completed") is Status.COMPLETED and Status.of("a newer version's word") is None


def test_every_ending_a_run_reports_is_a_status() -> None:
    outcomes = [
        trained(5, 5),
        trained(4, 5),
        ended_by(Stopped()),
        ended_by(Diverged(3, float("nan"))),
        ended_by(OutOfMemoryStop("out of memory")),
        ended_by(UserError("bad")),
        ended_by(RuntimeError("x")),
        ended_by(SystemExit(3)),
    ]
    assert [type(outcome.status) for outcome in outcomes] == [Status] * len(outcomes)
    assert {outcome.status for outcome in outcomes} == {s for s in Status if s.finished} - {Status.INTERRUPTED}


def test_the_store_writes_only_statuses() -> None:
    """The statuses the store's SQL writes or looks for by name (a run starts `running`, a dead recorder's
    run becomes `interrupted`; the others come from the run's end) are members, and FINISHED is the rest."""
    words = set()
    for source in Path(gpu_train_monitor.store.__file__).parent.glob("*.py"):
        words |= set(re.findall(r"status\s*(?:=|!=)\s*'(\w+)'", source.read_text()))
        words |= set(re.findall(r"VALUES \([?, ]*'(\w+)'", source.read_text()))
    assert {"running", "interrupted"} <= words and words <= set(Status)
    assert set(FINISHED) == {status for status in Status if status.finished}
