"""`--remote HOST` and its companions, as every command that can work on another machine takes and checks them:
kept apart from the remote commands themselves (gpu_train_monitor.cli.remote_commands) so that each command can
read its options without importing the others.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..base.text import Message

if TYPE_CHECKING:
    from ..remote.client.target import RemoteTarget


def add_remote_options(parser: argparse.ArgumentParser, what: str) -> None:
    """--remote HOST and --agent-command CMD on a command that can work on another machine."""
    group = parser.add_argument_group("another machine (over ssh)")
    group.add_argument(
        "--remote",
        metavar="HOST",
        help=f"{what} on HOST instead of here, through `ssh -T HOST gpu-train-monitor agent` (an ssh config "
        "alias, user@host or user@host:port; keys or an ssh agent, no password prompt); nothing listens on a port",
    )
    group.add_argument(
        "--agent-command",
        metavar="CMD",
        help="with --remote: the command that starts the agent on HOST when gpu-train-monitor is not on the "
        "PATH of its non-interactive shell, e.g. '~/venv/bin/gpu-train-monitor agent' (default: "
        "gpu-train-monitor agent)",
    )


def add_remote_watch_options(parser: argparse.ArgumentParser) -> None:
    """watch's --remote, --agent-command and --remote-cwd."""
    add_remote_options(parser, "run the script")
    parser.add_argument(
        "--remote-cwd",
        metavar="DIR",
        help="with --remote: the folder on HOST the script runs in (default: the home folder ssh logs into)",
    )


def remote_target(args: argparse.Namespace) -> RemoteTarget | None:
    """The machine --remote names (None without it); --agent-command or --remote-cwd alone is refused (either
    would be ignored without a word)."""
    from ..base.errors import UserError
    from ..remote.client.target import RemoteTarget

    host = getattr(args, "remote", None)
    agent_command = getattr(args, "agent_command", None)
    if host is None:
        if agent_command:
            raise UserError(Message("--agent-command names the agent on another machine: give --remote HOST too"))
        if getattr(args, "remote_cwd", None):
            raise UserError(Message("--remote-cwd names a folder on another machine: give --remote HOST too"))
        return None
    return RemoteTarget.parse(host, agent_command)


def check_remote_run_options(args: argparse.Namespace) -> None:
    """What `run --remote` cannot do: said before anything starts."""
    from ..base.errors import ConfigError

    refused = {
        "resume": "resume the checkpoint on that machine itself",
        "memory_snapshot": "take the snapshot on that machine itself",
        "no_record": "the run is followed through its record: leave --no-record out",
        "checkpoint_dir": "the run saves checkpoints in that machine's default folder",
        "checkpoint_every": "the run saves checkpoints at epoch ends only",
    }
    for field, why in refused.items():
        if getattr(args, field, None):
            raise ConfigError(field, Message("not with --remote: {why}", why=why))
    if getattr(args, "preset", None) and (getattr(args, "device", None) or "auto").strip().lower() == "auto":
        raise ConfigError(
            "preset",
            Message("with --remote, give --device too: a preset's settings depend on the remote device's kind"),
        )
