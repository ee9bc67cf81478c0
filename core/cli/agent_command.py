"""`gpu-train-monitor agent [--runs-db PATH]`: serve the run store and this machine's devices on stdin/stdout.

What `ssh HOST gpu-train-monitor agent` runs for a window or a command line on another machine
(gpu_train_monitor.remote.agent.server). Its stdout is the protocol only: anything for people goes to stderr.
"""

from __future__ import annotations

import argparse
import io
import os
import socket
import sys
from typing import IO, Any

from ..base.errors import UserError
from ..device.system_info import app_version
from ..events.status import EXIT_USER_ERROR
from ..remote.wire.protocol import USER_ERROR, encode, error_reply
from ..store.run_store import RunStore
from .options import PROG


def add_agent_parser(sub: Any) -> None:
    agent = sub.add_parser(
        "agent",
        help="serve this machine's devices and run store on stdin/stdout (what ssh HOST gpu-train-monitor agent runs)",
        description="Speak the remote protocol (line-delimited JSON) on stdin and stdout, for a window or a "
        "command line on another machine that runs `ssh HOST gpu-train-monitor agent`. Nothing listens on a port.",
    )
    agent.add_argument(
        "--runs-db",
        metavar="PATH",
        help="the run store (SQLite) to serve and record into (default: $GPU_TRAIN_MONITOR_RUNS_DB, else "
        "runs/runs.sqlite3 in the user data folder)",
    )
    agent.add_argument(
        "--allow",
        metavar="FOLDER",
        action="append",
        default=[],
        help="a folder whose scripts (watch), own models and datasets (model or dataset package.module:factory) and "
        "dataset folders the other side may use; give it again for more. Without it the agent runs only the "
        "built-in models and datasets. Paths are resolved first: '..' and links cannot lead out",
    )


def command_agent(args: argparse.Namespace) -> int:
    """Serve until stdin ends; exit 0, 3 after a protocol version mismatch, 2 when the store cannot be opened."""
    from ..remote.agent.ops import OPS
    from ..remote.agent.policy import AgentPolicy
    from ..remote.agent.server import Agent

    stdout = protocol_output()
    try:
        policy = AgentPolicy.of(args.allow, socket.gethostname())
        store = RunStore(args.runs_db)
    except UserError as exc:  # the client reads this line instead of a hello
        stdout.write(encode(error_reply(None, str(exc), USER_ERROR)))
        stdout.flush()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    with store:
        agent = Agent(store, sys.stdin.buffer, stdout, app_version(), socket.gethostname(), policy.allowed, ops=OPS)
        return agent.serve()


def protocol_output() -> IO[bytes]:
    """The protocol's own handle on stdout, with file descriptor 1 itself then pointed at stderr: a stray print,
    a library's warning or a C extension's message can never break a line of the protocol."""
    try:
        sys.stdout.flush()
        protocol_fd = os.dup(sys.stdout.fileno())
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):  # no real stdout: use what there is
        return sys.stdout.buffer
    return os.fdopen(protocol_fd, "wb")
