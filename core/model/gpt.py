"""The built-in language model: a decoder-only transformer in the style of GPT-2 and nanoGPT.

Token and learned position embeddings, pre-norm blocks (LayerNorm, causal self-attention, LayerNorm, a GELU MLP four
times as wide, each added back to the residual stream), a final LayerNorm and a head that shares the token
embedding's weights (tied). It takes token ids (batch x sequence, int64) and gives logits (batch x sequence x
vocabulary): the next token's, at every position.

Attention is either `fused`: `scaled_dot_product_attention` with `is_causal`, which picks a kernel that never holds
the sequence x sequence scores (flash or memory-efficient attention on a GPU), or `plain`: the softmax of QK^T with
the future masked out, as written by hand, which holds each head's T x T scores and probabilities for backward. The
two compute the same function; their memory differs, and grows differently with the sequence length.

`blocks` is a ModuleList of the transformer blocks: what activation checkpointing recomputes, one block at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class GPTShape:
    """What a GPT is built with: vocabulary, longest sequence (the position table), blocks, width, heads, attention."""

    vocab: int
    context: int
    layers: int
    width: int
    heads: int
    attention: str = "fused"  # or "plain"


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int, attention: str) -> None:
        super().__init__()
        self.heads = heads
        self.fused = attention == "fused"
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))  # (B, heads, T, d)
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))  # (B, heads, T, T)
            future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            y = scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    """One pre-norm transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, width: int, heads: int, attention: str) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, attention)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    """Token ids (B, T) -> next-token logits (B, T, vocab); T at most `shape.context`."""

    def __init__(self, shape: GPTShape) -> None:
        super().__init__()
        self.shape = shape
        self.tokens = nn.Embedding(shape.vocab, shape.width)
        self.positions = nn.Embedding(shape.context, shape.width)
        self.blocks = nn.ModuleList(Block(shape.width, shape.heads, shape.attention) for _ in range(shape.layers))
        self.norm = nn.LayerNorm(shape.width)
        self.head = nn.Linear(shape.width, shape.vocab, bias=False)
        self.head.weight = self.tokens.weight  # tied: the output layer is the token embedding
        self.apply(_init_weights)
        for name, param in self.named_parameters():  # GPT-2's scaled init of the layers that add to the residual
            if name.endswith(("attn.proj.weight", "mlp.2.weight")):
                nn.init.normal_(param, mean=0.0, std=0.02 / math.sqrt(2 * shape.layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(t, device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def _init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
