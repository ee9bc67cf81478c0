"""How a launched data-parallel run ended, from its last row, its exit code and its output: each case is one
status and one readable message."""

from __future__ import annotations

from gpu_train_monitor.gui.launch.texts import LaunchEnd, launch_end
from gpu_train_monitor.store.run_store import RunRow
from tests.support.run_rows import run_row

CLI_ERROR = "gpu-train-monitor: error: --resume: a data-parallel run saves no checkpoints\n"


def row(**changes) -> RunRow:
    return run_row(**changes)


def never(text: str = "") -> str:
    raise AssertionError("the output was read though nothing needed it")


def test_stopped_before_anything_was_recorded():
    assert launch_end(None, None, 130, 0, True, never) == LaunchEnd(
        "stopped", "stopped before training started", None, 130
    )


def test_a_child_that_failed_before_recording_says_the_cli_s_error():
    end = launch_end(None, None, 2, 0, False, lambda: CLI_ERROR)
    assert end == LaunchEnd("failed", "--resume: a data-parallel run saves no checkpoints", None, 2)
    assert launch_end(None, None, 0, 0, False, never).message == "it ended before its run was recorded"


def test_a_run_killed_before_it_finished_its_row_failed():
    end = launch_end(row(status="running"), 7, -9, 0, False, never)
    assert end == LaunchEnd(
        "failed",
        "its processes were killed (exit code -9) before the run finished; steps up to the last report are kept",
        7,
        -9,
    )


def test_a_recorded_end_keeps_its_status_and_message_and_counts_leftovers():
    assert launch_end(row(), 7, 0, 0, False, never) == LaunchEnd("completed", "", 7, 0)
    stopped = launch_end(row(status="stopped", message="stopped at step 5"), 7, 130, 1, True, never)
    assert stopped == LaunchEnd("stopped", "stopped at step 5; 1 leftover process killed", 7, 130)
    failed = launch_end(row(status="failed"), 7, 1, 2, False, lambda: "Traceback\nRuntimeError: boom\n")
    assert failed == LaunchEnd("failed", "RuntimeError: boom; 2 leftover processes killed", 7, 1)


def test_the_launcher_s_own_words_go_through_the_translator(qapp):
    from tests.support.context_marks import marking_translator

    with marking_translator():
        assert (
            launch_end(None, None, 1, 0, False, lambda: "").message
            == "[launch_end]it ended before recording anything, without a message"
        )  # the child said nothing
        end = launch_end(row(status="stopped", message="stopped at step 5"), 7, 130, 2, True, never)
        assert end.message == "[launch_end]stopped at step 5; 2 leftover processes killed"  # the store's as stored
        assert launch_end(row(), 7, 0, 1, False, never).message == "[launch_end]1 leftover process killed"
