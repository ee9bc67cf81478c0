"""The events only a comparison emits, around its runs' own events (`gpu_train_monitor.events.events.ContenderEvent`).

`Comparison` emits `ComparisonStarted`, then every event of its runs wrapped in a `ContenderEvent`, then
`ComparisonFinished`. They live here, not with the run's events, so that `gpu_train_monitor.events` (and the store that
records runs) need nothing from compare mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

from ..events.events import Event
from .plan import Contender
from .result import ComparisonResult


@dataclass(frozen=True)
class ComparisonStarted:
    """A comparison begins: its runs, in the order they will train, each for `steps` steps."""

    contenders: tuple[Contender, ...]
    steps: int


@dataclass(frozen=True)
class ComparisonFinished:
    result: ComparisonResult


ComparisonEvent = Union[ComparisonStarted, Event, ComparisonFinished]  # Event holds the wrapped ContenderEvent
ComparisonObserver = Callable[[ComparisonEvent], None]
