"""Benchmark: the bytes a comparison on another machine costs the connection, deflated as it goes, against the same
journal lines sent plain, measured side by side in one run.

    python tests/benchmarks/remote_compare.py [--repeats N] [--workloads 64:200,4:1200,1:3000] [--json PATH]

Each repeat runs, per workload, `gpu-train-monitor compare --remote HOST --device cpu --model tiny-cnn --vs seed=1
--vs seed=2` as a user would, with ssh replaced by the agent command run here, through the relay of
`remote_stream.py` (it counts what the client reads, and when). The plain figure is the job's own journal (the
lines the agent would send without deflate, framing left out, so it is a floor for plain), read over the same
span: from the comparison's first report to its last. Goal, as for a followed run: under 5 kB/s at the default
report interval (0.1 s). Medians over the repeats; the ratio is plain / deflated.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_train_monitor.remote.agent.spawn import log_folder

ROOT = Path(__file__).resolve().parents[2]
STREAM = Path(__file__).resolve().parent / "remote_stream.py"


def gpu_train_monitor() -> list[str]:
    script = Path(sys.executable).parent / "gpu-train-monitor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpu_train_monitor"]


def one(batch: int, steps: int, folder: Path, index: int) -> dict[str, float]:
    remote = folder / f"remote-{index}-{batch}.sqlite3"
    counts = folder / f"bytes-{index}-{batch}.txt"
    relay = [sys.executable, str(STREAM), "--relay", str(counts), "--local", "--", "ssh"]
    agent = shlex.join([*gpu_train_monitor(), "agent", "--runs-db", str(remote)])
    env = {**os.environ, "GPU_TRAIN_MONITOR_SSH": shlex.join(relay), "OMP_NUM_THREADS": "1"}
    argv = [*gpu_train_monitor(), "compare", "--remote", "localhost", "--agent-command", agent]
    argv += ["--device", "cpu", "--model", "tiny-cnn", "--batch-size", str(batch), "--max-steps", str(steps)]
    argv += ["--synthetic-samples", str(min(50_000, max(256, batch * steps))), "--vs", "seed=1", "--vs", "seed=2"]
    argv += ["--runs-db", str(folder / f"local-{index}-{batch}.sqlite3")]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"compare --remote failed ({done.returncode}): {done.stderr[-2000:]}")
    (journal,) = _journal_of(remote)
    lines = journal.read_text(encoding="utf-8").splitlines()
    reports = [json.loads(line)["at"] for line in lines if '"StepsReported"' in line]
    first, last = min(reports), max(reports)
    plain = sum(len(line) + 1 for line in lines if first < json.loads(line)["at"] <= last)
    samples = [tuple(map(float, row.split())) for row in counts.read_text(encoding="ascii").splitlines()]

    def read_by(moment: float) -> float:
        before = [count for at, count in samples if at <= moment]
        return before[-1] if before else 0.0

    span = last - first
    deflated = read_by(last + 0.3) - read_by(first + 0.3)  # the agent polls the journal every 0.2 s
    return {
        "wall_s": time.monotonic() - started,
        "span_s": span,
        "reports_per_s": (len(reports) - 1) / span,
        "steps_per_s": 2 * steps / span,
        "plain_bytes_per_s": plain / span,
        "deflated_bytes_per_s": deflated / span,
    }


def _journal_of(remote: Path) -> list[Path]:
    found = [path for path in log_folder(remote).glob("*.jsonl") if _store_of(path) == str(remote)]
    return found[-1:]


def _store_of(journal: Path) -> str:
    spec = journal.with_name(journal.name.removesuffix(".jsonl") + ".spec.json")
    return json.loads(spec.read_text(encoding="utf-8")).get("store", "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", default="64:200,4:1200,1:3000", help="batch:steps per run, comma-separated")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    loads = [tuple(int(part) for part in item.split(":")) for item in args.workloads.split(",")]
    results: dict[int, list[dict[str, float]]] = {batch: [] for batch, _ in loads}
    with tempfile.TemporaryDirectory(prefix="gtm-remote-compare-") as temp:
        for index in range(args.repeats):  # interleaved: every workload once per repeat
            for batch, steps in loads:
                results[batch].append(one(batch, steps, Path(temp), index))
                print(f"repeat {index + 1}, batch {batch}: {results[batch][-1]}", file=sys.stderr, flush=True)
    header = ["workload", "steps/s", "reports/s", "plain B/s", "deflated B/s (min..max)", "plain / deflated"]
    rows = []
    for batch, steps in loads:
        runs = results[batch]

        def med(key: str, of: list[dict[str, float]] = runs) -> float:
            return statistics.median(run[key] for run in of)

        low = min(run["deflated_bytes_per_s"] for run in runs)
        high = max(run["deflated_bytes_per_s"] for run in runs)
        rows.append(
            [
                f"tiny-cnn b{batch}, 2 x {steps} steps",
                f"{med('steps_per_s'):.0f}",
                f"{med('reports_per_s'):.1f}",
                f"{med('plain_bytes_per_s'):,.0f}",
                f"{med('deflated_bytes_per_s'):,.0f} ({low:,.0f}..{high:,.0f})",
                f"{med('plain_bytes_per_s') / med('deflated_bytes_per_s'):.1f}x",
            ]
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "repeats": args.repeats}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
