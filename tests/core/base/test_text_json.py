"""A Message crossing a process as JSON comes back with its template and values (the window translates it)."""

from __future__ import annotations

import json

from gpu_train_monitor.base.text import Message, message_from_json, message_to_json


def test_a_nested_message_survives_json_with_its_structure() -> None:
    inner = Message("at step {step}", step=7)
    text = Message(
        "out of memory {where} with batch size {batch_size}: {ratio:.2f}", where=inner, batch_size=256, ratio=0.5
    )
    back = message_from_json(json.loads(json.dumps(message_to_json(text))))
    assert isinstance(back, Message) and back == text == "out of memory at step 7 with batch size 256: 0.50"
    assert back.template == text.template and back.params["batch_size"] == 256
    assert isinstance(back.params["where"], Message) and back.params["where"].template == "at step {step}"


def test_plain_text_travels_as_itself() -> None:
    assert message_to_json("RuntimeError: boom") == "RuntimeError: boom"
    assert message_from_json("RuntimeError: boom") == "RuntimeError: boom"
    assert message_from_json(None) is None


def test_other_values_become_the_text_they_rendered_as() -> None:
    from pathlib import Path

    text = Message("cannot write {path}", path=Path("/tmp/x"))
    assert message_from_json(json.loads(json.dumps(message_to_json(text)))) == "cannot write /tmp/x"


def test_a_template_its_values_do_not_fill_is_refused() -> None:
    assert message_from_json({"template": "rank {rank} failed", "params": {"pid": 1}}) is None


def test_a_recorded_event_keeps_its_texts_template_beside_the_english():
    import json

    from gpu_train_monitor.events.events import LogMessage
    from gpu_train_monitor.store.run_writes import event_data

    text = Message("epoch {epoch}: {what}", epoch=2, what=Message("validation skipped"))
    data = json.loads(json.dumps(event_data(LogMessage("info", text))))
    assert data["text"] == "epoch 2: validation skipped"  # exports and `runs show` read the English
    again = message_from_json(data["text_message"])
    assert isinstance(again, Message) and again == text and again.params["what"].template == "validation skipped"
    assert "level_message" not in event_data(LogMessage("info", "plain"))


def test_a_run_s_stored_message_comes_back_translatable(tmp_path):
    import sqlite3

    from gpu_train_monitor.store.run_store import RunStore
    from gpu_train_monitor.store.schema import migrate

    path = tmp_path / "runs.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db)
    for uid in ("u1", "u2"):
        db.execute(
            "INSERT INTO runs (uid, started_at, heartbeat_at, finished_at, status, pid, pid_started_at, host, "
            "model, dataset, device, device_name, placement, batch_size, total_steps, steps, config, started) "
            f"VALUES ('{uid}', 1.0, 2.0, 2.0, 'completed', 1, 1.0, 'h', 'tiny-cnn', 'synthetic', 'cpu', 'CPU', "
            "'resident', 64, 2, 2, '{}', '{}')"
        )
    db.close()
    reason = Message("rank {rank} {how}", rank=1, how=Message("was killed by {signal}", signal="SIGKILL"))
    with RunStore(path) as store:
        store.record_failure("u1", reason)
        store.record_failure("u2", "plain English from an older launcher")
        first, second = sorted(store.list_runs(), key=lambda run: run.id)
    assert (
        isinstance(first.message, Message)
        and first.message == reason
        and first.message.params["how"].params == {"signal": "SIGKILL"}
    )
    assert second.message == "plain English from an older launcher" and not isinstance(second.message, Message)
