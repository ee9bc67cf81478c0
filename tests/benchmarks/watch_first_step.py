"""Benchmark: what a watched script's first steps cost, with its first step's prediction traced beside the training
(gpu_train_monitor.watch.step_prediction) against traced in line and not traced at all.

Run it as a script (not part of the pytest run):

    python tests/benchmarks/watch_first_step.py [--model resnet18] [--batch 16] [--steps 5] [--repeats 3]
        [--threads 1] [--json PATH]

A short run: the first `--steps` steps of tests/benchmarks/watch_loop.py (one of our models, SGD, synthetic
batches made before the loop), each mode in a fresh interpreter, timed by the loop itself from its first step's
start to the end of its last (interpreter and torch start-up left out, the same in every mode):

- bare: `python watch_loop.py`;
- beside: unchanged under `gpu-train-monitor watch --`, the first step traced on a thread of the watch's;
- in line: the same with a global forward hook of the script's own, which the trace must not reach, so it is
  traced on the training thread (as every watched script was before);
- off: GPU_TRAIN_MONITOR_PREDICT=0, no trace (what the rest of the watch costs the first steps).

Modes alternate within each repeat in a rotating order; each mode's time is the median over the repeats, "extra"
its median minus bare's, "ratio" bare / mode (1.0 = free). The trace's own time is read from the store
(StepPredicted's elapsed_s). On a 2-core machine the trace beside and the training share the cores: a GPU run
(its steps mostly waiting on the device) gains more than this CPU table shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from watch_overhead import ROOT, child_env, rotated

LOOP = Path(__file__).with_name("watch_loop.py")
RESULT_PREFIX = "WATCH_LOOP "
MODES = ("bare", "beside", "in line", "off")
RUN_TIMEOUT_S = 600


def run_once(mode: str, args: argparse.Namespace, folder: Path) -> tuple[float, float | None]:
    """(seconds of the first steps, the trace's own seconds from the store or None)."""
    db = folder / f"{mode.replace(' ', '-')}-{time.monotonic_ns()}.sqlite3"
    loop = [sys.executable, str(LOOP), "--model", args.model, "--batch", str(args.batch), "--warmup", str(args.steps)]
    loop += ["--steps", "1", "--threads", str(args.threads)] + (["--global-hook"] if mode == "in line" else [])
    env = child_env()
    if mode == "off":
        env["GPU_TRAIN_MONITOR_PREDICT"] = "0"
    command = (
        loop
        if mode == "bare"
        else [sys.executable, "-m", "gpu_train_monitor", "watch", "--runs-db", str(db), "--", *loop]
    )
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{mode} run failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    return json.loads(lines[-1][len(RESULT_PREFIX) :])["warmup_s"], trace_s(db) if db.exists() else None


def trace_s(db: Path) -> float | None:
    from gpu_train_monitor.store.run_store import RunStore

    with RunStore(db, readonly=True) as store:
        runs = store.list_runs()
        events = store.events(runs[0].id) if runs else []
    return next((float(e.data["elapsed_s"]) for e in events if e.kind == "StepPredicted"), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5, help="the short run's steps")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    traces: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for mode in rotated(list(MODES), repeat):
                seconds, traced = run_once(mode, args, Path(folder))
                times[mode].append(seconds)
                if traced is not None:
                    traces[mode].append(traced)
                print(f"  {mode:8} repeat {repeat + 1}: {seconds:.3f} s", file=sys.stderr, flush=True)
    bare = statistics.median(times["bare"])
    rows = []
    for mode in MODES:
        median = statistics.median(times[mode])
        trace = statistics.median(traces[mode]) if traces[mode] else None
        rows.append({"mode": mode, "first_steps_s": median, "extra_s": median - bare, "ratio": bare / median,
                     "trace_s": trace, "runs_s": times[mode]})  # fmt: skip
    print(f"{args.model} batch {args.batch}, first {args.steps} steps, {args.threads} thread(s), "
          f"median of {args.repeats}, {os.cpu_count()} cores")  # fmt: skip
    print(f"{'mode':10}{'steps (s)':>11}{'extra (s)':>11}{'ratio':>8}{'trace (s)':>11}")
    for row in rows:
        trace = f"{row['trace_s']:.3f}" if row["trace_s"] is not None else "-"
        print(f"{row['mode']:10}{row['first_steps_s']:>11.3f}{row['extra_s']:>11.3f}{row['ratio']:>8.3f}{trace:>11}")
    if args.json:
        args.json.write_text(json.dumps({"model": args.model, "batch": args.batch, "steps": args.steps, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
