"""The log's sentences about a launched data-parallel run: one whole sentence per case (GPUs or CPU processes,
before or after the run was recorded), each through Qt's translator, numbers in the user's locale."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QLocale

from gpu_train_monitor.gui.launch.texts import (
    LaunchEnd,
    end_text,
    output_text,
    paused_text,
    recording_text,
    script_output_text,
    starting_text,
    stopping_text,
    watching_text,
)
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


def test_a_watched_script_is_named_as_the_script_it_is():
    assert watching_text(Path("/home/me/train.py"), Path("/home/me"), Path("/tmp/x/output.log")) == (
        "watching /home/me/train.py, started in /home/me; its output: /tmp/x/output.log"
    )
    stopped = LaunchEnd("stopped", "stopped before training started", None, 130)
    assert end_text(stopped, 0, False, script=True) == "the script was stopped before its run was recorded"
    crashed = LaunchEnd("failed", "ModuleNotFoundError: No module named 'timm'", None, 1)
    assert end_text(crashed, 0, False, script=True) == (
        "the script ended before its run was recorded: ModuleNotFoundError: No module named 'timm'"
    )
    untrained = LaunchEnd("failed", "it ended before its run was recorded", None, 0)
    assert end_text(untrained, 0, False, script=True) == (
        "the script ended without an optimizer step: there was no training to record"
    )
    assert end_text(LaunchEnd("completed", "", 12, 0), 0, False, script=True) == "run 12 completed"
    assert script_output_text(Path("/tmp/x/output.log")) == "the script's output is in /tmp/x/output.log"
