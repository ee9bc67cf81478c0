"""Attention's memory on CUDA: the fused attention (whichever kernel torch picks for fp32 here) keeps nothing
sequence x sequence, so its attention's activations grow 2x per doubled sequence, while what the plain attention holds
beyond it grows 4x; and the prediction on fake CUDA tensors traces the kernel the real step runs (its attention's
bytes within 10% of the same step run for real and counted the same way). Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.events.attention_bytes import attention_bytes

pytestmark = pytest.mark.gpu

GPT = RunConfig(device="cuda", model="gpt-tiny", dataset="synthetic-text", batch_size=4)


def activations(attention: str, seq_len: int, *, predicted: bool) -> int:
    config = GPT.replace(attention=attention, seq_len=seq_len)
    device = torch.device("cuda", torch.cuda.current_device())
    step = predict(config, device="cuda") if predicted else measure(config, device=device)
    found = attention_bytes(step.modules)
    assert found is not None, (attention, seq_len)
    return found.activation_bytes


def test_the_fused_attention_grows_2x_and_the_plain_attentions_matrices_4x_on_cuda() -> None:
    real = {(a, n): activations(a, n, predicted=False) for a in ("fused", "plain") for n in (256, 512)}
    assert real["fused", 512] / real["fused", 256] == pytest.approx(2.0, abs=0.2)
    beyond = (real["plain", 512] - real["fused", 512]) / (real["plain", 256] - real["fused", 256])
    assert 3.5 < beyond < 4.5, beyond
    for (attention, seq_len), counted in real.items():
        traced = activations(attention, seq_len, predicted=True)
        assert abs(traced - counted) <= 0.1 * counted, (attention, seq_len, traced, counted)
