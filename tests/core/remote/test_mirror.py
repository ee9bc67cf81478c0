"""A remote run copied into the local store row by row is the same run there: its facts (with the remote's host),
steps, reports and events; chunks sent twice or cut anywhere change nothing, and the cursor says where to go on."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from gpu_train_monitor.remote.agent import store_rows
from gpu_train_monitor.remote.client.mirror import MirrorError, cursor, mirror_chunk
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.rows import PHASE_COLUMNS
from gpu_train_monitor.store.run_store import RunStore
from tests.support.cli import cli_in_process
from tests.support.remote_stores import contents
from tests.support.run_store_support import SHORT, record_run


@pytest.fixture(scope="module")
def remote(tmp_path_factory) -> tuple[Path, int]:
    """A store with one real short run, recorded as if on another machine (host gpu-box)."""
    path = tmp_path_factory.mktemp("remote") / "remote.sqlite3"
    run_id = record_run(path, SHORT.replace(max_steps=20))
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET host = 'gpu-box' WHERE id = ?", (run_id,))
    db.commit()
    db.close()
    return path, run_id


def chunk_of(path: Path, run_id: int, after_step: int = 0, after_seq: int = 0) -> dict:
    """What the agent sends for the run's rows after the cursor (gpu_train_monitor.remote.agent.store_rows, through
    protocol lines), its chunks joined into one."""
    with RunStore(path) as store:
        sent = store_rows.chunks(store_rows.snapshot(store, run_id, after_step, after_seq))
    chunks = [protocol.decode(protocol.encode(chunk)) for chunk in sent]
    joined = protocol.empty_chunk(chunks[-1]["run"])
    for chunk in chunks:
        for table in protocol.CHUNK_TABLES:
            joined[table] += chunk[table]
    return joined


def test_one_chunk_makes_the_same_run_locally_with_the_remote_host(remote, tmp_path):
    path, run_id = remote
    with RunStore(tmp_path / "local.sqlite3") as local:
        local_id = mirror_chunk(local, chunk_of(path, run_id), origin="gpu-box")
        row = local.run(local_id)
        assert row.host == "gpu-box"
        assert row.status == "completed" and row.steps == 20
        assert local.steps(local_id).steps == tuple(range(1, 21))
        assert cursor(local, row.uid) == (20, contents(path, row.uid)["events"][-1][0])
    assert contents(tmp_path / "local.sqlite3", row.uid) == contents(path, row.uid)
    assert len(contents(path, row.uid)["reports"]) > 2 and contents(path, row.uid)["events"]
    with RunStore(tmp_path / "local.sqlite3") as local, RunStore(path) as remote_store:
        phases = [r.phases for r in local.reports(local_id)]
        assert phases == [r.phases for r in remote_store.reports(run_id)] and any(phases)  # each report's split


def test_an_agent_from_before_step_phases_sends_reports_that_land_untimed(remote, tmp_path):
    """An agent whose store is at schema version 5 sends reports without the phase columns: NULL here."""
    path, run_id = remote
    everything = chunk_of(path, run_id)
    everything["reports"] = [{k: v for k, v in r.items() if k not in PHASE_COLUMNS} for r in everything["reports"]]
    with RunStore(tmp_path / "local.sqlite3") as local:
        local_id = mirror_chunk(local, everything, origin="gpu-box")
        reports = local.reports(local_id)
        with RunStore(path) as remote_store:
            sent = remote_store.reports(run_id)
    assert [r.phases for r in reports] == [None] * len(sent) and len(sent) > 2
    assert [dataclasses.replace(r, **dict.fromkeys(PHASE_COLUMNS)) for r in sent] == reports  # all else as sent


def test_a_run_copied_piece_by_piece_with_overlaps_and_cuts_is_the_same_run(remote, tmp_path):
    path, run_id = remote
    everything = chunk_of(path, run_id)
    with RunStore(tmp_path / "local.sqlite3") as local:
        uid = everything["run"]["uid"]
        assert cursor(local, uid) == (0, 0)
        # the backfill cut anywhere: steps before their report, events alone, a report's rows twice
        for start in range(0, len(everything["steps"]), 3):
            piece = protocol.empty_chunk(everything["run"])
            piece["steps"] = everything["steps"][start : start + 3]
            piece["reports"] = [r for r in everything["reports"] if r["step"] <= start + 1]
            piece["events"] = everything["events"][: start // 3]
            mirror_chunk(local, piece, origin="gpu-box")
            last_step, last_seq = cursor(local, uid)
            assert last_step <= min(start + 3, max(r["step"] for r in everything["reports"]))
        mirror_chunk(local, chunk_of(path, run_id, *cursor(local, uid)), origin="gpu-box")  # then on from the cursor
    assert contents(tmp_path / "local.sqlite3", uid) == contents(path, uid)


def test_the_cursor_never_passes_a_step_whose_report_has_not_arrived(remote, tmp_path):
    path, run_id = remote
    everything = chunk_of(path, run_id)
    first_report = everything["reports"][0]["step"]
    piece = protocol.empty_chunk(everything["run"])
    piece["steps"] = everything["steps"]  # every step, but only the first report
    piece["reports"] = everything["reports"][:1]
    with RunStore(tmp_path / "local.sqlite3") as local:
        mirror_chunk(local, piece, origin="gpu-box")
        assert cursor(local, everything["run"]["uid"])[0] == first_report


def test_a_run_row_alone_updates_the_copy(remote, tmp_path):
    path, run_id = remote
    everything = chunk_of(path, run_id)
    running = {**everything["run"], "status": "running", "finished_at": None, "steps": 5}
    with RunStore(tmp_path / "local.sqlite3") as local:
        local_id = mirror_chunk(
            local, {**protocol.empty_chunk(running), "steps": everything["steps"][:5]}, origin="gpu-box"
        )
        assert local.run(local_id).steps == 5
        mirror_chunk(local, protocol.empty_chunk(everything["run"]), origin="gpu-box")
        assert local.run(local_id).status == "completed" and local.run(local_id).steps == 20
        assert local.find_uid(everything["run"]["uid"]) == local_id  # one run, updated in place


def test_a_temporary_copy_keeps_the_remote_id_and_a_newer_agents_columns_are_left_out(remote, tmp_path):
    path, run_id = remote
    everything = chunk_of(path, run_id)
    everything["run"] = {**everything["run"], "id": 4711, "gpu_temperature": 71}
    everything["steps"][0]["grad_norm"] = 0.5
    with RunStore(tmp_path / "local.sqlite3") as local:
        assert mirror_chunk(local, everything, origin="gpu-box", keep_id=True) == 4711
        assert local.run(4711).steps == 20


@pytest.mark.parametrize(
    "chunk",
    [
        {"run": "not an object"},
        {"steps": [{"step": 1, "epoch": 0, "loss": 1.0}]},  # rows of no run
        {"run": {"uid": "new-run"}},  # a run without its facts
        {"run": {"uid": "x"}, "steps": "not a list"},
        {"run": {"uid": "x"}, "steps": [{"step": {"nested": 1}}]},
    ],
)
def test_a_chunk_in_another_format_is_one_clear_error_and_writes_nothing(chunk, tmp_path):
    with RunStore(tmp_path / "local.sqlite3") as local:
        with pytest.raises(MirrorError) as error:
            mirror_chunk(local, chunk, origin="gpu-box")
        assert "\n" not in str(error.value)
        assert local.list_runs() == []


def test_a_copy_marked_interrupted_here_is_running_again_when_the_agent_sends_more(remote, tmp_path):
    """This machine judges a copied run's liveness by its heartbeat (the remote's clock): clocks a minute apart or a
    long drop mark it interrupted here. A change the agent sends without a status says it still runs there."""
    path, run_id = remote
    everything = chunk_of(path, run_id)
    running = {**everything["run"], "status": "running", "finished_at": None, "steps": 5}
    uid = running["uid"]
    with RunStore(tmp_path / "local.sqlite3") as local:
        local_id = mirror_chunk(
            local, {**protocol.empty_chunk(running), "steps": everything["steps"][:5]}, origin="gpu-box"
        )
        local.connection.execute(
            "UPDATE runs SET status = 'interrupted', finished_at = heartbeat_at, message = 'gone' WHERE id = ?",
            (local_id,),
        )
        mirror_chunk(
            local,
            {**protocol.empty_chunk({"uid": uid, "steps": 6}), "steps": everything["steps"][5:6]},
            origin="gpu-box",
        )
        row = local.run(local_id)
        assert (row.status, row.finished_at, row.message, row.steps) == ("running", None, "", 6)
        mirror_chunk(
            local, protocol.empty_chunk(everything["run"]), origin="gpu-box"
        )  # then it ends there: its status comes
        assert local.run(local_id).status == "completed"


def test_a_copy_never_replaces_a_run_recorded_here(remote, tmp_path):
    """A remote run whose uid is a local run's (crafted, or by chance) is refused, and the local run is left byte for
    byte as it was: its steps, reports and events."""
    path, run_id = remote
    local_path = tmp_path / "local.sqlite3"
    local_id = record_run(local_path, SHORT.replace(max_steps=6))
    with RunStore(local_path) as local:
        uid = local.run(local_id).uid
    before = contents(local_path, uid)
    clash = chunk_of(path, run_id)
    clash["run"] = {**clash["run"], "uid": uid}
    with RunStore(local_path) as local:
        with pytest.raises(MirrorError) as refused:
            mirror_chunk(local, clash, uid, origin="gpu-box")
        assert local.run(local_id).host != "gpu-box" and len(local.list_runs()) == 1
    assert str(refused.value) == (
        f"run {uid} of gpu-box was not copied: run {local_id} of this run store, recorded here, has that uid, and a "
        "copy never replaces it"
    )
    assert contents(local_path, uid) == before


def test_a_copy_never_replaces_a_copy_from_another_machine(remote, tmp_path):
    path, run_id = remote
    with RunStore(tmp_path / "local.sqlite3") as local:
        local_id = mirror_chunk(local, chunk_of(path, run_id), origin="box-a")
        uid = local.run(local_id).uid
        with pytest.raises(MirrorError, match="copied from box-a, has that uid"):
            mirror_chunk(local, chunk_of(path, run_id), uid, origin="box-b")
        assert mirror_chunk(local, chunk_of(path, run_id), uid, origin="box-a") == local_id  # its own copy goes on


def test_a_mirror_writes_only_the_run_it_follows(remote, tmp_path):
    path, run_id = remote
    with RunStore(tmp_path / "local.sqlite3") as local:
        with pytest.raises(MirrorError, match="while run followed-one is followed"):
            mirror_chunk(local, chunk_of(path, run_id), "followed-one", origin="gpu-box")
        assert local.list_runs() == []


GARBAGE = [
    ("steps", 0, "loss", "1.5"),  # a loss that is a string
    ("steps", 0, "step", 10**30),  # past SQLite's 64 bits
    ("steps", 0, "epoch", 2.5),
    ("reports", 0, "samples_per_s", "fast"),
    ("reports", 0, "at", 10**400),  # past what a float holds
    ("events", 0, "data", "{not json"),
    ("run", None, "status", "hacked"),  # a status no reader knows
    ("run", None, "model", 5),
    ("run", None, "batch_size", None),  # a value the column requires
    ("run", None, "config", "[1, 2"),
]


@pytest.mark.parametrize(("table", "index", "column", "value"), GARBAGE)
def test_garbage_from_an_agent_stores_nothing_and_the_local_store_stays_readable(
    remote, tmp_path, table, index, column, value
):
    path, run_id = remote
    chunk = chunk_of(path, run_id)
    if index is None:
        chunk[table] = {**chunk[table], column: value}
    else:
        chunk[table][index] = {**chunk[table][index], column: value}
    local_path = tmp_path / "local.sqlite3"
    record_run(local_path, SHORT.replace(max_steps=2))  # a run of this machine's, to list afterwards
    with RunStore(local_path) as local:
        with pytest.raises(MirrorError) as refused:
            mirror_chunk(local, chunk, origin="gpu-box")
        assert local.find_uid(chunk["run"]["uid"]) is None  # nothing of the chunk was stored
    assert "\n" not in str(refused.value) and f"{column}" in str(refused.value)
    listed = cli_in_process("runs", "list", "--runs-db", str(local_path))
    shown = cli_in_process("runs", "show", "1", "--runs-db", str(local_path))
    assert listed.returncode == 0 and shown.returncode == 0, listed.stderr + shown.stderr
