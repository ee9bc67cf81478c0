"""The outcome of a comparison: each run's throughput and losses, the headline ratio, and whether runs
that should have computed the same losses did.

Pure Python (no torch): the CLI prints it, `--json` writes `to_dict()`, the window shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.text import Message
from ..events.outcome import status_word
from .checkpointing_headline import checkpointing_headline
from .plan import Contender
from .segments_headline import segments_headline
from .throughput_noise import tell_apart

# Settings that change how fast a run goes but not what it computes: with the same seed, data order and
# model, runs that differ only in these should see the same losses, up to floating-point rounding
# (a different kernel or summation order). stream vs resident is not here: the two placements shuffle and
# augment with different random streams; nor is amp (bf16 rounds differently by design).
SPEED_ONLY = frozenset(
    {
        "channels_last",
        "activation_checkpointing",  # the same computation, recomputed in backward (BatchNorm's statistics kept)
        "expandable_segments",  # where the allocator puts the same tensors
        "attention",  # a GPT's fused or plain attention: the same function, kernels that round differently
        "compile",
        "cudnn_benchmark",
        "fused_optimizer",
        "workers",
        "pin_memory",
        "non_blocking",
        "report_interval",
    }
)
AGREEMENT_STEPS = 10  # the first steps compared: later, rounding differences compound through training
AGREEMENT_RTOL = 0.02  # fp32 rounding over 10 steps stays far below this; a real difference (data, init) does not


@dataclass(frozen=True)
class ContenderResult:
    """One run of a comparison, as `--json` writes it under "runs"."""

    index: int
    label: str
    overrides: Mapping[str, Any]
    status: str
    samples_per_s: float | None  # median over reports after warm-up
    samples_per_s_spread: tuple[float, float] | None  # 10th..90th percentile over those reports
    loss_last: float | None
    warmup_steps: int
    compile_s: float | None
    wall_s: float
    steps: int
    message: str  # why it did not complete; empty when it did
    losses: tuple[float, ...]  # every step's loss, in order (not in the JSON)
    readings: int = 0  # reports after the warm-up, the images/s readings behind the median and spread; 0: unknown
    peak_bytes: int | None = None  # the largest sampled step's memory, all parts (its breakdown's total); None: none
    peak_method: str = ""  # "allocator" (CUDA's peak counters) or "saved-tensors" (counted from what the step held)
    peak_allocated_bytes: int | None = None  # the run's allocator peaks (its summary's); None: not known
    peak_reserved_bytes: int | None = None  # 0 where the device has no caching allocator
    segments_expandable: bool | None = None  # read back from CUDA's allocator at the run's end, for a run that set
    # expandable segments; None: not read (another device, not set) or segments of both kinds
    tokens_per_sample: int = 0  # a text run's seq_len: its throughput is tokens/s, samples_per_s x this; 0: images

    @property
    def tokens_per_s(self) -> float | None:
        if not self.tokens_per_sample or self.samples_per_s is None:
            return None
        return self.samples_per_s * self.tokens_per_sample

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "label": self.label,
            "overrides": dict(self.overrides),
            "status": self.status,
            "samples_per_s": self.samples_per_s,
            "samples_per_s_spread": None if self.samples_per_s_spread is None else list(self.samples_per_s_spread),
            "loss_last": self.loss_last,
            "warmup_steps": self.warmup_steps,
            "compile_s": self.compile_s,
            "wall_s": self.wall_s,
            "steps": self.steps,
            "message": self.message,
            "readings": self.readings,
            "peak_bytes": self.peak_bytes,
            "peak_method": self.peak_method,
            "peak_allocated_bytes": self.peak_allocated_bytes,
            "peak_reserved_bytes": self.peak_reserved_bytes,
            "segments_expandable": self.segments_expandable,
            "tokens_per_s": self.tokens_per_s,
        }


@dataclass(frozen=True)
class ComparisonResult:
    runs: tuple[ContenderResult, ...]
    steps: int  # planned steps per run
    model: str
    batch_size: int | None  # shared by every run; None when the runs differ in it
    speedup: float | None  # fastest / slowest samples_per_s among runs that measured one
    fastest: int | None
    slowest: int | None
    headline: str
    losses_agree: bool | None  # None: no two runs differ in speed settings only
    agreement: str  # what the loss check found, in words; empty when nothing was checked
    status: str  # completed (every run did), stopped, or failed
    scaling_efficiency: Mapping[int, float] = field(default_factory=dict)  # run index -> its images/s over
    # (its processes / the fewest's) x the fewest-process run's: runs that differ only in nproc
    clear_difference: bool | None = None  # whether fastest and slowest differ beyond the noise; None: no ratio
    steps_to_tell: int | None = None  # steps per run that would tell them apart, when the difference is unclear

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [run.to_dict() for run in self.runs],
            "speedup": self.speedup,
            "fastest": self.fastest,
            "scaling_efficiency": {str(i): e for i, e in self.scaling_efficiency.items()},
            "slowest": self.slowest,
            "headline": self.headline,
            "steps": self.steps,
            "model": self.model,
            "batch_size": self.batch_size,
            "losses_agree": self.losses_agree,
            "agreement": self.agreement,
            "status": self.status,
            "clear_difference": self.clear_difference,
            "steps_to_tell": self.steps_to_tell,
        }


def conclude(
    contenders: Sequence[Contender], runs: Sequence[ContenderResult], steps: int, model: str, stopped: bool
) -> ComparisonResult:
    """The headline ratio and the loss check over the finished runs."""
    batches = {c.config.batch_size for c in contenders}
    batch = batches.pop() if len(batches) == 1 else None
    measured = [r for r in runs if r.samples_per_s is not None and r.status == "completed"]
    speedup = fastest = slowest = clear = steps_to_tell = None
    if len(measured) >= 2:
        fast = max(measured, key=lambda r: r.samples_per_s or 0.0)
        slow = min(measured, key=lambda r: r.samples_per_s or 0.0)
        assert fast.samples_per_s is not None and slow.samples_per_s is not None
        speedup, fastest, slowest = fast.samples_per_s / slow.samples_per_s, fast.index, slow.index
        clear, steps_to_tell = tell_apart(fast, slow)
        one_model = len({c.config.model for c in contenders}) == 1
        headline = (
            _ratio_headline(fast.label, slow.label, ratio_text(speedup), model if one_model else None, batch)
            if clear
            else _unclear_headline(fast, slow, steps_to_tell)
        )
        headline = checkpointing_headline(contenders, measured, clear) or headline
        headline = segments_headline(contenders, measured, headline) or headline
    else:
        missing = [_unmeasured(r) for r in runs if r not in measured]
        headline = Message(
            "no ratio: {why}", why=joined(missing) if missing else Message("fewer than two runs finished")
        )
    scaling = scaling_efficiency(contenders, measured)
    if scaling:
        by_index = {c.index: c for c in contenders}
        efficiencies = ", ".join(f"{by_index[i].label} {e:.0%}" for i, e in scaling.items())  # labels and numbers
        headline = Message(
            "{headline}; scaling efficiency {efficiencies} (images/s per process against the fewest)",
            headline=headline,
            efficiencies=efficiencies,
        )
    agree, agreement = check_agreement(contenders, runs)
    status = (
        "completed"
        if all(r.status == "completed" for r in runs) and len(runs) == len(contenders)
        else ("stopped" if stopped else "failed")
    )
    return ComparisonResult(
        tuple(runs),
        steps,
        model,
        batch,
        speedup,
        fastest,
        slowest,
        headline,
        agree,
        agreement,
        status,
        scaling,
        clear,
        steps_to_tell,
    )


def _ratio_headline(fast: str, slow: str, ratio: str, model: str | None, batch: int | None) -> str:
    """'resident trains resnet18 2.41x faster than stream at batch 256; warm-up excluded' (the model when every
    run trains the same one, the batch when every run shares it)."""
    values = dict(fast=fast, slow=slow, ratio=ratio, model=model, batch=batch)
    if model is not None and batch is not None:
        return Message("{fast} trains {model} {ratio} faster than {slow} at batch {batch}; warm-up excluded", **values)
    if model is not None:
        return Message("{fast} trains {model} {ratio} faster than {slow}; warm-up excluded", **values)
    if batch is not None:
        return Message("{fast} trains {ratio} faster than {slow} at batch {batch}; warm-up excluded", **values)
    return Message("{fast} trains {ratio} faster than {slow}; warm-up excluded", **values)


def _unmeasured(run: ContenderResult) -> str:
    """'run 2 (cpu) failed: ...': a run that has no rate for the ratio, and why."""
    if run.message:
        return Message(
            "run {run} ({label}) {status}: {message}",
            run=run.index + 1,
            label=run.label,
            status=status_word(run.status),
            message=run.message,
        )
    if run.status == "completed" and run.samples_per_s is None:  # every step it trained was in the warm-up
        return Message(
            "run {run} ({label}) completed only {steps} steps, all in its first report (the warm-up, "
            "left out of images/s): too few for a rate; train more steps",
            run=run.index + 1,
            label=run.label,
            steps=run.steps,
        )
    return Message("run {run} ({label}) {status}", run=run.index + 1, label=run.label, status=status_word(run.status))


def _unclear_headline(fast: ContenderResult, slow: ContenderResult, steps_to_tell: int | None) -> str:
    """'no clear difference between stream and resident: ...': a ratio inside the noise names no winner. Text runs'
    spreads are said in tokens/s."""
    assert fast.samples_per_s is not None and slow.samples_per_s is not None
    scale = fast.tokens_per_sample if fast.tokens_per_sample and slow.tokens_per_sample else 1
    fast_low, fast_high = (x * scale for x in fast.samples_per_s_spread or (fast.samples_per_s,) * 2)
    slow_low, slow_high = (x * scale for x in slow.samples_per_s_spread or (slow.samples_per_s,) * 2)
    values = dict(
        fast=fast.label,
        slow=slow.label,
        ratio=ratio_text(fast.samples_per_s / slow.samples_per_s),
        fast_low=fast_low,
        fast_high=fast_high,
        slow_low=slow_low,
        slow_high=slow_high,
    )
    if scale != 1:
        return _unclear_tokens(values, steps_to_tell)
    if steps_to_tell is not None:
        return Message(
            "no clear difference between {fast} and {slow}: their images/s spreads overlap ({fast} "
            "{fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within "
            "the noise; about {steps} steps per run would tell a difference this size",
            steps=steps_to_tell,
            **values,
        )
    return Message(
        "no clear difference between {fast} and {slow}: their images/s spreads overlap ({fast} "
        "{fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within "
        "the noise; more steps per run would tell",
        **values,
    )


def _unclear_tokens(values: dict[str, Any], steps_to_tell: int | None) -> str:
    if steps_to_tell is not None:
        return Message(
            "no clear difference between {fast} and {slow}: their tokens/s spreads overlap ({fast} "
            "{fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within "
            "the noise; about {steps} steps per run would tell a difference this size",
            steps=steps_to_tell,
            **values,
        )
    return Message(
        "no clear difference between {fast} and {slow}: their tokens/s spreads overlap ({fast} "
        "{fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within "
        "the noise; more steps per run would tell",
        **values,
    )


def joined(texts: Sequence[str]) -> str:
    """Texts joined by '; ', each one kept whole (a Message stays one, so the window translates every part)."""
    text = texts[0]
    for following in texts[1:]:
        text = Message("{earlier}; {following}", earlier=text, following=following)
    return text


def scaling_efficiency(contenders: Sequence[Contender], measured: Sequence[ContenderResult]) -> dict[int, float]:
    """For runs that differ only in their number of processes (and whether BatchNorm is synchronised): each
    one's images/s / (n / n0 x the n0-process run's), n0 the fewest; 100% is perfect scaling. Empty when the
    runs differ in anything else, or the fewest-process run did not measure."""
    configs = {c.index: c.config.to_dict() for c in contenders}
    first = configs[contenders[0].index]
    if len({c.config.nproc for c in contenders}) < 2 or any(
        {f for f, v in config.items() if first[f] != v} - {"nproc", "sync_bn"} for config in configs.values()
    ):
        return {}
    rates = {r.index: r.samples_per_s for r in measured if r.samples_per_s}
    base = min(contenders, key=lambda c: c.config.nproc)
    if base.index not in rates:
        return {}
    return {
        c.index: rates[c.index] / (c.config.nproc / base.config.nproc * rates[base.index])
        for c in contenders
        if c.index in rates and c.index != base.index
    }


def ratio_text(ratio: float) -> str:
    """38.2x, 1.07x: one decimal from 10x up, two below (small differences are what people ask about)."""
    return f"{ratio:.1f}x" if ratio >= 10 else f"{ratio:.2f}x"


def check_agreement(contenders: Sequence[Contender], runs: Sequence[ContenderResult]) -> tuple[bool | None, str]:
    """Compare the first steps' losses of every two runs whose configs differ in speed settings only."""
    by_index = {r.index: r for r in runs}
    findings: list[str] = []
    checked = 0
    for i, a in enumerate(contenders):
        for b in contenders[i + 1 :]:
            differing = {f for f, v in a.config.to_dict().items() if b.config.to_dict()[f] != v}
            ra, rb = by_index.get(a.index), by_index.get(b.index)
            if not differing <= SPEED_ONLY or ra is None or rb is None:
                continue
            n = min(len(ra.losses), len(rb.losses), AGREEMENT_STEPS)
            if n == 0:
                continue
            checked += 1
            for step, (x, y) in enumerate(zip(ra.losses[:n], rb.losses[:n]), start=1):
                if not (math.isfinite(x) and math.isfinite(y) and abs(x - y) <= AGREEMENT_RTOL * max(abs(x), abs(y))):
                    findings.append(
                        Message(
                            "runs {first} ({first_label}) and {second} ({second_label}) differ only "
                            "in speed settings but computed different losses: step {step}: {x:.4f} "
                            "vs {y:.4f}",
                            first=a.index + 1,
                            first_label=a.label,
                            second=b.index + 1,
                            second_label=b.label,
                            step=step,
                            x=x,
                            y=y,
                        )
                    )
                    break
    if not checked:
        return None, ""
    if findings:
        return False, joined(findings)
    return True, Message(
        "runs that differ only in speed settings computed the same losses (first {steps} steps within {tolerance:.0%})",
        steps=AGREEMENT_STEPS,
        tolerance=AGREEMENT_RTOL,
    )
