"""The headline of the ready-made comparison *activation checkpointing off vs on*: the peak memory it saved and
the time it cost, as the two runs measured them. Pure Python (no torch), like the rest of a comparison's result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base.text import Message, format_bytes
from .plan import Contender

if TYPE_CHECKING:
    from .result import ContenderResult


def checkpointing_headline(
    contenders: Sequence[Contender], measured: Sequence[ContenderResult], clear: bool | None
) -> str | None:
    """For two runs that differ only in activation checkpointing: the peak memory it saved and the time it cost,
    as measured ('activation checkpointing took the step's peak from 45.2 MB to 28.1 MB (38% less) and 31% more
    time per image ...'); None for any other comparison, or when a run sampled no memory."""
    if len(contenders) != 2 or len(measured) != 2:
        return None
    first, second = (c.config.to_dict() for c in contenders)
    if {f for f, v in first.items() if second[f] != v} != {"activation_checkpointing"}:
        return None
    by_index = {r.index: r for r in measured}
    off, on = (by_index[c.index] for c in sorted(contenders, key=lambda c: c.config.activation_checkpointing))
    if not off.peak_bytes or not on.peak_bytes or off.samples_per_s is None or on.samples_per_s is None:
        return None
    values = dict(
        off_peak=format_bytes(off.peak_bytes),
        on_peak=format_bytes(on.peak_bytes),
        saved=1 - on.peak_bytes / off.peak_bytes,
        off_rate=off.samples_per_s,
        on_rate=on.samples_per_s,
        cost=off.samples_per_s / on.samples_per_s - 1,
    )
    if on.peak_bytes < off.peak_bytes:
        memory = Message(
            "activation checkpointing took the step's peak memory from {off_peak} to {on_peak} ({saved:.0%} less)",
            **values,
        )
    else:
        memory = Message(
            "activation checkpointing did not lower the step's peak memory ({off_peak} without, {on_peak} with)",
            **values,
        )
    time = _tokens_time(values, clear, off, on) if off.tokens_per_sample else _images_time(values, clear, off, on)
    if off.peak_method == "saved-tensors":
        how = Message("peaks counted from the tensors a step held (no allocator peak on this device)")
    else:
        how = Message("the allocator's peaks")
    return Message("{memory}, and {time}; {how}, warm-up excluded", memory=memory, time=time, how=how)


def _images_time(values: dict, clear: bool | None, off: ContenderResult, on: ContenderResult) -> Message:
    if not clear:
        return Message(
            "its time cost is within the noise ({off_rate:.0f} images/s without, {on_rate:.0f} with)", **values
        )
    if values["cost"] > 0:
        return Message(
            "it cost {cost:.0%} more time per image ({off_rate:.0f} images/s without, {on_rate:.0f} with)", **values
        )
    return Message(
        "it took {gain:.0%} less time per image ({off_rate:.0f} images/s without, {on_rate:.0f} with)",
        gain=1 - off.samples_per_s / on.samples_per_s,  # type: ignore[operator]
        **values,
    )


def _tokens_time(values: dict, clear: bool | None, off: ContenderResult, on: ContenderResult) -> Message:
    """As `_images_time` for text runs: their rates in tokens/s (samples/s x the sequence length)."""
    values = {**values, "off_rate": off.tokens_per_s, "on_rate": on.tokens_per_s}
    if not clear:
        return Message(
            "its time cost is within the noise ({off_rate:.0f} tokens/s without, {on_rate:.0f} with)", **values
        )
    if values["cost"] > 0:
        return Message(
            "it cost {cost:.0%} more time per token ({off_rate:.0f} tokens/s without, {on_rate:.0f} with)", **values
        )
    return Message(
        "it took {gain:.0%} less time per token ({off_rate:.0f} tokens/s without, {on_rate:.0f} with)",
        gain=1 - off.samples_per_s / on.samples_per_s,  # type: ignore[operator]
        **values,
    )
