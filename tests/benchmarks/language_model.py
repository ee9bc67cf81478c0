"""Benchmark: the built-in GPT on the CPU, measured side by side in one process.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/language_model.py [--repeats 7] [--json PATH]

1. A gpt-tiny training step (SGD, batch 16 x 128 tokens) with fused attention (scaled_dot_product_attention) and
   with plain attention (softmax of QK^T), interleaved, one thread: median step time and tokens/s, and the ratio.
2. A batch from each text placement (synthetic-text, 2,560 sequences of 128 tokens, batch 16): resident (a gather
   of random slices of the token ids already on the device) and stream (a DataLoader batch of consecutive
   sequences copied to the device): median microseconds per batch.
3. The memory prediction of a gpt-tiny step (fake tensors) against the same step measured on the CPU, at 64, 128
   and 256 tokens: the error and the time a prediction takes (median, after a warm-up).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def step_times(repeats: int) -> dict[str, float]:
    import torch

    from gpu_train_monitor.model.gpt import GPT, GPTShape
    from gpu_train_monitor.model.step import loss_of

    times: dict[str, list[float]] = {"fused": [], "plain": []}
    models = {}
    for attention in times:
        torch.manual_seed(0)
        model = GPT(GPTShape(256, 128, 2, 64, 2, attention))
        models[attention] = (model, torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9))
    ids, targets = (torch.randint(0, 256, (16, 128)) for _ in range(2))
    for index in range(repeats + 1):
        for attention, (model, optimizer) in models.items():
            started = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss_of(model(ids), targets).backward()
            optimizer.step()
            if index:  # the first step of each is a warm-up
                times[attention].append(time.perf_counter() - started)
    return {attention: statistics.median(values) for attention, values in times.items()}


def batch_times(repeats: int) -> dict[str, float]:
    import torch

    from gpu_train_monitor.data.datasets.text import make_synthetic_text
    from gpu_train_monitor.data.text_batches import ResidentText, StreamText

    cpu = torch.device("cpu")
    splits = make_synthetic_text(2560, 128, seed=0, device=cpu)
    sources = {
        "resident": ResidentText(splits, cpu, 16, torch.Generator().manual_seed(0)),
        "stream": StreamText(splits, cpu, 16, torch.Generator().manual_seed(0), 0, False, False, 0),
    }
    result = {}
    for name, source in sources.items():
        values = []
        for _ in range(repeats):
            epoch = source.train_epoch()
            next(epoch)  # the epoch's start (its offsets drawn, its loader started) is not a batch's cost
            for _ in range(20):
                started = time.perf_counter()
                next(epoch)
                values.append(time.perf_counter() - started)
        result[name] = statistics.median(values)
    return result


def predictions(repeats: int) -> list[dict[str, float]]:
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.engine.prediction import measure, predict

    config = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", batch_size=16)
    predict(config, 16, seq_len=64)  # warm-up: the first prediction imports torch's tracing machinery
    rows = []
    for seq_len in (64, 128, 256):
        spent = []
        for _ in range(repeats):
            started = time.perf_counter()
            predicted = predict(config, 16, seq_len=seq_len)
            spent.append(time.perf_counter() - started)
        measured = measure(config, 16, seq_len=seq_len)
        rows.append(
            {
                "seq_len": seq_len,
                "predicted_bytes": predicted.peak_bytes,
                "measured_bytes": measured.peak_bytes,
                "error_percent": 100 * (predicted.peak_bytes / measured.peak_bytes - 1),
                "predict_s": statistics.median(spent),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    steps = step_times(args.repeats)
    tokens = 16 * 128
    print("gpt-tiny step, batch 16 x 128 tokens, 1 thread (median of %d)" % args.repeats)
    print(f"{'attention':<10} {'step ms':>9} {'tokens/s':>10}")
    for attention, seconds in steps.items():
        print(f"{attention:<10} {1000 * seconds:>9.1f} {tokens / seconds:>10,.0f}")
    print(f"plain / fused step time: {steps['plain'] / steps['fused']:.2f}")
    batches = batch_times(args.repeats)
    print("\nbatch of 16 x 128 tokens from each placement (median)")
    for name, seconds in batches.items():
        print(f"{name:<10} {1e6 * seconds:>9.0f} us")
    rows = predictions(args.repeats)
    print("\ngpt-tiny memory, batch 16: predicted vs measured on the CPU")
    print(f"{'seq_len':>7} {'predicted':>12} {'measured':>12} {'error':>7} {'predict s':>9}")
    for row in rows:
        print(
            f"{row['seq_len']:>7} {row['predicted_bytes']:>12,} {row['measured_bytes']:>12,} "
            f"{row['error_percent']:>6.1f}% {row['predict_s']:>9.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps({"steps_s": steps, "batch_s": batches, "predictions": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
