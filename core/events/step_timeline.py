"""A training step's memory over time: the bytes live after each allocation and free of one step, by holder, with
the phase and the model's block running at that moment, and the points where each phase ended.

Plain values (frozen, tuples): a timeline travels inside a prediction across threads and processes, and the CLI's
JSON lists its points as objects (`as_json`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# what holds the bytes, bottom to top of the stacked plot
HOLDERS = (
    "params_bytes",
    "grads_bytes",
    "optimizer_bytes",
    "batch_bytes",
    "activations_bytes",  # saved for backward (by autograd)
    "temporaries_bytes",  # the rest the step made: outputs not saved, the loss, gradients of activations
)


@dataclass(frozen=True)
class TimelinePoint:
    """The bytes live after allocation or free number `index` of the step (0: before the first), by holder;
    `phase` and `module` (the model's block running then, or `(outside modules)`) say where in the step it is."""

    index: int
    phase: str
    module: str
    params_bytes: int = 0
    grads_bytes: int = 0
    optimizer_bytes: int = 0
    batch_bytes: int = 0
    activations_bytes: int = 0
    temporaries_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(getattr(self, key) for key in HOLDERS)

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"index": self.index, "phase": self.phase, "module": self.module}
        row.update((key, getattr(self, key)) for key in HOLDERS)
        row["total_bytes"] = self.total_bytes
        return row


@dataclass(frozen=True)
class StepTimeline:
    """`points` in step order (consecutive events merged past a bound, keeping each merged run's highest point);
    `ends`: (phase, position in `points` of the point where that phase ended); `events`: allocations and frees
    traced in all."""

    points: tuple[TimelinePoint, ...] = ()
    ends: tuple[tuple[str, int], ...] = ()
    events: int = 0

    def phase_ends(self) -> tuple[tuple[str, TimelinePoint], ...]:
        """Each phase with the point where it ended (forward, backward, optimizer), in step order."""
        return tuple((phase, self.points[position]) for phase, position in self.ends if position < len(self.points))

    @property
    def peak(self) -> TimelinePoint | None:
        return max(self.points, key=lambda point: point.total_bytes, default=None)

    def as_json(self) -> list[dict[str, Any]]:
        return [point.as_json() for point in self.points]


def timeline_from_json(data: Any) -> StepTimeline:
    """A timeline as the run store keeps it (`dataclasses.asdict`: `points` as objects, `ends` as pairs); an empty
    one for anything else (a run recorded before timelines, a damaged row)."""
    if not isinstance(data, dict):
        return StepTimeline()
    try:
        points = tuple(
            TimelinePoint(
                int(p["index"]), str(p["phase"]), str(p["module"]), *(int(p.get(key) or 0) for key in HOLDERS)
            )
            for p in data.get("points") or ()
        )
        ends = tuple((str(phase), int(at)) for phase, at in data.get("ends") or ())
        return StepTimeline(points, ends, int(data.get("events") or 0))
    except (KeyError, TypeError, ValueError, AttributeError):
        return StepTimeline()
