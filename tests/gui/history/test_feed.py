"""A stored event comes back as the core event it was, with its texts translatable again."""

from __future__ import annotations

import json

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.events.events import LogMessage, OutOfMemory
from gpu_train_monitor.events.module_bytes import ModuleBytes
from gpu_train_monitor.gui.history.feed import rebuild_event
from gpu_train_monitor.store.run_writes import event_data


def test_a_stored_log_message_is_rebuilt_with_its_template():
    text = Message("cache cleared: {freed} freed", freed="1.00 MB")
    event = rebuild_event("LogMessage", json.loads(json.dumps(event_data(LogMessage("info", text)))))
    assert isinstance(event.text, Message) and event.text.template == text.template and event.text == text


def test_a_log_message_stored_by_an_older_version_stays_its_english():
    event = rebuild_event("LogMessage", {"level": "warning", "text": "an English line"})
    assert event == LogMessage("warning", "an English line") and not isinstance(event.text, Message)


def test_a_damaged_template_falls_back_to_the_english():
    data = {"level": "info", "text": "freed 1 MB", "text_message": {"template": "freed {size}", "params": {}}}
    assert rebuild_event("LogMessage", data).text == "freed 1 MB"


def test_a_stored_out_of_memory_comes_back_with_its_autopsy_and_one_stored_before_it_without():
    held = (ModuleBytes("layer4", activations_bytes=3 * 10**9), ModuleBytes("layer3", params_bytes=10**9))
    event = OutOfMemory(
        4, 64, 2**30, 10**9, 0, "stop", None, "out of memory", "train", held, 8 * 10**9, "predicted", 64, 48
    )
    rebuilt = rebuild_event("OutOfMemory", json.loads(json.dumps(event_data(event))))
    assert rebuilt == event and isinstance(rebuilt.holders, tuple)
    old = {key: value for key, value in event_data(event).items() if not key.startswith(("holders", "fits"))}
    assert rebuild_event("OutOfMemory", old) == OutOfMemory(4, 64, 2**30, 10**9, 0, "stop", None, "out of memory")
