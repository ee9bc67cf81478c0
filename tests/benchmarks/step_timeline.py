"""Benchmark: what recording the step's memory timeline adds to a prediction.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/step_timeline.py [--repeats 7]

Each model is predicted (gpu_train_monitor.engine.prediction.predict, one torch thread) alternately with the
timeline recorded, as every prediction does, and with its recorder replaced by one that records nothing; after a
warm-up of each, the median of --repeats pairs and the median of the pairs' ratios (timeline / none).
Target: the timeline adds at most 10% to a prediction.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CASES = (("tiny-cnn", 128), ("resnet18", 64), ("resnet50", 16))


class _NoTimeline:
    """A recorder that follows nothing: a prediction as it was before the timeline."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    @contextlib.contextmanager
    def following(self, *args: Any) -> Iterator[None]:
        yield

    def timeline(self, holders: Any) -> Any:
        from gpu_train_monitor.events.step_timeline import StepTimeline

        return StepTimeline()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.engine.prediction import predict
    from gpu_train_monitor.memory import predict as predict_module

    recorder = predict_module.TimelineTrace

    def timed(config: RunConfig, with_timeline: bool) -> tuple[float, int]:
        predict_module.TimelineTrace = recorder if with_timeline else _NoTimeline  # type: ignore[misc]
        try:
            started = time.perf_counter()
            predicted = predict(config)
            return time.perf_counter() - started, len(predicted.timeline.points)
        finally:
            predict_module.TimelineTrace = recorder  # type: ignore[misc]

    worst = 0.0
    print("| model | batch | events | points | without, median s | with, median s | ratio: median (min..max) |")
    print("|---|---|---|---|---|---|---|")
    for model, batch in CASES:
        config = RunConfig(device="cpu", model=model, batch_size=batch)
        timed(config, True), timed(config, False)  # warm-up
        pairs = []
        for _ in range(args.repeats):
            bare, _ = timed(config, False)
            full, points = timed(config, True)
            pairs.append((bare, full))
        events = predict(config).timeline.events
        ratios = [full / bare for bare, full in pairs]
        ratio = statistics.median(ratios)
        worst = max(worst, ratio)
        print(
            f"| {model} | {batch} | {events:,} | {points:,} | {statistics.median(b for b, _ in pairs):.3f} | "
            f"{statistics.median(f for _, f in pairs):.3f} | {ratio:.3f} ({min(ratios):.3f}..{max(ratios):.3f}) |",
            flush=True,
        )
    print(f"largest median ratio {worst:.3f} (target <= 1.10)")
    return 0 if worst <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
