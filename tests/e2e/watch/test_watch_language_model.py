"""`gpu-train-monitor watch -- python train.py` on a language model's training script as nanoGPT writes them, not a
line changed: token ids from a uint16 `train.bin` memory-mapped with numpy, a GPT with causal attention through
`scaled_dot_product_attention` returning `(logits, loss)`, AdamW with decay groups, bf16 autocast on the CPU,
gradient accumulation over micro-batches, gradient clipping, a cosine learning rate, and an evaluation under
`no_grad` every few iterations. The run counts tokens (batch x sequence x micro-batches a step), records its
sequence length, and reads tokens/s where `runs show` says what it counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.cli import cli_in_process
from tests.support.watched_loops import run_watched

BATCH, BLOCK, ACCUMULATION, ITERS = 4, 32, 2, 8

NANOGPT_STYLE = f"""
import math, os
import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

batch_size, block_size, gradient_accumulation_steps, max_iters = {BATCH}, {BLOCK}, {ACCUMULATION}, {ITERS}
n_layer, n_head, n_embd, vocab_size = 2, 2, 32, 256
learning_rate, min_lr, warmup_iters, eval_interval, eval_iters = 6e-4, 6e-5, 2, 4, 2
device, device_type, ptdtype = "cpu", "cpu", torch.bfloat16
ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)
torch.manual_seed(1337)


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(n_embd), CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block() for _ in range(n_layer)]), ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay}},
            {{"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)


def get_batch(split):
    data = np.memmap(os.path.join("data", f"{{split}}.bin"), dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


@torch.no_grad()
def estimate_loss():
    out = {{}}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    ratio = (it - warmup_iters) / (max_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


model = GPT()
optimizer = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95))
X, Y = get_batch("train")
for iter_num in range(max_iters):
    for param_group in optimizer.param_groups:
        param_group["lr"] = get_lr(iter_num)
    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {{iter_num}}: train loss {{losses['train']:.4f}}, val loss {{losses['val']:.4f}}")
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
print("done")
"""


def test_a_nanogpt_style_script_is_watched_in_tokens_with_its_sequence_length(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    text = ("the quick brown fox jumps over the lazy dog. " * 200).encode()
    np.array(list(text), dtype=np.uint16).tofile(data / "train.bin")  # nanoGPT's prepare.py writes uint16 ids
    np.array(list(text[:2000]), dtype=np.uint16).tofile(data / "val.bin")

    ended = run_watched(tmp_path, NANOGPT_STYLE)
    assert ended.returncode == 0, ended.stderr
    assert "done" in ended.stdout and "Traceback" not in ended.stderr
    run, losses, config = ended.run()
    assert (run.status, run.steps) == ("completed", ITERS)  # an optimizer step each: micro-batches and evals not
    assert (config["counted"], config["seq_len"]) == ("tokens", BLOCK)
    assert run.batch_size == BATCH * BLOCK * ACCUMULATION  # the tokens of a step: every micro-batch's
    assert ended.reports()[-1].samples == ITERS * BATCH * BLOCK * ACCUMULATION
    assert len(losses) == ITERS and all(loss is not None for loss in losses)
    summary = ended.summary()
    assert summary["step_phases_s"]["forward"] > 0 and summary["verdict"] in ("input-bound", "compute-bound")

    shown = cli_in_process("runs", "show", "--runs-db", str(ended.db), str(run.id))
    assert shown.returncode == 0, shown.stderr
    assert "tokens/s" in shown.stdout
