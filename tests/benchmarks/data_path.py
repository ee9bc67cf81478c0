"""Benchmark: how fast data reaches the device, and what the TrainingSession costs over a bare loop.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/data_path.py [--device auto] [--repeats 3] [--json PATH] [--quick]
        [--part all|data|session] [--samples N] [--seconds S] [--models resnet18,tiny-cnn]
        [--resnet-batch N] [--resnet-steps N] [--tiny-batch N] [--tiny-steps N]

`tests/benchmarks/run_all.py` runs it (`--part data`, then `--part session`) with the other benchmarks
and puts its numbers into one table.

Part 1, images/s delivered to the device, all over the same synthetic CIFAR-shaped images (50k, the
size of CIFAR-10's training set):

- seed: the seed article's path. A torchvision dataset of PIL images, `ToTensor()` + `Normalize`,
  `DataLoader(batch_size=64, shuffle=True)` (default workers: 0) and `.to(device)` per batch. Nothing can
  be downloaded here, so the dataset is torchvision's own `CIFAR10` class with only its file reading
  replaced: `SyntheticCIFAR10` fills `data` (an HWC uint8 view, made exactly as CIFAR10 makes it) and
  `targets`, and inherits CIFAR10's `__getitem__` and `__len__` unchanged, so every item costs what it
  costs in the article (`Image.fromarray`, then the transforms). We chose this over `ImageFolder`
  because CIFAR10 keeps decoded arrays in memory: a PNG decode per item is not part of the article's
  per-item cost, and adding one would flatter our placements. `ImageFolder` over PNGs is measured too,
  as a context row (the cost of a decode-per-item dataset), but the target uses the CIFAR10 path.
- stream: `gpu_train_monitor.data.batches.StreamBatches` at its best settings (workers 0/1/2, and pin_memory +
  non_blocking where they apply, i.e. on CUDA; the best median is reported, the others as context).
- resident: `gpu_train_monitor.data.resident_batches.ResidentBatches`.
Both of ours yield ready batches (random crop + flip + normalise run on the device), so their rows
include that work; the seed path does no augmentation. Batch 64 everywhere. Each run counts the images
of the batches delivered in about `--seconds`, after a few warm-up batches, and synchronises the
device before the clock stops (on the CPU every op has finished when it returns). A window spans
several epochs of the resident set, so work done once per epoch (shuffling or augmenting the whole set)
is counted in proportion.

Part 2, samples/s of `TrainingSession` against a bare hand-written loop with the same model, batch,
data (resident synthetic, served by the same `ResidentBatches` + `DevicePreprocess`), optimizer (SGD
with the RunConfig defaults) and seeds, so the two compute the same losses (checked and printed): the
difference is the loop itself (the session's TrainingStep, reports, memory sampling, events, and recording
every report in a run store as users run it; `--no-record` leaves the store out). Both are timed
over the same steps: the session's reports at or after the warm-up steps cut the run into intervals
(the session's own report clock, taken right after its one loss fetch), and the bare loop's per-step
marks (CUDA/MPS: device events, no extra sync) are read at exactly those steps. A run's samples/s is
the median over its intervals: each interval holds whole steps and, for the session, one report, so
every per-step and per-report cost stays in. On the CPU, intervals in which other processes took more
than 15% of the CPUs (read from /proc/stat) in either run are left out when enough undisturbed ones
remain: this benchmark often runs on a shared machine. The plain wall-time ratio over the whole range
is printed as context. The synthetic set holds exactly steps x batch images, so the range is one epoch
and the session's validation pass comes after it. Session and bare runs alternate (S B, B S, ...) to
cancel machine drift; the ratio is the median of the per-pair ratios. Sizes: on the CPU resnet18 at
batch 64 (16 steps) and tiny-cnn at 128 (150 steps); on a GPU resnet18 at batch 256 (200 steps) and
tiny-cnn at 128 (1500 steps), so that the runs span many reports. Targets: resident vs seed >= 30x on a
CPU, >= 100x on a GPU; session / bare >= 0.97 for resnet18 on a CPU, >= 0.99 on a GPU (tiny-cnn: 0.90). The
share of CPU time other
processes used is printed for each part: it says how far to trust the numbers (`--wait-idle` waits
for a quiet machine before each run).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.batches import StreamBatches
from gpu_train_monitor.data.datasets.synthetic import make_synthetic
from gpu_train_monitor.data.datasets.types import DatasetSplits
from gpu_train_monitor.data.preprocess import DevicePreprocess
from gpu_train_monitor.data.resident_batches import ResidentBatches
from gpu_train_monitor.device.devices import resolve_device
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import StepsReported
from gpu_train_monitor.model.models import build_model, model_spec
from gpu_train_monitor.model.step import build_optimizer
from gpu_train_monitor.store.recorder import RunRecorder

BATCH = 64  # the seed article's batch size; all three data paths use it
# Targets differ by device kind: a GPU makes the resident path's on-device work nearly free and a
# training step short, so both its speed-up and the loop's share of a step are held to more.
TARGET_RESIDENT_VS_SEED = {"cpu": 30.0, "gpu": 100.0}
TARGET_SESSION_VS_BARE = {"cpu": {"resnet18": 0.97, "tiny-cnn": 0.90}, "gpu": {"resnet18": 0.99, "tiny-cnn": 0.90}}
SESSION_MODELS = ("resnet18", "tiny-cnn")


def device_kind(device: torch.device) -> str:
    """'cpu' or 'gpu' (CUDA and MPS): which set of targets applies."""
    return "cpu" if device.type == "cpu" else "gpu"


def session_defaults(device: torch.device, quick: bool) -> dict[str, tuple[int, int, int]]:
    """model -> (batch, steps, warm-up steps) when the options don't say.

    On the CPU: resnet18 at batch 64 and tiny-cnn at 128, the sizes of the README's table. On a GPU a
    step takes milliseconds, so the runs need many more steps to span several 0.1 s reports, and resnet18
    runs at batch 256 (a GPU-sized batch: at 64 a GPU step is launch-bound and measures the launches).
    """
    if device.type == "cpu":
        return {
            "resnet18": (64, 5 if quick else 16, 2 if quick else 3),
            "tiny-cnn": (128, 30 if quick else 150, 5 if quick else 10),
        }
    return {
        "resnet18": (256, 60 if quick else 200, 10 if quick else 20),
        "tiny-cnn": (128, 300 if quick else 1500, 30 if quick else 150),
    }


QUIET_SHARE = 0.15  # an interval counts as undisturbed when other processes used less of the CPUs than this


# ---- helpers ---------------------------------------------------------------------------------------


def sync(device: torch.device) -> None:
    """Wait for queued device work. CPU ops are synchronous: nothing to wait for."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


@dataclass
class Measurement:
    name: str
    unit: str
    values: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.values)


def cpu_ticks() -> tuple[float, float, float] | None:
    """(CPU seconds the whole machine spent busy, CPU seconds of this process and its reaped children,
    wall clock), from /proc/stat and os.times(); None where /proc/stat does not exist (not Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    busy = sum(fields[:3]) + sum(fields[5:8])  # user nice system + irq softirq steal (guest is in user)
    own = sum(os.times()[:4])  # this process (all threads) and its reaped children (DataLoader workers)
    return busy / os.sysconf("SC_CLK_TCK"), own, time.perf_counter()


def other_share(start: tuple[float, float, float] | None, end: tuple[float, float, float] | None) -> float | None:
    """Share of all CPUs that other processes used between two `cpu_ticks()` readings."""
    if start is None or end is None:
        return None
    busy, own, wall = (e - s for e, s in zip(end, start))
    return min(max((busy - own) / ((os.cpu_count() or 1) * max(wall, 1e-9)), 0.0), 1.0)


class OtherLoad:
    """Share of the machine's CPU time that other processes used while a part ran (Linux; else None).

    This benchmark is often run on a shared machine: a number well above 0 means the results are noisy.
    """

    def __init__(self) -> None:
        self.start = cpu_ticks()

    def share(self) -> float | None:
        return other_share(self.start, cpu_ticks())


def wait_for_idle(max_wait_s: float, threshold: float = 0.10, window_s: float = 0.5) -> None:
    """Wait (at most `max_wait_s`) until other processes use under `threshold` of the CPUs."""
    deadline = time.perf_counter() + max_wait_s
    while time.perf_counter() < deadline:
        load = OtherLoad()
        time.sleep(window_s)
        share = load.share()
        if share is None or share < threshold:
            return


def busy_note(load: OtherLoad) -> str:
    share = load.share()
    return f" (other processes: {share:.0%} CPU)" if share is not None else ""


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---- part 1: images/s delivered to the device ------------------------------------------------------


def time_delivery(
    epoch: Callable[[], Iterator[tuple[torch.Tensor, torch.Tensor]]],
    device: torch.device,
    seconds: float,
    warmup_batches: int = 5,
) -> float:
    """Images/s of the batches `epoch()` yields (epoch after epoch), over about `seconds`."""

    def forever() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        while True:
            yield from epoch()

    batches = forever()
    for _ in range(warmup_batches):
        next(batches)
    sync(device)
    images = 0
    last = None
    start = time.perf_counter()
    while True:
        x, y = next(batches)
        images += x.shape[0]
        last = (x, y)
        if time.perf_counter() - start >= seconds:
            break
    sync(device)
    float(last[0].reshape(-1)[-1])  # touch the last batch: it exists, fully computed, on the device
    elapsed = time.perf_counter() - start
    batches.close()  # ends the DataLoader iterator (and its workers) now, not at some later collection
    del batches, last
    gc.collect()
    return images / elapsed


def make_seed_dataset(splits: DatasetSplits):
    """torchvision's CIFAR10 over our images: its own __getitem__ (Image.fromarray + transforms)."""
    from torchvision import transforms
    from torchvision.datasets import CIFAR10, VisionDataset

    class SyntheticCIFAR10(CIFAR10):
        def __init__(self, images: torch.Tensor, labels: torch.Tensor, transform) -> None:
            VisionDataset.__init__(self, root=None, transform=transform)  # no files, so no md5 check
            self.train = True
            # Exactly what CIFAR10.__init__ builds from the pickled rows: a non-contiguous HWC view.
            rows = images.cpu().numpy().reshape(len(images), -1)
            self.data = np.vstack([rows]).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
            self.targets = labels.cpu().tolist()
            self.classes = [str(i) for i in range(splits.num_classes)]

    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(splits.mean, splits.std)])
    return SyntheticCIFAR10(splits.train.images, splits.train.labels, transform)


def make_imagefolder_dataset(splits: DatasetSplits, root: Path, count: int):
    """The first `count` images written as PNGs in class folders, read by torchvision's ImageFolder."""
    from PIL import Image
    from torchvision import transforms
    from torchvision.datasets import ImageFolder

    images = splits.train.images[:count].cpu().permute(0, 2, 3, 1).numpy()
    labels = splits.train.labels[:count].cpu().tolist()
    for c in range(splits.num_classes):
        (root / f"class_{c}").mkdir(parents=True, exist_ok=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        Image.fromarray(image).save(root / f"class_{label}" / f"{i:06d}.png")
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(splits.mean, splits.std)])
    return ImageFolder(str(root), transform=transform)


def seed_epoch(dataset, device: torch.device) -> Callable[[], Iterator[tuple[torch.Tensor, torch.Tensor]]]:
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True)  # the article's loader: default workers (0)

    def epoch() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for images, labels in loader:
            yield images.to(device), labels.to(device)

    return epoch


def stream_settings(device: torch.device) -> list[tuple[int, bool, bool]]:
    """(workers, pin_memory, non_blocking) combinations that differ on this device."""
    if device.type == "cuda":
        pinning = [(False, False), (True, True)]
    elif device.type == "mps":
        pinning = [(False, False), (False, True)]  # pin_memory only applies to CUDA in StreamBatches
    else:
        pinning = [(False, False)]  # both are ignored on the CPU
    return [(w, pin, nb) for w in (0, 1, 2) for pin, nb in pinning]


def stream_label(workers: int, pin: bool, nb: bool, device: torch.device) -> str:
    label = f"workers={workers}"
    if device.type != "cpu":
        label += f", pin_memory={pin}, non_blocking={nb}"
    return label


def bench_data_path(
    device: torch.device, samples: int, seconds: float, repeats: int, png_count: int, idle_wait: float
) -> tuple[dict[str, Measurement], str, list[Measurement]]:
    log(f"[data] generating {samples} synthetic images on the host ...")
    host = make_synthetic(samples, seed=0, device=torch.device("cpu"))
    gen = torch.Generator(device=device).manual_seed(0)
    preprocess = DevicePreprocess(
        host, device, in_channels=3, input_size=None, channels_last=False, flip=True, generator=gen
    )
    resident = ResidentBatches(host, device, BATCH, preprocess, gen)  # uploads once (a no-op on the CPU)
    seed_ds = make_seed_dataset(host)
    tmp = tempfile.TemporaryDirectory(prefix="data_path_png_")
    log(f"[data] writing {png_count} PNGs for the ImageFolder context row ...")
    folder_ds = make_imagefolder_dataset(host, Path(tmp.name), png_count)

    runs: dict[str, tuple[Measurement, Callable[[], float]]] = {}

    def add(key: str, name: str, fn: Callable[[], float]) -> None:
        runs[key] = (Measurement(name, "images/s"), fn)

    add(
        "seed",
        "images/s seed: torchvision CIFAR10 (PIL) + ToTensor + Normalize, DataLoader b64",
        lambda: time_delivery(seed_epoch(seed_ds, device), device, seconds),
    )
    add(
        "seed_imagefolder",
        f"images/s   context: torchvision ImageFolder, {png_count} PNGs, same loader",
        lambda: time_delivery(seed_epoch(folder_ds, device), device, seconds),
    )
    settings = stream_settings(device)
    for workers, pin, nb in settings:

        def run_stream(workers=workers, pin=pin, nb=nb) -> float:
            source = StreamBatches(host, device, BATCH, preprocess, workers, pin, nb, seed=0)
            return time_delivery(source.train_epoch, device, seconds)

        add(f"stream:{workers}:{pin}:{nb}", f"images/s stream ({stream_label(workers, pin, nb, device)})", run_stream)
    add(
        "resident",
        "images/s resident (on-device shuffle, crop, flip, normalise)",
        lambda: time_delivery(resident.train_epoch, device, seconds),
    )

    for rep in range(repeats):  # round robin: each repeat visits every path once, so drift hits all alike
        for key, (measurement, fn) in runs.items():
            wait_for_idle(idle_wait)
            load = OtherLoad()
            value = fn()
            measurement.values.append(value)
            log(f"[data] repeat {rep + 1}/{repeats} {key:<24} {value:>12,.0f} images/s{busy_note(load)}")
    tmp.cleanup()

    stream_runs = [runs[k][0] for k in runs if k.startswith("stream:")]
    best = max(stream_runs, key=lambda m: m.median)
    best_setting = best.name.split("(", 1)[1].rstrip(")")
    result = {
        "seed": runs["seed"][0],
        "seed_imagefolder": runs["seed_imagefolder"][0],
        "stream": best,
        "resident": runs["resident"][0],
    }
    return result, best_setting, stream_runs


# ---- part 2: TrainingSession vs a bare loop --------------------------------------------------------


class StepClock:
    """Marks the end of each step without a host sync: device events on CUDA/MPS, the host clock on the CPU."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.marks: list = []

    def mark(self) -> None:
        if self.device.type == "cuda":
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self.marks.append(event)
        elif self.device.type == "mps":
            event = torch.mps.event.Event(enable_timing=True)
            event.record()
            self.marks.append(event)
        else:
            self.marks.append(time.perf_counter())

    def seconds(self) -> list[float]:
        """Time of each mark in seconds, relative to the first one (syncs once, at the end)."""
        if self.device.type == "cpu":
            return [t - self.marks[0] for t in self.marks]
        sync(self.device)
        if self.device.type == "mps":
            self.marks[-1].synchronize()
        return [self.marks[0].elapsed_time(e) / 1000.0 for e in self.marks]


@dataclass
class LoopRun:
    times: dict[int, float]  # step number (1-based, completed) -> seconds on the run's own clock
    losses: list[float]
    summary_rate: float | None = None  # the session's own summary samples_per_s (median over reports)
    ticks: dict[int, tuple[float, float, float] | None] = field(default_factory=dict)  # CPU only


def session_config(device: str, model: str, batch: int, steps: int) -> RunConfig:
    # One epoch of exactly `steps` batches: the timed range holds no validation pass.
    return RunConfig(
        device=device,
        model=model,
        dataset="synthetic",
        synthetic_samples=max(steps * batch, 256),
        batch_size=batch,
        epochs=1,
        max_steps=steps,
        placement="resident",
        seed=0,
    )


RECORD = True  # the session records into a run store, as the CLI and the window do by default (--no-record: off)
STORE = Path(tempfile.mkdtemp(prefix="bench-runs-")) / "runs.sqlite3"


def run_session(config: RunConfig, device: torch.device) -> LoopRun:
    reports: list[StepsReported] = []
    ticks: dict[int, tuple[float, float, float] | None] = {}

    def observe(event: object) -> None:
        if isinstance(event, StepsReported):
            reports.append(event)
            if device.type == "cpu":
                ticks[event.step] = cpu_ticks()  # ~20 us, once per report

    recorder = RunRecorder(STORE) if RECORD else None  # its writer thread shares the process with the loop
    finished = TrainingSession(config, [observe] + ([recorder] if recorder else [])).run()
    if recorder is not None:
        recorder.close()
        if recorder.problem:
            raise RuntimeError(recorder.problem)
    if finished.status != "completed":
        raise RuntimeError(f"session ended {finished.status}: {finished.message}")
    times = {r.step: r.elapsed_s for r in reports}  # the session's clock, taken right after its loss fetch
    losses = [loss for r in reports for loss in r.losses]
    return LoopRun(times, losses, finished.summary.samples_per_s, ticks)


def run_bare(config: RunConfig, splits: DatasetSplits, device: torch.device) -> LoopRun:
    """The hand-written loop: what the session does per step, and nothing else.

    Its batches come from the session's own `ResidentBatches` + `DevicePreprocess` (whatever they do:
    per-batch or per-epoch augmentation), so the comparison measures the loop, not the data path,
    which part 1 measures.
    """
    torch.manual_seed(config.seed)  # same order of seeding as the session: identical weights and batches
    gen = torch.Generator(device=device).manual_seed(config.seed)
    spec = model_spec(config.model, splits.channels)
    model = build_model(config.model, splits.num_classes, spec.in_channels).to(device)
    preprocess = DevicePreprocess(
        splits, device, spec.in_channels, spec.input_size, channels_last=False, flip=True, generator=gen
    )
    batches = ResidentBatches(splits, device, config.batch_size, preprocess, gen).train_epoch()
    # the session's optimizer as the recipe builds it (fused when the config says so, as by default on
    # every device), so both loops do the same work
    optimizer = build_optimizer(
        model,
        "sgd",
        config.lr,
        config.momentum,
        config.weight_decay,
        fused=getattr(config, "fused_optimizer", device.type == "cuda"),
    )
    clock = StepClock(device)
    clock.mark()  # step 0
    ticks = [cpu_ticks()] if device.type == "cpu" else []
    losses = []
    model.train()
    for _ in range(config.max_steps):
        x, y = next(batches)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())  # no sync: the losses are fetched once, after the loop
        clock.mark()
        if device.type == "cpu":
            ticks.append(cpu_ticks())  # ~20 us a step, as the session's observer pays per report
    times = dict(enumerate(clock.seconds()))
    return LoopRun(times, torch.stack(losses).cpu().tolist(), ticks=dict(enumerate(ticks)))


@dataclass
class SessionComparison:
    model: str
    batch: int
    session: Measurement
    bare: Measurement
    ratios: list[float]
    wall_ratios: list[float]
    summary_rates: list[float]
    step_range: tuple[int, int]
    max_loss_diff: float
    quiet_counts: list[tuple[int, int]]  # per repeat: (undisturbed intervals, all intervals)

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)


def bench_session(
    device: torch.device, model: str, batch: int, steps: int, warmup: int, repeats: int, idle_wait: float
) -> SessionComparison:
    config = session_config(str(device), model, batch, steps)
    splits = make_synthetic(config.synthetic_samples, config.seed, device)  # what the session generates
    session_m = Measurement(f"samples/s {model} b{batch} TrainingSession{', recorded' if RECORD else ''}", "samples/s")
    bare_m = Measurement(f"samples/s {model} b{batch} bare loop", "samples/s")
    ratios, wall_ratios, summary_rates, diffs = [], [], [], []
    quiet_counts: list[tuple[int, int]] = []
    step_range = (0, steps)
    for rep in range(repeats):
        order = ("session", "bare") if rep % 2 == 0 else ("bare", "session")
        runs: dict[str, LoopRun] = {}
        notes = []
        for kind in order:
            gc.collect()
            wait_for_idle(idle_wait)
            load = OtherLoad()
            runs[kind] = run_session(config, device) if kind == "session" else run_bare(config, splits, device)
            notes.append(f"{kind}{busy_note(load) or ''}")
        s, b = runs["session"], runs["bare"]
        # The session's reports at or after the warm-up split the run into intervals; the bare loop is
        # timed over exactly the same intervals. The rate of a run is the median over its intervals:
        # every interval holds whole steps plus (for the session) one report, so per-step and per-report
        # costs stay in, while a burst of load from another process on this shared machine drops out.
        marks = sorted(k for k in s.times if k >= warmup)
        if len(marks) < 2:  # a run too short for its warm-up: fall back to the last two reports
            marks = sorted(s.times)[-2:]
        if len(marks) < 2:
            raise SystemExit(f"{model}: the session reported only once; give it more steps")
        intervals = list(zip(marks, marks[1:]))
        # Keep the intervals in which other processes left both runs alone (CPU device, Linux), when
        # there are enough of them: what is measured is then this machine's speed, not its neighbours'.
        shares = [max(other_share(r.ticks.get(k0), r.ticks.get(k1)) or 0.0 for r in (s, b)) for k0, k1 in intervals]
        quiet = [iv for iv, share in zip(intervals, shares) if share < QUIET_SHARE]
        if len(quiet) >= max(3, len(intervals) // 4):
            intervals = quiet
        quiet_counts.append((len(quiet), len(shares)))
        first, last = marks[0], marks[-1]
        step_range = (first, last)
        s_rate = statistics.median((k1 - k0) * batch / (s.times[k1] - s.times[k0]) for k0, k1 in intervals)
        b_rate = statistics.median((k1 - k0) * batch / (b.times[k1] - b.times[k0]) for k0, k1 in intervals)
        images = (last - first) * batch  # context: plain wall time over the whole range
        wall_ratios.append((images / (s.times[last] - s.times[first])) / (images / (b.times[last] - b.times[first])))
        session_m.values.append(s_rate)
        bare_m.values.append(b_rate)
        ratios.append(s_rate / b_rate)
        if s.summary_rate is not None:
            summary_rates.append(s.summary_rate)
        diffs.append(max(abs(p - q) for p, q in zip(s.losses, b.losses)))
        log(
            f"[session] {model} repeat {rep + 1}/{repeats} ({' / '.join(notes)}): session {s_rate:,.1f}, "
            f"bare {b_rate:,.1f} samples/s over steps {first}..{last}, ratio {s_rate / b_rate:.3f} "
            f"(whole-range wall ratio {wall_ratios[-1]:.3f}; {len(intervals)} of {len(shares)} intervals used, "
            f"{quiet_counts[-1][0]} undisturbed)"
        )
    return SessionComparison(
        model, batch, session_m, bare_m, ratios, wall_ratios, summary_rates, step_range, max(diffs), quiet_counts
    )


# ---- report ----------------------------------------------------------------------------------------


def fmt(value: float) -> str:
    if value < 10:
        return f"{value:.3f}"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def print_table(rows: list[tuple[str, float, float, float, str]]) -> None:
    header = ("measurement", "median", "min", "max", "ratio vs reference")
    cells = [header] + [(name, fmt(med), fmt(lo), fmt(hi), ratio) for name, med, lo, hi, ratio in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(5)]
    line = lambda row: "  ".join(  # noqa: E731
        (row[i].ljust(widths[i]) if i == 0 else row[i].rjust(widths[i])) for i in range(5)
    )
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(line(row))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda[:N] or mps (default: auto)")
    parser.add_argument("--repeats", type=int, default=None, help="runs per measurement, median reported (default 3)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small data, few steps, 1 repeat")
    parser.add_argument("--samples", type=int, default=None, help="synthetic images for part 1 (default 50000)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per data-path run (default 2)")
    parser.add_argument(
        "--resnet-steps",
        type=int,
        default=None,
        help="steps per resnet18 run (default 16; 5 with --quick; on a GPU 200, 60 with --quick)",
    )
    parser.add_argument(
        "--tiny-steps",
        type=int,
        default=None,
        help="steps per tiny-cnn run (default 150; 30 with --quick; on a GPU 1500, 300 with --quick)",
    )
    parser.add_argument(
        "--resnet-batch", type=int, default=None, help="resnet18 batch in the session part (default 64; 256 on a GPU)"
    )
    parser.add_argument("--tiny-batch", type=int, default=None, help="tiny-cnn batch in the session part (default 128)")
    parser.add_argument(
        "--models",
        default=",".join(SESSION_MODELS),
        help="models of the session part, comma-separated (default: resnet18,tiny-cnn)",
    )
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each run, wait up to SECONDS for other processes to leave the CPUs "
        "(useful on a shared machine; default 0: don't wait)",
    )
    parser.add_argument("--part", choices=("all", "data", "session"), default="all")
    parser.add_argument(
        "--no-record",
        action="store_true",
        help="the session part without the run store (by default the session records, as users run it)",
    )
    args = parser.parse_args(argv)
    global RECORD
    RECORD = not args.no_record

    quick = args.quick
    repeats = args.repeats if args.repeats is not None else (1 if quick else 3)
    samples = args.samples or (5000 if quick else 50_000)
    seconds = args.seconds or (0.3 if quick else 2.0)
    png_count = min(samples, 1000 if quick else 5120)
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not models or any(m not in SESSION_MODELS for m in models):
        parser.error(f"--models takes a comma-separated list of {', '.join(SESSION_MODELS)}")
    for option in ("resnet_steps", "tiny_steps", "resnet_batch", "tiny_batch"):
        if getattr(args, option) is not None and getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1")

    device = resolve_device(args.device)
    kind = device_kind(device)
    sizes = session_defaults(device, quick)
    chosen = {"resnet18": (args.resnet_batch, args.resnet_steps), "tiny-cnn": (args.tiny_batch, args.tiny_steps)}
    session_runs = []  # (model, batch, steps, warm-up steps)
    for model in models:
        batch, steps, warmup = sizes[model]
        batch = chosen[model][0] or batch
        steps = chosen[model][1] or steps
        session_runs.append((model, batch, steps, min(warmup, max(steps - 2, 1))))
    started = time.perf_counter()
    log(f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} threads, repeats {repeats}")

    rows: list[tuple[str, float, float, float, str]] = []
    result: dict = {
        "images_per_s": {},
        "session_vs_bare": {},
        "device": str(device),
        "device_kind": kind,
        "recorded": RECORD,
        "repeats": repeats,
        "targets": {},
    }
    verdicts: list[str] = []
    loads: dict[str, float | None] = {}

    if args.part in ("all", "data"):
        load = OtherLoad()
        data, best_setting, stream_runs = bench_data_path(device, samples, seconds, repeats, png_count, args.wait_idle)
        seed = data["seed"].median
        for key in ("seed", "seed_imagefolder", "stream", "resident"):
            m = data[key]
            name = m.name if key != "stream" else f"images/s stream, best ({best_setting})"
            rows.append(
                (
                    name,
                    m.median,
                    min(m.values),
                    max(m.values),
                    "1.00 (reference)" if key == "seed" else f"{m.median / seed:.2f}x seed",
                )
            )
        for m in stream_runs:
            if m is not data["stream"]:
                rows.append(
                    ("  context: " + m.name, m.median, min(m.values), max(m.values), f"{m.median / seed:.2f}x seed")
                )
        result["images_per_s"] = {
            "seed": data["seed"].median,
            "stream": data["stream"].median,
            "resident": data["resident"].median,
        }
        result["images_per_s_extra"] = {
            "seed_imagefolder_png": data["seed_imagefolder"].median,
            **{m.name.split("(", 1)[1].rstrip(")"): m.median for m in stream_runs},
        }
        # every run's value, not only the medians: a reader can see the spread
        result["images_per_s_runs"] = {
            key: list(data[key].values) for key in ("seed", "seed_imagefolder", "stream", "resident")
        }
        result["stream_settings"] = best_setting
        result["data_path_samples"] = samples
        loads["data path"] = load.share()
        ratio = data["resident"].median / seed
        target = TARGET_RESIDENT_VS_SEED[kind]
        result["resident_vs_seed"] = ratio
        result["targets"]["resident_vs_seed"] = target
        verdicts.append(
            f"resident vs seed: {ratio:.1f}x (target >= {target:.0f}x on a {kind.upper()}): "
            + ("met" if ratio >= target else "NOT met")
        )

    if args.part in ("all", "session"):
        for model, batch, steps, warmup in session_runs:
            load = OtherLoad()
            comp = bench_session(device, model, batch, steps, warmup, repeats, args.wait_idle)
            loads[f"session vs bare, {model}"] = load.share()
            first, last = comp.step_range
            rows.append(
                (
                    comp.bare.name + f" (steps {first}..{last})",
                    comp.bare.median,
                    min(comp.bare.values),
                    max(comp.bare.values),
                    "1.00 (reference)",
                )
            )
            rows.append(
                (
                    comp.session.name + f" (steps {first}..{last})",
                    comp.session.median,
                    min(comp.session.values),
                    max(comp.session.values),
                    f"{comp.ratio:.3f} (paired median; {min(comp.ratios):.3f}..{max(comp.ratios):.3f})",
                )
            )
            rows.append(
                (
                    f"  context: {model} session/bare, wall time over the whole range",
                    statistics.median(comp.wall_ratios),
                    min(comp.wall_ratios),
                    max(comp.wall_ratios),
                    "(ratios, not samples/s)",
                )
            )
            if comp.summary_rates:
                rows.append(
                    (
                        f"  context: {model} session summary samples_per_s",
                        statistics.median(comp.summary_rates),
                        min(comp.summary_rates),
                        max(comp.summary_rates),
                        f"{statistics.median(comp.summary_rates) / comp.bare.median:.3f} vs bare median",
                    )
                )
            result["session_vs_bare"][model] = comp.ratio
            result.setdefault("session_vs_bare_detail", {})[model] = {
                "session_samples_per_s": comp.session.median,
                "bare_samples_per_s": comp.bare.median,
                "session_samples_per_s_runs": list(comp.session.values),
                "bare_samples_per_s_runs": list(comp.bare.values),
                "steps": steps,
                "warmup_steps": warmup,
                "pair_ratios": comp.ratios,
                "wall_pair_ratios": comp.wall_ratios,
                "step_range": list(comp.step_range),
                "batch": batch,
                "max_abs_loss_diff": comp.max_loss_diff,
                "undisturbed_intervals": [list(q) for q in comp.quiet_counts],
            }
            target = TARGET_SESSION_VS_BARE[kind][model]
            result["targets"][f"session_vs_bare:{model}"] = target
            verdicts.append(
                f"session vs bare, {model} b{batch}: {comp.ratio:.3f} (target >= {target}): "
                + ("met" if comp.ratio >= target else "NOT met")
                + f"  [same losses as the bare loop: max |diff| {comp.max_loss_diff:.2e}]"
            )

    total = time.perf_counter() - started
    result["total_s"] = total
    print()
    print_table(rows)
    print()
    for verdict in verdicts:
        print(verdict)
    result["other_processes_cpu_share"] = loads
    for part, share in loads.items():
        if share is not None:
            print(
                f"other processes used {share:.0%} of the CPUs during {part}"
                + ("  <- a busy machine: expect noisy numbers" if share > 0.10 else "")
            )
    print(f"device {device}; total {total:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
