"""A Message crossing a process as JSON comes back with its template and values (the window translates it)."""

from __future__ import annotations

import json

from core.message import Message
from core.message_json import message_from_json, message_to_json


def test_a_nested_message_survives_json_with_its_structure() -> None:
    inner = Message("at step {step}", step=7)
    text = Message("out of memory {where} with batch size {batch_size}: {ratio:.2f}", where=inner, batch_size=256,
                   ratio=0.5)
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

    from core.events import LogMessage
    from core.run_recorder import event_data

    text = Message("epoch {epoch}: {what}", epoch=2, what=Message("validation skipped"))
    data = json.loads(json.dumps(event_data(LogMessage("info", text))))
    assert data["text"] == "epoch 2: validation skipped"  # exports and `runs show` read the English
    again = message_from_json(data["text_message"])
    assert isinstance(again, Message) and again == text and again.params["what"].template == "validation skipped"
    assert "level_message" not in event_data(LogMessage("info", "plain"))
