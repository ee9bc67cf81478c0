"""A stand-in for `ssh` that runs the remote command on this machine, as ssh's remote end would: the
options and the destination are read past, the command's words are joined with spaces and run by `sh -c`
(the remote shell). GPU_TRAIN_MONITOR_SSH pointed at it (`LOCAL_SSH`) sends the client's real ssh command
line, agent command and quoting included, to a local agent: the tests of the CLI's --remote use it."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL_SSH = f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).resolve()))}"
WITH_VALUE = set("bcDEeFIiJLlmOoPpQRSWw")  # ssh's options that take a value


def remote_words(argv: list[str]) -> list[str]:
    """The command after ssh's options, the `--` that ends them, and the destination."""
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        option = argv[index]
        index += 1
        if option == "--":
            break
        if option[1:2] in WITH_VALUE and len(option) == 2:
            index += 1
    return argv[index + 1 :]


def main() -> None:
    words = remote_words(sys.argv[1:])
    if not words:
        sys.exit("local_ssh: no remote command")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.execvp("sh", ["sh", "-c", " ".join(words)])


if __name__ == "__main__":
    main()
