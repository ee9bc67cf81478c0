"""`gpu-train-monitor runs`: list, show, export and delete the runs recorded in the run store.

Every subcommand takes `--runs-db PATH` (default: $GPU_TRAIN_MONITOR_RUNS_DB, else the user data folder's
store, the one `run`, `compare` and the window record into). An unknown run, a store that is missing or
cannot be read: one line on stderr and exit code 2. None of them loads torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import UserError
from ..base.text import Message
from .module_text import add_by_module_option
from .options import PROG, OneLineParser, store_path
from .remote_options import add_remote_options, remote_target
from .runs_output import print_run, print_runs, write_export

if TYPE_CHECKING:  # the store loads when an action runs, so `--help` and bad options answer at once
    from ..store.run_store import RunStore

MAX_RUN_ID = 2**63 - 1  # SQLite's largest integer
EXAMPLES = (
    f"examples: {PROG} runs list --search resnet; ... runs show 12; ... runs export 12 --format csv "
    "--out results/; ... runs delete 12 --yes"
)


def add_runs_parser(sub: argparse._SubParsersAction) -> None:
    """The `runs` subcommand and its list, show, export and delete actions, on the CLI's subparsers."""
    from ..export.run_export import FORMATS
    from ..export.smoothing import DEFAULT_SMOOTHING

    runs = sub.add_parser(
        "runs", help="list, show, export or delete the runs recorded in the run store", epilog=EXAMPLES
    )
    actions = runs.add_subparsers(dest="runs_command", parser_class=OneLineParser, metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="a table of the recorded runs, newest first")
    listing.add_argument(
        "--search",
        metavar="TEXT",
        default="",
        help="only runs where every word of TEXT appears (any case, as typed) in the name, note, "
        "model, dataset, device, status or label; #ID is that run (as the window's search)",
    )
    listing.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    _add_store_option(listing)
    add_remote_options(listing, "list the runs recorded")
    show = actions.add_parser(
        "show",
        help="everything recorded about one run: facts, a data-parallel run's "
        "ranks, configuration, epochs, out-of-memory events, cache clears, "
        "checkpoints, messages",
    )
    _add_run_id(show)
    show.add_argument(
        "--json",
        action="store_true",
        help="print it as JSON (the JSON export without the per-step and per-report series)",
    )
    add_by_module_option(show)
    _add_store_option(show)
    add_remote_options(show, "read the run")
    export = actions.add_parser(
        "export",
        help="write a run as CSV, JSON or TensorBoard event files",
        epilog="csv: OUT is a folder (created if missing) receiving run-ID-steps.csv (step, epoch, loss, "
        "smoothed_loss, elapsed_s) and run-ID-memory.csv (one row per report: throughput and memory), and "
        "for a data-parallel run run-ID-ranks.csv (one row per rank per report: its images/s and memory). "
        "json: OUT is a file, or a folder to hold run-ID.json. tensorboard: OUT is a log dir; the event "
        f'file goes to OUT/run-ID/ (needs: pip install "{PROG}[tensorboard]"; then: tensorboard '
        "--logdir OUT)",
    )
    _add_run_id(export)
    export.add_argument("--format", required=True, choices=FORMATS, help="what to write")
    export.add_argument("--out", required=True, metavar="PATH", help="where to write it (see below)")
    export.add_argument(
        "--smoothing",
        type=float,
        default=DEFAULT_SMOOTHING,
        metavar="WEIGHT",
        help="EMA weight of the smoothed loss, 0 to 0.999, as in the window's loss plot "
        f"(default: {DEFAULT_SMOOTHING})",
    )
    _add_store_option(export)
    add_remote_options(export, "read the run")
    delete = actions.add_parser("delete", help="delete a run and everything recorded for it")
    _add_run_id(delete)
    delete.add_argument(
        "--yes", action="store_true", help="do not ask for confirmation (needed when stdin is not a terminal)"
    )
    _add_store_option(delete)


def _add_run_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=run_id_argument, metavar="ID", help="the run's id, as `runs list` shows it")


def _add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runs-db",
        metavar="PATH",
        help="the run store (default: $GPU_TRAIN_MONITOR_RUNS_DB, else runs/runs.sqlite3 in the user data folder)",
    )


def run_id_argument(text: str) -> int:
    """'12' or '#12' -> 12."""
    try:
        value = int(text.strip().lstrip("#"))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a run id: give the number `{PROG} runs list` shows")
    return value


def command_runs(args: argparse.Namespace) -> int:
    """Run one `runs` action; UserErrors (unknown run, store problems) propagate to the CLI's one-line report."""
    from .remote_commands import command_runs_remote
    from .stdout import out

    target = remote_target(args)  # --remote HOST: the store on that machine, through its agent
    if target is not None:
        return command_runs_remote(args, target)
    path = store_path(args.runs_db)
    if args.runs_command == "list" and not path.exists():
        out(
            "[]"
            if args.json
            else f"no runs yet: the run store {path} does not exist (`{PROG} run` and the window record runs there)"
        )
        return 0
    if not path.exists():
        raise UserError(f"no run store at {path}: no runs have been recorded there yet")
    if args.runs_command != "list" and args.id > MAX_RUN_ID:  # SQLite could not even look for it (OverflowError)
        raise UserError(Message("no run {run_id} in {path}", run_id=args.id, path=str(path)))
    with open_store(path) as store:
        if args.runs_command == "list":
            return _list(store, args.search, args.json)
        if args.runs_command == "show":
            return print_run(store, args.id, args.json, args.by_module)
        if args.runs_command == "export":
            return write_export(
                store, args.id, args.format, args.out, args.smoothing, "--runs-db" if args.runs_db else ""
            )
        return _delete(store, args.id, args.yes)


def open_store(path: Path) -> RunStore:
    """The store opened for writing (which also marks runs whose process died as interrupted); a store this
    user cannot write to (another user's, a read-only disk) is still read."""
    from ..store.run_store import RunStore, StoreError

    try:
        return RunStore(path)
    except StoreError as writable_error:
        try:
            return RunStore(path, readonly=True)
        except StoreError:
            raise writable_error from None


def _list(store: RunStore, search: str, as_json: bool) -> int:
    return print_runs(store.list_runs(search), search, as_json, f"in {store.path}")


def _delete(store: RunStore, run_id: int, yes: bool) -> int:
    from ..export.run_export import local_time
    from .runs_text import live_status
    from .stdout import out

    row = store.run(run_id)
    if row.live:
        raise UserError(f"run {run_id} is still training (process {row.pid} on {row.host}); stop it, then delete it")
    if not yes:
        if not sys.stdin.isatty():
            raise UserError(f"not deleting run {run_id} without confirmation: stdin is not a terminal; add --yes")
        print(
            f"delete run {run_id} ({row.title}, {live_status(row)}, {row.steps:,} steps, started "
            f"{local_time(row.started_at)}) and everything recorded for it? [y/N] ",
            end="",
            file=sys.stderr,
            flush=True,
        )
        answer = sys.stdin.readline()
        if answer.strip().lower() not in ("y", "yes"):
            print("not deleted", file=sys.stderr)
            return 1
    store.delete(run_id)
    out(f"deleted run {run_id} from {store.path}")
    return 0
