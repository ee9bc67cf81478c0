"""The redraw throttle: one part a tick, the parts taking turns after the last that drew, and (with `idle`) no
ticks at rest."""

from __future__ import annotations

from gpu_train_monitor.gui.qt.redraw import RedrawThrottle


class Part:
    """A plot stand-in: draws while it has something pending."""

    def __init__(self, name: str, drawn: list[str]) -> None:
        self.name, self.drawn, self.pending = name, drawn, 0

    def __call__(self) -> bool:
        if not self.pending:
            return False
        self.pending -= 1
        self.drawn.append(self.name)
        return True


def test_one_part_a_tick_in_turn_so_a_busy_part_cannot_starve_the_others(qapp):
    drawn: list[str] = []
    a, b, c = Part("a", drawn), Part("b", drawn), Part("c", drawn)
    throttle = RedrawThrottle(1000, (a, b, c))
    throttle.stop()  # ticked by hand
    a.pending, c.pending = 10, 1
    for _ in range(4):
        throttle.tick()
    assert drawn == ["a", "c", "a", "a"]  # b had nothing to draw; c's turn came right after a's
    b.pending = 1
    throttle.tick()
    assert drawn[-1] == "b"  # the turn goes on from a


def test_an_idle_throttle_stops_at_rest_and_wakes_when_something_changes(qapp):
    drawn: list[str] = []
    part = Part("a", drawn)
    throttle = RedrawThrottle(1000, (part,), idle=lambda: part.pending == 0)
    assert not throttle.active  # nothing to draw yet
    part.pending = 1
    throttle.wake()
    assert throttle.active
    throttle.tick()
    assert drawn == ["a"] and throttle.active  # it drew: one more tick to find out there is nothing left
    throttle.tick()
    assert not throttle.active
