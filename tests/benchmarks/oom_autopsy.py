"""Benchmark: what an out-of-memory autopsy costs at the failure, and how close its batch that fits comes to the search.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/oom_autopsy.py [--repeats 5] [--json PATH]

Cost: the autopsy a run makes at the failure that stops it (gpu_train_monitor.engine.oom_recovery.autopsy_of: one
prediction of the step on fake tensors, then the holders and the batch that fits), for tiny-cnn and resnet18 on the
CPU; the first in a process (it imports torch's tracing machinery) and the median of --repeats after it.

Closeness: the batch that fits named at once (gpu_train_monitor.memory.oom_autopsy.batch_that_fits: one prediction,
extrapolated) against the batch the window's advice then searches for with more predictions (the finder's
`largest_batch_under`, with the same raised overhead and margin, as `finder.what_if.oom_advice` does), on a CUDA
device predicted from the CPU; the failed batch's predicted peak against three capacities: 0.6x and 0.9x of it
(the step alone did not fit) and 1.3x (something outside the step held the rest).
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

CASES = {"tiny-cnn": 512, "resnet18": 256}  # model: the batch that failed
CAPACITY_RATIOS = (0.6, 0.9, 1.3)  # the capacity against the failed batch's predicted peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.engine.loop_state import LoopState
    from gpu_train_monitor.engine.oom_recovery import autopsy_of
    from gpu_train_monitor.engine.prediction import predict
    from gpu_train_monitor.finder.predicted import PredictedPeaks, largest_batch_under
    from gpu_train_monitor.memory.oom_autopsy import FIT_MARGIN, batch_that_fits

    results: dict[str, object] = {"cost": [], "closeness": []}
    cpu = torch.device("cpu")
    print("autopsy at the failure that stops a run (CPU, one torch thread)")
    print(f"{'model':<10} {'batch':>6} {'first':>9} {'median':>9} {'min':>9} {'max':>9}")
    first_done = False
    for model, batch in CASES.items():
        config = RunConfig(device="cpu", model=model, batch_size=batch)
        times = []
        for _ in range(args.repeats + (0 if first_done else 1)):
            loop = LoopState(t0=0.0)
            started = time.perf_counter()
            found = autopsy_of(config, loop, batch, cpu, 8 * 10**9, predicting=True)
            times.append(time.perf_counter() - started)
            assert found.holders_source == "predicted" and found.fits_batch is not None
        first = times.pop(0) if not first_done else None
        first_done = True
        median = statistics.median(times)
        shown = f"{first:8.2f}s" if first is not None else f"{'-':>9}"
        print(f"{model:<10} {batch:>6} {shown} {median:8.3f}s {min(times):8.3f}s {max(times):8.3f}s")
        results["cost"].append(  # type: ignore[union-attr]
            {"model": model, "batch": batch, "first_s": first, "median_s": median, "times_s": times}
        )

    print()
    print("batch that fits: named at once (one prediction) vs searched (the advice's), CUDA predicted on the CPU")
    header = ("model", "failed", "capacity", "x peak", "named", "searched", "ratio", "preds")
    print("{:<10} {:>6} {:>10} {:>7} {:>6} {:>8} {:>6} {:>5}".format(*header))
    for model, batch in CASES.items():
        config = RunConfig(device="cuda", model=model, batch_size=batch)
        at_failure = predict(config, batch, device="cuda")
        for ratio in CAPACITY_RATIOS:
            capacity = int(at_failure.peak_bytes * ratio)
            named = batch_that_fits(at_failure, batch, capacity)
            peaks = PredictedPeaks(config, device="cuda")
            peaks.overhead_bytes = max(capacity + 1 - at_failure.peak_bytes, 0)  # as oom_advice raises it
            searched = largest_batch_under(peaks, int(capacity * (1 - FIT_MARGIN)), batch, batch)
            made = len(peaks.predictions)
            closeness = named / searched if searched else float("nan")
            print(
                f"{model:<10} {batch:>6} {capacity / 1e9:8.2f}GB {ratio:>7.1f} {named:>6} {searched:>8} "
                f"{closeness:>6.3f} {made:>5}"
            )
            results["closeness"].append(  # type: ignore[union-attr]
                {
                    "model": model,
                    "failed_batch": batch,
                    "capacity_bytes": capacity,
                    "capacity_ratio": ratio,
                    "named": named,
                    "searched": searched,
                    "ratio": closeness,
                    "predictions": made,
                }
            )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
