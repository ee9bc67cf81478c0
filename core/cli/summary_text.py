"""The summary a finished run prints: a local run's (gpu_train_monitor.cli.run_command) and a remote one's, read
back from the store it was followed into (gpu_train_monitor.cli.remote_follow), in the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..events.summary import RunSummary


def summary_text(s: RunSummary) -> str:
    """The summary a finished run prints (also a remote run's, read back from the store)."""
    from ..base.text import format_bytes
    from ..config.sequences import is_text_dataset
    from ..events.event_text import batch_size_text, rate_text

    rate = rate_text(s)
    noun = "sequences" if is_text_dataset(str(s.config.get("dataset", ""))) else "images"
    loss = "n/a" if s.loss_first is None else f"{s.loss_first:.4f} -> {s.loss_last:.4f}"
    acc = "n/a" if s.val_accuracy is None else f"{s.val_accuracy:.2%}"
    peak = format_bytes(s.peak_allocated_bytes) + (
        "" if not s.peak_reserved_bytes else f" allocated, {format_bytes(s.peak_reserved_bytes)} reserved"
    )
    return "\n".join(
        [
            f"status      {s.status}",
            f"device      {s.device} ({s.device_name})"
            + (f", {s.world_size} processes (data-parallel)" if s.world_size > 1 else ""),
            f"steps       {s.steps} ({s.samples} {noun} in {s.wall_s:.1f} s)"
            if not s.start_step
            else f"steps       {s.steps} (resumed at step {s.start_step}: "
            f"trained {s.steps - s.start_step} in {s.wall_s:.1f} s)",
            f"batch size  {batch_size_text(s)}",
            f"throughput  {rate}" + ("" if s.compile_s is None else f" (after {s.compile_s:.1f} s compiling)"),
            f"loss        {loss}",
            f"val acc     {acc}",
            f"peak memory {peak}" + ("" if s.peak_reserved_bytes else " (process RSS)") + _segments(s),
            *step_time_lines(s),
        ]
    )


def _segments(s: RunSummary) -> str:
    """', expandable segments (read back)' for a CUDA run that set them, as its allocator's segments showed."""
    if s.expandable_segments is None:
        return ""
    return f", {'expandable' if s.expandable_segments else 'fixed'} segments (read back from the allocator)"


def step_time_lines(s: RunSummary) -> list[str]:
    """Where a step's time went and what bounds it: "step time  70.2 ms: data 1% · copy 2% · forward 52% ..."
    and the verdict with what to try; nothing for a run whose steps were not timed (a watched one's)."""
    return phase_lines(s.step_phases_s, s.verdict, s.verdict_text, s.device_step_phases_s)


def _split(step_phases_s: Mapping[str, float]) -> str:
    """ "70.2 ms: data 1% · copy 2% · forward 52% ..." (the step's time: "step", else the phases' sum)."""
    phases = {name: seconds for name, seconds in step_phases_s.items() if name != "step"}
    total = sum(phases.values()) or 1.0
    split = " · ".join(f"{name} {100 * seconds / total:.0f}%" for name, seconds in phases.items())
    return f"{1000 * step_phases_s.get('step', total):.1f} ms: {split}"


def phase_lines(
    step_phases_s: Mapping[str, float] | None,
    verdict: str | None,
    verdict_text: str,
    device_step_phases_s: Mapping[str, float] | None = None,
) -> list[str]:
    """`step_time_lines` of a summary's values: also of one read back from the run store as JSON (`runs show`),
    so a run's split and verdict read the same wherever they are printed. On CUDA a second line: the GPU's clock."""
    if not step_phases_s:
        return []
    lines = [f"step time   {_split(step_phases_s)}"]
    if device_step_phases_s:
        lines.append(f"on the GPU  {_split(device_step_phases_s)}")
    if verdict:
        lines.append(f"verdict     {verdict}: {verdict_text}")
    return lines
