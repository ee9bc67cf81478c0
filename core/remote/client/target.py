"""Which machine to reach and how: the HOST a user types, and the OpenSSH command line that runs the agent there.

The user's own `ssh` does the connecting (keys, agent, ~/.ssh/config aliases, ProxyJump all work), in batch
mode so it never waits at a password prompt. GPU_TRAIN_MONITOR_SSH replaces the `ssh` program and its fixed
options (a test points it at `ssh -F <temp config>`); `RemoteTarget.transport` replaces the whole command
line (a test runs the agent as a local process through the very same client code).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from ...base.errors import UserError
from ...base.text import Message

ENV_SSH = "GPU_TRAIN_MONITOR_SSH"  # the ssh program and fixed options, split like a shell would
DEFAULT_AGENT_COMMAND = ("gpu-train-monitor", "agent")
SSH_OPTIONS = (
    "-T",  # no terminal: the pipe carries JSON lines only
    "-o",
    "BatchMode=yes",  # never prompt: fail fast without a usable key
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=5",  # notice a dead link within about 15 s
    "-o",
    "ServerAliveCountMax=3",
)
_NAME = re.compile(r"[A-Za-z0-9_.%+-]+")  # an ssh config alias, a host name or an IPv4 address
_USER = re.compile(r"[A-Za-z0-9_.+-][A-Za-z0-9_.+@-]*")
_IPV6 = re.compile(r"\[([0-9A-Fa-f:.]+)\]")
_PORT = re.compile(r"[0-9]{1,5}")


class BadTarget(UserError):
    """A HOST that is not an ssh alias, host, user@host or user@host:port."""


@dataclass(frozen=True)
class RemoteTarget:
    """A machine running the agent: `host` as the user typed it (an ssh config alias, `user@host` or
    `user@host:port`), the command that starts the agent there, and, for tests, a local command line that
    replaces ssh entirely."""

    host: str
    agent_command: tuple[str, ...] = DEFAULT_AGENT_COMMAND
    transport: tuple[str, ...] | None = None

    @classmethod
    def parse(
        cls, text: str, agent_command: str | tuple[str, ...] | None = None, transport: tuple[str, ...] | None = None
    ) -> RemoteTarget:
        """The target `text` names; `agent_command` as a shell-like string ("~/venv/bin/gpu-train-monitor
        agent") or words. BadTarget (a UserError: one line) for a HOST ssh would misread."""
        host = text.strip()
        _split(host)  # refuses what is not a host
        return cls(host, agent_words(agent_command), tuple(transport) if transport else None)

    @property
    def destination(self) -> str:
        """What ssh connects to: `user@host` or the alias, without the port."""
        return _split(self.host)[0]

    @property
    def port(self) -> int | None:
        return _split(self.host)[1]

    def argv(self) -> list[str]:
        """The command line that starts the agent: the transport when one is set, else ssh in batch mode."""
        if self.transport:
            return list(self.transport)
        ssh = ssh_program()
        port = ["-p", str(self.port)] if self.port is not None else []
        # "--": the destination (and the agent command after it) can never be read as one of ssh's options
        return [*ssh, *SSH_OPTIONS, *port, "--", self.destination, *(_remote_word(word) for word in self.agent_command)]

    def agent_command_text(self) -> str:
        """The agent command as the remote shell runs it (for messages)."""
        return " ".join(_remote_word(word) for word in self.agent_command)


def ssh_program() -> list[str]:
    """`ssh`, or the program and options GPU_TRAIN_MONITOR_SSH names."""
    configured = os.environ.get(ENV_SSH, "").strip()
    if not configured:
        return ["ssh"]
    try:
        words = shlex.split(configured)
    except ValueError as exc:
        raise BadTarget(Message("{env} cannot be read as a command line: {error}", env=ENV_SSH, error=str(exc)))
    return words or ["ssh"]


def agent_words(agent_command: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """The agent command's words; the default when none is given. BadTarget for an unreadable string."""
    if agent_command is None:
        return DEFAULT_AGENT_COMMAND
    if isinstance(agent_command, str):
        try:
            words = tuple(shlex.split(agent_command))
        except ValueError as exc:
            raise BadTarget(
                Message("--agent-command {text!r} cannot be read: {error}", text=agent_command, error=str(exc))
            ) from None
    else:
        words = tuple(agent_command)
    if not words:
        raise BadTarget(Message("--agent-command is empty: give the agent's command, e.g. 'gpu-train-monitor agent'"))
    return words


def _split(host: str) -> tuple[str, int | None]:
    """('user@host', port or None) for `host`; BadTarget when it is none of the forms ssh takes."""
    problem = Message(
        "{host!r} is not a machine to connect to: give an ssh config alias, user@host or user@host:port", host=host
    )
    if not host or host.startswith("-") or any(c.isspace() for c in host):
        raise BadTarget(problem)
    user, at, rest = host.rpartition("@")
    if at and not _USER.fullmatch(user):
        raise BadTarget(problem)
    port: int | None = None
    name = rest
    bracketed = _IPV6.match(rest)
    if bracketed:  # [::1] or [::1]:2222
        name, tail = bracketed.group(1), rest[bracketed.end() :]
        if tail:
            if not tail.startswith(":"):
                raise BadTarget(problem)
            port = _port(tail[1:], host)
    elif rest.count(":") == 1:
        name, text = rest.split(":")
        port = _port(text, host)
        if not _NAME.fullmatch(name):
            raise BadTarget(problem)
    elif not _NAME.fullmatch(rest):
        raise BadTarget(problem)
    return (f"{user}@{name}" if at else name), port


def _port(text: str, host: str) -> int:
    """The port `text` names: ASCII digits only (str.isdigit() takes '²' and '٣' too, which int() misreads or
    refuses with a traceback)."""
    if not _PORT.fullmatch(text) or not 1 <= int(text) <= 65535:
        raise BadTarget(Message("{host!r}: the port must be a number from 1 to 65535", host=host))
    return int(text)


def _remote_word(word: str) -> str:
    """A word of the agent command as the remote shell must see it: ssh joins the words with spaces and the
    remote shell splits them again, so each is quoted; a leading ~/ stays unquoted, so the shell expands it."""
    if word.startswith("~/"):
        return "~/" + shlex.quote(word[2:]) if word[2:] else "~/"
    return shlex.quote(word)
