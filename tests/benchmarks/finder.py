"""Benchmark: the batch-size finder before and after predictions, side by side, and one prediction's time.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/finder.py [--model tiny-cnn] [--capacity 3GB] [--skip-before] [--repeats 5]
        [--json PATH]

Finder: `gpu-train-monitor find-batch-size --device cpu --model tiny-cnn --capacity 3GB`, each a fresh
process timed end to end (torch's import included), once with `--no-predict` (before: real trials only,
doubling then bisection, a fresh process per trial) and once as it is now (after: the predicted batch
confirmed by at most 3 real trials in one trial process kept warm): trials, seconds, answer. Target for
after: at most 3 trials and under 60 s. Then the answer trains: `gpu-train-monitor run` at that batch for 2
steps, its exit code and its peak resident memory (the finder's CPU capacity is a process's peak resident
memory) against the capacity. Before takes minutes: `--skip-before` leaves it out.

Prediction: one prediction (gpu_train_monitor.engine.prediction.predict, fake tensors) of resnet18 at batch 256 on the
CPU after a warm-up prediction in the same process: best and median of `--repeats`. Target: under 2 s.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TARGET_TRIALS, TARGET_FINDER_S, TARGET_PREDICT_S = 3, 60.0, 2.0


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpu_train_monitor", *args]


def find(model: str, capacity: str, predict: bool, folder: Path) -> dict[str, Any]:
    target = folder / f"finder-{'after' if predict else 'before'}.json"
    command = cli("find-batch-size", "--device", "cpu", "--model", model, "--capacity", capacity, "--json", str(target))
    if not predict:
        command.append("--no-predict")
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"find-batch-size failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    result = json.loads(target.read_text(encoding="utf-8"))
    return {
        "seconds": seconds,
        "trials": len(result["trials"]),
        "answer": result["batch_size"],
        "predicted_batch": result.get("predicted_batch"),
        "limit_bytes": result["limit_bytes"],
        "trial_list": result["trials"],
    }


def trains(model: str, batch: int) -> dict[str, Any]:
    """2 training steps at `batch`: the exit code and the process's peak resident memory (wait4's rusage)."""
    command = cli(
        "run", "--device", "cpu", "--model", model, "--batch-size", str(batch), "--max-steps", "2",
        "--synthetic-samples", str(batch), "--no-record",
    )  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read() if proc.stderr is not None else ""
    return {
        "exit": proc.returncode,
        "peak_rss_bytes": usage.ru_maxrss * 1024,
        "seconds": time.perf_counter() - started,
        "error": stderr.strip()[-300:] if proc.returncode else "",
    }


def prediction_time(repeats: int) -> dict[str, Any]:
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.engine.prediction import predict

    config = RunConfig(device="cpu", model="resnet18", batch_size=256)
    started = time.perf_counter()
    predict(config)  # warm-up: the first prediction in a process imports torch's tracing machinery
    warm_up = time.perf_counter() - started
    times, peak = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        peak = predict(config).peak_bytes
        times.append(time.perf_counter() - started)
    return {"warm_up_s": warm_up, "best_s": min(times), "median_s": statistics.median(times), "peak_bytes": peak}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny-cnn")
    parser.add_argument("--capacity", default="3GB")
    parser.add_argument("--skip-before", action="store_true", help="leave out the search before predictions")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="finder-bench-"))
    results: dict[str, Any] = {"model": args.model, "capacity": args.capacity}
    rows = []
    for name, predict in (("before", False), ("after", True)):
        if name == "before" and args.skip_before:
            continue
        found = find(args.model, args.capacity, predict, folder)
        results[name] = found
        rows.append(
            (f"finder {name}: {args.model}, {args.capacity}, CPU", f"{found['trials']} trials",
             f"{found['seconds']:.1f} s", f"batch {found['answer']}")
        )  # fmt: skip
    after = results["after"]
    ran = trains(args.model, after["answer"])
    results["after_trains"] = ran
    rows.append(
        (f"answer trains: run at batch {after['answer']}, 2 steps", f"exit {ran['exit']}",
         f"{ran['seconds']:.1f} s", f"peak RSS {ran['peak_rss_bytes'] / 1e9:.2f} GB of {args.capacity}")
    )  # fmt: skip
    timed = prediction_time(args.repeats)
    results["prediction"] = timed
    rows.append(
        ("prediction: resnet18 b256, CPU, after warm-up", f"best {timed['best_s']:.2f} s",
         f"median {timed['median_s']:.2f} s", f"warm-up {timed['warm_up_s']:.1f} s")
    )  # fmt: skip
    met = {
        "finder_trials": after["trials"] <= TARGET_TRIALS,
        "finder_seconds": after["seconds"] < TARGET_FINDER_S,
        "answer_trains": ran["exit"] == 0,
        "prediction_seconds": timed["median_s"] < TARGET_PREDICT_S,
    }
    results["targets_met"] = met
    width = max(len(r[0]) for r in rows)
    for row in rows:
        print(f"{row[0]:<{width}}  {row[1]:>14}  {row[2]:>14}  {row[3]}")
    said = ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in met.items())
    print(f"targets (<= {TARGET_TRIALS} trials, < {TARGET_FINDER_S:.0f} s, trains, prediction < 2 s): {said}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
