"""The one redraw throttle of the plots: a timer that redraws at most one part (a plot) per tick, the parts
taking turns, so a busy run never repaints two plots in the same pass of the event loop (each repaint costs a
few ms of CPU, and two in one pass doubled the window's worst-case latency: tests/benchmarks/gui_latency.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QTimer, Slot


class RedrawThrottle(QObject):
    """Redraws `parts` on a timer of `interval_ms`, one per tick at most. A part is a callable that redraws
    what changed and returns whether it drew (False: nothing to draw, or it cannot be seen): the next tick starts
    with the part after the last one that drew, so a plot that changes often cannot starve the others.

    Always on by default (started at once, ticking until `stop`). Given `idle` (whether nothing is waiting to be
    drawn, or nothing can be seen), the timer stops after a tick that drew nothing while idle, and `wake` starts it
    again when something changes: no ticks at rest."""

    def __init__(
        self,
        interval_ms: int,
        parts: Sequence[Callable[[], bool]],
        parent: QObject | None = None,
        idle: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(parent)
        self.parts = tuple(parts)
        self.idle = idle
        self._next = 0  # the part tried first at the next tick
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.tick)
        if idle is None:
            self.timer.start()

    def draw_one(self) -> bool:
        """Redraw the first part, in turn, that has something to draw; returns whether one drew."""
        count = len(self.parts)
        for i in range(count):
            index = (self._next + i) % count
            if self.parts[index]():
                self._next = (index + 1) % count
                return True
        return False

    @Slot()
    def tick(self) -> None:
        """One tick of the timer: one part drawn; with `idle`, the timer stops once there is nothing to do."""
        if not self.draw_one() and self.idle is not None and self.idle():
            self.timer.stop()

    def wake(self) -> None:
        """Something changed: tick again (a throttle with `idle` stops when there is nothing to draw)."""
        if not self.timer.isActive():
            self.timer.start()

    @property
    def active(self) -> bool:
        return self.timer.isActive()

    def stop(self) -> None:
        self.timer.stop()
