"""Benchmark: how fast and how close a memory prediction is.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/prediction.py [--quick] [--grid] [--repeats 5] [--json PATH]

Speed: one prediction (gpu_train_monitor.engine.prediction.predict: the step a run trains, traced on fake tensors) of
resnet18 at batch 256 on the CPU, after a warm-up prediction (the first in a process also imports torch's
tracing machinery: seconds); best and median of --repeats. Target: under 2 s.

Accuracy: each model at three batch sizes, fp32 and bf16 autocast, predicted and then measured (the same step
run for real on the CPU under the same live-bytes count), and the error. Target: within 10%. bf16 real steps
are slow on a CPU without bf16 units (resnet18 at batch 8: tens of seconds); --quick measures tiny-cnn only.
On a GPU, tests/gpu/test_predicted_memory.py compares with the allocator's own peak instead.

The grid (--grid: only it): `predict --batch-sizes 8,16,32 --seq-lens 256,512,1024`'s nine cells
(gpu_train_monitor.finder.fit_grid, each cell a fresh prediction) for gpt-tiny and gpt-small on the CPU, after a
warm-up grid; best and median of --repeats. Target: under 10 s for the nine. Then gpt-tiny and gpt-small cut down
to two blocks of width 192 (real steps of gpt-small itself at these sizes take minutes), predicted and measured at
small cells, and the error.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

VIT = """
from torchvision.models.vision_transformer import VisionTransformer


def small_vit(num_classes):
    return VisionTransformer(image_size=32, patch_size=4, num_layers=4, num_heads=4, hidden_dim=128, mlp_dim=256,
                             num_classes=num_classes)
"""
SIZES = {
    "tiny-cnn": (8, 32, 128),
    "resnet18": (2, 4, 8),
    "speedrun-net": (8, 16, 32),
    "bench_vits:small_vit": (8, 32, 64),
}


GRID_BATCHES, GRID_SEQ_LENS = (8, 16, 32), (256, 512, 1024)
GPT_CELLS = {"gpt-tiny": ((4, 128), (16, 256), (32, 512)), "gpt-small 2x192": ((2, 128), (8, 256), (16, 256))}


def grid(repeats: int) -> tuple[dict, list[dict]]:
    """The grid's time per model and the GPT's prediction error at a few cells."""
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.engine.prediction import measure
    from gpu_train_monitor.finder.fit_grid import fit_grid

    speed = {}
    for model in ("gpt-tiny", "gpt-small"):
        config = RunConfig(device="cpu", model=model, dataset="synthetic-text", optimizer="adamw")
        times = []
        for _ in range(repeats + 1):  # the first is a warm-up
            started = time.perf_counter()
            cells = fit_grid(config, GRID_BATCHES, GRID_SEQ_LENS, 10**12, device="cpu").cells
            times.append(time.perf_counter() - started)
        largest = max(c.total_bytes for c in cells)
        speed[model] = {"first_s": times[0], "best_s": min(times[1:]), "median_s": statistics.median(times[1:])}
        print(
            f"{model} grid of 9 (batch {GRID_BATCHES} x seq len {GRID_SEQ_LENS}): first {times[0]:.2f} s, then best "
            f"{min(times[1:]):.2f} s, median {statistics.median(times[1:]):.2f} s over {repeats} (target < 10 s); "
            f"largest cell {largest:,} B",
            flush=True,
        )
    rows = []
    print("| model | batch x seq len | predicted B | measured B | error |\n|---|---|---|---|---|")
    for name, cells in GPT_CELLS.items():
        config = RunConfig(device="cpu", model=name.split()[0], dataset="synthetic-text", optimizer="adamw")
        if name != "gpt-tiny":
            config = config.replace(layers=2, width=192)
        for batch, seq_len in cells:
            fake = fit_grid(config, [batch], [seq_len], 10**12).cells[0].prediction
            real = measure(config.replace(seq_len=seq_len), batch)
            error = fake.peak_bytes / real.peak_bytes - 1
            rows.append({"model": name, "batch": batch, "seq_len": seq_len, "predicted": fake.peak_bytes,
                         "measured": real.peak_bytes, "error": error})  # fmt: skip
            said = f"| {name} | {batch} x {seq_len} | {fake.peak_bytes:,} | {real.peak_bytes:,} | {error:+.3%} |"
            print(said, flush=True)
    return speed, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="measure tiny-cnn only")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--grid", action="store_true", help="the batch x sequence length grid of the GPT only")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    if args.grid:
        speed, rows = grid(args.repeats)
        worst = max(abs(r["error"]) for r in rows)
        print(f"largest error {worst:.3%} (target <= 10%)")
        if args.json:
            args.json.write_text(json.dumps({"grid": speed, "accuracy": rows}, indent=2), encoding="utf-8")
        return 0 if all(s["best_s"] < 10.0 for s in speed.values()) and worst <= 0.10 else 1
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.engine.prediction import measure, predict

    folder = tempfile.mkdtemp()
    Path(folder, "bench_vits.py").write_text(VIT, encoding="utf-8")
    sys.path.insert(0, folder)
    config = RunConfig(device="cpu", model="resnet18", batch_size=256)
    started = time.perf_counter()
    predict(config)
    first = time.perf_counter() - started
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        predicted = predict(config)
        times.append(time.perf_counter() - started)
    speed = {"first_s": first, "best_s": min(times), "median_s": statistics.median(times), "peak": predicted.peak_bytes}
    print(
        f"resnet18 batch 256 prediction: first {first:.2f} s, then best {min(times):.2f} s, median "
        f"{statistics.median(times):.2f} s over {args.repeats} (target < 2 s); predicted {predicted.peak_bytes:,} B"
    )
    rows = []
    print("| model | amp | batch | predicted B | measured B | error |\n|---|---|---|---|---|---|")
    for model, sizes in SIZES.items():
        if args.quick and model != "tiny-cnn":
            continue
        for amp in ("off", "bf16"):
            for batch in sizes:
                fake = predict(config, batch, model=model, amp=amp)
                real = measure(config, batch, model=model, amp=amp)
                error = fake.peak_bytes / real.peak_bytes - 1
                rows.append(
                    {
                        "model": model,
                        "amp": amp,
                        "batch": batch,
                        "predicted": fake.peak_bytes,
                        "measured": real.peak_bytes,
                        "error": error,
                        "predict_s": fake.elapsed_s,
                    }
                )
                print(
                    f"| {model} | {amp} | {batch} | {fake.peak_bytes:,} | {real.peak_bytes:,} | {error:+.3%} |",
                    flush=True,
                )
    worst = max((abs(r["error"]) for r in rows), default=0.0)
    print(f"largest error {worst:.3%} (target <= 10%)")
    if args.json:
        args.json.write_text(json.dumps({"speed": speed, "accuracy": rows}, indent=2), encoding="utf-8")
    return 0 if speed["best_s"] < 2.0 and worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
