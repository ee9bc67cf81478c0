"""The agent's jobs (a comparison, a batch-size search) with the agent as a local subprocess: bad input is one
user_error and starts nothing; a job's journal streams from any line on, live, to its end line, also to another
agent after the first was killed; a job killed there ends its stream "died"; Stop reaches a comparison there;
its runs are recorded in the agent's store."""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest

from gpu_train_monitor.remote.agent.spawn import log_folder
from gpu_train_monitor.remote.wire.values import decode
from gpu_train_monitor.store.run_store import RunStore
from tests.support.agent_pipe import AgentPipe
from tests.support.remote_stores import kill_processes_mentioning

CONFIG = {
    "device": "cpu",
    "model": "tiny-cnn",
    "synthetic_samples": 256,
    "batch_size": 8,
    "max_steps": 12,
    "report_interval": 0.05,
}
JOB_S = 90.0  # a job imports torch and trains on a shared 2-core machine


@pytest.fixture(autouse=True)
def no_job_left(tmp_path):
    """The jobs are detached on purpose: one a failed test leaves is killed, not left training."""
    yield
    kill_processes_mentioning(tmp_path)


def journal(agent: AgentPipe, uid: str, after: int = 0) -> tuple[list[dict], dict]:
    """Every journal line from `after` on and the stream's end."""
    stream = agent.result("journal", uid=uid, after=after)["stream"]
    data, end = agent.stream_lines(stream, JOB_S)
    return [line for chunk in data for line in chunk["lines"]], end


def test_bad_input_is_one_user_error_and_starts_nothing(tmp_path):
    store = tmp_path / "remote.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        one_run = agent.request("compare", config=CONFIG, overrides=[{"batch_size": 8}])
        assert not one_run["ok"] and one_run["kind"] == "user_error" and "2 to 4" in one_run["error"], one_run
        unknown = agent.request("compare", config=CONFIG, overrides=[{"bogus": 1}, {"batch_size": 4}])
        assert not unknown["ok"] and unknown["kind"] == "user_error", unknown
        bad = agent.request("find", config={**CONFIG, "batch_size": -1})
        assert not bad["ok"] and bad["kind"] == "user_error" and "batch_size" in bad["error"], bad
        margin = agent.request("find", config=CONFIG, margin=2.0)
        assert not margin["ok"] and "margin" in margin["error"], margin
        many = agent.request("find", config={**CONFIG, "nproc": 2})
        assert not many["ok"] and "one process" in many["error"], many
        missing = agent.request("journal", uid="0123abcd")
        assert not missing["ok"] and missing["kind"] == "not_found", missing
    assert not log_folder(store).exists() or not list(log_folder(store).glob("*.spec.json"))


def test_a_comparison_journals_every_event_records_its_runs_and_a_cursor_resumes(tmp_path):
    store = tmp_path / "remote.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        started = agent.result("compare", config=CONFIG, overrides=[{"batch_size": 8}, {"batch_size": 16}])
        lines, end = journal(agent, started["uid"])
    assert end["reason"] == "finished", end
    events = [decode(line["event"]) for line in lines if "event" in line]
    names = [type(event).__name__ for event in events]
    assert names[0] == "ComparisonStarted" and names[-1] == "ComparisonFinished"
    assert "end" in lines[-1] and decode(lines[-1]["end"]["result"]) == events[-1].result
    assert events[-1].result.status == "completed" and len(events[-1].result.runs) == 2
    with RunStore(store, readonly=True) as runs:
        assert sorted(row.label for row in runs.list_runs()) == ["batch_size=16", "batch_size=8"]
    with AgentPipe(store) as again:  # another connection, from line 5 on: only the later lines
        again.connect()
        later, end = journal(again, started["uid"], after=5)
    assert later == lines[5:] and end["reason"] == "finished"


def test_a_job_outlives_a_killed_agent_and_stop_reaches_it(tmp_path):
    store = tmp_path / "remote.sqlite3"
    endless = {**CONFIG, "max_steps": 100_000}
    with AgentPipe(store) as agent:
        agent.connect()
        started = agent.result("compare", config=endless, overrides=[{"batch_size": 8}, {"batch_size": 16}])
    # the agent is gone (killed at exit); the job trains on
    assert psutil.pid_exists(started["pid"])
    with AgentPipe(store) as agent:
        agent.connect()
        stream = agent.result("journal", uid=started["uid"], after=0)["stream"]
        deadline = time.monotonic() + JOB_S
        while time.monotonic() < deadline:  # until the first run reports
            line = agent.read_until(lambda line: line.get("stream") == stream, JOB_S)
            if any("StepsReported" in str(item.get("event")) for item in line.get("data", {}).get("lines", ())):
                break
        assert agent.result("control", uid=started["uid"], control="stop") == {}
        data, end = agent.stream_lines(stream, JOB_S)
    assert end["reason"] == "finished", end
    last = [line for chunk in data for line in chunk["lines"]][-1]
    result = decode(last["end"]["result"])
    assert result.status == "stopped" and len(result.runs) == 1  # the second run never started


def test_a_job_killed_there_ends_its_stream_died(tmp_path):
    store = tmp_path / "remote.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        started = agent.result("find", config=CONFIG, capacity=2_000_000_000, predict=False)
        os.kill(started["pid"], signal.SIGKILL)
        lines, end = journal(agent, started["uid"])
    assert end["reason"] == "died", end
    assert not any("end" in line for line in lines)
