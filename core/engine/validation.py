"""Validation: accuracy and mean loss over the validation split, on the device, one fetch at the end. A language
model's are per token: every position's next token is one prediction."""

from __future__ import annotations

from collections.abc import Iterable

import torch

from ..model.step import TrainingStep, loss_of


@torch.no_grad()
def evaluate(
    trainer: TrainingStep, batches: Iterable[tuple[torch.Tensor, torch.Tensor]], device: torch.device
) -> tuple[float | None, float | None]:
    """(accuracy, mean loss), or (None, None) for an empty split. The model is back in training mode
    afterwards, also when a batch fails (an out-of-memory error the caller recovers from)."""
    trainer.model.eval()
    try:
        correct = torch.zeros((), device=device)
        loss_sum = torch.zeros((), device=device)
        count = 0
        for images, labels in batches:
            with torch.autocast(device.type, dtype=trainer.autocast_dtype, enabled=trainer.autocast_dtype is not None):
                logits = trainer.model(images)
            loss_sum += loss_of(logits.float(), labels, reduction="sum")
            correct += (logits.argmax(dim=-1) == labels).sum()
            count += labels.numel()  # a host-side shape: images, or a text batch's tokens
        totals = torch.stack([correct, loss_sum, torch.full((), float(count), device=device)])
        if trainer.reduce_sum is not None:  # a data-parallel run: every rank evaluated its share
            trainer.reduce_sum(totals)
        correct_v, loss_v, count_v = totals.cpu().tolist()  # sync point: once per epoch
        if not count_v:
            return None, None
        return correct_v / count_v, loss_v / count_v
    finally:
        trainer.model.train()
