"""A plain training loop, as a user writes one: the script tests/benchmarks/watch_overhead.py times in a fresh
interpreter per run, bare (`python watch_loop.py`), with the watch API (`--api`: `with watch(...) as w:` and
`w.step(loss, samples=n)` after each optimizer step) and unchanged under `gpu-train-monitor watch -- python
watch_loop.py`. Every mode is measured the same way, by this script: the steady-state step time over the steps
after the warm-up, from the host's clock (on the CPU every op has finished when it returns).

One of our models (gpu_train_monitor.model.models, built by its factory), SGD with momentum, synthetic CIFAR-shaped
batches made before the loop (no data loading in the timing), no host read of its own: the loss stays a tensor, so every
host sync counted (tests.support.host_syncs, `--count-syncs`) is the watch's. Prints one line,
`WATCH_LOOP {json}`, after the last step.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

import torch
import torch.nn.functional as F

from gpu_train_monitor.model.models import build_model

BATCHES = 4  # distinct synthetic batches, cycled
RESULT_PREFIX = "WATCH_LOOP "


def other_cpu_seconds() -> float | None:
    """CPU seconds the whole machine spent busy minus this process's own (Linux; None elsewhere): what other
    processes took while the loop ran, so a reader knows how far to trust the timing."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    busy = (sum(fields[:3]) + sum(fields[5:8])) / os.sysconf("SC_CLK_TCK")
    return busy - sum(os.times()[:2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny-cnn")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=5, help="steps before the clock starts")
    parser.add_argument("--steps", type=int, default=30, help="steps timed")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--api", action="store_true", help="wrap the loop in `with watch(...)`, w.step() per step")
    parser.add_argument("--runs-db", default=None, help="the store the API records in")
    parser.add_argument("--report-interval", type=float, default=0.1, help="the API watch's report interval (s)")
    parser.add_argument("--count-syncs", action="store_true", help="count host-sync calls per step")
    parser.add_argument(
        "--global-hook", action="store_true", help="register a global forward hook of the script's own (a no-op)"
    )
    args = parser.parse_args()
    if args.warmup < 1 or args.steps < 1:
        parser.error("--warmup and --steps must be at least 1")
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.global_hook:  # as a profiler or a logging library would: under `watch --` the trace then runs in line
        torch.nn.modules.module.register_module_forward_hook(lambda *_: None)
    torch.manual_seed(0)
    model = build_model(args.model, 10, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(BATCHES, args.batch, 3, 32, 32)
    labels = torch.randint(0, 10, (BATCHES, args.batch))

    syncs = None
    with contextlib.ExitStack() as stack:
        if args.count_syncs:
            from tests.support.host_syncs import counting_host_syncs

            syncs = stack.enter_context(counting_host_syncs())
        watched = None
        if args.api:
            from gpu_train_monitor.watch import watch

            watched = stack.enter_context(
                watch(model, optimizer, name="watch-overhead", runs_db=args.runs_db,
                      report_interval_s=args.report_interval)
            )  # fmt: skip
        marks: list[float] = []
        # CPU times (not wall: other processes' load does not stretch them), over the timed steps
        watch_cpu_s = 0.0  # the main thread inside w.step(): the API's own work
        optimizer_cpu_s = 0.0  # the main thread inside optimizer.step(): under `watch --` its step hook too
        in_step_s = 0.0  # wall time inside w.step()
        other_at_start = process_cpu_at_start = main_cpu_at_start = None
        loop_start = time.perf_counter()
        for step in range(1, args.warmup + args.steps + 1):
            if syncs is not None:
                syncs.step = step
            timed = step > args.warmup
            loss = F.cross_entropy(model(images[step % BATCHES]), labels[step % BATCHES])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            before_cpu = time.thread_time()
            optimizer.step()
            if timed:
                optimizer_cpu_s += time.thread_time() - before_cpu
            if watched is not None:
                before, before_cpu = time.perf_counter(), time.thread_time()
                watched.step(loss, samples=args.batch)
                if timed:
                    in_step_s += time.perf_counter() - before
                    watch_cpu_s += time.thread_time() - before_cpu
            marks.append(time.perf_counter())
            if step == args.warmup:
                other_at_start = other_cpu_seconds()
                process_cpu_at_start, main_cpu_at_start = time.process_time(), time.thread_time()
        other_at_end = other_cpu_seconds()
        process_cpu_s, main_cpu_s = time.process_time() - process_cpu_at_start, time.thread_time() - main_cpu_at_start
        if syncs is not None:
            syncs.step = args.warmup + args.steps + 1  # what finish() does is not a step's
    wall, steps = marks[-1] - marks[args.warmup - 1], args.steps
    result = {
        "model": args.model,
        "batch": args.batch,
        "threads": torch.get_num_threads(),
        "steps": steps,
        "step_s": wall / steps,
        "warmup_s": marks[args.warmup - 1] - loop_start,  # the first steps, watch's first-step work included
        "step_times_s": [b - a for a, b in zip(marks[args.warmup - 1 :], marks[args.warmup :])],
        "main_cpu_step_s": main_cpu_s / steps,
        "other_threads_cpu_step_s": (process_cpu_s - main_cpu_s) / steps,  # the recorder's writer, torch's pool
        "optimizer_cpu_step_s": optimizer_cpu_s / steps,
        "watch_cpu_step_s": watch_cpu_s / steps if watched is not None else None,
        "in_watch_step_s": in_step_s / steps if watched is not None else None,
        "other_cpu_share": (
            (other_at_end - other_at_start) / ((os.cpu_count() or 1) * wall)
            if other_at_start is not None and other_at_end is not None
            else None
        ),
        "syncs_by_step": sorted(syncs.per_step().items()) if syncs is not None else None,
        "sync_kinds": syncs.names() if syncs is not None else None,
        "total_steps": args.warmup + args.steps,
    }
    print(RESULT_PREFIX + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
