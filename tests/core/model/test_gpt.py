"""The built-in GPT: token ids in, next-token logits out, causal, its two attentions alike, its blocks checkpointed."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.model.activation_checkpointing import checkpoint_blocks, find_blocks
from gpu_train_monitor.model.gpt import GPT, GPTShape
from gpu_train_monitor.model.models import available_models, build_model, count_parameters, model_options
from gpu_train_monitor.model.step import loss_of

TINY = GPTShape(vocab=256, context=16, layers=2, width=32, heads=2)


def ids(batch: int = 3, length: int = 16, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (batch, length), generator=torch.Generator().manual_seed(seed))


def test_token_ids_give_next_token_logits_at_every_position() -> None:
    torch.manual_seed(0)
    model = GPT(TINY)
    assert model(ids()).shape == (3, 16, 256)
    assert model(ids(length=5)).shape == (3, 5, 256)  # any length up to its context
    assert model.head.weight is model.tokens.weight  # tied: one matrix, counted once
    assert count_parameters(model) == sum(p.numel() for p in set(model.parameters()))


@pytest.mark.parametrize("attention", ["fused", "plain"])
def test_a_position_sees_only_the_tokens_before_it(attention: str) -> None:
    torch.manual_seed(0)
    model = GPT(GPTShape(256, 16, 2, 32, 2, attention)).eval()
    first, changed = ids(), ids().clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 256  # the future changes
    with torch.no_grad():
        before, after = model(first), model(changed)
    torch.testing.assert_close(before[:, :10], after[:, :10])
    assert not torch.allclose(before[:, 10:], after[:, 10:])


def test_plain_attention_computes_what_the_fused_one_does() -> None:
    torch.manual_seed(0)
    fused = GPT(TINY)
    plain = GPT(GPTShape(256, 16, 2, 32, 2, "plain"))
    plain.load_state_dict(fused.state_dict())  # the same parameters: attention is no parameter
    batch = ids()
    torch.testing.assert_close(fused(batch), plain(batch), rtol=1e-4, atol=1e-5)


def test_the_presets_and_the_size_options_build_what_they_say() -> None:
    assert {"gpt-tiny", "gpt-small"} <= set(available_models())
    tiny = build_model("gpt-tiny", 256, 1, **model_options(RunConfig(model="gpt-tiny", dataset="synthetic-text")))
    assert (len(tiny.blocks), tiny.shape.width, tiny.shape.heads, tiny.shape.context) == (2, 64, 2, 128)
    config = RunConfig(model="gpt-tiny", dataset="synthetic-text", layers=3, width=48, heads=4, seq_len=32)
    sized = build_model("gpt-tiny", 256, 1, **model_options(config))
    assert (len(sized.blocks), sized.shape.width, sized.shape.heads, sized.positions.num_embeddings) == (3, 48, 4, 32)
    with torch.device("meta"):  # GPT-2 small's size: 12 blocks of width 768 (85M in the blocks, 124M with GPT-2's
        small = build_model("gpt-small", 256, 1)  # 50k vocabulary; 86M with bytes)
    assert (len(small.blocks), small.shape.width, small.shape.heads) == (12, 768, 12)
    assert 85_000_000 < count_parameters(small) < 87_000_000


def test_the_loss_is_the_mean_cross_entropy_over_every_position() -> None:
    logits, targets = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))
    expected = nn.functional.cross_entropy(logits.reshape(10, 7), targets.reshape(10))
    torch.testing.assert_close(loss_of(logits, targets), expected)
    images, labels = torch.randn(4, 10), torch.randint(0, 10, (4,))  # an image model's, as before
    torch.testing.assert_close(loss_of(images, labels), nn.functional.cross_entropy(images, labels))


def test_activation_checkpointing_wraps_each_block_and_keeps_the_gradients() -> None:
    torch.manual_seed(0)
    plain = GPT(TINY)
    checkpointed = GPT(TINY)
    checkpointed.load_state_dict(plain.state_dict())
    assert find_blocks(plain).whole == list(plain.blocks)
    assert checkpoint_blocks(checkpointed, "gpt-tiny") == 2
    batch, targets = ids(), ids(seed=1)
    for model in (plain, checkpointed):
        loss_of(model(batch), targets).backward()
    for a, b in zip(plain.parameters(), checkpointed.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad)
    one_block = GPT(GPTShape(256, 16, 1, 32, 2))  # one block is still a block to checkpoint
    assert checkpoint_blocks(one_block, "gpt-tiny") == 1
