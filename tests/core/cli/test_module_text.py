"""The by-module table's text: under a transformer's rows, one line with attention's share of the peak."""

from __future__ import annotations

from gpu_train_monitor.cli.module_text import module_lines
from gpu_train_monitor.events.module_bytes import OUTSIDE, ModuleBytes

MB = 1_000_000


def test_a_gpts_attention_share_is_a_line_under_the_total_and_other_models_have_none() -> None:
    layers = (
        ModuleBytes("blocks.0.attn", activations_bytes=3 * MB, temporaries_bytes=MB),
        ModuleBytes("blocks.1.attn.qkv", params_bytes=MB),
        ModuleBytes("blocks.0.mlp.0", activations_bytes=2 * MB),
    )
    gpt = (ModuleBytes("blocks", activations_bytes=5 * MB, temporaries_bytes=MB, params_bytes=MB, layers=layers),
           ModuleBytes(OUTSIDE, activations_bytes=3 * MB))  # fmt: skip
    lines = module_lines(gpt, layers=True)
    assert lines[-2].split()[0] == "total"
    assert lines[-1] == "  attention: 5.00 MB (50% of the peak), 4.00 MB of it activations"
    cnn = (ModuleBytes("features", activations_bytes=MB), ModuleBytes(OUTSIDE, activations_bytes=MB))
    assert module_lines(cnn)[-1].split()[0] == "total"
