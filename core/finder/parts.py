"""What one batch-size trial trains: the run's own trainer and one batch shaped like the run's.

Both ways of measuring a trial build it here: in this process on a GPU (gpu_train_monitor.finder.search) and in
the trial process on the CPU (gpu_train_monitor.finder.trial), so neither has to import the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch loads when a trial runs
    import torch

    from ..config.run_config import RunConfig
    from ..model.step import TrainingStep


def trial_parts(
    config: RunConfig, batch_size: int, device: torch.device
) -> tuple[TrainingStep, torch.Tensor, torch.Tensor]:
    """The run's own trainer (`gpu_train_monitor.engine.recipe.build_trainer`) and one batch shaped like the run's
    (random values: memory depends on shapes): images, or a text's token ids and next tokens (batch x seq_len)."""
    import torch

    from ..config.sequences import VOCAB, is_text_dataset
    from ..data.datasets import dataset_shape
    from ..engine.recipe import build_trainer
    from ..model.models import model_spec

    if is_text_dataset(config.dataset):
        torch.manual_seed(config.seed)
        trainer = build_trainer(config, device, 1, VOCAB)
        ids, targets = (torch.randint(0, VOCAB, (batch_size, config.seq_len), device=device) for _ in range(2))
        return trainer, ids, targets

    channels, height, width, classes, _ = dataset_shape(config)
    spec = model_spec(config.model, channels)
    side = max(height, spec.input_size or 0), max(width, spec.input_size or 0)
    torch.manual_seed(config.seed)
    trainer = build_trainer(config, device, spec.in_channels, classes, side)  # your own model: checked as a run's
    fmt = torch.channels_last if config.channels_last else torch.contiguous_format
    images = torch.randn(batch_size, spec.in_channels, *side, device=device).contiguous(memory_format=fmt)
    labels = torch.randint(0, classes, (batch_size,), device=device)
    return trainer, images, labels
