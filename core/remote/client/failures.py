"""How a connection to the agent fails, each way one sentence for people (the CLI's exit 2, the window's message).

ssh exits 255 for its own errors and says why on stderr in words that have stayed the same across OpenSSH
releases ("Permission denied (publickey...)", "Could not resolve hostname", "Host key verification failed",
"Connection refused", "Connection timed out"). Once logged in, the remote shell runs the agent command: 127 or
"command not found" / "No such file or directory" there means gpu-train-monitor is not installed (or not on
the PATH a non-interactive shell has), which the user fixes by naming the command.
"""

from __future__ import annotations

from ...base.errors import UserError
from ...base.text import Message

SSH_FAILED = 255  # ssh's own exit code for its errors
COMMAND_NOT_FOUND = 127  # a POSIX shell's exit code for a command it cannot find
COMMAND_NOT_EXECUTABLE = 126


class RemoteError(UserError):
    """Talking to the agent on another machine failed; the message is one line that says what to do."""


class AuthenticationFailed(RemoteError):
    """ssh could not log in without a prompt (no key the server accepts, no agent)."""


class UnknownHost(RemoteError):
    """ssh could not resolve the host name (nor find it as an alias in ~/.ssh/config)."""


class HostKeyNotTrusted(RemoteError):
    """The host's key is not in known_hosts (or changed): batch mode never asks to trust it."""


class Unreachable(RemoteError):
    """The host did not accept the connection (refused, timed out, no route)."""


class AgentMissing(RemoteError):
    """Logged in, but the agent command does not exist there."""


class VersionMismatch(RemoteError):
    """The agent speaks another protocol version."""


class ConnectionLost(RemoteError):
    """The connection dropped (or was never more than a process that ended); the remote runs go on."""


class RemoteTimeout(RemoteError):
    """No answer in time: the link is treated as dead, never waited on forever."""


class RemoteRequestFailed(RemoteError):
    """The agent answered a request with an error (its one line kept); `kind` is the protocol's error kind."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def classify(host: str, returncode: int | None, stderr: str, agent_command: str) -> RemoteError:
    """The error a transport that ended before the agent said hello stands for, from its exit code and
    what ssh (or the remote shell) wrote on stderr."""
    text = stderr.lower()
    detail = last_line(stderr)
    if "permission denied" in text and ("publickey" in text or "password" in text or "keyboard" in text):
        return AuthenticationFailed(
            Message(
                "cannot log in to {host}: the server refused every key ssh offered ({detail}); check that "
                "`ssh {host}` logs in without a password prompt (a key in ssh-agent or ~/.ssh/config)",
                host=host,
                detail=detail,
            )
        )
    if "could not resolve hostname" in text or "name or service not known" in text:
        return UnknownHost(
            Message(
                "unknown host {host}: ssh could not resolve its name; check the spelling, or add it to ~/.ssh/config",
                host=host,
            )
        )
    if "host key verification failed" in text or "remote host identification has changed" in text:
        return HostKeyNotTrusted(
            Message(
                "the host key of {host} is not trusted yet (or has changed); connect once with `ssh {host}` "
                "and check the key it shows, then try again",
                host=host,
            )
        )
    if any(words in text for words in ("connection refused", "timed out", "no route to host", "unreachable")):
        return Unreachable(Message("cannot reach {host}: {detail}", host=host, detail=detail))
    if returncode in (COMMAND_NOT_FOUND, COMMAND_NOT_EXECUTABLE) or (
        returncode != SSH_FAILED
        and any(words in text for words in ("command not found", "no such file or directory", "not found"))
    ):
        return AgentMissing(
            Message(
                "gpu-train-monitor is not installed on {host} (its shell could not run `{command}`); install it "
                "there (pip install . in a clone of the project), or name the command with --agent-command, e.g. "
                "--agent-command '~/venv/bin/gpu-train-monitor agent'",
                host=host,
                command=agent_command,
            )
        )
    if returncode == SSH_FAILED:
        return ConnectionLost(Message("ssh could not connect to {host}: {detail}", host=host, detail=detail))
    return ConnectionLost(
        Message(
            "the agent on {host} ended before it said hello (exit code {code}): {detail}",
            host=host,
            code=returncode,
            detail=detail,
        )
    )


def last_line(stderr: str) -> str:
    """ssh's last words, one line (the ones before are warnings and banners); 'no message' when silent."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
