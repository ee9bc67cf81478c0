"""The log's sentences about a launched data-parallel run: one whole sentence per case (GPUs or CPU processes,
before or after the run was recorded), each through Qt's translator, numbers in the user's locale."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QLocale

from gui.launch.texts import LaunchEnd, end_text, output_text, paused_text, recording_text, starting_text, stopping_text
from tests.support.context_marks import marking_translator

STOPPED_EARLY = LaunchEnd("stopped", "stopped before training started", None, 130)
FAILED_EARLY = LaunchEnd("failed", "--resume: a data-parallel run saves no checkpoints", None, 2)


def test_each_case_is_its_own_sentence_for_cpu_processes_and_gpus():
    assert starting_text(2, False, 64, Path("/tmp/out.log")) == (
        "starting 2 CPU processes, data-parallel (batch 64 split 32 per process); their output: /tmp/out.log"
    )
    assert starting_text(4, True, 64, Path("/tmp/out.log")).startswith(
        "starting 4 GPUs, data-parallel (batch 64 split 16 per process)"
    )
    assert end_text(STOPPED_EARLY, 2, False) == "the 2 CPU processes were stopped before training started"
    assert end_text(STOPPED_EARLY, 4, True) == "the 4 GPUs were stopped before training started"
    assert end_text(FAILED_EARLY, 2, False) == (
        "the 2 CPU processes could not start: --resume: a data-parallel run saves no checkpoints"
    )
    assert end_text(LaunchEnd("stopped", "stopped at step 5", 12, 130), 2, False) == "run 12 stopped: stopped at step 5"
    assert end_text(LaunchEnd("completed", "", 12, 0), 4, True) == "run 12 completed"
    assert paused_text(12, True) == "run 12 paused" and paused_text(12, False) == "run 12 resumed"
    assert output_text(Path("/tmp/x/output.log")) == "the processes' output is in /tmp/x/output.log"
    assert stopping_text(2, False) == "Stopping 2 CPU processes…" and stopping_text(8, True) == "Stopping 8 GPUs…"
    assert stopping_text(0, False) == "Stopping the run…"


def test_seconds_follow_the_locale():
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    try:
        assert recording_text(7, 12.3).startswith("recording as run 7 (12,3 s after Start); followed live")
    finally:
        QLocale.setDefault(QLocale.system())
    assert recording_text(7, None).startswith("recording as run 7; followed live in its own window")


@pytest.mark.usefixtures("qapp")
def test_every_sentence_goes_whole_through_the_translator():
    with marking_translator():
        assert (
            end_text(STOPPED_EARLY, 2, False) == "[launch_text]the 2 CPU processes were stopped before training started"
        )
        assert (
            end_text(LaunchEnd("stopped", "stopped at step 5", 12, 130), 2, False)
            == "[launch_text]run 12 [status_text]stopped: stopped at step 5"
        )  # the status word: one mapping
        assert stopping_text(8, True) == "[launch_text]Stopping 8 GPUs…"
        assert starting_text(2, False, 64, None).startswith("[launch_text]starting 2 CPU processes")
