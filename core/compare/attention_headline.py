"""The headline of the ready-made comparison *attention: fused (SDPA) vs plain (softmax of QK^T)*: each attention's
peak memory, and how it grows when the sequence length doubles.

The peak at the run's sequence length is the one its run measured. How it grows is predicted: the step traced on fake
tensors (no memory, any device kind; on the CPU the trace counts what a real step counts, to the byte) at the run's
sequence length and at twice it, the attention modules' part by module beside the whole. The plain attention keeps
each head's T x T scores and probabilities for backward: what it holds beyond the fused attention grows 4x per
doubling (its attention's activations as a whole less, as its query, key, value and output grow 2x).
`scaled_dot_product_attention` on the CPU (torch 2.14: the CPU's flash-attention kernel) keeps only the query, key,
value, output and one log-sum-exp per row, so its attention's activations grow 2x, like the rest of the model's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.text import Message, format_bytes
from ..config.run_config import RunConfig
from .plan import Contender

if TYPE_CHECKING:
    from .result import ComparisonResult, ContenderResult


@dataclass(frozen=True)
class SequenceGrowth:
    """One attention's step predicted at `seq_len` and at twice it: the whole peak and its attention's activations
    (saved for backward and temporaries in the attention modules)."""

    seq_len: int
    peak_bytes: int
    doubled_peak_bytes: int
    attention_bytes: int
    doubled_attention_bytes: int

    @property
    def growth(self) -> float:
        return self.doubled_peak_bytes / self.peak_bytes if self.peak_bytes else 0.0

    @property
    def attention_growth(self) -> float:
        return self.doubled_attention_bytes / self.attention_bytes if self.attention_bytes else 0.0


def attention_pair(contenders: Sequence[Contender]) -> tuple[Contender, Contender] | None:
    """(fused, plain) for two runs that differ only in their attention; None for any other comparison."""
    if len(contenders) != 2:
        return None
    first, second = (c.config.to_dict() for c in contenders)
    if {f for f, v in first.items() if second[f] != v} != {"attention"}:
        return None
    fused, plain = sorted(contenders, key=lambda c: c.config.attention != "fused")
    return fused, plain


def predict_growth(config: RunConfig) -> SequenceGrowth | None:
    """`config`'s step predicted at its sequence length and at twice it (about a second each for gpt-tiny on the
    CPU); None when either cannot be predicted (twice the length beyond the allowed range, an untraceable step)."""
    from ..base.errors import UserError
    from ..engine.prediction import predict
    from ..events.attention_bytes import attention_bytes
    from ..memory.predict import PredictionUnavailable

    try:
        at, doubled = predict(config), predict(config.replace(seq_len=2 * config.seq_len))
    except (UserError, PredictionUnavailable):
        return None
    share, doubled_share = attention_bytes(at.modules), attention_bytes(doubled.modules)
    return SequenceGrowth(
        config.seq_len,
        at.total_bytes,
        doubled.total_bytes,
        share.activation_bytes if share else 0,
        doubled_share.activation_bytes if doubled_share else 0,
    )


def attention_headline(
    pair: tuple[Contender, Contender], measured: Sequence[ContenderResult], growth: Mapping[int, SequenceGrowth]
) -> str | None:
    """'fused attention: a peak of 4.03 MB measured at sequence length 128; predicted 4.03 MB there and 7.13 MB at
    256 (1.77x), its attention's activations 1.79x; plain attention: ...'; None without a prediction of both."""
    if any(c.index not in growth for c in pair):
        return None
    by_index = {r.index: r for r in measured}
    sides = [_side(c, by_index.get(c.index), growth[c.index]) for c in pair]
    run = next((by_index[c.index] for c in pair if c.index in by_index and by_index[c.index].peak_bytes), None)
    if run is None:
        how = Message("no run measured a peak; growth predicted from a trace on fake tensors")
    elif run.peak_method == "saved-tensors":
        how = Message(
            "measured peaks counted from the tensors a step held (no allocator peak on this device); growth "
            "predicted from a trace on fake tensors"
        )
    else:
        how = Message("measured peaks are the allocator's; growth predicted from a trace on fake tensors")
    return Message(
        "{fused}; {plain}; {extra}; {how}", fused=sides[0], plain=sides[1], extra=_extra(pair, growth), how=how
    )


def _extra(pair: tuple[Contender, Contender], growth: Mapping[int, SequenceGrowth]) -> str:
    """What the plain attention holds beyond the fused: its T x T matrices, 4x per doubling where they are all."""
    fused, plain = (growth[c.index] for c in pair)
    at = plain.attention_bytes - fused.attention_bytes
    doubled = plain.doubled_attention_bytes - fused.doubled_attention_bytes
    values = dict(
        plain=pair[1].label,
        fused=pair[0].label,
        at=format_bytes(at),
        doubled=format_bytes(doubled),
        seq_len=fused.seq_len,
        doubled_len=2 * fused.seq_len,
    )
    if at <= 0 or doubled <= 0:
        return Message("{plain} holds no more attention activations than {fused}", **values)
    return Message(
        "{plain} holds {at} more attention activations than {fused} at {seq_len} and {doubled} more at "
        "{doubled_len} ({extra_growth:.2f}x: the T x T matrices)",
        extra_growth=doubled / at,
        **values,
    )


def _side(contender: Contender, run: ContenderResult | None, growth: SequenceGrowth) -> str:
    values = dict(
        label=contender.label,
        seq_len=growth.seq_len,
        doubled_len=2 * growth.seq_len,
        peak=format_bytes(growth.peak_bytes),
        doubled=format_bytes(growth.doubled_peak_bytes),
        growth=growth.growth,
        attention_growth=growth.attention_growth,
    )
    if run is None or not run.peak_bytes:
        return Message(
            "{label}: a peak of {peak} predicted at sequence length {seq_len} and {doubled} at {doubled_len} "
            "({growth:.2f}x), its attention's activations {attention_growth:.2f}x",
            **values,
        )
    return Message(
        "{label}: a peak of {measured} measured at sequence length {seq_len}; predicted {peak} there and {doubled} "
        "at {doubled_len} ({growth:.2f}x), its attention's activations {attention_growth:.2f}x",
        measured=format_bytes(run.peak_bytes),
        **values,
    )


def with_attention_headline(outcome: ComparisonResult, contenders: Sequence[Contender]) -> ComparisonResult:
    """`outcome` with the attention headline before its own, for a comparison of attentions whose runs trained
    (predicting both at twice the sequence length); `outcome` as it is for any other comparison."""
    pair = attention_pair(contenders)
    if pair is None or not any(r.status == "completed" for r in outcome.runs):
        return outcome
    growth = {c.index: g for c in pair if (g := predict_growth(c.config)) is not None}
    headline = attention_headline(pair, outcome.runs, growth)
    if headline is None:
        return outcome
    return dataclasses.replace(
        outcome, headline=Message("{attention}; {speed}", attention=headline, speed=outcome.headline)
    )
