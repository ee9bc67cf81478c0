"""Benchmark: how late and how heavy a remote run's stream is, over a real OpenSSH server on localhost.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/remote_stream.py [--quick] [--repeats N] [--transports ssh,local]
        [--workloads 64:200,4:1200] [--report-interval 0.1] [--poll 0.02] [--json PATH]

Each repeat runs, for each workload and transport, `gpu-train-monitor run --remote HOST --device cpu --model
tiny-cnn ... --runs-db LOCAL` as a user would: the agent (started over the connection) starts the run detached on the
"remote" side, recording into the remote store, and the command mirrors it into the local store until it ends.
The transports:

- ssh: a real `sshd -D` on 127.0.0.1 with throwaway keys (tests/support/sshd.py), reached through
  GPU_TRAIN_MONITOR_SSH="ssh -F <its config>": encryption, the login and the remote shell included;
- local: the same command line with ssh replaced by a local process (the agent command run directly): what
  the protocol, the agent's polling and the mirror cost without the network stack.

Either way the connection's bytes pass through a small relay (this script, `--relay`) that counts what the
client reads from the agent and when, so "bytes/s" is the link's own traffic, not an estimate.

Measured, per run (medians over its reports, then the median of the repeats):
- latency: the benchmark polls both stores every `--poll` seconds; a report's (and a step's) latency is the
  time from its row first being seen in the remote store to its row first being seen in the local mirror
  (both polled in the same pass, so the resolution is one poll period). Goal: median and p95 < 1 s.
  Also from the report's own time (`reports.at`, when the run measured it) to the local row: what a window
  following the local store waits, the run's own write-behind included.
- bytes/s: what the link read between the run's first and last report, per second of that span (the hello,
  the start request and the final status are outside it). Goal < 5 kB/s at the default report interval
  (0.1 s). What the bytes were made of is read back from the relay's copy: each table's rows (and bytes per
  row), the run row's changes, the lines' framing. A run reports at most 1 / interval times a second but sends
  every step's loss, so the rate grows with steps/s: about reports/s x bytes/report + steps/s x bytes/step.

Workloads (tiny-cnn on the CPU, one torch thread, synthetic data of one epoch per run, so that epoch-end events
and checkpoints are as rare as in real training): batch 64 for 200 steps (about 5 steps/s on
a 2-core machine: every step reports) and batch 4 for 1,200 steps (about 45 steps/s: reports at about their
cap, many steps between them, as on a GPU), x 2 transports x 3 repeats: about 8 minutes with the start-ups;
--quick: 60 and 300 steps, 1 repeat.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # tests.support, when run as a script

from tests.support.sshd import gpu_train_monitor_script, skip_reason, ssh_server  # noqa: E402

TARGET_LATENCY_S = 1.0
TARGET_BYTES_PER_S = 5000.0
TRANSPORTS = ("ssh", "local")
RUN_TIMEOUT_S = 600
# gpu_train_monitor.distributed.env: the run's uid, chosen by whoever starts it
ENV_RUN_UID = "GPU_TRAIN_MONITOR_RUN_UID"
ENV_SSH = "GPU_TRAIN_MONITOR_SSH"  # gpu_train_monitor.remote.client.target: the ssh program and fixed options


# ---- the relay: counts the bytes the client reads -------------------------------------------------
def relay(count_path: Path, command: list[str], local: bool) -> int:
    """Run `command` (ssh and its arguments) with our stdin, and copy its stdout to ours, appending
    "<unix time> <bytes so far>" to `count_path` after each read and the bytes themselves to `count_path`
    with the suffix .stream (what they were made of). `local`: `command` is an ssh command line; drop ssh and
    its options and run the remote command here, as the remote shell would."""
    if local:
        command = remote_words(command)
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=None, stderr=None)
    assert child.stdout is not None
    total = 0
    out = sys.stdout.buffer.raw if hasattr(sys.stdout.buffer, "raw") else sys.stdout.buffer
    with open(count_path, "a", encoding="ascii") as counts, open(stream_path(count_path), "ab") as copy:
        while True:
            data = os.read(child.stdout.fileno(), 1 << 16)
            if not data:
                break
            total += len(data)
            view = memoryview(data)
            while view:
                written = out.write(view)
                view = view[written:]
            counts.write(f"{time.time():.6f} {total}\n")
            counts.flush()
            copy.write(data)
            copy.flush()
    return child.wait()


def stream_path(count_path: Path) -> Path:
    return count_path.with_suffix(".stream")


def remote_words(ssh_argv: list[str]) -> list[str]:
    """The remote command of an ssh command line (`ssh [-F cfg] -T -o X -p N dest word...`), split as the
    remote shell splits the words ssh joins with spaces."""
    with_value = {"-F", "-o", "-p", "-i", "-l", "-J", "-E"}
    index = 1
    while index < len(ssh_argv) and ssh_argv[index].startswith("-"):
        index += 2 if ssh_argv[index] in with_value else 1
    return shlex.split(" ".join(ssh_argv[index + 1 :]))  # after the destination


# ---- one run --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    """tiny-cnn at this batch size for this many steps: the batch sets how many steps a second the run makes."""

    batch: int
    steps: int


def workloads(text: str) -> list[Workload]:
    """ "64:200,4:1200" -> [Workload(64, 200), Workload(4, 1200)]."""
    found = []
    for part in text.split(","):
        batch, _, steps = part.strip().partition(":")
        found.append(Workload(int(batch), int(steps)))
    return found


@dataclass
class RunResult:
    case: str  # transport and batch size
    exit_code: int
    wall_s: float
    reports: int
    steps: int
    report_latency_s: list[float] = field(default_factory=list)  # remote row seen -> local row seen
    step_latency_s: list[float] = field(default_factory=list)
    report_at_latency_s: list[float] = field(default_factory=list)  # reports.at -> local row seen
    bytes_total: int = 0
    bytes_by_part: dict[str, int] = field(default_factory=dict)  # the followed stream's keys, framing, replies
    rows_by_part: dict[str, int] = field(default_factory=dict)
    bytes_in_span: int = 0
    span_s: float = 0.0
    missing_locally: int = 0
    stderr_tail: str = ""

    @property
    def bytes_per_s(self) -> float | None:
        return self.bytes_in_span / self.span_s if self.span_s > 0 else None


class Poller:
    """Polls a store for the steps and reports of run `uid`, noting when each row was first seen."""

    def __init__(self, path: Path, uid: str) -> None:
        self.path, self.uid = path, uid
        self.reports: dict[int, float] = {}
        self.report_at: dict[int, float] = {}
        self.steps: dict[int, float] = {}
        self._db: sqlite3.Connection | None = None
        self._run_id: int | None = None

    def poll(self, now: float) -> None:
        if self._db is None:
            if not self.path.exists():
                return
            try:
                self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=1.0)
            except sqlite3.Error:
                return
        try:
            if self._run_id is None:
                row = self._db.execute("SELECT id FROM runs WHERE uid = ?", (self.uid,)).fetchone()
                if row is None:
                    return
                self._run_id = row[0]
            last_report = max(self.reports, default=-1)
            for step, at in self._db.execute(
                "SELECT step, at FROM reports WHERE run_id = ? AND step > ?", (self._run_id, last_report)
            ):
                self.reports.setdefault(step, now)
                self.report_at.setdefault(step, at)
            last_step = max(self.steps, default=-1)
            for (step,) in self._db.execute(
                "SELECT step FROM steps WHERE run_id = ? AND step > ?", (self._run_id, last_step)
            ):
                self.steps.setdefault(step, now)
        except sqlite3.Error:  # the file is being created or migrated: the next pass reads it
            return

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def one_run(transport: str, work: Workload, folder: Path, ssh: dict, args: argparse.Namespace, index: int) -> RunResult:
    """`run --remote` one tiny-cnn run over `transport`, timing its rows into the local mirror."""
    name = f"{index}-{transport}-b{work.batch}"
    uid = f"bench{index:02d}{transport}" + os.urandom(6).hex()
    remote_store = folder / f"remote-{name}.sqlite3"
    local_store = folder / f"local-{name}.sqlite3"
    counts = folder / f"bytes-{name}.txt"
    relay_prefix = [sys.executable, str(Path(__file__).resolve()), "--relay", str(counts)]
    if transport == "ssh":
        ssh_words = relay_prefix + ["--", *shlex.split(ssh["program"])]
        host = ssh["alias"]
    else:
        ssh_words = relay_prefix + ["--local", "--", "ssh"]
        host = "localhost"
    agent = shlex.join([str(gpu_train_monitor_script()), "agent", "--runs-db", str(remote_store)])
    env = {
        **os.environ,
        ENV_SSH: shlex.join(ssh_words),
        ENV_RUN_UID: uid,
        "OMP_NUM_THREADS": "1",
        "GPU_TRAIN_MONITOR_CHECKPOINTS": str(folder / "checkpoints"),
        "PYTHONUNBUFFERED": "1",
    }
    argv = [
        str(gpu_train_monitor_script()),
        "run",
        "--remote",
        host,
        "--agent-command",
        agent,
        "--device",
        "cpu",
        "--model",
        "tiny-cnn",
        "--batch-size",
        str(work.batch),
        "--synthetic-samples",
        str(min(50_000, max(256, work.batch * work.steps))),  # one epoch: events as rare as in real training
        "--max-steps",
        str(work.steps),
        "--report-interval",
        str(args.report_interval),
        "--runs-db",
        str(local_store),
    ]
    remote, local = Poller(remote_store, uid), Poller(local_store, uid)
    started = time.monotonic()
    process = subprocess.Popen(argv, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(process.stderr or []), daemon=True)
    reader.start()
    try:
        while process.poll() is None:
            if time.monotonic() - started > RUN_TIMEOUT_S:
                process.kill()
                break
            now = time.time()
            remote.poll(now)
            local.poll(now)
            time.sleep(args.poll)
        now = time.time()
        remote.poll(now)
        local.poll(now)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        reader.join(5)
        remote.close()
        local.close()
    result = RunResult(
        f"{transport}, b{work.batch}",
        process.returncode,
        time.monotonic() - started,
        reports=len(remote.reports),
        steps=len(remote.steps),
        stderr_tail=" | ".join(line.strip() for line in stderr[-3:] if line.strip()),
    )
    result.missing_locally = len(set(remote.steps) - set(local.steps)) + len(set(remote.reports) - set(local.reports))
    for step, seen in remote.reports.items():
        if step in local.reports:
            result.report_latency_s.append(max(local.reports[step] - seen, 0.0))
            result.report_at_latency_s.append(max(local.reports[step] - remote.report_at[step], 0.0))
    for step, seen in remote.steps.items():
        if step in local.steps:
            result.step_latency_s.append(max(local.steps[step] - seen, 0.0))
    read_bytes(result, counts, remote.report_at)
    read_parts(result, stream_path(counts))
    return result


def read_parts(result: RunResult, path: Path) -> None:
    """What the bytes the link read were made of: each followed chunk's tables and run-row changes (their JSON),
    the lines' framing, and everything else (hello, replies)."""
    parts: dict[str, int] = {}
    rows: dict[str, int] = {}
    try:
        lines = path.read_bytes().splitlines(keepends=True)
    except OSError:
        return
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            parts["unreadable"] = parts.get("unreadable", 0) + len(line)
            continue
        data = message.get("data") if isinstance(message, dict) and "stream" in message else None
        if not isinstance(data, dict):
            parts["hello and replies"] = parts.get("hello and replies", 0) + len(line)
            continue
        inner = 0
        for key, value in data.items():
            size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
            parts[key] = parts.get(key, 0) + size
            rows[key] = rows.get(key, 0) + row_count(value)
            inner += size
        parts["framing"] = parts.get("framing", 0) + len(line) - inner
    result.bytes_by_part, result.rows_by_part = parts, rows


def row_count(value: object) -> int:
    """The rows a chunk's value holds: a list's length, the steps of `"rows": "columns"` steps (the counts of
    their epochs), 1 for anything else (the run row's changes)."""
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict) and isinstance(value.get("epochs"), list):
        return sum(count for _, count in value["epochs"])
    return 1


def read_bytes(result: RunResult, counts: Path, report_at: dict[int, float]) -> None:
    """Total bytes, and the bytes between the first and the last report's time (the live stream)."""
    try:
        samples = [tuple(map(float, line.split())) for line in counts.read_text(encoding="ascii").splitlines()]
    except OSError:
        return
    if not samples:
        return
    result.bytes_total = int(samples[-1][1])
    if len(report_at) < 2:
        return
    first, last = min(report_at.values()), max(report_at.values())

    def bytes_at(moment: float) -> float:
        before = [count for at, count in samples if at <= moment]
        return before[-1] if before else 0.0

    result.span_s = last - first
    result.bytes_in_span = int(bytes_at(last + 0.25) - bytes_at(first + 0.25))  # the rows reach us ~0.2 s later


# ---- the table ------------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def median_of(runs: list[RunResult], value) -> float | None:  # noqa: ANN001 - a small getter
    values = [v for v in (value(r) for r in runs) if v is not None]
    return statistics.median(values) if values else None


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def summarize(results: dict[str, list[RunResult]], args: argparse.Namespace) -> tuple[list[list[str]], dict]:
    rows = [["case", "measurement", "median", "runs: min..max (n)", "target", "met"]]
    summary: dict = {}
    for case, runs in results.items():
        good = [r for r in runs if r.exit_code == 0]
        entry: dict = {
            "runs": [asdict(r) | {"bytes_per_s": r.bytes_per_s} for r in runs],
            "failed": len(runs) - len(good),
        }
        for name, getter, unit, target in (
            (
                "report latency, median (remote row -> local row)",
                lambda r: percentile(r.report_latency_s, 0.5),
                "s",
                TARGET_LATENCY_S,
            ),
            ("report latency, p95", lambda r: percentile(r.report_latency_s, 0.95), "s", TARGET_LATENCY_S),
            ("step latency, median (loss rows)", lambda r: percentile(r.step_latency_s, 0.5), "s", None),
            ("step latency, p95", lambda r: percentile(r.step_latency_s, 0.95), "s", None),
            (
                "report's own time -> local row, median (the run's write-behind included)",
                lambda r: percentile(r.report_at_latency_s, 0.5),
                "s",
                None,
            ),
            ("report's own time -> local row, p95", lambda r: percentile(r.report_at_latency_s, 0.95), "s", None),
            ("bytes/s the link read while the run reported", lambda r: r.bytes_per_s, "B/s", TARGET_BYTES_PER_S),
            (
                "bytes per report (+ its steps) in that span",
                lambda r: r.bytes_in_span / max(1, r.reports - 1) if r.span_s else None,
                "B",
                None,
            ),
            ("reports/s, steps/s", lambda r: (r.reports - 1) / r.span_s if r.span_s else None, "/s", None),
        ):
            med = median_of(good, getter)
            values = [v for v in (getter(r) for r in good) if v is not None]
            spread = f"{min(values):.3g}..{max(values):.3g} ({len(values)})" if values else "-"
            if name.startswith("reports/s"):
                steps = median_of(good, lambda r: (r.steps - 1) / r.span_s if r.span_s else None)
                rows.append([case, name, f"{fmt(med, '.1f')}, {fmt(steps, '.1f')}", spread, "", ""])
                entry["reports_per_s"], entry["steps_per_s"] = med, steps
                continue
            met = "" if target is None or med is None else ("yes" if med < target else "NO")
            shown = fmt(med, ".3f") if unit == "s" else fmt(med, ",.0f")
            rows.append([case, name, f"{shown} {unit}", spread, f"< {target:g} {unit}" if target else "", met])
            entry[name] = med
        parts: dict[str, int] = {}
        part_rows: dict[str, int] = {}
        for run in good:
            for key, size in run.bytes_by_part.items():
                parts[key] = parts.get(key, 0) + size
            for key, count in run.rows_by_part.items():
                part_rows[key] = part_rows.get(key, 0) + count
        whole = sum(parts.values())
        if whole:
            shares = []
            for key, size in sorted(parts.items(), key=lambda item: -item[1]):
                per_row = f", {size / part_rows[key]:,.0f} B/row" if part_rows.get(key) else ""
                shares.append(f"{key} {size / whole:.0%}{per_row}")
            rows.append([case, "the bytes: " + "; ".join(shares), f"{whole:,} B", f"({len(good)} runs)", "", ""])
        entry["bytes_by_part"], entry["rows_by_part"] = parts, part_rows
        missing = sum(r.missing_locally for r in runs)
        rows.append(
            [case, "rows recorded remotely but missing locally", str(missing), "", "0", "yes" if missing == 0 else "NO"]
        )
        entry["missing_locally"] = missing
        if len(good) < len(runs):
            rows.append(
                [
                    case,
                    "failed runs",
                    str(len(runs) - len(good)),
                    "; ".join(r.stderr_tail for r in runs if r.exit_code)[:200],
                    "0",
                    "NO",
                ]
            )
        summary[case] = entry
    return rows, summary


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for number, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
        if number == 0:
            print("  ".join("-" * width for width in widths))


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--relay":  # the relay between the client and ssh (see the docstring)
        rest = sys.argv[3:]
        local = rest[:1] == ["--local"]
        rest = rest[1:] if local else rest
        return relay(Path(sys.argv[2]), rest[1:] if rest[:1] == ["--"] else rest, local)
    parser = argparse.ArgumentParser(description="A remote run's added latency and bytes/s, over a real sshd")
    parser.add_argument("--quick", action="store_true", help="fewer steps, 1 repeat (~2 minutes)")
    parser.add_argument("--repeats", type=int, default=0, help="runs per transport (default 3; 1 with --quick)")
    parser.add_argument("--transports", default=",".join(TRANSPORTS), help="ssh, local or both")
    parser.add_argument(
        "--workloads",
        default="",
        help="BATCH:STEPS,... tiny-cnn runs to stream (default 64:200,4:1200: about 5 and 45 steps/s on 2 CPU "
        "cores; --quick 64:60,4:300)",
    )
    parser.add_argument("--report-interval", type=float, default=0.1, help="the run's report interval (default 0.1 s)")
    parser.add_argument("--poll", type=float, default=0.02, help="how often both stores are polled (s)")
    parser.add_argument("--json", default=None, help="write the numbers here too")
    args = parser.parse_args()
    args.repeats = args.repeats or (1 if args.quick else 3)
    work = workloads(args.workloads or ("64:60,4:300" if args.quick else "64:200,4:1200"))
    transports = [t for t in args.transports.split(",") if t in TRANSPORTS]
    notes = []
    if "ssh" in transports and (why := skip_reason()) is not None:
        transports.remove("ssh")
        notes.append(f"ssh left out: {why}")
    if not transports:
        parser.error("no transport to measure: " + "; ".join(notes))
    started = time.perf_counter()
    results: dict[str, list[RunResult]] = {f"{t}, b{w.batch}": [] for w in work for t in transports}
    with tempfile.TemporaryDirectory(prefix="gtm-remote-bench-") as scratch:
        folder = Path(scratch)
        with ssh_server(folder / "sshd") if "ssh" in transports else contextlib.nullcontext() as server:
            ssh = {"program": server.ssh_program, "alias": server.alias} if server else {}
            for index in range(args.repeats):
                order = transports if index % 2 == 0 else transports[::-1]  # drift falls on both alike
                for each in work:
                    for transport in order:
                        case = f"{transport}, b{each.batch}"
                        print(f"[remote_stream] repeat {index + 1}/{args.repeats}: {case}", file=sys.stderr, flush=True)
                        results[case].append(one_run(transport, each, folder, ssh, args, index))
    rows, summary = summarize(results, args)
    total = time.perf_counter() - started
    print()
    print(
        f"remote stream over {', '.join(transports)} on {platform.processor() or platform.machine()} "
        f"({os.cpu_count()} CPUs): tiny-cnn on the CPU, "
        + ", ".join(f"batch {w.batch} for {w.steps} steps" for w in work)
        + f", report interval "
        f"{args.report_interval} s, {args.repeats} repeat(s), stores polled every {args.poll} s; {total:.0f} s"
    )
    print_table(rows)
    for note in notes:
        print(note)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"args": vars(args), "summary": summary, "notes": notes, "total_s": total}, indent=2, default=str
            )
            + "\n",
            encoding="utf-8",
        )
    failed = any(entry["failed"] for entry in summary.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
