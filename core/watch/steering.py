"""How the window steers a watched run, as it steers ours (by the control signals of gpu_train_monitor.events.signals):
its requests are answered between two of the loop's steps. Clear the cache; pause (the step blocks until Resume or
Stop); stop (`WatchStopped` is raised, unless the caller only reads `stop_requested`)."""

from __future__ import annotations

from collections.abc import Callable

from ..base.text import Message
from ..engine.loop_state import LoopState
from ..events.controls import RunControls
from ..events.events import CacheCleared, LogMessage, RunPaused, RunResumed
from ..memory.probe import MemoryProbe, clear_cache, has_cache

PAUSE_POLL_S = 0.05


class WatchStopped(KeyboardInterrupt):
    """Raised by `Watch.step()` once the window's Stop or a first Ctrl+C asked the run to stop. A KeyboardInterrupt,
    so a script's own `except KeyboardInterrupt` (save, then exit) handles it, and an unchanged script ends as
    Ctrl+C would end it; the `with watch(...)` block swallows it (the run ends `stopped`)."""


def answer_requests(
    controls: RunControls, probe: MemoryProbe | None, state: LoopState, flush: Callable[[], None], raise_on_stop: bool
) -> None:
    """Clear the cache, pause (blocking here), stop: the window's requests, between two steps. `flush` reports
    the buffered steps before the run pauses or stops."""
    if controls.take_cache_clear():
        clear_cached(controls, probe, state.step)
    if controls.pause_requested:
        flush()
        controls.emit(RunPaused(state.step))
        while not controls.wait_for_resume(PAUSE_POLL_S):
            if controls.take_cache_clear():
                clear_cached(controls, probe, state.step)
        if not controls.stop_requested:
            controls.emit(RunResumed(state.step))
        state.reset_rate_clock()
    if controls.stop_requested and raise_on_stop:
        flush()
        raise WatchStopped(Message("stopped by request"))


def clear_cached(controls: RunControls, probe: MemoryProbe | None, step: int) -> None:
    """Empty the allocator's cache and say what it freed (on the CPU, that there was none to clear)."""
    assert probe is not None
    device = probe.device
    freed = clear_cache(device)
    controls.emit(CacheCleared(step, freed, probe.sample()))
    if not has_cache(device):
        controls.emit(LogMessage("info", Message("the CPU has no caching allocator: nothing to clear")))
