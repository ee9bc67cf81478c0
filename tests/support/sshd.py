"""A real OpenSSH server on localhost for the remote tests and benchmark: a throwaway host key and client key
in a temporary folder, `sshd -D` on a free port as the current user, and a client config whose Host alias logs
in with that key and trusts only that host key. Nothing here touches ~/.ssh or the system's sshd.

    with ssh_server(folder) as server:
        subprocess.run(["ssh", "-F", str(server.client_config), server.alias, "echo", "hi"])
        env = server.env()  # GPU_TRAIN_MONITOR_SSH="ssh -F <config>": the app's ssh uses the same config

The remote side's login has a clean environment (sshd's PATH), so the agent command is the absolute path of
this interpreter's `gpu-train-monitor` with `--runs-db` naming the remote store: a file of its own, so a test
can tell what the agent recorded from what was mirrored locally. The client config's SetEnv (accepted by the
server's AcceptEnv) sends the checkpoint folder and one OMP thread, so runs the agent starts leave nothing in
the user's data folder and do not fight the tests for the cores.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
ALIAS = "gtm-sshd"
WRONG_KEY_ALIAS = "gtm-sshd-wrong-key"  # the same server, a key it does not know: authentication fails
UNTRUSTED_ALIAS = "gtm-sshd-untrusted"  # the same server and key, its host key not in known_hosts
START_TIMEOUT_S = 15.0


def skip_reason() -> str | None:
    """Why no server can start here (for pytest.skip), or None."""
    if not SSHD.exists():
        return f"{SSHD} is missing (install openssh-server to run the tests over a real SSH server)"
    for program in ("ssh-keygen", "ssh"):
        if shutil.which(program) is None:
            return f"{program} is missing (install openssh-client to run the tests over a real SSH server)"
    return None


@dataclass(frozen=True)
class SshServer:
    """A running server and everything a client needs to reach it."""

    alias: str
    wrong_key_alias: str
    untrusted_alias: str
    port: int
    folder: Path
    client_config: Path
    remote_store: Path
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def ssh_program(self) -> str:
        """The value of GPU_TRAIN_MONITOR_SSH: ssh with this server's client config."""
        return f"ssh -F {shlex.quote(str(self.client_config))}"

    def agent_command(self, *, store: Path | None = None) -> tuple[str, ...]:
        """The agent as the remote login runs it: this venv's script by absolute path, on the remote store."""
        return (str(gpu_train_monitor_script()), "agent", "--runs-db", str(store or self.remote_store))

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) with GPU_TRAIN_MONITOR_SSH pointing at this server."""
        return {**(os.environ if base is None else base), "GPU_TRAIN_MONITOR_SSH": self.ssh_program}

    def ssh(self, *command: str, alias: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """`ssh -F config ALIAS command...` as the app would run it, output captured."""
        argv = ["ssh", "-F", str(self.client_config), "-T", alias or self.alias, *command]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def server_log(self) -> str:
        """sshd's own log (why a login was refused), for a failing assertion's message."""
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def gpu_train_monitor_script() -> Path:
    """This interpreter's `gpu-train-monitor` (the venv's bin folder, where pip put it)."""
    return Path(sys.executable).parent / "gpu-train-monitor"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keygen(path: Path, comment: str) -> str:
    """A new ed25519 key pair without a passphrase at `path`; returns the public key's line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return path.with_suffix(".pub").read_text(encoding="ascii").strip()


def write_server_config(folder: Path, host_key: Path, authorized_keys: Path) -> Path:
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {authorized_keys}",
                f"PidFile {folder / 'sshd.pid'}",
                "UsePAM no",
                "StrictModes no",  # the temp folder's modes are not checked
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password",  # CI and these machines run as root: keys only
                "AcceptEnv GPU_TRAIN_MONITOR_* OMP_NUM_THREADS",
                "PrintMotd no",
                "LogLevel VERBOSE",
                "",
            ]
        ),
        encoding="utf-8",
    )
    return config


def write_client_config(folder: Path, port: int, client_key: Path, wrong_key: Path, known_hosts: Path) -> Path:
    env = f"GPU_TRAIN_MONITOR_CHECKPOINTS={folder / 'remote-checkpoints'} OMP_NUM_THREADS=1"
    lines = []
    for alias, key, known in (
        (ALIAS, client_key, known_hosts),
        (WRONG_KEY_ALIAS, wrong_key, known_hosts),
        (UNTRUSTED_ALIAS, client_key, folder / "known_hosts_empty"),
    ):
        lines += [
            f"Host {alias}",
            "    HostName 127.0.0.1",
            f"    Port {port}",
            f"    User {getpass.getuser()}",
            f"    IdentityFile {key}",
            "    IdentitiesOnly yes",
            "    IdentityAgent none",
            f"    UserKnownHostsFile {known}",
            "    GlobalKnownHostsFile /dev/null",
            "    StrictHostKeyChecking yes",
            "    BatchMode yes",
            "    ConnectTimeout 10",
            f"    SetEnv {env}",
            "    LogLevel ERROR",
            "",
        ]
    config = folder / "ssh_config"
    config.write_text("\n".join(lines), encoding="utf-8")
    return config


def wait_until_accepting(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Until the server sends its SSH banner; raises RuntimeError with its log when it exits or hangs."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as connection:
                if connection.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not accept within {START_TIMEOUT_S:.0f} s: {log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def ssh_server(folder: Path, forced_command: str | None = None) -> Iterator[SshServer]:
    """Start a server with fresh keys under `folder`; stop it (and only it) on leaving. `forced_command`: the
    client's key may run only that (`command="...",restrict` in authorized_keys, as a machine's owner gives a
    monitoring-only key)."""
    reason = skip_reason()
    if reason is not None:
        raise RuntimeError(reason)
    folder.mkdir(parents=True, exist_ok=True)
    host_key, client_key, wrong_key = folder / "host_key", folder / "client_key", folder / "wrong_key"
    host_public = keygen(host_key, "gtm-test-host")
    authorized = folder / "authorized_keys"
    client_public = keygen(client_key, "gtm-test-client")
    if forced_command is not None:
        client_public = f'command="{forced_command}",restrict {client_public}'
    authorized.write_text(client_public + "\n", encoding="ascii")
    keygen(wrong_key, "gtm-test-unknown")
    if os.geteuid() == 0:  # as root sshd needs its privilege separation folder (Debian's package makes it at boot)
        Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)
    server_config = write_server_config(folder, host_key, authorized)
    log = folder / "sshd.log"
    process = None
    for _attempt in range(3):  # the free port can be taken between the probe and sshd's bind
        port = free_port()
        known_hosts = folder / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {host_public}\n", encoding="ascii")
        process = subprocess.Popen(
            [str(SSHD), "-D", "-f", str(server_config), "-p", str(port), "-E", str(log)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until_accepting(process, port, log)
            break
        except RuntimeError:
            stop(process)
            if "Address already in use" not in log.read_text(errors="replace") or _attempt == 2:
                raise
    assert process is not None
    client_config = write_client_config(folder, port, client_key, wrong_key, known_hosts)
    server = SshServer(
        alias=ALIAS,
        wrong_key_alias=WRONG_KEY_ALIAS,
        untrusted_alias=UNTRUSTED_ALIAS,
        port=port,
        folder=folder,
        client_config=client_config,
        remote_store=folder / "remote" / "runs.sqlite3",
        log=log,
        process=process,
    )
    server.remote_store.parent.mkdir(parents=True, exist_ok=True)
    try:
        login = server.ssh("true") if forced_command is None else None  # a forced command runs the agent instead
        if login is not None and login.returncode != 0:  # say why here, not as a confusing failure in each test
            raise RuntimeError(
                f"ssh to the test sshd failed: {login.stderr.strip()}; sshd: {server.server_log()[-2000:]}"
            )
        yield server
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """The listening sshd ends; sessions it forked end with their connections (their clients are closed)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
