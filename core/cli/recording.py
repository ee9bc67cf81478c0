"""Recording a run, or a comparison's runs, in the store the command's options name (--runs-db, --no-record):
shared by `run` and `compare`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from .options import PROG


@contextlib.contextmanager
def recording_as_asked(args: argparse.Namespace, observers: list[Any]) -> Iterator[Any]:
    """Record the run(s) in the store --runs-db names unless --no-record (`run` and `compare`): a store that
    cannot be used is one warning line and the run trains unrecorded. At the end, says where it was recorded."""
    if args.no_record:
        yield None
        return
    from ..store.recorder import recording

    def warn(text: str) -> None:
        print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True)

    recorder = None
    try:
        with recording(observers, args.runs_db, warn) as recorder:
            yield recorder
    finally:  # the recorder is closed (its queue written out): the run ids are final
        if recorder is not None and recorder.run_ids and recorder.problem is None:
            ids = ", ".join(str(run_id) for run_id in recorder.run_ids)
            print(
                f"recorded as run {ids} in {recorder.path} (`{PROG} runs show {recorder.run_ids[-1]}`)", file=sys.stderr
            )
