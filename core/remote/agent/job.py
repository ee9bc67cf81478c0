"""A comparison or a batch-size search the agent started: `python -P -m gpu_train_monitor.remote.agent.job SPEC`.

It runs detached from the SSH session (gpu_train_monitor.remote.agent.spawn), so a dropped connection never stops it,
and writes what an in-process observer would have heard to a journal, `<uid>.jsonl` beside the spec, one JSON line each,
flushed as it goes: `{"at", "event"}` for a comparison's events, `{"at", "trial"}` for a search's trials, and always a
last line `{"at", "end": {"result": ...}}` or `{"at", "end": {"error", "field", "user_error"}}`. Values are
`gpu_train_monitor.remote.wire.values`'s, so the other side rebuilds the very events and results. A comparison's runs
are recorded in the agent's store as a local comparison's are. The agent's `control` signals steer it as they steer
a run (gpu_train_monitor.events.signals); a search stops at SIGINT or SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from ...base.errors import ConfigError, UserError
from ...base.text import Message, message_of, message_to_json
from ...config.run_config import RunConfig
from ...distributed.env import ENV_RUN_UID
from ..wire.values import encode

COMPARE, FIND = "compare", "find"


SPEC_SUFFIX = ".spec.json"


def journal_path(spec_path: Path) -> Path:
    """`<uid>.jsonl` beside `<uid>.spec.json`."""
    return spec_path.with_name(spec_path.name.removesuffix(SPEC_SUFFIX) + ".jsonl")


class Journal:
    """The job's journal: one line per call, written whole and flushed (the agent reads complete lines only)."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the job's life
        self._lock = threading.Lock()
        self.ended = False

    def write(self, **line: Any) -> None:
        text = json.dumps({"at": time.time(), **line}, allow_nan=False, separators=(",", ":"))
        with self._lock:
            if self.ended:
                return
            self._file.write(text + "\n")
            self._file.flush()
            self.ended = "end" in line

    def end_with_error(self, exc: BaseException) -> None:
        """The last line for a job that raised: a ConfigError as its field and detail (rebuilt whole on the other
        side), another UserError as its one line, anything else as its type and text."""
        field = exc.field if isinstance(exc, ConfigError) else None
        if isinstance(exc, ConfigError):
            text = exc.detail
        else:
            text = message_of(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
        self.write(end={"error": message_to_json(text), "field": field, "user_error": isinstance(exc, UserError)})

    def close(self) -> None:
        self._file.close()


def run_comparison(spec: dict[str, Any], journal: Journal) -> None:
    from ...compare.comparison import Comparison
    from ...events.signals import stop_on_signals
    from ...store.recorder import recording

    base = RunConfig.from_dict(spec["config"])
    comparison = Comparison(base, spec["overrides"], [lambda event: journal.write(event=encode(event))])

    def warn(text: str) -> None:
        print(f"warning: {text}", file=sys.stderr, flush=True)

    with recording(comparison.observers, spec.get("store"), warn), stop_on_signals(comparison):
        result = comparison.run()
    journal.write(end={"result": encode(result)})


def run_search(spec: dict[str, Any], journal: Journal) -> None:
    from ...finder.search import find_batch_size

    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    config = RunConfig.from_dict(spec["config"])
    result = find_batch_size(
        config,
        capacity=spec.get("capacity"),
        margin=spec["margin"],
        start=spec["start"],
        max_batch=spec["max_batch"],
        on_trial=lambda trial: journal.write(trial=encode(trial)),
        should_stop=stop.is_set,
        predict="auto" if spec.get("predict", True) else None,
    )
    journal.write(end={"result": encode(result)})


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m gpu_train_monitor.remote.agent.job SPEC", file=sys.stderr)
        return 2
    os.environ.pop(ENV_RUN_UID, None)  # the agent's name for the job: its runs take names of their own
    spec_path = Path(argv[0])
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    journal = Journal(journal_path(spec_path))
    try:
        if spec["kind"] == COMPARE:
            run_comparison(spec, journal)
        elif spec["kind"] == FIND:
            run_search(spec, journal)
        else:
            raise UserError(Message("no such job: {kind}", kind=repr(spec["kind"])))
    except UserError as exc:
        journal.end_with_error(exc)
        print(f"gpu-train-monitor: error: {message_of(exc)}", file=sys.stderr)
        return 2
    except BaseException as exc:  # noqa: BLE001 - whatever ends the job, the journal says so last
        journal.end_with_error(exc)
        raise
    finally:
        journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
