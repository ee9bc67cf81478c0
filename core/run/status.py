"""How a run ended, as the process's exit code: one table that the CLI, its data-parallel launcher and the
window's entry point read, so none of them imports another's options for it."""

from __future__ import annotations

EXIT_USER_ERROR = 2  # bad input, or a result file that could not be saved
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl+C
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_CODES = {"completed": 0, "stopped": EXIT_INTERRUPTED, "diverged": 1, "oom": 1, "failed": 1}  # by status
