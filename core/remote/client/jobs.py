"""Compare and the batch-size finder on another machine, for the CLI and the window alike.

`RemoteComparison` is a `gpu_train_monitor.compare.comparison.Comparison` whose runs train on the remote: the agent
starts the comparison there (`compare`, gpu_train_monitor.remote.agent.job_ops), and this side follows its journal
(gpu_train_monitor.remote.client.journal_follow) and emits the very events a local comparison emits, rebuilt by
gpu_train_monitor.remote.wire.values, to the same observers: the CLI's progress bars and table, the window's race and
live plots, and the recorder, which records each run here with the remote's times and host (`RunRecorder.record_at`), as
a mirrored run is recorded. Stop, Pause and Clear cache go to the job there. `remote_find_batch_size` is
`gpu_train_monitor.finder.search.find_batch_size` there: its trials reach `on_trial` as they are measured, its answer
comes back whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...base.errors import ConfigError, UserError
from ...base.text import Message, message_from_json
from ...config.run_config import RunConfig
from ...events.controls import RunControls
from ...events.events import ContenderEvent, RunFinished
from ..wire.values import decode
from .failures import RemoteError
from .journal_follow import JobHandle, follow_journal
from .link import AgentLink
from .target import RemoteTarget

STOP_GRACE_S = 10.0  # after a stop, how long the job's own end is waited for before the follow gives up
DEVICE_TYPES = ("cuda", "mps")  # a spec's type as the remote will resolve it; anything else trains on a CPU


def device_type(spec: str) -> str:
    """`cuda:1` -> cuda, `mps` -> mps, else cpu: the device type of a spec, without torch (it is the remote's)."""
    head = spec.split(":", 1)[0]
    return head if head in DEVICE_TYPES else "cpu"


class RemoteComparison(RunControls):
    """2 to 4 configurations raced one after another on `target`'s machine; `run()` returns the ComparisonResult."""

    record_memory_history = False  # snapshots belong to single runs (and this machine cannot take the remote's)

    def __init__(
        self,
        target: RemoteTarget,
        base: RunConfig,
        overrides: Sequence[Mapping[str, Any]],
        observers: Sequence[Callable[[Any], None]] = (),
        *,
        link_factory: Callable[[RemoteTarget], AgentLink] = AgentLink,
    ) -> None:
        from ...compare.plan import plan
        from ...model.models import resolve_model

        super().__init__(observers)
        self.target = target
        self.base, self.overrides = base, [dict(item) for item in overrides]
        shown = base  # the plan shown until the remote's own arrives (it resolves `auto` with its devices)
        if base.model == "auto" and base.device != "auto":
            shown = base.replace(model=resolve_model("auto", device_type(base.device), base.dataset))
        self.contenders = plan(shown, self.overrides)  # ConfigError before anything starts
        self.steps = self.contenders[0].config.max_steps or 0
        self.user_errors: dict[int, tuple[str | None, str]] = {}
        self.job = JobHandle(target, link_factory)
        self.follow_stop = threading.Event()  # set: stop following (the window closes); the job goes on there
        self.on_state: Callable[[str], None] | None = None
        self.on_problem: Callable[[str], None] | None = None
        self._paused = False

    def run(self) -> Any:
        """Start the comparison there, emit its events here as they come, return its result. UserError (a
        ConfigError naming its field) for what the remote refused; RemoteError when the connection fails for good."""
        self.job.start("compare", config=self.base.to_dict(), overrides=self.overrides)
        if self.stop_requested:  # Stop pressed while it started
            self.job.control("stop")
        end = follow_journal(
            self.job, self._line, stop=self.follow_stop, on_state=self.on_state, on_problem=self.on_problem
        )
        if end is None:
            raise RemoteError(
                Message("stopped following the comparison on {host}; it goes on there", host=self.target.host)
            )
        return _result(end)

    def _line(self, line: dict[str, Any], owner: tuple[int, float, str]) -> None:
        from ...compare.events import ComparisonStarted

        event = decode(line.get("event"))
        if isinstance(event, ComparisonStarted):
            self.contenders, self.steps = event.contenders, event.steps
        if isinstance(event, ContenderEvent) and isinstance(event.event, RunFinished) and event.event.user_error:
            self.user_errors[event.index] = (event.event.error_field, event.event.message)
        at = line.get("at")
        for observer in list(self.observers):
            record_at = getattr(observer, "record_at", None)
            if record_at is not None and isinstance(at, (int, float)):
                record_at(event, float(at), owner)
            else:
                observer(event)

    # ---- commands go to the job there ------------------------------------------------------------
    def request_stop(self) -> None:
        super().request_stop()
        self.job.control_soon("stop")

    def pause(self) -> None:
        super().pause()
        if not self._paused:  # the signal toggles: send it once per change
            self._paused = True
            self.job.control_soon("pause")

    def resume(self) -> None:
        super().resume()
        if self._paused:
            self._paused = False
            self.job.control_soon("pause")

    def request_cache_clear(self) -> None:
        self.job.control_soon("clear_cache")


def remote_find_batch_size(
    target: RemoteTarget,
    config: RunConfig,
    *,
    capacity: int | None = None,
    margin: float | None = None,
    start: int | None = None,
    max_batch: int | None = None,
    on_trial: Callable[[Any], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    predict: bool = True,
    link_factory: Callable[[RemoteTarget], AgentLink] = AgentLink,
) -> Any:
    """`find_batch_size` run on `target`'s machine: the BatchSizeResult; UserError for what it refused there (or
    "stopped" once `should_stop()` said so and the search stopped there)."""
    options = {"capacity": capacity, "margin": margin, "start": start, "max_batch": max_batch}
    job = JobHandle(target, link_factory)
    job.start("find", config=config.to_dict(), predict=predict, **{k: v for k, v in options.items() if v is not None})
    done, follow_stop = threading.Event(), threading.Event()

    def watch_stop() -> None:
        while should_stop is not None and not done.wait(0.2):
            if should_stop():
                job.control_soon("stop")
                if not done.wait(STOP_GRACE_S):  # its end did not come (the connection is down): stop waiting
                    follow_stop.set()
                return

    watcher = threading.Thread(target=watch_stop, name="finder-stop", daemon=True)
    watcher.start()

    def line(item: dict[str, Any], _owner: tuple[int, float, str]) -> None:
        if "trial" in item and on_trial is not None:
            on_trial(decode(item["trial"]))

    try:
        end = follow_journal(job, line, stop=follow_stop)
    finally:
        done.set()
    if end is None:  # stopped, and its end never came
        raise RemoteError(Message("the search on {host} was not followed to its end", host=target.host))
    return _result(end)


def _result(end: Mapping[str, Any]) -> Any:
    """The job's answer, or the error it ended with raised as it was raised there (a ConfigError keeps its
    field; anything not the user's input is a RemoteError naming what broke there)."""
    if "result" in end:
        return decode(end["result"])
    text = message_from_json(end.get("error")) or Message("the job ended without a result")
    field = end.get("field")
    if isinstance(field, str) and field:
        raise ConfigError(field, text)
    if end.get("user_error"):
        raise UserError(text)
    raise RemoteError(Message("it failed there: {why}", why=text))
