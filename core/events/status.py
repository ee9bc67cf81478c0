"""How a run ends: its `Status` (the word the run store, the events and the summaries carry) and, for the
process, the exit code. One table that the CLI, its data-parallel launcher and the window's entry point read,
so none of them imports another's options for it, and a new status is added in one place."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A run's status. A `StrEnum`, so a status is the very word stored and compared (`Status.OOM == "oom"`):
    the store's values, JSON summaries and older runs keep their strings."""

    RUNNING = "running"  # live (only the store says so; every other status is an ending)
    COMPLETED = "completed"  # every planned step trained
    STOPPED = "stopped"  # by request (Stop, Ctrl+C, SIGTERM)
    DIVERGED = "diverged"  # the loss became nan or inf
    OOM = "oom"  # out of memory, with no smaller batch left to try
    FAILED = "failed"  # a bug, an environment failure or a user's mistake
    INTERRUPTED = "interrupted"  # the recording process ended without finishing the run (killed, crashed)

    @classmethod
    def of(cls, word: str) -> Status | None:
        """The status a stored word names; None for a word this version does not know (a newer version's)."""
        try:
            return cls(word)
        except ValueError:
            return None

    @property
    def finished(self) -> bool:
        return self is not Status.RUNNING

    @property
    def ended_well(self) -> bool:
        """Completed, or stopped because someone asked: nothing went wrong."""
        return self in (Status.COMPLETED, Status.STOPPED)

    @property
    def failed(self) -> bool:
        """The run itself went wrong (an interrupted run lost its recorder, which may not be the run's fault)."""
        return self in (Status.DIVERGED, Status.OOM, Status.FAILED)

    @property
    def exit_code(self) -> int:
        """The exit code of a process whose run ended so; KeyError for a run still running."""
        return EXIT_CODES[self]


EXIT_FAILED = 1  # the run diverged, ran out of memory or failed (or stdout was closed)
EXIT_USER_ERROR = 2  # bad input, or a result file that could not be saved
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl+C
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_CODES = {
    Status.COMPLETED: 0,
    Status.STOPPED: EXIT_INTERRUPTED,
    Status.DIVERGED: EXIT_FAILED,
    Status.OOM: EXIT_FAILED,
    Status.FAILED: EXIT_FAILED,
    Status.INTERRUPTED: EXIT_FAILED,
}  # by status
