"""A followed run's rows as "columns" (gpu_train_monitor.remote.wire.compact_rows): a fraction of the bytes, and every
value back as the remote store holds it: losses bit for bit, NULL losses NULL, the local copy equal row for row."""

from __future__ import annotations

import base64
import random
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from gpu_train_monitor.remote.agent import store_rows
from gpu_train_monitor.remote.client.link import AgentLink
from gpu_train_monitor.remote.client.mirror import mirror_chunk
from gpu_train_monitor.remote.wire import compact_rows, protocol
from gpu_train_monitor.remote.wire.compact_rows import Decoder, Encoder
from gpu_train_monitor.store.rows import PHASE_COLUMNS
from gpu_train_monitor.store.run_store import RunStore
from tests.support.remote_stores import contents, local_agent
from tests.support.run_store_support import SHORT, record_run


@pytest.fixture(scope="module")
def remote(tmp_path_factory) -> tuple[Path, str, store_rows.Snapshot]:
    """A store with one real run of 40 steps, one loss NULL (a NaN step) and one infinite; its uid and rows."""
    path = tmp_path_factory.mktemp("remote") / "remote.sqlite3"
    run_id = record_run(path, SHORT.replace(max_steps=40, report_interval=0.01))
    db = sqlite3.connect(path)
    db.execute("UPDATE steps SET loss = NULL WHERE run_id = ? AND step = 7", (run_id,))
    db.execute("UPDATE steps SET loss = 9e999 WHERE run_id = ? AND step = 8", (run_id,))
    db.commit()
    (uid,) = db.execute("SELECT uid FROM runs WHERE id = ?", (run_id,)).fetchone()
    db.close()
    with RunStore(path) as store:
        found = store_rows.snapshot(store, run_id)
    assert len(found.reports) > 5 and found.events
    return path, uid, found


def line(message: dict[str, Any]) -> dict[str, Any]:
    """The message as the other side reads it: through one protocol line."""
    return protocol.decode(protocol.encode(message))


def exact(value: Any) -> Any:
    """`value` with each float as its exact text: -0.0 and 0.0 differ, so do 1.0 and 1."""
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, dict):
        return {key: exact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [exact(item) for item in value]
    return value


def stream_of(found: store_rows.Snapshot, cuts: list[int]) -> list[dict[str, Any]]:
    """The run's rows as a follow stream sends them: cut after the given steps, the whole run row first."""
    chunks, after = [], -1
    for index, cut in enumerate([*sorted(set(cuts)), 10**9]):
        chunk = protocol.empty_chunk(found.run if index == 0 else {"uid": found.run["uid"], "steps": min(cut, 40)})
        for table in store_rows.STEP_TABLES:
            chunk[table] = [row for row in getattr(found, table) if after < row["step"] <= cut]
        chunk["events"] = [row for row in found.events if after < (row["step"] or 0) <= cut]
        chunks.append(chunk)
        after = max(after, cut)
    return chunks


def round_trip(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    encoder, decoder = Encoder(), Decoder()
    return [decoder.decode(line(encoder.encode(chunk))) for chunk in chunks]


@pytest.mark.parametrize("seed", range(40))
def test_a_recorded_run_cut_anywhere_comes_back_value_for_value(remote, seed):
    _, _, found = remote
    rng = random.Random(seed)
    chunks = stream_of(found, [rng.randint(1, 40) for _ in range(rng.randint(0, 12))])
    back = round_trip(chunks)
    expected = [line(chunk) for chunk in chunks]  # what objects carry: the same values, non-finite ones null
    for chunk in expected:
        for row in chunk["steps"]:
            row["loss"] = float("inf") if row["step"] == 8 else row["loss"]  # columns keep the infinite loss
    assert exact(back) == exact(expected)


def test_the_mirror_of_a_columns_stream_is_the_remote_store_row_for_row(remote, tmp_path):
    path, uid, found = remote
    with RunStore(tmp_path / "local.sqlite3") as local:
        for chunk in round_trip(stream_of(found, [3, 7, 8, 20, 21])):
            mirror_chunk(local, chunk, uid, origin="gpu-box")
    copy = contents(tmp_path / "local.sqlite3", uid)
    assert copy == contents(path, uid)
    with RunStore(tmp_path / "local.sqlite3") as local, RunStore(path) as remote_store:
        phases = [r.phases for r in local.reports(local.list_runs()[0].id)]
        assert phases == [r.phases for r in remote_store.reports(remote_store.find_uid(uid) or 0)] and any(
            phases
        )  # each report's split
    losses = {step: loss for step, _, loss in copy["steps"]}
    assert losses[7] is None and losses[8] == float("inf")  # NULL stays NULL, infinity stays infinity


def as_arrays(
    chunk: dict[str, Any], with_columns: bool = True, tables: dict[str, tuple[str, ...]] = protocol.CHUNK_TABLES
) -> dict[str, Any]:
    """The yardstick: a chunk's rows as plain lists in their columns' order (the "arrays" encoding the agent no
    longer offers), the column names once per stream."""
    compact = {key: value for key, value in chunk.items() if key not in tables}
    if with_columns:
        compact["columns"] = {table: list(columns) for table, columns in tables.items()}
    for table, columns in tables.items():
        compact[table] = [[row.get(column) for column in columns] for row in chunk.get(table, [])]
    return compact


def test_a_loss_costs_about_five_bytes_and_a_report_two_thirds_of_arrays(remote):
    """A fast run sends hundreds of losses a second and about ten reports: those are what the bytes are."""
    _, _, found = remote
    chunks = stream_of(found, [row["step"] for row in found.reports][1::2])
    encoder = Encoder()
    columns = [encoder.encode(chunk) for chunk in chunks]
    arrays = [as_arrays(chunk, index == 0) for index, chunk in enumerate(chunks)]

    def size(compact: list[dict[str, Any]], table: str) -> int:
        return sum(len(protocol.encode({"x": chunk[table]})) - 7 for chunk in compact if table in chunk)

    per_loss = len(Encoder().encode({"steps": found.steps})["steps"]["loss"]) / len(found.steps)
    assert per_loss < 5.5  # base64 of a float32
    assert size(columns, "steps") <= size(arrays, "steps")  # a step or two a chunk: as lists
    tens = stream_of(found, list(range(10, 40, 10)))  # many steps a chunk (a GPU run): as float32s
    steps = [len(protocol.encode({"x": Encoder().encode(chunk)["steps"]})) - 7 for chunk in tens]
    assert sum(steps) * 2 < size([as_arrays(chunk) for chunk in tens], "steps")
    # the reports' other columns: a report's step phases are measurements of the host's clock, new each report
    tables = {
        table: tuple(c for c in names if c not in PHASE_COLUMNS) for table, names in protocol.CHUNK_TABLES.items()
    }
    other_encoder = Encoder(tables)
    other = [other_encoder.encode(chunk) for chunk in chunks]
    others = [as_arrays(chunk, index == 0, tables) for index, chunk in enumerate(chunks)]
    assert size(other, "reports") < 0.75 * size(others, "reports")
    reports = sum(len(chunk["reports"]) for chunk in chunks)  # the phases: whole microseconds, sent as differences
    assert size(columns, "reports") - size(other, "reports") < 80 * reports  # (as seconds: ~150 bytes a report)
    live = [len(protocol.encode(chunk)) for chunk in columns[1:]]  # after the first (the whole run row, once)
    assert sum(live) < 0.8 * sum(len(protocol.encode(chunk)) for chunk in arrays[1:])


def a_float(rng: random.Random) -> float:
    """Any finite float64: random bits, signed zeros, subnormals and the extremes among them."""
    while True:
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if value == value and abs(value) != float("inf"):
            return rng.choice([value, value, 0.0, -0.0, 5e-324, -1.7976931348623157e308])


def a_loss(rng: random.Random) -> float | None:
    """NULL, a float32 value (bit for bit; no NaN: the store has none), or a float64 one."""
    kind = rng.randrange(4)
    if kind == 0:
        return None
    if kind == 3:
        return a_float(rng)
    while True:
        (value,) = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))
        if value == value and abs(value) != float("inf"):
            return rng.choice([value, value, -0.0, 1.401298464324817e-45])


def a_value(rng: random.Random) -> Any:
    return rng.choice(
        [None, rng.randint(-(2**62), 2**62), rng.randint(0, 9), a_float(rng), f"cuda:{rng.randint(0, 3)}"]
    )


def live_chunks(rng: random.Random) -> list[dict[str, Any]]:
    """A stream of chunks with steps (consecutive or not, losses float32 or float64 or NULL) and reports whose
    columns change from one row to the next or stay, ints, floats, NULLs and text alike."""
    names = protocol.REPORT_COLUMNS
    chunks, step, previous = [], 0, None
    for index in range(rng.randint(1, 5)):
        later = rng.choice([{"uid": "r1"}, {"uid": "r1", "steps": step}])
        chunk: dict[str, Any] = {**protocol.empty_chunk({"uid": "r1", "status": "running"} if index == 0 else later)}
        chunk["complete"] = True
        for _ in range(rng.randint(0, 6)):
            step += rng.choice([1, 1, 1, 2, 7])
            chunk["steps"].append({"step": step, "epoch": rng.randint(0, 3), "loss": a_loss(rng)})
        for _ in range(rng.randint(0, 3)):
            row = {name: a_value(rng) if previous is None or rng.random() < 0.5 else previous[name] for name in names}
            chunk["reports"].append(row)
            previous = row
        chunks.append(chunk)
    return chunks


@pytest.mark.parametrize("seed", range(300))
def test_any_steps_and_reports_come_back_bit_for_bit(seed):
    chunks = live_chunks(random.Random(seed))
    assert exact(round_trip(chunks)) == exact([line(chunk) for chunk in chunks])


def test_steps_that_are_not_float32_losses_in_a_row_travel_as_lists():
    assert Encoder().encode({"steps": [{"step": 1, "epoch": 0, "loss": 0.1}]})["steps"] == [[1, 0, 0.1]]
    gap = [{"step": 1, "epoch": 0, "loss": 0.5}, {"step": 3, "epoch": 0, "loss": 0.5}]
    assert Encoder().encode({"steps": gap})["steps"] == [[1, 0, 0.5], [3, 0, 0.5]]
    assert Encoder().encode({"steps": gap[:1]})["steps"] == [[1, 0, 0.5]]  # one step: shorter as a list
    rows = [{"step": 5, "epoch": 1, "loss": 0.5}, {"step": 6, "epoch": 2, "loss": None}]
    rows.append({"step": 7, "epoch": 2, "loss": float("inf")})  # a list would carry it as null
    assert Encoder().encode({"steps": rows})["steps"] == {
        "first": 5,
        "epochs": [[1, 1], [2, 2]],
        "loss": base64.b64encode(bytes.fromhex("0000003f0000c07f0000807f")).decode(),
    }


@pytest.mark.parametrize(
    ("compact", "why"),
    [
        ({"columns": "steps"}, "columns"),
        ({"steps": {"first": 1, "epochs": [[0, 2]], "loss": "AAAAPw=="}}, "1 losses for 2 steps"),
        ({"steps": {"first": 1, "epochs": [[0, 1]], "loss": "not base64!"}}, "not base64"),
        ({"steps": {"first": 1, "epochs": [[0, -1]], "loss": ""}}, "pairs"),
        ({"reports": [[3, 1, 2.0]]}, "lacks values"),
        ({"reports": [[1, 1, 2.0]]}, "does not match"),
        ({"events": [[1]]}, "does not match"),
        ({"run": []}, "not an object"),
    ],
)
def test_a_chunk_in_another_format_is_a_protocol_error(compact, why):
    message = {"columns": {table: list(names) for table, names in protocol.CHUNK_TABLES.items()}, **compact}
    with pytest.raises(protocol.ProtocolError, match=why) as error:
        Decoder().decode(message)
    assert error.value.kind == protocol.BAD_REQUEST


def test_the_agent_answers_run_in_columns(remote, tmp_path):
    path, uid, _ = remote
    with AgentLink(local_agent(path)) as link:
        link.connect()
        reply = link.request("run", uid=uid, rows=compact_rows.MODE)
    assert isinstance(reply["steps"], dict) and reply["complete"] is True
    with RunStore(tmp_path / "local.sqlite3") as local:
        mirror_chunk(local, Decoder().decode(reply), origin="gpu-box")
    assert contents(tmp_path / "local.sqlite3", uid) == contents(path, uid)


def test_a_second_of_a_run_at_500_steps_and_10_reports_streams_under_5_kB(remote):
    """One second of a fast GPU run's follow stream as the agent sends it (issue 21's goal: < 5 kB/s): five polls
    of 100 steps (this run's own losses) and two reports (its own rows, renumbered) each, and the run row's
    progress once, each chunk on its protocol line."""
    _, uid, found = remote
    losses = [row["loss"] for row in found.steps]
    encoder = Encoder()
    encoder.encode(protocol.empty_chunk(found.run))  # the stream's first chunk: the whole run row, once
    progress = ("uid", "steps", "samples_per_s", "loss_last", "peak_allocated_bytes", "peak_reserved_bytes")
    step, sent = 1000, 0
    for poll in range(5):
        run = {name: found.run[name] for name in (*progress, "heartbeat_at")} if poll == 0 else {"uid": uid}
        chunk = protocol.empty_chunk(run)
        chunk["steps"] = [{"step": step + n, "epoch": 3, "loss": losses[n % len(losses)]} for n in range(1, 101)]
        for n in (50, 100):
            report = found.reports[(2 * poll + n // 50) % len(found.reports)]
            chunk["reports"].append({**report, "step": step + n, "samples": (step + n) * 32})
        step += 100
        sent += len(protocol.encode(protocol.stream_data(7, encoder.encode(chunk))))
    assert sent < 5000
    arrays = as_arrays(chunk, with_columns=False)
    assert sent < len(protocol.encode(protocol.stream_data(7, arrays))) * 5 / 2.5  # arrays: ~2.5 times as many
