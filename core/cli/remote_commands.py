"""`--remote HOST`: the CLI's commands on another machine's run store, through the agent over the user's ssh
(the options themselves: gpu_train_monitor.cli.remote_options).

`runs list --remote HOST` lists the remote store's runs; `runs show/export ID --remote HOST` fetch the run's
rows, copy them into a temporary store (under the remote's id) and print or write them exactly as for a local
run. `run --remote HOST` and `watch --remote HOST` start the run there (gpu_train_monitor.cli.remote_follow). Every
failure (authentication, unknown host, no agent there, another version, a timeout) is one line and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.text import Message
from .options import PROG, config_from_args, store_path
from .remote_options import check_remote_run_options, remote_target
from .runs_output import print_run, print_runs, write_export
from .watched_script import PYTHON

MAX_RUN_PAGES = 1000  # pages of a remote `runs` list (about a thousand runs each): more is an agent that loops

if TYPE_CHECKING:
    from ..remote.client.link import AgentLink
    from ..remote.client.target import RemoteTarget


@contextlib.contextmanager
def connected(target: RemoteTarget) -> Iterator[AgentLink]:
    """A link to the agent on `target`, closed after (RemoteError, one line, when it cannot be made)."""
    from ..remote.client.link import AgentLink

    link = AgentLink(target)
    link.connect()
    try:
        yield link
    finally:
        link.close()


def command_runs_remote(args: argparse.Namespace, target: RemoteTarget) -> int:
    """`runs list|show|export --remote HOST`."""
    from ..base.errors import UserError

    if args.runs_command == "delete":
        raise UserError(Message("runs delete works on this machine's store only; delete remote runs on that machine"))
    if getattr(args, "runs_db", None):
        raise UserError(
            Message("--runs-db names a store on this machine: with --remote the agent reads the remote's store")
        )
    with connected(target) as link:
        if args.runs_command == "list":
            return _list(link, args.search, args.json)
        chunks = _whole_run(link, args.id)
    with _copied(chunks, target.host) as store:
        if args.runs_command == "show":
            return print_run(store, args.id, args.json, args.by_module)
        return write_export(store, args.id, args.format, args.out, args.smoothing, "")


def _list(link: AgentLink, search: str, as_json: bool) -> int:
    where = Message("{host} ({store})", host=link.target.host, store=str(link.hello.get("store", "?")))
    return print_runs([run_row(row) for row in all_runs(link, search)], search, as_json, f"on {where}")


def all_runs(link: AgentLink, search: str) -> list[dict[str, Any]]:
    """Every run of the remote store matching `search`, newest first (the agent sends them in pages, each asked
    for from the runs received so far). RemoteError for pages that do not move forward (none with "more", a run
    sent twice, more than MAX_RUN_PAGES): an agent that always answers "more" would otherwise be asked forever."""
    from ..remote.client.failures import RemoteError

    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    for _ in range(MAX_RUN_PAGES):
        page = link.request("runs", search=search, offset=len(rows))
        found = page.get("runs", [])
        if not isinstance(found, list) or not all(isinstance(row, dict) for row in found):
            raise RemoteError(Message("the agent on {host} sent a runs list that is not one", host=link.target.host))
        if page.get("more") and not found:
            raise RemoteError(
                Message(
                    "the agent on {host} said more runs follow from {offset} but sent none; listing stopped",
                    host=link.target.host,
                    offset=len(rows),
                )
            )
        for row in found:
            run_id = row.get("id")
            if type(run_id) is int and run_id in seen:
                raise RemoteError(
                    Message(
                        "the agent on {host} sent run {run_id} twice (its pages do not move on); listing stopped",
                        host=link.target.host,
                        run_id=run_id,
                    )
                )
            if type(run_id) is int:
                seen.add(run_id)
        rows += found
        if not page.get("more"):
            return rows
    raise RemoteError(
        Message(
            "the agent on {host} sent more than {pages} pages of runs; listing stopped",
            host=link.target.host,
            pages=MAX_RUN_PAGES,
        )
    )


def run_row(values: dict[str, Any]) -> Any:
    """A `runs` list row of the agent as the RunRow the tables print (a row missing a field: a MirrorError)."""
    from ..remote.client.mirror import MirrorError
    from ..store.rows import RunRow

    known = dataclasses.fields(RunRow)
    names = [field.name for field in known]
    required = [f.name for f in known if f.default is dataclasses.MISSING and f.name != "live"]
    missing = [name for name in required if name not in values]  # an older agent's rows lack the newer fields
    if missing:
        raise MirrorError(Message("the agent's runs lack {fields}", fields=", ".join(missing)))
    given = {name: values[name] for name in names if name in values and name != "live"}
    return RunRow(**given, live=values.get("live", values.get("status") == "running"))


def _whole_run(link: AgentLink, run_id: int) -> list[dict[str, Any]]:
    """Everything recorded for remote run `run_id`, as the agent's chunks (a long run takes several requests,
    each after the last step and event the one before brought)."""
    from ..base.errors import UserError
    from ..remote.client.follow import expanded
    from ..remote.wire import compact_rows

    found = [row for row in all_runs(link, f"#{run_id}") if row.get("id") == run_id]
    if not found:
        raise UserError(
            Message(
                "no run {run_id} on {host} (`{prog} runs list --remote {host}`)",
                run_id=run_id,
                host=link.target.host,
                prog=PROG,
            )
        )
    uid = str(found[0]["uid"])
    chunks: list[dict[str, Any]] = []
    after_step = after_seq = 0
    while True:
        reply = link.request("run", uid=uid, after_step=after_step, after_seq=after_seq, rows=compact_rows.MODE)
        chunk = expanded(reply, compact_rows.Decoder())  # each reply is compacted on its own
        chunk["run"] = {**chunk.get("run", {}), "id": run_id}
        chunks.append(chunk)
        steps = [row["step"] for table in ("steps", "reports", "rank_reports") for row in chunk.get(table, [])]
        seqs = [row["seq"] for row in chunk.get("events", [])]
        next_step, next_seq = max([after_step, *steps]), max([after_seq, *seqs])
        if chunk.get("complete", True) or (next_step, next_seq) == (after_step, after_seq):
            return chunks
        after_step, after_seq = next_step, next_seq


@contextlib.contextmanager
def _copied(chunks: list[dict[str, Any]], origin: str) -> Iterator[Any]:
    """A temporary store holding the chunks' run (from `origin`) under the remote's id."""
    from ..remote.client.mirror import mirror_chunk
    from ..store.run_store import RunStore

    with tempfile.TemporaryDirectory(prefix="gtm-remote-") as folder:
        store = RunStore(Path(folder) / "copy.sqlite3")
        try:
            for chunk in chunks:
                mirror_chunk(store, chunk, origin=origin, keep_id=True)
            yield store
        finally:
            store.close()


def watch_argv(command: list[str]) -> list[str]:
    """The arguments after `python` of a command to watch on another machine (only Python scripts there)."""
    from ..base.errors import UserError

    if not command:
        raise UserError(Message("give the command to run after --, e.g. watch --remote HOST -- python train.py"))
    if not PYTHON.match(Path(command[0]).name) or len(command) < 2:
        raise UserError(
            Message(
                "with --remote, the command must be `python SCRIPT ARGS` (or python -m MODULE): "
                "the agent runs it with the remote's Python; got {command}",
                command=" ".join(command),
            )
        )
    return command[1:]


def command_run_remote(args: argparse.Namespace) -> int:
    """`run --remote HOST [run options]`: checked here, started there, followed into the local store."""
    from ..base.errors import UserError
    from ..base.outputs import check_output_path
    from .remote_follow import start_and_follow

    target = remote_target(args)  # --agent-command alone: its error
    if target is None:
        raise UserError(Message("--agent-command names the agent on another machine: give --remote HOST too"))
    check_remote_run_options(args)
    config = config_from_args(args)  # a bad value fails here, before anything starts there
    if args.summary_json:
        check_output_path("summary_json", args.summary_json)
    return start_and_follow(args, target, "start", {"config": config.to_dict()}, store_path(args.runs_db))


def command_watch_remote(args: argparse.Namespace, command: list[str]) -> int:
    """`watch --remote HOST [--name N] -- python train.py ARGS`: the script runs there, followed here."""
    from ..base.errors import UserError
    from .remote_follow import start_and_follow

    target = remote_target(args)
    if target is None:
        raise UserError(Message("--agent-command names the agent on another machine: give --remote HOST too"))
    request: dict[str, Any] = {"argv": watch_argv(command), "name": args.name or ""}
    if getattr(args, "remote_cwd", None):
        request["cwd"] = args.remote_cwd
    return start_and_follow(args, target, "watch", request, store_path(args.runs_db))
