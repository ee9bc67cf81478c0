"""What if? The current config's predicted memory beside the same config with one change, and the advice an
out-of-memory error needs: the batch that fits now and the cheapest change that makes the requested one fit.

Each row is predicted (gpu_train_monitor.engine.prediction.predict: fake tensors, no memory used): bf16 or fp16
autocast (or fp32 when autocast is on), channels_last on/off (images only), the other optimizer (SGD for AdamW: no
moments; AdamW for SGD: two moments instead of one momentum buffer), activation checkpointing on/off (refused for a
model without blocks: the row says why; a GPT's row counts its transformer blocks, each checkpointed on its own), for
a text model half the sequence length (a GPT's activations shrink with it, plain attention's scores by four), half and
double the batch. Each says what it saves (negative: costs) against the current prediction and the largest batch that
would then fit under capacity * (1 - margin).

The cheapest change, in this order (a lower time cost first, then fewer side effects on what is trained):
channels_last (a layout: no numeric change, usually faster on GPUs), bf16 autocast (faster where the device has
bf16 units; no loss scaling), fp16 autocast (faster, but needs a gradient scaler that skips overflowing steps),
activation checkpointing (the same numbers, one more forward per step: ~20-40% slower), the other optimizer
(no time cost, but it trains differently: the learning rate wants retuning). A batch change is never the
answer to "make this batch fit"; it is the other half of the advice (the batch that fits now). Nor is a shorter
sequence: it changes what the model learns from (the context it sees), so it is a row to read, never advice.

Plain frozen dataclasses: the window computes them in a worker thread and shows them in the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..base.errors import UserError
from ..base.text import Message, format_bytes, message_of
from ..config.bounds import BOUNDS, FINDER_BOUNDS
from ..config.run_config import RunConfig
from ..config.sequences import gpt_size, is_gpt, is_text_dataset
from ..events.module_bytes import largest_savings
from ..memory.predict import Prediction, PredictionUnavailable
from .predicted import PredictedPeaks, largest_batch_under

FITS, TIGHT, DOES_NOT_FIT = "fits", "tight", "does not fit"
# the order of the cheapest change (see the module doc); batch rows are never the cheapest change
COST_ORDER = ("channels_last", "bf16", "fp16", "activation_checkpointing", "optimizer")


def verdict(total_bytes: int, capacity_bytes: int, margin: float) -> str:
    """fits: under capacity * (1 - margin); tight: inside the margin; does not fit: over the capacity."""
    if total_bytes <= capacity_bytes * (1.0 - margin):
        return FITS
    return TIGHT if total_bytes <= capacity_bytes else DOES_NOT_FIT


@dataclass(frozen=True)
class WhatIfRow:
    """The current config with one change, predicted."""

    change: str  # "bf16", "fp16", "fp32", "channels_last", "optimizer", "activation_checkpointing", "half_batch", ...
    label: str  # a Message: "bf16 autocast", "SGD instead of AdamW", ...
    overrides: tuple[tuple[str, Any], ...]  # the RunConfig fields this row changes, and to what
    batch_size: int  # the batch predicted at
    total_bytes: int | None  # predicted peak + overhead; None: no prediction (see reason)
    saved_bytes: int | None  # current total - this total: negative when the change costs memory
    fits_batch: int | None  # the largest batch that fits with this change (0: not even 1); None: not searched
    verdict: str | None  # FITS / TIGHT / DOES_NOT_FIT at batch_size
    reason: str | None = None  # why there is no prediction (a refused option, a step that cannot be traced)
    prediction: Prediction | None = None
    # turning activation checkpointing on: the blocks whose bytes at the peak fall the most, and by how much
    blocks: tuple[tuple[str, int], ...] = ()

    @property
    def config_overrides(self) -> dict[str, Any]:
        return dict(self.overrides)


@dataclass(frozen=True)
class WhatIf:
    """The current config's prediction, where it stands against the capacity, and the rows."""

    current: Prediction
    total_bytes: int  # current peak + overhead
    capacity_bytes: int
    margin: float
    limit_bytes: int  # capacity * (1 - margin)
    verdict: str
    fits_batch: int  # the largest batch that fits now (0: not even 1)
    rows: tuple[WhatIfRow, ...]


@dataclass(frozen=True)
class OomAdvice:
    """What to do after an out-of-memory error at `requested_batch`."""

    requested_batch: int
    fits_batch: int  # the largest batch that fits as configured (0: not even 1)
    change: WhatIfRow | None  # the cheapest change that makes requested_batch fit; None: no one change does
    text: str  # a Message, one sentence for the banner and the CLI


def changes(config: RunConfig) -> list[tuple[str, str, dict[str, Any]]]:
    """(change, label, overrides) for each row of `config`, the batch rows last."""
    rows: list[tuple[str, str, dict[str, Any]]] = []
    for amp, change, label in (
        ("bf16", "bf16", Message("bf16 autocast")),
        ("fp16", "fp16", Message("fp16 autocast")),
        ("off", "fp32", Message("fp32 (autocast off)")),
    ):
        if config.amp != amp:
            rows.append((change, label, {"amp": amp}))
    if not is_text_dataset(config.dataset):  # a layout of images: a language model's token ids have none
        rows.append(
            (
                "channels_last",
                Message("channels_last off") if config.channels_last else Message("channels_last"),
                {"channels_last": not config.channels_last},
            )
        )
    if config.optimizer == "adamw":
        rows.append(("optimizer", Message("SGD instead of AdamW"), {"optimizer": "sgd"}))
    elif config.optimizer == "sgd":
        rows.append(("optimizer", Message("AdamW instead of SGD"), {"optimizer": "adamw"}))
    on = config.activation_checkpointing
    rows.append(("activation_checkpointing", _checkpointing_label(config), {"activation_checkpointing": not on}))
    if is_text_dataset(config.dataset) and config.seq_len > 1:
        half_seq = config.seq_len // 2
        label = Message("half the sequence length ({seq_len})", seq_len=half_seq)
        rows.append(("half_seq_len", label, {"seq_len": half_seq}))
    half, double = max(config.batch_size // 2, 1), min(config.batch_size * 2, int(BOUNDS["batch_size"].maximum))
    rows.append(("half_batch", Message("half the batch ({batch})", batch=half), {"batch_size": half}))
    rows.append(("double_batch", Message("double the batch ({batch})", batch=double), {"batch_size": double}))
    return rows


def _checkpointing_label(config: RunConfig) -> str:
    """The checkpointing row's label: a GPT's names what is checkpointed, its transformer blocks one by one."""
    if config.activation_checkpointing:
        return Message("activation checkpointing off")
    if is_gpt(config.model):
        layers = gpt_size(config)[0]
        return Message("activation checkpointing per transformer block ({blocks} in all)", blocks=layers)
    return Message("activation checkpointing")


class _Predictions:
    """One PredictedPeaks per config tried, so a row's search reuses the row's own prediction."""

    def __init__(self, device: str | None, overhead: int, predict: Callable[..., Prediction] | None) -> None:
        self.device, self.overhead, self.predict = device, overhead, predict
        self._peaks: dict[tuple[tuple[str, Any], ...], PredictedPeaks] = {}

    def of(self, config: RunConfig, overrides: dict[str, Any]) -> PredictedPeaks:
        key = tuple(sorted((k, v) for k, v in overrides.items() if k != "batch_size"))
        if key not in self._peaks:
            changed = config.replace(**dict(key)) if key else config
            self._peaks[key] = PredictedPeaks(
                changed, device=self.device, overhead_bytes=self.overhead, predict=self.predict
            )
        return self._peaks[key]


def what_if(
    config: RunConfig,
    capacity_bytes: int,
    margin: float = FINDER_BOUNDS["margin"].default,
    *,
    device: str | None = None,
    overhead_bytes: int = 0,
    search: bool = True,
    max_batch: int = FINDER_BOUNDS["max_batch"].default,
    predict: Callable[..., Prediction] | None = None,
) -> WhatIf:
    """The rows for `config` against `capacity_bytes` (the device's memory; `overhead_bytes` is added to every
    prediction: what the device holds outside a traced step). `search=False` leaves each row's fits_batch out
    (one prediction per row instead of about three). PredictionUnavailable when the current config's step
    cannot be traced; a row that cannot says why in its `reason`."""
    cache = _Predictions(device, overhead_bytes, predict)
    limit = int(capacity_bytes * (1.0 - margin))
    base = cache.of(config, {})
    current = base.at(config.batch_size)
    total = base.total(config.batch_size)
    fits_now = largest_batch_under(base, limit, config.batch_size, max_batch) if search else None
    rows = []
    for change, label, overrides in changes(config):
        batch = overrides.get("batch_size", config.batch_size)
        try:
            peaks = cache.of(config, overrides)
            row_total = peaks.total(batch)
            fits = fits_now if change.endswith("_batch") else None
            if search and fits is None:
                fits = largest_batch_under(peaks, limit, batch, max_batch)
        except (PredictionUnavailable, UserError) as exc:  # a refused option, a step that cannot be traced
            reason = exc.reason if isinstance(exc, PredictionUnavailable) else message_of(exc)
            rows.append(WhatIfRow(change, label, tuple(overrides.items()), batch, None, None, None, None, reason))
            continue
        rows.append(
            WhatIfRow(
                change,
                label,
                tuple(overrides.items()),
                batch,
                row_total,
                total - row_total,
                fits,
                verdict(row_total, capacity_bytes, margin),
                prediction=peaks.at(batch),
                blocks=_checkpointed_blocks(change, overrides, current, peaks.at(batch)),
            )
        )
    return WhatIf(
        current,
        total,
        capacity_bytes,
        margin,
        limit,
        verdict(total, capacity_bytes, margin),
        fits_now or 0,
        tuple(rows),
    )


def _checkpointed_blocks(
    change: str, overrides: dict[str, Any], current: Prediction, changed: Prediction
) -> tuple[tuple[str, int], ...]:
    """Which blocks checkpointing saves the most in (by module, the step without against the step with)."""
    if change != "activation_checkpointing" or not overrides.get("activation_checkpointing"):
        return ()
    return largest_savings(current.modules, changed.modules)


def oom_advice(
    config: RunConfig,
    capacity_bytes: int,
    margin: float = FINDER_BOUNDS["margin"].default,
    *,
    device: str | None = None,
    overhead_bytes: int = 0,
    max_batch: int = FINDER_BOUNDS["max_batch"].default,
    predict: Callable[..., Prediction] | None = None,
) -> OomAdvice:
    """After `config` ran out of memory at its batch size: the batch that fits and the cheapest change (see the
    module doc for the order) under which the requested batch fits.

    The error is itself a measurement: the step needed more than the capacity. Where the prediction says
    otherwise (the allocator's share, the CUDA context, another process), the overhead is raised until the
    prediction agrees with the error, and every other prediction carries the same raise."""
    requested = config.batch_size
    cache = _Predictions(device, overhead_bytes, predict)
    base = cache.of(config, {})
    missing = capacity_bytes + 1 - base.total(requested)
    if missing > 0:
        cache.overhead = base.overhead_bytes = overhead_bytes + missing
    limit = int(capacity_bytes * (1.0 - margin))
    fits = largest_batch_under(base, limit, requested, max_batch)
    by_change = {change: (label, overrides) for change, label, overrides in changes(config)}
    for change in (c for c in COST_ORDER if c in by_change):
        label, overrides = by_change[change]
        try:
            peaks = cache.of(config, overrides)
            row_total = peaks.total(requested)
        except (PredictionUnavailable, UserError):  # refused or untraceable: not advice
            continue
        if row_total <= limit:
            row = WhatIfRow(
                change,
                label,
                tuple(overrides.items()),
                requested,
                row_total,
                base.total(requested) - row_total,
                None,
                verdict(row_total, capacity_bytes, margin),
                prediction=peaks.at(requested),
            )
            return OomAdvice(requested, fits, row, _advice_text(requested, fits, row))
    return OomAdvice(requested, fits, None, _advice_text(requested, fits, None))


def _advice_text(requested: int, fits: int, row: WhatIfRow | None) -> str:
    if row is not None and fits:
        return Message(
            "batch {fits} fits as configured; batch {requested} fits with {change} (predicted peak {peak})",
            fits=fits,
            requested=requested,
            change=row.label,
            peak=format_bytes(row.total_bytes),
        )
    if row is not None:
        return Message(
            "no batch fits as configured; batch {requested} fits with {change} (predicted peak {peak})",
            requested=requested,
            change=row.label,
            peak=format_bytes(row.total_bytes),
        )
    if fits:
        return Message(
            "batch {fits} fits as configured; no single change makes batch {requested} fit",
            fits=fits,
            requested=requested,
        )
    return Message(
        "not even batch 1 fits as configured, and no single change makes batch {requested} fit", requested=requested
    )
