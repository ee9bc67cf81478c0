"""Benchmark: attention's memory as the sequence length doubles, fused (scaled_dot_product_attention) vs plain
(the softmax of QK^T written by hand).

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/attention.py [--batch 4] [--seq-lens 64,128,256,512] [--repeats 3] [--json PATH]

gpt-tiny (2 blocks, width 64, 2 heads) on the CPU with one torch thread, side by side in one process: for each
attention and sequence length, a real training step run and counted (the peak of live tensor bytes, by module: two
steps, the second counted), the same step traced on fake tensors (the prediction), attention's activations at the
peak (the attention modules' saved and temporary bytes) and the real step's time (median over `--repeats`, the two
attentions alternating). The growth columns are each figure over the one at half the sequence length; `beyond fused`
is what the plain attention's attention holds beyond the fused one's (its T x T matrices).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.events.attention_bytes import attention_bytes

ATTENTIONS = ("fused", "plain")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-lens", default="64,128,256,512")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    lengths = [int(n) for n in args.seq_lens.split(",")]
    base = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", batch_size=args.batch)
    predict(base.replace(seq_len=lengths[0]))  # warm-up: the first trace loads fake-tensor machinery
    rows: dict[tuple[str, int], dict[str, float]] = {}
    for seq_len in lengths:
        times: dict[str, list[float]] = {attention: [] for attention in ATTENTIONS}
        counted = {}
        for repeat in range(args.repeats):
            for attention in ATTENTIONS if repeat % 2 == 0 else ATTENTIONS[::-1]:
                step = measure(base.replace(seq_len=seq_len, attention=attention))
                times[attention].append(step.elapsed_s / 2)  # two steps run: the first makes the optimizer's state
                counted[attention] = step
        for attention in ATTENTIONS:
            config = base.replace(seq_len=seq_len, attention=attention)
            traced = predict(config)
            share = attention_bytes(counted[attention].modules)
            rows[attention, seq_len] = {
                "measured_peak_bytes": counted[attention].total_bytes,
                "predicted_peak_bytes": traced.total_bytes,
                "attention_activation_bytes": share.activation_bytes if share else 0,
                "attention_share": share.share if share else 0.0,
                "step_seconds": statistics.median(times[attention]),
                "prediction_seconds": traced.elapsed_s,
            }
    print(f"gpt-tiny, batch {args.batch}, CPU, 1 torch thread; torch {torch.__version__}")
    print(
        f"{'attention':<9} {'seq':>5} {'peak (counted)':>15} {'predicted':>11} {'x per 2x':>8} {'attn act.':>10} "
        f"{'x per 2x':>8} {'share':>6} {'beyond fused':>13} {'x per 2x':>8} {'step ms':>8}"
    )
    for attention in ATTENTIONS:
        for index, seq_len in enumerate(lengths):
            row = rows[attention, seq_len]
            beyond = row["attention_activation_bytes"] - rows["fused", seq_len]["attention_activation_bytes"]
            previous = rows[attention, lengths[index - 1]] if index else None
            grow = _growth(row, previous, "measured_peak_bytes")
            grow_attention = _growth(row, previous, "attention_activation_bytes")
            before = (
                previous["attention_activation_bytes"] - rows["fused", lengths[index - 1]]["attention_activation_bytes"]
                if previous
                else 0
            )
            grow_beyond = f"{beyond / before:.2f}x" if before > 0 else "-"
            row["beyond_fused_bytes"] = beyond
            print(
                f"{attention:<9} {seq_len:>5} {format_bytes(row['measured_peak_bytes']):>15} "
                f"{format_bytes(row['predicted_peak_bytes']):>11} {grow:>8} "
                f"{format_bytes(row['attention_activation_bytes']):>10} {grow_attention:>8} "
                f"{row['attention_share']:>6.0%} {format_bytes(beyond) if attention == 'plain' else '-':>13} "
                f"{grow_beyond if attention == 'plain' else '-':>8} {1000 * row['step_seconds']:>8.1f}"
            )
    if args.json:
        data = [{"attention": a, "seq_len": n, **row} for (a, n), row in rows.items()]
        args.json.write_text(json.dumps({"batch": args.batch, "rows": data}, indent=2), encoding="utf-8")
    return 0


def _growth(row: dict[str, float], previous: dict[str, float] | None, key: str) -> str:
    return f"{row[key] / previous[key]:.2f}x" if previous and previous[key] else "-"


if __name__ == "__main__":
    sys.exit(main())
