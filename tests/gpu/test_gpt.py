"""The built-in GPT on CUDA: a text run trains with its token ids resident on the GPU (bf16 autocast, activation
checkpointing per block), and its predicted step is within 10% of `torch.cuda.max_memory_allocated` over the same
step, for fused (flash or memory-efficient SDPA) and plain attention. Skipped without CUDA."""

from __future__ import annotations

import gc

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import Event, RunFinished, RunStarted, StepsReported

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("attention", ["fused", "plain"])
@pytest.mark.parametrize("amp", ["off", "bf16"])
def test_the_gpt_prediction_is_within_10_percent_of_the_allocators_peak(attention: str, amp: str) -> None:
    config = RunConfig(
        device="cuda", model="gpt-small", dataset="synthetic-text", seq_len=512, batch_size=8, amp=amp,
        attention=attention,
    )  # fmt: skip
    torch.cuda.init()  # traced on fake CUDA tensors, as a run on this GPU would be
    predicted = predict(config)
    assert predicted.device_kind == "cuda"
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    measure(config, device=torch.device("cuda"))
    torch.cuda.synchronize()
    allocator_peak = torch.cuda.max_memory_allocated() - before
    error = predicted.peak_bytes / allocator_peak - 1
    print(f"gpt-small {attention} {amp} 8 x 512: predicted {predicted.peak_bytes:,} B, allocator {allocator_peak:,} B")
    assert abs(error) <= 0.10, error


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_a_text_run_trains_on_the_gpu_in_bf16_with_each_block_checkpointed(placement: str) -> None:
    config = RunConfig(
        device="cuda", model="gpt-tiny", dataset="synthetic-text", seq_len=256, batch_size=32, max_steps=20,
        amp="bf16", activation_checkpointing=True, optimizer="adamw", lr=3e-3, placement=placement,
        report_interval=0.01,
    )  # fmt: skip
    events: list[Event] = []
    TrainingSession(config, [events.append]).run()
    (end,) = (event for event in events if isinstance(event, RunFinished))
    assert end.status == "completed", end.message
    started = next(event for event in events if isinstance(event, RunStarted))
    assert started.placement == placement and started.device.startswith("cuda")
    losses = [loss for event in events if isinstance(event, StepsReported) for loss in event.losses]
    assert len(losses) == 20 and losses[-1] < losses[0] - 1.0
    assert end.summary.to_dict()["tokens_per_s"] == pytest.approx(end.summary.samples_per_s * 256)
