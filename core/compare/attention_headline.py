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
    """'fused attention: 11.53 MB at sequence length 128, 1.93x at 256 (attention's activations 2.00x); plain
    attention: 13.65 MB, 2.22x (attention's activations 2.90x; its T x T matrices, beyond the fused, 4.02x); peaks
    measured, growth predicted from a trace on fake tensors': short enough for the window's headline. The peaks are
    its runs' (predicted where a run sampled none); None without a prediction of both."""
    if any(c.index not in growth for c in pair):
        return None
    by_index = {r.index: r for r in measured}
    peaks = [_peak(by_index.get(c.index), growth[c.index]) for c in pair]
    fused, plain = (growth[c.index] for c in pair)
    beyond, doubled_beyond = (
        plain.attention_bytes - fused.attention_bytes,
        plain.doubled_attention_bytes - fused.doubled_attention_bytes,
    )
    values = dict(
        fused=pair[0].label,
        plain=pair[1].label,
        fused_peak=format_bytes(peaks[0][0]),
        plain_peak=format_bytes(peaks[1][0]),
        seq_len=fused.seq_len,
        doubled_len=2 * fused.seq_len,
        fused_growth=fused.growth,
        plain_growth=plain.growth,
        fused_attention=fused.attention_growth,
        plain_attention=plain.attention_growth,
    )
    if beyond > 0 and doubled_beyond > 0:
        text = Message(
            "{fused}: {fused_peak} at sequence length {seq_len}, {fused_growth:.2f}x at {doubled_len} (attention's "
            "activations {fused_attention:.2f}x); {plain}: {plain_peak}, {plain_growth:.2f}x (attention's activations "
            "{plain_attention:.2f}x; its T x T matrices, beyond the fused, {matrices:.2f}x)",
            matrices=doubled_beyond / beyond,
            **values,
        )
    else:
        text = Message(
            "{fused}: {fused_peak} at sequence length {seq_len}, {fused_growth:.2f}x at {doubled_len} (attention's "
            "activations {fused_attention:.2f}x); {plain}: {plain_peak}, {plain_growth:.2f}x (attention's activations "
            "{plain_attention:.2f}x, no more than the fused)",
            **values,
        )
    if all(was_measured for _, was_measured in peaks):
        how = Message("peaks measured, growth predicted from a trace on fake tensors")
    else:
        how = Message("peaks and growth predicted from a trace on fake tensors")
    return Message("{text}; {how}", text=text, how=how)


def _peak(run: ContenderResult | None, growth: SequenceGrowth) -> tuple[int, bool]:
    """The peak at the run's sequence length: its run's, else the predicted one; and whether it was measured."""
    if run is not None and run.peak_bytes:
        return run.peak_bytes, True
    return growth.peak_bytes, False


def with_attention_headline(outcome: ComparisonResult, contenders: Sequence[Contender]) -> ComparisonResult:
    """`outcome` with the attention headline instead of its own, for a comparison of attentions whose runs trained
    (predicting both at twice the sequence length), before its own when a run did not finish; `outcome` as it is
    for any other comparison."""
    pair = attention_pair(contenders)
    if pair is None or not any(r.status == "completed" for r in outcome.runs):
        return outcome
    growth = {c.index: g for c in pair if (g := predict_growth(c.config)) is not None}
    headline = attention_headline(pair, outcome.runs, growth)
    if headline is None:
        return outcome
    if all(r.status == "completed" for r in outcome.runs):
        return dataclasses.replace(outcome, headline=headline)  # the speed is in the bars: the headline is the memory
    # a run that did not finish (the plain attention out of memory at a long sequence) keeps its reason beside it
    return dataclasses.replace(
        outcome, headline=Message("{attention}; {why}", attention=headline, why=outcome.headline)
    )
