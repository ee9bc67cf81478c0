"""Compare mode: train 2 to 4 configurations one after another, each for the same number of steps.

Sequential on purpose: two runs at once would steal each other's CPU cores and GPU, and the ratio would
measure the contention. Each run is an ordinary `TrainingSession` (no second training loop); its events
reach observers wrapped in `ContenderEvent(index, event)`, so a window can race the loss curves live.
Commands (stop, pause, resume, clear cache) reach the run under way; a stop also skips the runs after it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..base.errors import ConfigError
from ..base.text import Message
from ..config.run_config import RunConfig, option_name
from ..events.controls import RunControls
from ..events.events import ContenderEvent, Event, Observer, RunFinished, StepsReported
from .attention_headline import with_attention_headline
from .events import ComparisonFinished, ComparisonObserver, ComparisonStarted
from .plan import Contender, plan
from .result import ComparisonResult, ContenderResult, conclude


class Comparison(RunControls):
    """Runs the planned configurations in turn and concludes with a `ComparisonResult`."""

    record_memory_history = False  # snapshots belong to single runs

    def __init__(
        self, base: RunConfig, overrides: Sequence[Mapping[str, Any]], observers: Iterable[ComparisonObserver] = ()
    ) -> None:
        super().__init__(observers)
        if base.model == "auto":  # one model for every run: `auto` on each device would race different models
            from ..device.devices import resolve_device
            from ..model.models import resolve_model

            base = base.replace(model=resolve_model("auto", resolve_device("auto").type, base.dataset))
        self.contenders: tuple[Contender, ...] = plan(base, overrides)  # ConfigError before anything runs
        for contender in self.contenders:
            _check_runnable(contender)
        self.user_errors: dict[int, tuple[str | None, str]] = {}  # index -> (field, message) of bad input
        self.steps = self.contenders[0].config.max_steps or 0
        self._lock = threading.Lock()
        self._session: Any = None  # the TrainingSession under way

    def run(self) -> ComparisonResult:
        from ..distributed.relay import DataParallelRun
        from ..engine.session import TrainingSession

        self.emit(ComparisonStarted(self.contenders, self.steps))
        results: list[ContenderResult] = []
        for contender in self.contenders:
            if self.stop_requested:
                break
            losses: list[float] = []
            reports: list[int] = [0]  # StepsReported seen: the first is the warm-up, the rest images/s readings
            relay = self._relay(contender, losses, reports)
            session: Any = (
                DataParallelRun(contender.config, [relay])
                if contender.config.nproc > 1
                else TrainingSession(contender.config, [relay])
            )
            with self._lock:
                self._session = session
                if self.pause_requested:
                    session.pause()
            finished = session.run()
            with self._lock:
                self._session = None
            if finished.user_error:  # bad input (a missing dataset): every later run would meet it too
                self.user_errors[contender.index] = (finished.error_field, finished.message)
                results.append(_result(contender, finished, losses, reports[0]))
                break
            results.append(_result(contender, finished, losses, reports[0]))
        outcome = conclude(self.contenders, results, self.steps, self.contenders[0].config.model, self.stop_requested)
        outcome = with_attention_headline(outcome, self.contenders)  # fused vs plain: both predicted at 2x seq_len
        self.emit(ComparisonFinished(outcome))
        return outcome

    def _relay(self, contender: Contender, losses: list[float], reports: list[int]) -> Observer:
        def relay(event: Event) -> None:
            if isinstance(event, StepsReported):
                losses.extend(event.losses)
                reports[0] += 1
            self.emit(ContenderEvent(contender.index, event, contender.label))

        return relay

    # ---- commands reach the run under way --------------------------------------------------------
    def request_stop(self) -> None:
        super().request_stop()
        self._forward("request_stop")

    def pause(self) -> None:
        super().pause()
        self._forward("pause")

    def resume(self) -> None:
        super().resume()
        self._forward("resume")

    def request_cache_clear(self) -> None:
        self._forward("request_cache_clear")

    def _forward(self, command: str) -> None:
        with self._lock:
            if self._session is not None:
                getattr(self._session, command)()


def _check_runnable(contender: Contender) -> None:
    """Refuse now a run that could not start (a device not here, a fast path the device cannot run), rather
    than after the runs before it have trained."""
    from ..device.devices import check_process_count, resolve_device
    from ..device.fast_paths import check_fast_paths
    from ..engine.recipe import config_for_device
    from ..memory.allocator_settings import check_expandable_segments
    from ..model.activation_checkpointing import check_checkpointable

    try:
        device = resolve_device(contender.config.device)
        check_fast_paths(config_for_device(contender.config, device), device)
        check_checkpointable(contender.config, device.type)
        check_expandable_segments(contender.config.expandable_segments, device)
        if contender.config.nproc > 1:
            check_process_count(contender.config)
    except ConfigError as exc:
        raise ConfigError(
            "vs",
            Message(
                "configuration {index} ({label}): {option}: {detail}",
                index=contender.index + 1,
                label=contender.label,
                option=option_name(exc.field),
                detail=exc.detail,
            ),
        ) from None


def _result(contender: Contender, finished: RunFinished, losses: list[float], reports: int) -> ContenderResult:
    """The run's figures; no rate and no spread when every step was in the warm-up (one figure or none)."""
    s = finished.summary
    measured = s.steps > s.warmup_steps
    return ContenderResult(
        index=contender.index,
        label=contender.label,
        overrides=contender.overrides,
        status=finished.status,
        samples_per_s=s.samples_per_s if measured else None,
        samples_per_s_spread=s.samples_per_s_spread if measured else None,
        loss_last=s.loss_last,
        warmup_steps=s.warmup_steps,
        compile_s=s.compile_s,
        wall_s=s.wall_s,
        steps=s.steps,
        message=finished.message if finished.status != "completed" else "",
        losses=tuple(losses),
        readings=max(reports - 1, 0) if measured else 0,
        peak_bytes=sum(s.memory_breakdown.values()) if s.memory_breakdown else None,
        peak_method="allocator" if s.device.startswith("cuda") else "saved-tensors",
        peak_allocated_bytes=s.peak_allocated_bytes,
        peak_reserved_bytes=s.peak_reserved_bytes,
        segments_expandable=s.expandable_segments,
        tokens_per_sample=s.throughput.per_sample if s.throughput.tokens else 0,
    )
