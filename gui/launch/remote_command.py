"""The child a run on a remote machine is: `python -m gpu_train_monitor run --remote HOST [--agent-command CMD] <the
form's options> --runs-db <the window's store>` (the form's command line,
`gpu_train_monitor.gui.launch.child.command_line`, with the machine put in), and a watched script there, `python -m
gpu_train_monitor watch --remote HOST ... -- python <script> <args>`. The child starts the run on that machine through
its agent, mirrors it row by row into the window's store (where the launcher follows it by uid, as a data-parallel run),
reconnects by itself when the link drops, and forwards the controls it gets as signals (Stop, Pause, Clear cache) to the
run there. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpu_train_monitor.remote.client.target import RemoteTarget


@dataclass(frozen=True)
class RemoteMachine:
    """Where to run: `host` as the user typed it, the agent's command there (empty: the default)."""

    host: str
    agent_command: str = ""

    def target(self) -> RemoteTarget:
        """The machine as core's remote code reaches it (BadTarget, a UserError, for a host ssh would misread)."""
        from gpu_train_monitor.remote.client.target import RemoteTarget

        return RemoteTarget.parse(self.host, self.agent_command.strip() or None)

    def options(self) -> list[str]:
        """The CLI's options naming the machine."""
        agent = [f"--agent-command={self.agent_command}"] if self.agent_command.strip() else []
        return [f"--remote={self.host}", *agent]


def on_machine(args: list[str], machine: RemoteMachine) -> list[str]:
    """`args` (`[python, ..., -m, gpu_train_monitor, run|watch, options...]`) with the machine's options after the
    subcommand: the same command, run there."""
    for index, word in enumerate(args):
        if word in ("run", "watch") and index >= 2 and args[index - 1] == "gpu_train_monitor":
            return [*args[: index + 1], *machine.options(), *args[index + 1 :]]
    raise ValueError(f"not a `python -m gpu_train_monitor run|watch` command line: {args!r}")
