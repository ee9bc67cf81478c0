"""Benchmark: memory by module, what it costs and how closely it adds up.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/attribution.py [--repeats 5] [--json PATH]

On the CPU with one torch thread, side by side in one process, each number a median over `--repeats`, the
variants alternating in a rotating order:

1. Cost of a sampled step split by module, for resnet18 (CIFAR stem, batch 4) and tiny-cnn (batch 16): a plain
   step, a sampled step as every report takes one (saved-tensor count, phase marks), and a sampled step split by
   module (forward hooks on every module call besides). What a run pays for attribution is the difference of the
   last two, once a minute (`ATTRIBUTION_PERIOD_S`): the table gives it per attributed step and as a share of a
   minute of training. The batches are small so that the hooks' cost, which does not grow with the batch, stands
   out of the step's own time (at resnet18's batch 32 a step takes over a second here, and the difference was
   inside its noise).
2. A whole run with and without attribution: tiny-cnn, batch 32, 150 steps, a breakdown sampled once a second as
   in every run, and every sampled step split by module (`ATTRIBUTION_PERIOD_S` 0: sixty times more often than a
   run does) against none (an infinite period): the run's wall time per step.
3. How it adds up, per model (resnet18, a small ViT, a small transformer, tiny-cnn): the predicted rows' total
   against the predicted peak, the largest difference between a module's predicted bytes and the same step run
   for real and counted the same way (% of the peak), the rows of a sampled step against its breakdown's total,
   and what attribution adds to a prediction's time (against the same trace with no module followed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gpu_train_monitor.config.run_config import RunConfig  # noqa: E402
from gpu_train_monitor.engine.session import TrainingSession  # noqa: E402
from gpu_train_monitor.events.module_bytes import modules_total  # noqa: E402
from gpu_train_monitor.memory import measured_modules, traced_modules  # noqa: E402
from gpu_train_monitor.memory.breakdown import StepMemoryRecorder  # noqa: E402
from gpu_train_monitor.memory.live_bytes import LiveBytes  # noqa: E402
from gpu_train_monitor.memory.predict import Prediction, StepParts, measure_step, predict_step  # noqa: E402
from gpu_train_monitor.memory.probe import MemoryProbe  # noqa: E402
from gpu_train_monitor.model.models import build_model  # noqa: E402
from gpu_train_monitor.model.step import TrainingStep, build_optimizer  # noqa: E402
from tests.core.memory.test_module_attribution import SmallTransformer, small_vit  # noqa: E402


def rotated(variants: list[Any], repeat: int) -> list[Any]:
    shift = repeat % len(variants)
    return variants[shift:] + variants[:shift]


class Forced:
    """An attribution schedule that always, or never, says a sampled step is due."""

    def __init__(self, due: bool) -> None:
        self._due = due

    def due(self) -> bool:
        return self._due


def step_costs(model_name: str, batch: int, repeats: int, steps: int = 10) -> dict[str, float]:
    """Median seconds of a plain step, a sampled step and an attributed sampled step (see the module doc)."""
    torch.manual_seed(0)
    model = build_model(model_name, 10, 3)
    optimizer = build_optimizer(model, "sgd", lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, optimizer, torch.amp.GradScaler("cpu", enabled=False), "cpu", None)
    recorder = StepMemoryRecorder(MemoryProbe("cpu"))
    images, labels = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))
    trainer.step(images, labels, None)  # optimizer state made, kernels warm

    def plain() -> None:
        trainer.step(images, labels, None)

    def sampled(attributed: bool) -> Callable[[], None]:
        def run() -> None:
            recorder.attribution = Forced(attributed)  # type: ignore[assignment]
            with recorder.step():
                trainer.step(images, labels, recorder)
            recorder.breakdown(1, model, optimizer, images, labels)

        return run

    variants = [("plain", plain), ("sampled", sampled(False)), ("attributed", sampled(True))]
    times: dict[str, list[float]] = {name: [] for name, _ in variants}
    for repeat in range(repeats * steps):  # one step of each in turn: a shared machine's swings hit all three
        for name, run in rotated(variants, repeat):
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def run_per_step(attribute: bool, steps: int) -> float:
    """A tiny-cnn run's wall seconds per step, every sampled step split by module or none."""
    measured_modules.ATTRIBUTION_PERIOD_S = 0.0 if attribute else math.inf
    config = RunConfig(device="cpu", model="tiny-cnn", batch_size=32, max_steps=steps, synthetic_samples=2048)
    config = config.replace(report_interval=0.1)
    started = time.perf_counter()
    TrainingSession(config).run()
    return (time.perf_counter() - started) / steps


def adamw_step(model: nn.Module) -> StepParts:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(images: torch.Tensor, labels: torch.Tensor, marks: LiveBytes) -> object:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        marks.mark("forward")
        loss.backward()
        marks.mark("backward")
        optimizer.step()
        marks.mark("optimizer")
        return loss

    return StepParts(model, optimizer, step)


class _Unfollowed:
    """No module followed: the trace as it was before attribution, for its time."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __enter__(self) -> _Unfollowed:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def current(self) -> None:
        return None

    def clear(self) -> None:
        pass


@contextlib.contextmanager
def unfollowed() -> Iterator[None]:
    real = traced_modules.ModuleContext
    traced_modules.ModuleContext = _Unfollowed  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        traced_modules.ModuleContext = real


def adds_up(name: str, build: Callable[[], nn.Module], shape: tuple[int, ...], repeats: int) -> dict[str, Any]:
    """Section 3's row for one model (see the module doc)."""
    predicted = predict_step(build, adamw_step, shape, 10)
    measured = measure_step(build, adamw_step, shape, 10, device=torch.device("cpu"))
    real = {row.name: row.total_bytes for row in measured.modules}
    worst = max(abs(row.total_bytes - real.get(row.name, 0)) for row in predicted.modules)
    timed: dict[str, list[float]] = {"followed": [], "unfollowed": []}
    for repeat in range(repeats):
        for variant in rotated(["followed", "unfollowed"], repeat):
            with unfollowed() if variant == "unfollowed" else contextlib.nullcontext():
                p: Prediction = predict_step(build, adamw_step, shape, 10)
            timed[variant].append(p.elapsed_s)
    followed, plain = statistics.median(timed["followed"]), statistics.median(timed["unfollowed"])
    return {
        "model": name,
        "batch": shape[0],
        "blocks": len(predicted.modules) - 1,
        "rows_vs_peak_percent": 100 * (modules_total(predicted.modules) / predicted.peak_bytes - 1),
        "worst_module_vs_real_percent": 100 * worst / measured.peak_bytes,
        "predict_s": followed,
        "predict_unfollowed_s": plain,
        "predict_ratio": followed / plain,
        "sampled_rows_vs_breakdown_percent": sampled_error(build, shape),
    }


def sampled_error(build: Callable[[], nn.Module], shape: tuple[int, ...]) -> float:
    """A real step sampled by module: its rows' total against its breakdown's, in %."""
    torch.manual_seed(0)
    model = build()
    parts = adamw_step(model)
    trainer = TrainingStep(model, parts.optimizer, torch.amp.GradScaler("cpu", enabled=False), "cpu", None)
    recorder = StepMemoryRecorder(MemoryProbe("cpu"))
    recorder.attribution = Forced(True)  # type: ignore[assignment]
    images, labels = torch.randn(shape), torch.randint(0, 10, (shape[0],))
    trainer.step(images, labels, None)
    with recorder.step():
        trainer.step(images, labels, recorder)
    b = recorder.breakdown(2, model, parts.optimizer, images, labels)
    return 100 * (modules_total(b.modules) / b.total_bytes - 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    torch.set_num_threads(1)
    result: dict[str, Any] = {"steps": [], "run": {}, "models": []}
    print("1. a sampled step split by module (CPU, one thread; medians of", args.repeats, "repeats)")
    print(f"{'model':>10} {'batch':>6} {'plain ms':>9} {'sampled ms':>11} {'attributed ms':>14} {'extra ms':>9} "
          f"{'per minute':>11}")  # fmt: skip
    for model_name, batch in (("resnet18", 4), ("tiny-cnn", 16)):
        costs = step_costs(model_name, batch, args.repeats)
        extra = costs["attributed"] - costs["sampled"]
        share = extra / measured_modules.ATTRIBUTION_PERIOD_S
        result["steps"].append({"model": model_name, "batch": batch, **costs, "extra_s": extra, "per_minute": share})
        print(f"{model_name:>10} {batch:>6} {1e3 * costs['plain']:>9.1f} {1e3 * costs['sampled']:>11.1f} "
              f"{1e3 * costs['attributed']:>14.1f} {1e3 * extra:>9.2f} {share:>11.4%}")  # fmt: skip
    period = measured_modules.ATTRIBUTION_PERIOD_S
    runs: dict[bool, list[float]] = {True: [], False: []}
    for repeat in range(args.repeats):
        for attribute in rotated([True, False], repeat):
            runs[attribute].append(run_per_step(attribute, 150))
    measured_modules.ATTRIBUTION_PERIOD_S = period
    on, off = statistics.median(runs[True]), statistics.median(runs[False])
    result["run"] = {"attributed_s_per_step": on, "plain_s_per_step": off, "ratio": on / off}
    print(f"\n2. tiny-cnn run, 150 steps, a step sampled once a second: {1e3 * off:.1f} ms/step without attribution, "
          f"{1e3 * on:.1f} ms/step with every sampled step split by module: x{on / off:.3f}")  # fmt: skip
    print("\n3. how it adds up (CPU): rows against the predicted peak, a module predicted against the real step, a")
    print("   sampled step's rows against its breakdown; a prediction's time with modules followed and without")
    print(f"{'model':>12} {'batch':>6} {'rows':>5} {'rows-peak %':>12} {'worst module %':>15} {'sampled %':>10} "
          f"{'predict s':>10} {'without s':>10} {'ratio':>6}")  # fmt: skip
    models = (
        ("resnet18", lambda: build_model("resnet18", 10, 3), (8, 3, 32, 32)),
        ("small ViT", small_vit, (8, 3, 32, 32)),
        ("transformer", SmallTransformer, (8, 3, 32, 32)),
        ("tiny-cnn", lambda: build_model("tiny-cnn", 10, 3), (64, 3, 32, 32)),
    )
    for name, build, shape in models:
        row = adds_up(name, build, shape, args.repeats)
        result["models"].append(row)
        print(
            f"{name:>12} {row['batch']:>6} {row['blocks']:>5} {row['rows_vs_peak_percent']:>+12.3f} "
            f"{row['worst_module_vs_real_percent']:>15.3f} {row['sampled_rows_vs_breakdown_percent']:>+10.3f} "
            f"{row['predict_s']:>10.3f} {row['predict_unfollowed_s']:>10.3f} {row['predict_ratio']:>6.2f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
