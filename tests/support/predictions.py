"""A prediction model with known answers, standing in for gpu_train_monitor.engine.prediction.predict where a test is
about what is done with predictions (the search over them, the what-if rows, the CLI's table), not about tracing.

Parameters hold `params` bytes; gradients as many; SGD's momentum as many, AdamW's moments twice as many; the
batch and activations `per_sample` bytes per image, halved by bf16/fp16 autocast, 0.6x with activation
checkpointing; channels_last changes nothing.
"""

from __future__ import annotations

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.memory.predict import Prediction, PredictionUnavailable


class ModelPredictions:
    def __init__(self, params: int = 1_000_000, per_sample: int = 100_000, refuse_checkpointing: bool = False) -> None:
        self.params, self.per_sample, self.refuse_checkpointing = params, per_sample, refuse_checkpointing
        self.calls: list[tuple[RunConfig, int]] = []
        self.untraceable = False

    def __call__(
        self, config: RunConfig, batch_size: int | None = None, *, device: str | None = None, **overrides: object
    ) -> Prediction:
        config = config.replace(**overrides) if overrides else config
        batch = batch_size or config.batch_size
        self.calls.append((config, batch))
        if self.untraceable:
            raise PredictionUnavailable(Message("the memory of this step cannot be predicted: a custom op"))
        if config.activation_checkpointing and self.refuse_checkpointing:
            raise ConfigError("activation_checkpointing", Message("this model has no blocks to checkpoint"))
        optimizer = self.params * (2 if config.optimizer == "adamw" else 1)
        per_sample = self.per_sample // (2 if config.amp != "off" else 1)
        if config.activation_checkpointing:
            per_sample = per_sample * 6 // 10
        activations = per_sample * batch
        peak = 2 * self.params + optimizer + activations
        return Prediction(
            peak_bytes=peak,
            params_bytes=self.params,
            grads_bytes=self.params,
            optimizer_bytes=optimizer,
            batch_bytes=0,
            activations_bytes=activations,
            phase_peaks=(),
            batch_size=batch,
            device_kind=device or "cpu",
            traced_on="cpu",
            method="fake",
            what=f"{config.model} at batch {batch}",
            elapsed_s=0.0,
        )

    def largest_under(self, limit: int, config: RunConfig) -> int:
        """The exact answer for `config`, for checking a search."""
        fixed = self(config, 1).peak_bytes - self(config, 1).activations_bytes
        per_sample = self(config, 1).activations_bytes
        return (limit - fixed) // per_sample
