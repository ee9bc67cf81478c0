"""Attention's share of a step: the attention modules' rows and layers summed, the rest of the model left out."""

from __future__ import annotations

import pytest

from gpu_train_monitor.events.attention_bytes import attention_bytes, is_attention
from gpu_train_monitor.events.module_bytes import OUTSIDE, ModuleBytes

KB = 1000


def gpt_rows() -> tuple[ModuleBytes, ...]:
    """A two-block GPT's rows as memory by module has them: one `blocks` row with its layers inside."""
    layers = (
        ModuleBytes("blocks.0.attn", activations_bytes=400 * KB, temporaries_bytes=100 * KB),
        ModuleBytes("blocks.0.attn.qkv", activations_bytes=60 * KB, params_bytes=50 * KB, optimizer_bytes=50 * KB),
        ModuleBytes("blocks.1.attn", activations_bytes=400 * KB),
        ModuleBytes("blocks.0.mlp.0", activations_bytes=300 * KB, params_bytes=70 * KB),
    )
    blocks = ModuleBytes("blocks", activations_bytes=1160 * KB, temporaries_bytes=100 * KB, params_bytes=120 * KB,
                         optimizer_bytes=50 * KB, layers=layers)  # fmt: skip
    return (ModuleBytes("tokens", params_bytes=130 * KB), blocks, ModuleBytes(OUTSIDE, activations_bytes=70 * KB))


def test_the_attention_modules_and_their_layers_are_summed_as_a_share_of_the_peak() -> None:
    found = attention_bytes(gpt_rows())
    assert found is not None
    assert found.total_bytes == 1060 * KB  # 500 + 160 + 400: the MLP's layer is not attention's
    assert found.activation_bytes == 960 * KB  # saved for backward and temporaries, not the weights
    assert found.peak_bytes == 1630 * KB
    assert found.share == pytest.approx(1060 / 1630)


def test_a_model_without_attention_has_no_share_and_names_are_matched_whole() -> None:
    assert attention_bytes((ModuleBytes("layer1", activations_bytes=5), ModuleBytes(OUTSIDE))) is None
    assert is_attention("encoder.layers.3.self_attention.out_proj") and is_attention("h.0.attn")
    assert not is_attention("blocks.0.attnorm") and not is_attention("attention_head_count")
    whole = attention_bytes((ModuleBytes("layers.0.self_attn", activations_bytes=10), ModuleBytes(OUTSIDE, 30)))
    assert whole is not None and whole.share == pytest.approx(0.25)  # a row that is one layer counts whole
