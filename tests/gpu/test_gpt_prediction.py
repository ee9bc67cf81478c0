"""The GPT's predicted memory against the CUDA allocator: `predict` (fake tensors, no memory) beside
`torch.cuda.max_memory_allocated` over the same step run for real, at a few batch x sequence length cells of
gpt-small. Goal: within 10%, as for the image models. Skipped without CUDA.
"""

from __future__ import annotations

import gc

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("amp", ["off", "bf16"])
@pytest.mark.parametrize(("batch", "seq_len"), [(8, 256), (8, 1024), (16, 512)])
def test_gpt_prediction_is_within_10_percent_of_the_allocators_peak(batch: int, seq_len: int, amp: str) -> None:
    config = RunConfig(
        device="cuda", model="gpt-small", dataset="synthetic-text", amp=amp, batch_size=batch, seq_len=seq_len
    )
    torch.cuda.init()  # a process that uses CUDA already traces on fake CUDA tensors (else on a CPU stand-in)
    predicted = predict(config)
    assert predicted.device_kind == "cuda" and predicted.traced_on == "cuda"
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    measured = measure(config, device=torch.device("cuda"))
    torch.cuda.synchronize()
    allocator_peak = torch.cuda.max_memory_allocated() - before
    error = predicted.peak_bytes / allocator_peak - 1
    print(
        f"gpt-small {amp} batch {batch} x {seq_len}: predicted {predicted.peak_bytes:,} B, allocator peak "
        f"{allocator_peak:,} B ({error:+.2%}), live tensors {measured.peak_bytes:,} B"
    )
    assert abs(predicted.peak_bytes / measured.peak_bytes - 1) <= 0.05  # the same tensors, fake or real
    assert abs(error) <= 0.10
