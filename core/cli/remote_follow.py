"""`run --remote HOST` and `watch --remote HOST`: start the run on another machine, then follow it here.

The agent starts the run detached (it outlives this process and the connection); this process mirrors it into
the local store (the window finds it there by uid: GPU_TRAIN_MONITOR_RUN_UID when a window started this
process) with a progress line, reconnecting after drops, until the run ends; the exit code is the run's status
exit code, as for a local run. It is steered like a local run: Ctrl+C (SIGINT), SIGUSR2 and SIGUSR1 reach the
remote run as stop, pause and clear cache (gpu_train_monitor.events.signals' contract), and SIGTERM stops it too. A
second Ctrl+C stops following (the remote run still stops); a third ends this process at once (a reconnect under way
may otherwise take up to its timeouts). Whatever the remote wrote (the run's uid and pid as it answered, its
messages, the agent's words) is printed with its control characters escaped: it must not drive the terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import queue
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..base.text import Message, printable
from ..distributed.env import ENV_RUN_UID
from ..events.signals import Control, control_handlers, ignore_control_signals, signals_handled
from ..events.status import EXIT_INTERRUPTED, EXIT_TERMINATED, Status
from ..remote.client.failures import RemoteError, RemoteRequestFailed
from ..remote.client.follow import RunGone, follow_into_store
from ..remote.client.link import AgentLink
from ..remote.client.target import RemoteTarget
from ..remote.wire.protocol import NOT_FOUND
from .options import PROG
from .summary_text import summary_text
from .watched_script import SCRIPT_EXITED

WAIT_FOR_RUN_S = 30.0  # a run the agent does not know yet is asked for this long (it waits for runs it started)
PROGRESS_EVERY_S = 1.0


def start_and_follow(
    args: argparse.Namespace, target: RemoteTarget, op: str, request: dict[str, Any], store_path: Path
) -> int:
    """Start the run (`start` or `watch` op with `request`) and follow it into `store_path`; the exit code."""
    uid = os.environ.pop(ENV_RUN_UID, None) or uuid.uuid4().hex
    ignore_control_signals()  # a Pause or Clear cache before the forwarding starts, or after it, must not end this
    controls: queue.Queue[Control | None] = queue.Queue()
    with _forwarded_signals(controls) as seen:  # from the start: a Stop while it starts stops it once it runs
        link = AgentLink(target)
        link.connect()
        try:
            started = link.request(op, uid=uid, **request)
            uid = str(started.get("uid") or uid)
            said = printable(
                f"started on {target.host} (process {started.get('pid', '?')}); following it into {store_path}"
            )
            seen.following = True
            try:
                status = _follow(target, link, uid, store_path, said, controls)
            except RunGone:
                raise
            except RemoteError as exc:  # no longer followed, but it trains there all the same
                raise RemoteError(
                    Message("{error}; the run goes on on {host} (uid {uid})", error=str(exc), host=target.host, uid=uid)
                ) from None
        finally:
            link.close()
    return _report_end(args, store_path, uid, status, seen.terminated)


def _follow(
    target: RemoteTarget,
    link: AgentLink,
    uid: str,
    store_path: Path,
    started: str,
    controls: queue.Queue[Control | None],
) -> Status | None:
    """Follow the run into the local store while steering it with the controls the signals queue; the status
    it ended with (None when no longer followed before it ended)."""
    stop = threading.Event()
    outcome: dict[str, Any] = {}

    def follow() -> None:
        try:
            outcome["status"] = follow_into_store(
                target,
                uid,
                store_path,
                stop=stop,
                on_problem=lambda line: print(f"{PROG}: {printable(line)}", file=sys.stderr, flush=True),
                wait_for_run_s=WAIT_FOR_RUN_S,
            )
        except BaseException as exc:  # handed to the main thread, which reports it
            outcome["error"] = exc

    follower = threading.Thread(target=follow, name="remote follow", daemon=True)
    steering = _Steering(target, link, uid)
    follower.start()
    progress = _Progress(store_path, uid, target.host, started)
    while follower.is_alive():
        while not controls.empty():
            control = controls.get()
            if control is None:  # a second Ctrl+C: stop following
                stop.set()
            else:
                steering.send(control)
        steering.retry()
        progress.show()
        follower.join(0.2)
    progress.close()
    steering.close()
    if "error" in outcome:
        raise outcome["error"]
    return Status.of(outcome.get("status", ""))


class _Steering:
    """Sends controls to the run through the start's link, or a new one when that one dropped. A Stop that
    comes before the run has recorded itself (the agent does not know it yet) is sent again until it lands."""

    def __init__(self, target: RemoteTarget, link: AgentLink, uid: str) -> None:
        self.target, self.link, self.uid = target, link, uid
        self.stop_pending = False
        self._next_try = 0.0

    def send(self, control: Control) -> None:
        for attempt in range(2):
            try:
                if not self.link.alive:
                    self.link.close()
                    self.link = AgentLink(self.target)
                    self.link.connect()
                self.link.request("control", uid=self.uid, control=control.value)
                if control is Control.STOP:
                    self.stop_pending = False
                return
            except RemoteRequestFailed as exc:
                if control is Control.STOP and exc.kind == NOT_FOUND:  # not recorded yet: again in a moment
                    self.stop_pending, self._next_try = True, time.monotonic() + 1.0
                    return
                _warn_not_reached(control, exc)
                return
            except RemoteError as exc:
                if attempt:
                    _warn_not_reached(control, exc)

    def retry(self) -> None:
        """Send a pending Stop again when its time has come."""
        if self.stop_pending and time.monotonic() >= self._next_try:
            self.send(Control.STOP)

    def close(self) -> None:
        self.link.close()


def _warn_not_reached(control: Control, error: Exception) -> None:
    """A control that did not reach the run, said with the remote's words escaped."""
    print(printable(f"{PROG}: warning: {control.value} did not reach the run: {error}"), file=sys.stderr)


class _Signals:
    terminated = False
    following = False  # the run started and is being followed (a second Ctrl+C before: abort)


@contextlib.contextmanager
def _forwarded_signals(controls: queue.Queue[Control | None]) -> Iterator[_Signals]:
    """SIGINT, SIGUSR2, SIGUSR1 (CONTROL_SIGNALS) and SIGTERM queue the control they carry; restored after."""
    seen = _Signals()
    interrupts = [0]

    def on_control(control: Control) -> Any:
        def handler(signum: int, frame: Any) -> None:
            if control is Control.STOP:
                interrupts[0] += 1
                if interrupts[0] > 1 and not seen.following or interrupts[0] > 2:
                    raise KeyboardInterrupt  # still connecting or starting, or a third time: give up at once
                if interrupts[0] > 1:
                    print("\nno longer following: the run stops on its own there", file=sys.stderr)
                    controls.put(None)
                    return
                print("\nstopping the run at its next step (Ctrl+C again to stop following)", file=sys.stderr)
            controls.put(control)

        return handler

    def on_sigterm(signum: int, frame: Any) -> None:
        seen.terminated = True
        controls.put(Control.STOP)

    with signals_handled({signal.SIGTERM: on_sigterm, **control_handlers(on_control)}):
        yield seen


class _Progress:
    """A line on stderr as the copy grows: rewritten in place on a terminal, every 10 s otherwise (the first at
    once)."""

    def __init__(self, store_path: Path, uid: str, host: str, started: str) -> None:
        self.store_path, self.uid, self.host = store_path, uid, host
        self.started = started  # said once the run shows here (a run that fails first says only why)
        self.tty = sys.stderr.isatty()
        self.every_s = PROGRESS_EVERY_S if self.tty else 10.0
        self.last_at = 0.0
        self.last_text = ""
        self.store: Any = None

    def show(self) -> None:
        if time.monotonic() - self.last_at < self.every_s:
            return
        text = self._text()
        if not text:
            return  # not here yet: looked for again at the next call
        self.last_at = time.monotonic()
        if text == self.last_text:
            return
        if self.started:
            print(self.started, file=sys.stderr, flush=True)
            self.started = ""
        self.last_text = text
        shown = printable(text)  # the copy's columns are the remote's: a step count may be any text
        print(f"\r{shown}" if self.tty else shown, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def _text(self) -> str:
        from ..store.run_store import RunStore, StoreError

        try:
            if self.store is None:
                if not self.store_path.exists():
                    return ""
                self.store = RunStore(self.store_path, readonly=True)
            run_id = self.store.find_uid(self.uid)
            if run_id is None:
                return ""
            row = self.store.run(run_id)
        except StoreError:
            return ""
        loss = "" if row.loss_last is None else f"  loss {row.loss_last:.4f}"
        rate = "" if row.speed is None else f"  {row.speed:,.0f} {row.throughput_unit}"
        return f"step {row.steps}/{row.total_steps}{loss}{rate}  on {self.host}"

    def close(self) -> None:
        if self.started and self._text():  # a run that ended before the first look
            print(self.started, file=sys.stderr, flush=True)
        if self.tty and self.last_text:
            print(file=sys.stderr)
        if self.store is not None:
            self.store.close()


def _report_end(args: argparse.Namespace, store_path: Path, uid: str, status: Status | None, terminated: bool) -> int:
    """The summary (stdout), why it ended (stderr), --summary-json, and the exit code of the run's status."""
    from ..events.summary import RunSummary
    from ..store.run_store import RunStore
    from .stdout import out, save_json

    with RunStore(store_path) as store:
        run_id = store.find_uid(uid)
        row = None if run_id is None else store.run(run_id)
        summary = None if run_id is None else store.summary(run_id)
    if status is None or not status.finished:  # no longer followed before it ended
        print(printable(f"{PROG}: the run goes on on the remote machine (uid {uid})"), file=sys.stderr)
        return EXIT_INTERRUPTED
    if summary is not None:
        known = {field.name for field in dataclasses.fields(RunSummary)}
        text = summary_text(RunSummary(**{name: value for name, value in summary.items() if name in known}))
        out(printable(text, newlines=True))
    if row is not None and row.message and status is not Status.COMPLETED:
        print(printable(f"{PROG}: {status}: {row.message}"), file=sys.stderr)
    if summary is not None and getattr(args, "summary_json", None):
        problem = save_json("summary_json", args.summary_json, summary, "summary")
        if problem:
            print(problem, file=sys.stderr)
            return 2
    if row is not None:
        print(Message("recorded as run {run_id} in {path}", run_id=row.id, path=str(store_path)), file=sys.stderr)
    if terminated and status is Status.STOPPED:
        return EXIT_TERMINATED
    return _script_exit_code(row) or status.exit_code


def _script_exit_code(row: Any) -> int | None:
    """The exit code of a watched script that failed so (what a local `watch` exits with); None otherwise."""
    message = None if row is None else row.message
    if not isinstance(message, Message) or message.template != SCRIPT_EXITED:
        return None
    code = message.params.get("code")
    return code if isinstance(code, int) and not isinstance(code, bool) and 0 < code < 256 else None
