"""A stored event comes back as the core event it was, with its texts translatable again."""

from __future__ import annotations

import json

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.events.events import LogMessage
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
