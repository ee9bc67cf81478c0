"""Benchmark: what watching costs a training loop, and the host syncs it adds.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/watch_overhead.py [--quick] [--repeats N] [--models tiny-cnn,resnet18]
        [--modes bare,api,script] [--threads 1] [--tiny-batch 64] [--tiny-steps N] [--resnet-batch 64]
        [--resnet-steps N] [--report-interval 0.1] [--no-count-syncs] [--json PATH]

One plain training loop (tests/benchmarks/watch_loop.py: one of our models from gpu_train_monitor.model.models' factory,
SGD with momentum, synthetic CIFAR-shaped batches made before the loop, on the CPU) is run three ways, each in a
fresh interpreter and timed the same way, by the loop itself (the steady-state step time over the steps after
its warm-up):

- bare: `python watch_loop.py`;
- api: the same loop inside `with watch(model, optimizer, ...) as w:`, `w.step(loss, samples=n)` per step;
- script: the bare loop, unchanged, under `python -m gpu_train_monitor watch --runs-db DB -- python watch_loop.py`
  (the start-up hook counts the steps and captures the losses from outside).

Modes alternate within each repeat, in an order that rotates from one repeat to the next (bare api script, api
script bare, ...), so machine drift falls on every mode alike; a mode's step time is the median over the
repeats, its ratio (bare / watched step time, 1.0 = free) the median of the per-repeat ratios, with their range.
Target: ratio >= 0.99. On a shared machine wall times swing by far more than 1% from run to run, so the watch's
own work is also measured as CPU time, which other processes' load stretches least: "watch CPU ms/step" is the
main thread's CPU time inside `w.step()` (api) or inside the optimizer's step beyond the bare loop's (script: the
step hook runs there), plus the CPU time of the process's other threads (the recorder's writer) beyond the bare
loop's; "ratio from CPU" is bare CPU / (bare CPU + that), the ratio an idle machine would show. Not in it: the
script mode's backward and forward hooks (microseconds, in the user's calls) and, about once a second, the CPU
breakdown's saved-tensor hook in one step's forward.

Host syncs are counted in the same runs (tests.support.host_syncs: the tensor methods that would make the host
wait for a GPU, wrapped and charged to the step the loop is at; the loop makes none itself, so each one counted
is the watch's). The watched run's reports are read back from its store: "syncs/step" is the syncs at steps
with no report, per step (target 0), "per report" the syncs at the steps that reported (target 0: the buffered
losses go to the host in one copy that nothing waits for). On CUDA the same promise is checked with torch's sync
debug mode (tests/gpu/test_watch_sync.py).

Threads: one intra-op torch thread by default (`--threads 1`; 0 keeps torch's default, one per core), the
setting of the test suite on this 2-core shared machine, where two threads fighting other processes for the
cores made a tiny-cnn step 3-5x slower and far noisier. OMP_NUM_THREADS is left as the environment has it. The
share of the CPUs other processes took while each run was timed is printed: well above 0 means noisy numbers.

Sizes (CPU, batch 64): tiny-cnn 40 timed steps (~0.12 s each at one thread, idle) after 5 warm-up, 5 repeats;
resnet18 3 timed steps (~3.3 s each) after 1, 3 repeats: about 5 minutes on 2 cores with the start-ups
(~4 s an interpreter). --quick: tiny-cnn 12 steps x 3 repeats and resnet18 1 step x 1, about a minute and a half.
Both take three to four times as long while other processes keep the CPUs busy (measured with 80% of them taken:
17 min and 5 min).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOOP = Path(__file__).with_name("watch_loop.py")
RESULT_PREFIX = "WATCH_LOOP "
MODES = ("bare", "api", "script")
TARGET_RATIO = 0.99
RUN_TIMEOUT_S = 600


@dataclass(frozen=True)
class Size:
    batch: int
    warmup: int
    steps: int
    repeats: int


def sizes(args: argparse.Namespace) -> dict[str, Size]:
    tiny = Size(
        args.tiny_batch, 3 if args.quick else 5, args.tiny_steps or (12 if args.quick else 40), 3 if args.quick else 5
    )
    resnet = Size(args.resnet_batch, 1, args.resnet_steps or (1 if args.quick else 3), 1 if args.quick else 3)
    if args.repeats:
        tiny, resnet = (Size(s.batch, s.warmup, s.steps, args.repeats) for s in (tiny, resnet))
    return {"tiny-cnn": tiny, "resnet18": resnet}


@dataclass
class RunResult:
    """One fresh-interpreter run of the loop: what watch_loop.py printed, and the steps its store reported."""

    mode: str
    data: dict
    report_steps: list[int] = field(default_factory=list)

    @property
    def step_s(self) -> float:
        return self.data["step_s"]

    def syncs_by_step(self) -> dict[int, int] | None:
        raw = self.data["syncs_by_step"]
        return None if raw is None else {int(step): int(n) for step, n in raw}

    def sync_counts(self) -> tuple[float, float | None, int]:
        """(syncs per step at steps without a report, syncs per report, reports) over the loop's steps."""
        syncs, total = self.syncs_by_step() or {}, self.data["total_steps"]
        reports = {s for s in self.report_steps if s <= total}
        outside = sum(n for step, n in syncs.items() if step not in reports and 1 <= step <= total)
        at_reports = sum(n for step, n in syncs.items() if step in reports)
        return outside / total, (at_reports / len(reports) if reports else None), len(reports)

    def watch_cpu_s(self, bare: list[RunResult]) -> float:
        """CPU seconds per step the watch added: the main thread inside w.step() (api) or inside the optimizer's
        step beyond the bare loop's (script: the step hook runs there), plus what other threads (the recorder's
        writer) used beyond the bare loop's. CPU time is what other processes' load stretches least."""
        base_optimizer = statistics.median(b.data["optimizer_cpu_step_s"] for b in bare)
        base_threads = statistics.median(b.data["other_threads_cpu_step_s"] for b in bare)
        if self.mode == "api":
            main = self.data["watch_cpu_step_s"]
        else:
            main = max(self.data["optimizer_cpu_step_s"] - base_optimizer, 0.0)
        return main + max(self.data["other_threads_cpu_step_s"] - base_threads, 0.0)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def script_mode_available() -> str | None:
    """None when `python -m gpu_train_monitor watch` exists here, else why the script mode is left out."""
    done = subprocess.run(
        [sys.executable, "-m", "gpu_train_monitor", "watch", "--help"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
    )
    return (
        None
        if done.returncode == 0
        else "`python -m gpu_train_monitor watch` is not available: " + done.stderr.strip()[-200:]
    )


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def report_steps(db: Path) -> list[int]:
    from gpu_train_monitor.store.run_store import RunStore

    with RunStore(db, readonly=True) as store:
        runs = store.list_runs()
        return [report.step for report in store.reports(runs[0].id)] if runs else []


def run_once(mode: str, model: str, size: Size, args: argparse.Namespace, folder: Path) -> RunResult:
    db = folder / f"{mode}-{time.monotonic_ns()}.sqlite3"
    loop = [sys.executable, str(LOOP), "--model", model, "--batch", str(size.batch), "--warmup", str(size.warmup)]
    loop += ["--steps", str(size.steps), "--threads", str(args.threads)]
    loop += [] if args.no_count_syncs else ["--count-syncs"]
    if mode == "api":
        command = [*loop, "--api", "--runs-db", str(db), "--report-interval", str(args.report_interval)]
    elif mode == "script":
        command = [sys.executable, "-m", "gpu_train_monitor", "watch", "--runs-db", str(db), "--", *loop]
    else:
        command = loop
    done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{mode} run failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    data = json.loads(lines[-1][len(RESULT_PREFIX) :])
    return RunResult(mode, data, report_steps(db) if mode != "bare" and db.exists() else [])


def rotated(modes: list[str], repeat: int) -> list[str]:
    shift = repeat % len(modes)
    return modes[shift:] + modes[:shift]


def bench_model(model: str, size: Size, modes: list[str], args: argparse.Namespace) -> dict[str, list[RunResult]]:
    results: dict[str, list[RunResult]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="watch-overhead-") as tmp:
        for repeat in range(size.repeats):
            for mode in rotated(modes, repeat):
                result = run_once(mode, model, size, args, Path(tmp))
                results[mode].append(result)
                log(f"{model} {mode} repeat {repeat + 1}/{size.repeats}: {result.step_s * 1000:.1f} ms/step")
    return results


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(models: dict[str, dict[str, list[RunResult]]], sizes_: dict[str, Size]) -> tuple[list[list[str]], dict]:
    header = ["model", "mode", "step ms", "ratio to bare", "watch CPU ms/step", "ratio from CPU", "syncs/step"]
    header += ["per report", "other CPU"]
    rows, summary = [header], {}
    for model, results in models.items():
        bare = results["bare"]
        bare_cpu = statistics.median(b.data["main_cpu_step_s"] for b in bare)
        for mode, runs in results.items():
            ratios = [b.step_s / r.step_s for b, r in zip(bare, runs)]
            ratio = statistics.median(ratios)
            watch_cpu = None if mode == "bare" else statistics.median(r.watch_cpu_s(bare) for r in runs)
            cpu_ratio = None if watch_cpu is None else bare_cpu / (bare_cpu + watch_cpu)
            counts = [r.sync_counts() for r in runs if r.syncs_by_step() is not None]
            outside = max((c[0] for c in counts), default=None)
            per_report = [c[1] for c in counts if c[1] is not None]
            others = [r.data["other_cpu_share"] for r in runs if r.data["other_cpu_share"] is not None]
            ratio_text = "1 (reference)" if mode == "bare" else f"{ratio:.3f} ({min(ratios):.3f}..{max(ratios):.3f})"
            rows.append(
                [
                    f"{model} b{sizes_[model].batch}",
                    mode,
                    f"{statistics.median(r.step_s for r in runs) * 1000:.1f}",
                    ratio_text,
                    fmt(None if watch_cpu is None else watch_cpu * 1000, ".2f"),
                    fmt(cpu_ratio, ".4f"),
                    fmt(outside, ".3g"),
                    fmt(max(per_report) if per_report else None, ".3g") + (f" x{counts[0][2]}" if per_report else ""),
                    fmt(statistics.median(others) if others else None, ".0%"),
                ]
            )
            summary[f"{model}:{mode}"] = {
                "step_ms_runs": [r.step_s * 1000 for r in runs],
                "ratio": ratio,
                "ratios": ratios,
                "watch_cpu_ms_per_step": None if watch_cpu is None else watch_cpu * 1000,
                "ratio_from_cpu": cpu_ratio,
                "bare_main_cpu_ms_per_step": bare_cpu * 1000,
                "syncs_outside_reports_per_step": outside,
                "syncs_per_report": max(per_report) if per_report else None,
                "reports_per_run": [c[2] for c in counts],
                "sync_steps": [dict(Counter(r.syncs_by_step() or {})) for r in runs],
                "other_cpu_share": others,
                "runs": [r.data for r in runs],
            }
    return rows, summary


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))


def main() -> int:
    parser = argparse.ArgumentParser(description="What watching costs a training loop: bare vs watch API vs watch --")
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats (~1.5 min)")
    parser.add_argument("--repeats", type=int, default=0, help="repeats of each mode (default: 5 tiny-cnn, 3 resnet18)")
    parser.add_argument("--models", default="tiny-cnn,resnet18")
    parser.add_argument("--modes", default=",".join(MODES), help="bare is always run: the reference")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch intra-op threads in the loop (0: torch's default)"
    )
    parser.add_argument("--tiny-batch", type=int, default=64)
    parser.add_argument("--tiny-steps", type=int, default=0, help="timed steps (default 40, --quick 12)")
    parser.add_argument("--resnet-batch", type=int, default=64)
    parser.add_argument("--resnet-steps", type=int, default=0, help="timed steps (default 3, --quick 1)")
    parser.add_argument("--report-interval", type=float, default=0.1, help="the API watch's report interval (s)")
    parser.add_argument("--no-count-syncs", action="store_true", help="time the loop without the sync counter")
    parser.add_argument("--json", default=None, help="write the numbers here too")
    args = parser.parse_args()

    started = time.perf_counter()
    modes = ["bare"] + [m for m in args.modes.split(",") if m in MODES and m != "bare"]
    notes = []
    if "script" in modes and (why := script_mode_available()) is not None:
        modes.remove("script")
        notes.append(why)
    all_sizes = sizes(args)
    chosen = [m for m in args.models.split(",") if m]
    unknown = [m for m in chosen if m not in all_sizes]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(all_sizes)}")
    import torch

    threads = args.threads or torch.get_num_threads()
    log(f"torch {torch.__version__}, {threads} intra-op thread(s), {os.cpu_count()} CPUs, modes {', '.join(modes)}")
    results = {model: bench_model(model, all_sizes[model], modes, args) for model in chosen}
    rows, summary = table(results, all_sizes)
    total = time.perf_counter() - started
    print()
    print(
        f"watch overhead on the CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} CPUs), torch "
        f"{torch.__version__}, {threads} thread(s), report interval {args.report_interval} s; "
        + "; ".join(
            f"{m}: {s.steps} timed steps after {s.warmup}, {s.repeats} repeats"
            for m, s in all_sizes.items()
            if m in chosen
        )
    )
    print_table(rows)
    print()
    for key, values in summary.items():
        model, mode = key.split(":")
        if mode != "bare":
            met = [
                name
                for name, value in (("wall", values["ratio"]), ("from CPU", values["ratio_from_cpu"]))
                if value >= TARGET_RATIO
            ]
            syncs = values["syncs_outside_reports_per_step"]
            print(
                f"{model} {mode}: ratio {values['ratio']:.3f} wall, {values['ratio_from_cpu']:.4f} from CPU time "
                f"(target >= {TARGET_RATIO}; met: {', '.join(met) or 'neither'}); "
                f"syncs per step outside reports: {fmt(syncs, '.3g')} (target 0), per report "
                f"{fmt(values['syncs_per_report'], '.3g')} (target 0)"
            )
    shares = [share for values in summary.values() for share in values["other_cpu_share"]]
    if shares and statistics.median(shares) > 0.10:
        print(
            f"other processes used {statistics.median(shares):.0%} of the CPUs while the loops were timed: the wall "
            "ratios are that noisy; the ratio from CPU time (the watch's own CPU work) is the steadier estimate"
        )
    for note in notes:
        print(f"left out: {note}")
    print(f"total {total:.0f} s")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"threads": threads, "modes": modes, "total_s": total, "results": summary}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
