"""What a recorded run's window says about how it ended and the events it words itself: whole sentences,
the status in the window's words ('out of memory', not the store's 'oom'), the store's message as written."""

from __future__ import annotations

import dataclasses

import pytest

from gpu_train_monitor.gui.history.run_window_text import end_line, header_html
from gpu_train_monitor.store.run_store import RunStore
from tests.support.run_store_support import SHORT, record_run


@pytest.fixture(scope="module")
def row(tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "runs.sqlite3"
    run_id = record_run(path, SHORT)
    with RunStore(path) as store:
        return store.run(run_id)


def test_a_run_that_ended_without_a_summary_says_how_and_where(row):
    oom = dataclasses.replace(row, status="oom", message="out of memory at step 12 with batch 32")
    assert end_line(oom, None) == (
        f"out of memory at step {row.steps}: out of memory at step 12 with batch 32",
        "error",
    )
    interrupted = dataclasses.replace(row, status="interrupted", message="")
    assert end_line(interrupted, None) == (f"interrupted at step {row.steps}", "warning")


def test_the_header_says_what_the_run_was_and_where_it_ran(row):
    text = header_html(dataclasses.replace(row, message="a message <as stored>"), "completed", "#1565c0")
    assert f"tiny-cnn on synthetic, batch 32, {row.placement} placement, cpu" in text
    assert f"recorded by pid {row.pid} on {row.host}" in text
    assert "a message &lt;as stored&gt;" in text  # plain text from the store, escaped, not parsed
    text_run = dataclasses.replace(row, throughput_unit="tokens/s", tokens_per_sample=256, dataset="synthetic-text")
    assert "on synthetic-text, batch 32 x 256 tokens, " in header_html(text_run, "completed", "#1565c0")
