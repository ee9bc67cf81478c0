"""How the launcher names a data-parallel run's failure from what its ranks left behind
(gpu_train_monitor.distributed.launcher)."""

from __future__ import annotations

import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.distributed.env import ENV_RANK_DIR
from gpu_train_monitor.distributed.launcher import RanksEnded, describe_failure, read_rank_ends, record_rank_end


def test_a_rank_s_end_comes_back_with_its_template_and_names_the_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_RANK_DIR, str(tmp_path))
    said = Message(
        "the loss became {loss} at step {step}; lower the learning rate or use --amp off", loss=float("nan"), step=4
    )
    record_rank_end(1, "diverged", said)
    record_rank_end(0, "failed", "RuntimeError: Connection closed by peer")  # the echo of rank 1's end
    ends = read_rank_ends(str(tmp_path))
    assert isinstance(ends[1]["message"], Message) and ends[1]["message"] == said
    assert ends[0]["message"] == "RuntimeError: Connection closed by peer"
    failure = describe_failure({1: SimpleNamespace(exitcode=1, pid=11, timestamp=1.0)}, ends, 2)
    assert failure == (
        "rank 1 ended the run (diverged): the loss became nan at step 4; lower the learning rate or use --amp off"
    )
    assert isinstance(failure, Message) and failure.params["message"].template == said.template


def test_a_rank_that_said_nothing_is_named_by_its_exit() -> None:
    killed = {0: SimpleNamespace(exitcode=-signal.SIGKILL, pid=42, timestamp=2.0)}
    text = describe_failure(killed, {}, 2)
    assert text == "rank 0 (pid 42) was killed by SIGKILL" and text.params["how"].template == "was killed by {signal}"
    exited = {1: SimpleNamespace(exitcode=3, pid=7, timestamp=1.0)}
    assert describe_failure(exited, {1: {"rank": 1, "status": "stopped", "message": "stopped by request"}}, 2) == (
        "rank 1 (pid 7) exited with code 3: stopped by request"
    )


def test_a_killed_rank_is_the_cause_whatever_words_the_others_found_for_losing_it() -> None:
    """Under load the surviving rank may fail first, with a message no list of "lost peer" words knows: the rank
    killed by SIGKILL is still the one named."""
    failures = {
        0: SimpleNamespace(exitcode=1, pid=40, timestamp=1.0),
        1: SimpleNamespace(exitcode=-signal.SIGKILL, pid=41, timestamp=2.0),
    }
    ends = {0: {"rank": 0, "status": "failed", "message": "RuntimeError: failed to recv, got 0 bytes", "at": 1.0}}
    assert describe_failure(failures, ends, 2) == "rank 1 (pid 41) was killed by SIGKILL"
    aborted = {1: SimpleNamespace(exitcode=-signal.SIGABRT, pid=41, timestamp=2.0)}  # a watchdog's echo: not the cause
    assert describe_failure(aborted, ends, 2).startswith("rank 0 ended the run (failed)")


def test_a_rank_that_vanished_is_named_when_torch_reported_only_the_echo_of_its_going() -> None:
    """torch's launcher reports the first failed process it notices: under load that can be the survivor, whose
    only words are a lost connection, while the killed rank is in no report at all."""
    echo = {0: SimpleNamespace(exitcode=1, pid=40, timestamp=1.0)}
    ends = {0: {"rank": 0, "status": "failed", "message": "RuntimeError: Read error: Connection reset by peer"}}
    assert describe_failure(echo, ends, 2) == (
        "rank 1 ended without a word (killed, or its process crashed), and the others lost their connection to it"
    )
    real = {0: {"rank": 0, "status": "failed", "message": "RuntimeError: no such file"}}  # its own failure: named
    assert describe_failure(echo, real, 2).startswith("rank 0 ended the run (failed)")


def test_the_end_line_says_who_failed_or_how_rank_0_ended_unless_the_run_completed() -> None:
    assert RanksEnded("u", 0, rank0={"status": "completed", "message": "all steps trained"}).end_line == ""
    assert RanksEnded("u", 130, rank0={"status": "stopped", "message": "stopped by request"}).end_line == (
        "stopped: stopped by request"
    )
    assert RanksEnded("u", 1, "rank 1 (pid 7) was killed by SIGKILL").end_line == (
        "failed: rank 1 (pid 7) was killed by SIGKILL"
    )
    assert RanksEnded("u", 2, "rank 0 ended the run (failed): no such dataset", user_error=True).end_line == ""
    assert RanksEnded("u", 143).end_line == ""  # rank 0 said nothing: nothing to add
