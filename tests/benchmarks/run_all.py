"""Run every benchmark and print ONE table of medians and ratios, with each target and whether it is met.

    python tests/benchmarks/run_all.py [--out DIR] [--device auto|cpu|cuda[:N]] [--quick] [--repeats N]
        [--run-repeats N] [--only NAME[,NAME...]] [--markdown PATH] [--budget SECONDS] [--omp-passive]
        [--gpu-check]

Each benchmark runs as its own process (the scripts stay runnable on their own), with `--json` into the
output folder (default: a new folder under ./benchmark-results/), its stdout and stderr in `NAME.log` and
`NAME.err` beside it:

- data      `data_path.py --part data`: seed vs stream vs resident images/s; resident / seed >= 30x on a
            CPU, >= 100x on a GPU (50,000 CIFAR-shaped images, batch 64).
- session   `data_path.py --part session`: TrainingSession / bare loop samples/s; resnet18 >= 0.97 on a
            CPU (batch 64), >= 0.99 on a GPU (batch 256); tiny-cnn >= 0.90.
- gui       `gui_latency.py`: a 10 ms timer's lateness while training in the window, p99 < 20 ms; loss
            plot redraw with 1M points < 10 ms (CPU work: left out by --gpu-check).
- compare   `gpu-train-monitor compare`: placement=stream vs placement=resident on the device (tiny-cnn);
            with an NVIDIA GPU first device=cpu vs device=cuda:N (resnet18, batch 128, 40 steps; run once:
            its CPU side is the slow part). Each run's images/s and the JSON's speedup.
- resnet18  NVIDIA GPU only: `gpu-train-monitor run` resnet18 (CIFAR stem), bf16, channels_last,
            resident, batch 512, 50,000 images; >= 50,000 images/s on an H200.
- speedrun  NVIDIA GPU only: `gpu-train-monitor run --preset speedrun`, 50,000 images; >= 200,000
            images/s on an H200.
- parallel  `data_parallel.py`: 1 process vs N, each round one `gpu-train-monitor compare --vs nproc=1 --vs
            nproc=N` (CPU: tiny-cnn, global batch 256, 24 steps, N = 2 gloo processes of cores/N threads each
            against one process with torch's default threads; k >= 2 CUDA GPUs: resnet18, 1 GPU vs k): each
            side's images/s, the ratio and the scaling efficiency, reported without a target. And the DDP
            wrapper's cost: the data-parallel session in a world of 1 / TrainingSession samples/s, in one process,
            >= 0.97 on a GPU (resnet18, batch 256); on a CPU (tiny-cnn b256, resnet18 b16) reported.
            --quick: one round of each, tiny-cnn only (each comparison starts the ranks anew).
- gpu-tests `pytest -m gpu` (only with --gpu-check or --only gpu-tests): passes, or the row says what failed.
- finder    `finder.py`: the CPU's batch-size finder (tiny-cnn, 3 GB) before predictions (--no-predict) and
            after, side by side: trials, seconds end to end, answer (after: <= 3 trials, < 60 s); the answer
            training 2 steps (exit 0); one prediction of resnet18 at batch 256 after warm-up (< 2 s). --quick
            leaves "before" out (minutes).

Medians of several runs and ratios, never single times: the scripts repeat each measurement `--repeats`
times (interleaved) and report medians; the CLI runs (compare, resnet18, speedrun) run `--run-repeats`
times and each run's samples_per_s is itself the median over its reports after warm-up.

`--quick` uses each script's --quick and small sizes and, unless `--budget` says otherwise, a budget of
170 s: it ends within 3 minutes on a 2-core machine, busy or not (on a busy one, what did not fit is a
"failed" row). Every job has its own time limit too; one past it is stopped, with its process group.

On a shared CPU, torch's OpenMP threads spin while they wait for each other: while another process
holds one of 2 cores, resnet18 steps ran 5x slower here and the resident data path 100x slower.
`--omp-passive` runs the benchmarks with OMP_WAIT_POLICY=PASSIVE, which avoids that, at a cost on an idle
machine (the resident data path's many small ops 20-35% slower, so its ratio to the seed path drops;
training steps within noise); it is on by default with --quick, and the table says when it was used.

A benchmark that fails (non-zero exit, a time limit, no JSON) is a row saying "failed" with the tail of
its stderr; the others still run, and the exit code is 1 at the end. Rows that need an NVIDIA GPU on a
machine without one say "skipped" (not a failure). `benchmarks.json` holds every number (each script's
own JSON too) and a `machine` object; `benchmarks.md` holds the same table as Markdown, with a line
naming the machine, ready to paste into the README.

`--gpu-check` is what `tests/benchmarks/gpu_check.sh` runs: the gpu-marked tests, then every benchmark
but the GUI at GPU sizes, within `--budget` seconds (default there 480) so that it fits a short lease;
without an NVIDIA GPU it says so, skips the GPU rows and runs the CPU rows at --quick sizes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent.parent
NAMES = ("gpu-tests", "data", "session", "gui", "compare", "parallel", "resnet18", "speedrun", "finder")
DEFAULT_NAMES = ("data", "session", "gui", "compare", "resnet18", "speedrun", "parallel", "finder")
GPU_CHECK_NAMES = ("gpu-tests", "data", "session", "resnet18", "speedrun", "compare", "parallel")
NO_GPU = "no NVIDIA GPU"

# Targets. Where a target depends on the device kind: {"cpu": ..., "gpu": ...}.
TARGET_RESIDENT_VS_SEED = {"cpu": 30.0, "gpu": 100.0}
TARGET_SESSION = {"resnet18": {"cpu": 0.97, "gpu": 0.99}, "tiny-cnn": {"cpu": 0.90, "gpu": 0.90}}
TARGET_GUI_P99_MS = 20.0
TARGET_GUI_REDRAW_MS = 10.0
TARGET_H200 = {"resnet18": 50_000.0, "speedrun": 200_000.0}  # images/s, set for an H200
TARGET_DDP_VS_PLAIN = {
    "gpu": 0.97
}  # data-parallel session (world of 1) / TrainingSession, resnet18 b256; none on a CPU

MIN_JOB_S = 15.0  # under this much budget left, a job is not started
STOP_GRACE_S = 5.0  # a job past its limit gets SIGTERM (it stops like Stop), then SIGKILL after this long
RESERVE_S = 5.0 + 2 * STOP_GRACE_S  # kept back from the budget: stopping the last job and writing the table


# ---- the machine -----------------------------------------------------------------------------------

TORCH_PROBE = r"""
import json, torch
info = {"torch": torch.__version__, "cuda_build": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
        "gpus": [], "mps_available": bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()),
        "torch_threads": torch.get_num_threads()}
if info["cuda_available"]:
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        info["gpus"].append({"index": i, "name": p.name, "memory_bytes": p.total_memory,
                             "capability": f"{p.major}.{p.minor}"})
    info["cudnn"] = torch.backends.cudnn.version()
print(json.dumps(info))
"""


def machine_info() -> dict[str, Any]:
    """CPU, cores, RAM, GPUs, torch and CUDA, Python, OS and date. torch is asked in a child process, so
    this process holds no CUDA context while the benchmarks run."""
    info: dict[str, Any] = {"date": dt.datetime.now().astimezone().isoformat(timespec="seconds")}
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["cpu"] = cpu
    info["cpu_logical_cores"] = os.cpu_count()
    try:
        info["cpu_available_cores"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["cpu_available_cores"] = os.cpu_count()
    try:
        import psutil

        info["cpu_physical_cores"] = psutil.cpu_count(logical=False)
        info["ram_bytes"] = psutil.virtual_memory().total
    except Exception:  # noqa: BLE001 - psutil missing or unreadable: leave the fields out
        info["cpu_physical_cores"] = None
        info["ram_bytes"] = None
    info["python"] = platform.python_version()
    info["os"] = platform.platform()
    info["nvidia_smi"] = nvidia_smi_gpus()
    try:
        probe = subprocess.run(
            [sys.executable, "-c", TORCH_PROBE], capture_output=True, text=True, timeout=120, cwd=REPO, env=child_env()
        )
        info.update(json.loads(probe.stdout.strip().splitlines()[-1]))
    except Exception as error:  # noqa: BLE001 - a broken torch is reported, the table still comes
        info.update(
            {
                "torch": None,
                "cuda_build": None,
                "cuda_available": False,
                "gpus": [],
                "mps_available": False,
                "torch_error": f"{type(error).__name__}: {error}",
            }
        )
    return info


def nvidia_smi_gpus() -> list[dict[str, str]] | None:
    """Name, memory and driver of each GPU as nvidia-smi lists them; None without nvidia-smi."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    gpus = []
    for line in done.stdout.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            gpus.append({"name": parts[0], "memory": parts[1], "driver": parts[2]})
    return gpus


def machine_line(m: dict[str, Any]) -> str:
    """One line naming the machine, for the table's header and the Markdown."""
    ram = f", {m['ram_bytes'] / 2**30:.0f} GiB RAM" if m.get("ram_bytes") else ""
    cores = m.get("cpu_available_cores") or m.get("cpu_logical_cores")
    gpus = ", ".join(f"{g['name']} ({g['memory_bytes'] / 2**30:.0f} GiB)" for g in m.get("gpus") or [])
    if not gpus and m.get("nvidia_smi"):
        gpus = ", ".join(f"{g['name']} ({g['memory']})" for g in m["nvidia_smi"])
    gpu = f"GPU: {gpus}" if gpus else "no GPU"
    if m.get("torch"):
        cuda = (
            f"CUDA {m['cuda_build']} build, CUDA {'available' if m['cuda_available'] else 'not available'}"
            if m.get("cuda_build")
            else "CPU-only build"
        )
        torch_text = f"torch {m['torch']} ({cuda})"
    else:
        torch_text = f"torch not importable ({m.get('torch_error', '')})"
    return f"{m['cpu']}, {cores} cores{ram}; {gpu}; {torch_text}; Python {m['python']}; {m['os']}; {m['date'][:10]}"


def resolve_device(requested: str, m: dict[str, Any]) -> str:
    """auto -> cuda:0, else mps, else cpu; cuda -> cuda:0. Raises ValueError for a device not present."""
    if requested == "auto":
        return "cuda:0" if m.get("cuda_available") else ("mps" if m.get("mps_available") else "cpu")
    if requested == "cpu" or requested == "mps":
        if requested == "mps" and not m.get("mps_available"):
            raise ValueError("--device mps: no MPS device here")
        return requested
    match = re.fullmatch(r"cuda(?::(\d+))?", requested)
    if not match:
        raise ValueError(f"--device takes auto, cpu, cuda or cuda:N (got {requested!r})")
    index = int(match.group(1) or 0)
    if not m.get("cuda_available"):
        raise ValueError(f"--device {requested}: CUDA is not available here ({NO_GPU} torch can use)")
    if index >= len(m.get("gpus") or []):
        raise ValueError(f"--device {requested}: this machine has {len(m.get('gpus') or [])} CUDA device(s)")
    return f"cuda:{index}"


# ---- jobs: one process each ------------------------------------------------------------------------

OMP_PASSIVE = False  # --omp-passive


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    if OMP_PASSIVE:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def cli() -> list[str]:
    """The CLI as installed (`gpu-train-monitor` beside this Python), else `python -m gpu_train_monitor`."""
    script = Path(sys.executable).parent / "gpu-train-monitor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpu_train_monitor"]


@dataclass
class Job:
    key: str  # file stem in the output folder: KEY.json, KEY.log (stdout), KEY.err (stderr)
    label: str  # what it is, in a failure row
    argv: list[str]
    timeout: float
    json_path: Path | None
    rc: int | None = None
    wall_s: float | None = None
    error: str | None = None  # why it failed, short (exit 1, timed out after 90 s); None when it worked
    reason: str = ""  # the tail of its stderr (else stdout) when it failed
    data: Any = None  # the JSON it wrote
    stdout_tail: str = ""
    reason_from_stdout: bool = False  # pytest: what failed is on stdout

    def record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "command": shlex.join(self.argv),
            "rc": self.rc,
            "wall_s": self.wall_s,
            "timeout_s": self.timeout,
            "error": self.error,
            "reason": self.reason,
            "json": str(self.json_path) if self.json_path else None,
        }


def tail(text: str, lines: int = 3, chars: int = 300) -> str:
    """The last few non-empty lines (progress bars' carriage returns split lines too), on one line."""
    parts = [p.strip() for p in re.split(r"[\r\n]+", text) if p.strip()]
    out = " | ".join(parts[-lines:])
    return out if len(out) <= chars else "..." + out[-chars:]


def run_job(job: Job, out: Path, timeout: float, say: Callable[[str], None]) -> None:
    """Run one job, its output into files; a time limit ends its whole process group."""
    stdout_path, stderr_path = out / f"{job.key}.log", out / f"{job.key}.err"
    if job.json_path is not None and job.json_path.exists():
        job.json_path.unlink()  # a stale result must not pass for this run's
    say(f"[run_all] {job.key}: {shlex.join(job.argv)}  (limit {timeout:.0f} s)")
    started = time.perf_counter()
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(
            job.argv, stdout=stdout, stderr=stderr, cwd=REPO, env=child_env(), start_new_session=True
        )  # its own group: DataLoader workers end with it
        try:
            job.rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            job.rc = proc.returncode
            job.error = f"timed out after {timeout:.0f} s"
        except BaseException:  # Ctrl+C: end the child's group too, then let the interrupt through
            stop_group(proc)
            raise
    job.wall_s = time.perf_counter() - started
    err_text = stderr_path.read_text(encoding="utf-8", errors="replace")
    out_text = stdout_path.read_text(encoding="utf-8", errors="replace")
    job.stdout_tail = tail(out_text, lines=2)
    reason = (tail(out_text) or tail(err_text)) if job.reason_from_stdout else (tail(err_text) or tail(out_text))
    if job.error is None and job.rc != 0:
        job.error = f"exit {job.rc}"
    if job.error is None and job.json_path is not None:
        try:
            job.data = json.loads(job.json_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            job.error = f"no result JSON ({type(error).__name__}: {error})"
    if job.error is not None:
        job.reason = reason
    say(
        f"[run_all] {job.key}: {'ok' if job.error is None else 'FAILED'} in {job.wall_s:.0f} s"
        + ("" if job.error is None else f" ({job.error}): {job.reason}")
    )


def stop_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ---- the table -------------------------------------------------------------------------------------


@dataclass
class Row:
    bench: str
    measurement: str
    median: str = ""
    runs: str = ""  # min..max over runs, and how many
    ratio: str = ""
    target: str = ""
    met: str = ""
    unit: str = ""

    def cells(self) -> list[str]:
        return [self.bench, self.measurement, self.unit, self.median, self.runs, self.ratio, self.target, self.met]


HEADER = ["benchmark", "measurement", "unit", "median", "runs: min..max (n)", "ratio", "target", "met"]
RIGHT = {3, 4, 5}


def num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".rstrip()


def spread(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return ""
    if len(values) == 1:
        return "1 run"
    return f"{num(min(values))}..{num(max(values))} ({len(values)})"


def ratio_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}x" if value >= 10 else f"{value:.2f}x"


def text_table(rows: list[Row]) -> str:
    cells = [HEADER] + [r.cells() for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]

    def line(c: list[str]) -> str:
        return "  ".join(
            c[i].rjust(widths[i]) if i in RIGHT else c[i].ljust(widths[i]) for i in range(len(HEADER))
        ).rstrip()

    lines = [line(HEADER), "  ".join("-" * w for w in widths)]
    previous = None
    for row in rows:
        c = row.cells()
        if c[0] == previous:
            c[0] = ""  # the benchmark's name once, on its first row
        else:
            previous = c[0]
        lines.append(line(c))
    return "\n".join(lines)


def markdown_table(rows: list[Row]) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---:" if i in RIGHT else "---" for i in range(len(HEADER))) + "|",
    ]
    for row in rows:
        cells = [esc(c) for c in row.cells()]
        if row.met in ("NO", "failed") or row.met.startswith("NO"):
            cells[-1] = f"**{cells[-1]}**"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---- the benchmarks --------------------------------------------------------------------------------


@dataclass
class Ctx:
    out: Path
    device: str  # resolved: cpu, mps, cuda:N
    quick: bool
    repeats: int
    run_repeats: int
    machine: dict[str, Any]
    gpu_check: bool

    @property
    def kind(self) -> str:
        return "cpu" if self.device == "cpu" else "gpu"

    @property
    def cuda(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def h200(self) -> bool:
        index = int(self.device.split(":")[1]) if self.cuda else 0
        gpus = self.machine.get("gpus") or []
        return self.cuda and index < len(gpus) and "H200" in gpus[index]["name"].upper()

    def verdict(self, ok: bool) -> str:
        text = "yes" if ok else "NO"
        return f"{text} (quick)" if self.quick else text


@dataclass
class Bench:
    name: str
    title: str
    jobs: list[Job] = field(default_factory=list)
    summarize: Callable[[Bench, Ctx], tuple[list[Row], dict[str, Any]]] | None = None
    skip: str | None = None  # why it does not run here (not a failure)
    static_rows: list[Row] = field(default_factory=list)  # rows known before it runs (a part skipped)
    status: str = "pending"  # ok, failed, skipped, not run (budget)
    rows: list[Row] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)


def py_script(name: str) -> list[str]:
    return [sys.executable, str(BENCH_DIR / name)]


def plan(ctx: Ctx, names: list[str]) -> list[Bench]:
    out, q, dev = ctx.out, ctx.quick, ctx.device

    def limit(full: float, quick: float, gpu: float) -> float:
        """A job's time limit: on the CPU at full or --quick sizes, or on a GPU (where every step has to
        fit a short lease: a hang costs its limit, not the lease)."""
        return gpu if ctx.cuda else (quick if q else full)

    benches: list[Bench] = []
    for name in names:
        if name == "gpu-tests":
            b = Bench(name, "GPU tests", summarize=sum_gpu_tests)
            argv = [
                sys.executable,
                "-m",
                "pytest",
                "-m",
                "gpu",
                # where the gpu-marked tests live: collecting tests/gui too would need Qt on the GPU machine
                "tests/gpu",
                "tests/core",
                "-q",
                "-p",
                "no:cacheprovider",
                # pytest-benchmark (in some GPU images) sees addopts' --dist as xdist and warns, which
                # filterwarnings=error turns into an internal error before any test runs
                "-p",
                "no:benchmark",
                "-rfEs",
                "--junitxml",
                str(out / "gpu-tests.xml"),
            ]
            b.jobs.append(Job("gpu-tests", "pytest -m gpu", argv, limit(300, 120, 180), None, reason_from_stdout=True))
        elif name == "data":
            b = Bench(name, "data path", summarize=sum_data)
            argv = py_script("data_path.py") + [
                "--part",
                "data",
                "--device",
                dev,
                "--repeats",
                str(ctx.repeats),
                "--json",
                str(out / "data.json"),
            ]
            if q:
                argv += ["--quick"]
            elif ctx.cuda:  # CIFAR scale; GPU rates are high: 1 s windows hold thousands of batches
                argv += ["--samples", "50000", "--seconds", "1.0"]
            b.jobs.append(Job("data", "data_path.py --part data", argv, limit(900, 30, 120), out / "data.json"))
        elif name == "session":
            b = Bench(name, "session overhead", summarize=sum_session)
            argv = py_script("data_path.py") + [
                "--part",
                "session",
                "--device",
                dev,
                "--repeats",
                str(ctx.repeats),
                "--json",
                str(out / "session.json"),
            ]
            if ctx.cuda:
                argv += ["--resnet-batch", "256"]
            if q:
                argv += ["--quick"]
                if not ctx.cuda:
                    # resnet18 at 64 takes seconds a step on 2 cores: a smaller batch keeps --quick short
                    argv += ["--resnet-batch", "16", "--resnet-steps", "5", "--tiny-batch", "64", "--tiny-steps", "20"]
            b.jobs.append(
                Job("session", "data_path.py --part session", argv, limit(2400, 80, 120), out / "session.json")
            )
        elif name == "gui":
            b = Bench(name, "GUI latency", summarize=sum_gui)
            argv = py_script("gui_latency.py") + ["--json", str(out / "gui.json")]
            if q:
                if gui_has_quick():
                    argv += ["--quick"]
                else:  # the script's --quick is being added; until then, its short form by hand
                    argv += ["--seconds", "3", "--repeats", "1"]
            else:
                argv += ["--repeats", str(ctx.repeats)]
            b.jobs.append(Job("gui", "gui_latency.py", argv, limit(900, 65, 120), out / "gui.json"))
        elif name == "compare":
            b = Bench(name, "compare", summarize=sum_compare)
            if not ctx.cuda:
                b.static_rows.append(Row(b.title, f"CPU vs GPU: skipped: {no_gpu_reason(ctx.machine)}", met="skipped"))
            if ctx.cuda:  # CPU vs GPU first: the headline of a GPU machine
                # the CPU side is the slow part: resnet18 at batch 128 for a few steps (about a minute on
                # a many-core host); short reports so the GPU side's few steps still give several
                argv = cli() + [
                    "compare",
                    "--vs",
                    "device=cpu",
                    "--vs",
                    f"device={dev}",
                    "--model",
                    "resnet18",
                    "--batch-size",
                    "128",
                    "--max-steps",
                    "12" if q else "40",
                    "--report-interval",
                    "0.02",
                    "--json",
                    str(out / "compare-cpu-gpu.json"),
                ]
                b.jobs.append(
                    Job(
                        "compare-cpu-gpu",
                        f"compare device=cpu vs device={dev}",
                        argv,
                        limit(300, 150, 150),
                        out / "compare-cpu-gpu.json",
                    )
                )
            base = ["--device", dev, "--model", "tiny-cnn"]
            if ctx.cuda:
                base += ["--batch-size", "512", "--synthetic-samples", "50000", "--max-steps", "60" if q else "200"]
            elif q:  # one epoch of 20 steps at batch 64: seconds per run
                base += ["--batch-size", "64", "--synthetic-samples", "1280", "--max-steps", "20"]
            else:
                base += ["--max-steps", "60"]  # the CLI's own default length of a comparison
            for i in range(ctx.run_repeats):
                key = f"compare-placement-{i + 1}"
                argv = cli() + [
                    "compare",
                    "--vs",
                    "placement=stream",
                    "--vs",
                    "placement=resident",
                    *base,
                    "--json",
                    str(out / f"{key}.json"),
                ]
                b.jobs.append(
                    Job(
                        key,
                        f"compare placement=stream vs resident (run {i + 1})",
                        argv,
                        limit(600, 35, 90),
                        out / f"{key}.json",
                    )
                )
        elif name == "parallel":
            b = Bench(name, "data parallel", summarize=sum_parallel)
            # --quick: one round (each comparison starts the ranks: ~20 s of a 2-core budget the other
            # smoke runs share); full size on 2 idle cores: ~5 minutes (3 comparisons, 12 in-process runs)
            argv = py_script("data_parallel.py") + [
                "--device",
                dev,
                "--repeats",
                "1" if q else str(ctx.repeats),
                "--json",
                str(out / "parallel.json"),
            ]
            if q:
                argv += ["--quick"]
            b.jobs.append(Job("parallel", "data_parallel.py", argv, limit(600, 90, 240), out / "parallel.json"))
        elif name in ("resnet18", "speedrun"):
            title = "resnet18 bf16 resident" if name == "resnet18" else "speed-run preset"
            b = Bench(name, title, summarize=sum_gpu_run)
            if not ctx.cuda:
                b.skip = (
                    no_gpu_reason(ctx.machine)
                    if not ctx.machine.get("cuda_available")
                    else f"needs --device cuda (got {dev})"
                )
            steps = ("100" if q else "400") if name == "resnet18" else ("100" if q else "600")
            for i in range(ctx.run_repeats):
                key = f"{name}-{i + 1}"
                if name == "resnet18":
                    opts = [
                        "--model",
                        "resnet18",
                        "--amp",
                        "bf16",
                        "--channels-last",
                        "--placement",
                        "resident",
                        "--batch-size",
                        "512",
                    ]
                else:
                    opts = ["--preset", "speedrun"]
                argv = cli() + [
                    "run",
                    "--device",
                    dev,
                    *opts,
                    "--synthetic-samples",
                    "50000",
                    "--max-steps",
                    steps,
                    "--summary-json",
                    str(out / f"{key}.json"),
                ]
                b.jobs.append(
                    Job(key, f"{title} (run {i + 1})", argv, 150.0 if name == "speedrun" else 90.0, out / f"{key}.json")
                )
        elif name == "finder":  # the CPU's finder whatever --device: its target is set for tiny-cnn at 3 GB there
            b = Bench(name, "batch-size finder", summarize=sum_finder)
            argv = py_script("finder.py") + ["--json", str(out / "finder.json")]
            if q:
                argv += ["--skip-before", "--repeats", "2"]  # before alone takes minutes
            b.jobs.append(Job("finder", "finder.py", argv, limit(900, 150, 300), out / "finder.json"))
        else:  # argparse checked the names
            raise AssertionError(name)
        benches.append(b)
    return benches


def gui_has_quick() -> bool:
    try:
        return '"--quick"' in (BENCH_DIR / "gui_latency.py").read_text(encoding="utf-8")
    except OSError:
        return False


def failed_rows(bench: Bench) -> list[Row]:
    """A row per failed job: what it was and why (its stderr's tail, cut to fit a table; the whole tail
    is in benchmarks.json)."""
    rows = []
    for job in bench.jobs:
        if job.error is not None:
            reason = job.reason if len(job.reason) <= 140 else "..." + job.reason[-137:]
            rows.append(
                Row(bench.title, f"{job.label}: failed ({job.error})" + (f": {reason}" if reason else ""), met="failed")
            )
    return rows


def no_gpu_reason(machine: dict[str, Any]) -> str:
    if machine.get("nvidia_smi") and not machine.get("cuda_available"):
        return "an NVIDIA GPU is present but torch cannot use CUDA here"
    return NO_GPU


def sum_data(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    d = b.jobs[0].data
    med, runs = d["images_per_s"], d.get("images_per_s_runs", {})
    extra = d.get("images_per_s_extra") or {}
    seed = med["seed"]
    kind = d.get("device_kind", ctx.kind)
    target = d.get("targets", {}).get("resident_vs_seed", TARGET_RESIDENT_VS_SEED[kind])
    ratio = med["resident"] / seed
    samples = d.get("data_path_samples")
    size = f"{samples:,} images, " if samples else ""
    rows = [
        Row(
            b.title,
            f"seed: torchvision CIFAR10 + ToTensor + Normalize, DataLoader ({size}b64)",
            num(seed),
            spread(runs.get("seed", [])),
            "1.00x",
            unit="images/s",
        ),
        Row(
            b.title,
            "context: ImageFolder over PNGs, same loader",
            num(extra.get("seed_imagefolder_png")),
            spread(runs.get("seed_imagefolder", [])),
            ratio_text(extra["seed_imagefolder_png"] / seed) if extra.get("seed_imagefolder_png") else "",
            unit="images/s",
        ),
        Row(
            b.title,
            f"stream placement, best settings ({d.get('stream_settings', '?')}), crop + flip",
            num(med["stream"]),
            spread(runs.get("stream", [])),
            ratio_text(med["stream"] / seed),
            unit="images/s",
        ),
        Row(
            b.title,
            "resident placement (shuffle, crop, flip, normalise on the device)",
            num(med["resident"]),
            spread(runs.get("resident", [])),
            ratio_text(ratio),
            f">= {target:.0f}x seed ({kind.upper()})",
            ctx.verdict(ratio >= target),
            unit="images/s",
        ),
    ]
    return rows, {
        "images_per_s": med,
        "images_per_s_runs": runs,
        "resident_vs_seed": ratio,
        "target": target,
        "met": ratio >= target,
        "device": d.get("device"),
        "samples": samples,
        "other_processes_cpu_share": d.get("other_processes_cpu_share"),
    }


def sum_session(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    d = b.jobs[0].data
    kind = d.get("device_kind", ctx.kind)
    rows, results = [], {}
    for model, detail in d["session_vs_bare_detail"].items():
        ratio = d["session_vs_bare"][model]
        target = d.get("targets", {}).get(f"session_vs_bare:{model}", TARGET_SESSION[model][kind])
        pairs = detail["pair_ratios"]
        batch = detail["batch"]
        rows.append(
            Row(
                b.title,
                f"{model} b{batch}: bare loop",
                num(detail["bare_samples_per_s"]),
                spread(detail.get("bare_samples_per_s_runs", [])),
                "1.00x",
                unit="samples/s",
            )
        )
        recorded = ", recording into a run store" if d.get("recorded") else ""
        rows.append(
            Row(
                b.title,
                f"{model} b{batch}: TrainingSession{recorded} (ratio: median of pairs, min..max)",
                num(detail["session_samples_per_s"]),
                spread(detail.get("session_samples_per_s_runs", [])),
                f"{ratio:.3f}" + (f" ({min(pairs):.2f}..{max(pairs):.2f})" if len(pairs) > 1 else ""),
                f">= {target:.2f}",
                ctx.verdict(ratio >= target),
                unit="samples/s",
            )
        )
        results[model] = {
            "ratio": ratio,
            "pair_ratios": pairs,
            "target": target,
            "met": ratio >= target,
            "batch": batch,
            "session_samples_per_s": detail["session_samples_per_s"],
            "bare_samples_per_s": detail["bare_samples_per_s"],
            "steps": detail.get("steps"),
        }
    results["other_processes_cpu_share"] = d.get("other_processes_cpu_share")
    return rows, results


def sum_gui(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    d = b.jobs[0].data
    lat, ref, redraw = d["latency_ms"], d.get("reference_bare_thread_ms", {}), d["redraw_1m_ms"]["median"]
    argv = b.jobs[0].argv
    n = d.get("repeats") or (int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else None)
    runs = "" if n is None else ("1 run" if n == 1 else f"median of {n}")
    rows = [
        Row(
            b.title,
            "a 10 ms timer's lateness while tiny-cnn trains in the window, p50",
            num(lat["p50"]),
            runs,
            f"bare thread {num(ref.get('p50'))}" if ref else "",
            unit="ms",
        ),
        Row(
            b.title,
            "the same, p99",
            num(lat["p99"]),
            runs,
            f"bare thread {num(ref.get('p99'))}" if ref else "",
            f"< {TARGET_GUI_P99_MS:.0f} ms",
            ctx.verdict(lat["p99"] < TARGET_GUI_P99_MS),
            unit="ms",
        ),
        Row(
            b.title,
            "loss plot redraw with 1,000,000 points",
            num(redraw),
            runs,
            "",
            f"< {TARGET_GUI_REDRAW_MS:.0f} ms",
            ctx.verdict(redraw < TARGET_GUI_REDRAW_MS),
            unit="ms",
        ),
    ]
    return rows, {
        "latency_ms": lat,
        "reference_bare_thread_ms": ref,
        "redraw_1m_ms": redraw,
        "p99_met": lat["p99"] < TARGET_GUI_P99_MS,
        "redraw_met": redraw < TARGET_GUI_REDRAW_MS,
    }


def sum_compare(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    rows, results = [], {}
    groups: dict[str, list[Job]] = {}
    for job in b.jobs:
        groups.setdefault(job.key.rsplit("-", 1)[0] if job.key.startswith("compare-placement") else job.key, []).append(
            job
        )
    for group, jobs in groups.items():
        done = [j for j in jobs if j.error is None and j.data is not None]
        if not done:
            continue
        what = "CPU vs GPU" if group == "compare-cpu-gpu" else "placement"
        first = done[0].data
        shape = f"{first.get('model', '?')}, batch {first.get('batch_size', '?')}, {first.get('steps', '?')} steps"
        labels = [r["label"] for r in first["runs"]]
        rates = [[j.data["runs"][i]["samples_per_s"] for j in done] for i in range(len(labels))]
        medians = [
            statistics.median([v for v in vs if v is not None]) if any(v is not None for v in vs) else None
            for vs in rates
        ]
        speedups = [j.data["speedup"] for j in done if j.data.get("speedup") is not None]
        for i, label in enumerate(labels):
            ratio = ratio_text(medians[i] / medians[0]) if medians[i] and medians[0] else ""
            compile_s = [j.data["runs"][i].get("compile_s") for j in done if j.data["runs"][i].get("compile_s")]
            note = f", compiled in {statistics.median(compile_s):.0f} s" if compile_s else ""
            rows.append(
                Row(
                    b.title,
                    f"{what}: {label} ({shape}{note})",
                    num(medians[i]),
                    spread(rates[i]) if len(done) > 1 else "1 run (median over reports)",
                    ratio,
                    unit="images/s",
                )
            )
        if speedups:
            fastest = [j.data["runs"][j.data["fastest"]]["label"] for j in done if j.data.get("fastest") is not None]
            winner = max(set(fastest), key=fastest.count) if fastest else "?"
            rows.append(
                Row(
                    b.title,
                    f"{what}: speedup, JSON's fastest / slowest (fastest: {winner})",
                    "",
                    spread(speedups) if len(speedups) > 1 else "1 run",
                    ratio_text(statistics.median(speedups)),
                )
            )
        results[group] = {
            "labels": labels,
            "samples_per_s_median": medians,
            "samples_per_s_runs": rates,
            "speedup_median": statistics.median(speedups) if speedups else None,
            "speedups": speedups,
            "headlines": [j.data.get("headline") for j in done],
        }
    return rows, results


def percent_spread(values: list[float]) -> str:
    return "1 run" if len(values) == 1 else f"{min(values):.0%}..{max(values):.0%} ({len(values)})"


def sum_parallel(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    d = b.jobs[0].data
    kind = d.get("device_kind", ctx.kind)
    rows: list[Row] = []
    scaling = d["scaling"]
    if scaling.get("skipped"):
        rows.append(Row(b.title, f"scaling, 1 vs N: skipped: {scaling['skipped']}", met="skipped"))
    n, threads = scaling.get("nproc"), scaling.get("threads")
    for placement, r in scaling.get("placements", {}).items():
        shape = f"{scaling['model']} b{scaling['batch']} {placement}, {scaling['steps']} steps"
        if threads:
            one = f"1 process, torch's default {threads['one_process']} threads"
            many = f"{n} {scaling['backend']} processes, {threads['per_rank']} thread(s) each"
            target = (
                "none (2 cores shared with the launcher)"
                if (ctx.machine.get("cpu_available_cores") or 0) <= 2
                else "none (reported)"
            )
        else:
            one, many, target = "1 GPU", f"{n} GPUs ({scaling['backend']})", "none (reported)"
        rows.append(
            Row(
                b.title,
                f"scaling: {one} ({shape})",
                num(r["one_process_images_per_s"]),
                spread(r["one_process_runs"]),
                "1.00x",
                unit="images/s",
            )
        )
        rows.append(
            Row(
                b.title,
                f"scaling: {many} (ratio: median of rounds)",
                num(r["n_process_images_per_s"]),
                spread(r["n_process_runs"]),
                ratio_text(r["ratio"]),
                unit="images/s",
            )
        )
        rows.append(
            Row(
                b.title,
                f"scaling efficiency: {n}-process images/s / ({n} x 1-process)",
                f"{r['scaling_efficiency']:.0%}",
                percent_spread(r["scaling_efficiencies"]),
                "",
                target,
                "n/a",
            )
        )
    ddp = d["ddp"]
    if ddp.get("skipped"):
        rows.append(Row(b.title, f"DDP overhead: skipped: {ddp['skipped']}", met="skipped"))
    target_ratio = TARGET_DDP_VS_PLAIN["gpu"]
    met_all: list[bool] = []
    for model, r in ddp.items():
        if not isinstance(r, dict):
            continue
        pairs, batch = r["pair_ratios"], r["batch"]
        rows.append(
            Row(
                b.title,
                f"DDP overhead, {model} b{batch}: TrainingSession",
                num(r["plain_samples_per_s"]),
                spread(r["plain_runs"]),
                "1.00x",
                unit="samples/s",
            )
        )
        applies = kind == "gpu" and model == "resnet18"
        if applies:
            target, met = f">= {target_ratio:.2f}", ctx.verdict(r["ratio"] >= target_ratio)
            met_all.append(r["ratio"] >= target_ratio)
        else:
            target = f">= {target_ratio:.2f} on a GPU (resnet18 b256)"
            met = "n/a (CPU)" if kind == "cpu" else "n/a (context)"
        rows.append(
            Row(
                b.title,
                f"DDP overhead, {model} b{batch}: data-parallel session, world of 1 (DDP, {r['backend']}; "
                "ratio: median of pairs, min..max)",
                num(r["ddp_samples_per_s"]),
                spread(r["ddp_runs"]),
                f"{r['ratio']:.3f}" + (f" ({min(pairs):.2f}..{max(pairs):.2f})" if len(pairs) > 1 else ""),
                target,
                met,
                unit="samples/s",
            )
        )
    results = {
        "scaling": scaling,
        "ddp": ddp,
        "target_ddp_vs_plain_gpu": target_ratio,
        "met": all(met_all) if met_all else None,
        "other_processes_cpu_share": d.get("other_processes_cpu_share"),
    }
    return rows, results


def sum_gpu_run(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    done = [j for j in b.jobs if j.error is None and j.data is not None]
    if not done:
        return [], {}
    rates = [j.data.get("samples_per_s") for j in done]
    statuses = sorted({j.data.get("status", "?") for j in done})
    valid = [r for r in rates if r is not None]
    median = statistics.median(valid) if valid else None
    target = TARGET_H200[b.name]
    config = done[0].data.get("config", {})
    peak = max((j.data.get("peak_allocated_bytes") or 0) for j in done)
    if b.name == "resnet18":
        what = "resnet18 (CIFAR stem), bf16, channels_last, resident, b512"
    else:
        what = (
            f"--preset speedrun: {config.get('model', '?')}, b{config.get('batch_size', '?')}, "
            f"compile={config.get('compile', '?')}"
        )
    compile_s = [j.data["compile_s"] for j in done if j.data.get("compile_s") is not None]
    device_name = done[0].data.get("device_name")
    what += f", {done[0].data.get('steps', '?')} steps (peak {peak / 2**30:.1f} GiB"
    what += f"; compiled in {statistics.median(compile_s):.0f} s" if compile_s else ""
    what += f"; {device_name})" if device_name else ")"
    if statuses != ["completed"]:
        what += f"; status: {', '.join(statuses)}"
    met = ctx.verdict(median is not None and median >= target) if ctx.h200 else "n/a (not an H200)"
    rows = [Row(b.title, what, num(median), spread(valid), "", f">= {target:,.0f} on an H200", met, unit="images/s")]
    return rows, {
        "samples_per_s_median": median,
        "samples_per_s_runs": rates,
        "statuses": statuses,
        "target_h200": target,
        "met": (median or 0) >= target if ctx.h200 else None,
        "peak_allocated_bytes": peak,
        "config": config,
        "compile_s": compile_s,
        "device_name": device_name,
    }


def sum_gpu_tests(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    job = b.jobs[0]
    counts = dict(
        (k, int(v))
        for v, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors|deselected|xfailed)", job.stdout_tail)
    )
    summary = job.stdout_tail.split("|")[-1].strip().strip("=").strip()
    if not ctx.machine.get("cuda_available"):
        summary += f" ({NO_GPU}: the gpu tests skip themselves)"
    return [Row(b.title, f"pytest -m gpu: {summary}", target="all pass", met="yes" if job.rc == 0 else "NO")], {
        "counts": counts,
        "summary": summary,
        "rc": job.rc,
    }


def sum_finder(b: Bench, ctx: Ctx) -> tuple[list[Row], dict[str, Any]]:
    """finder.py: the search before predictions vs after (trials, seconds, answer), the answer training, and
    one prediction's time."""
    data = b.jobs[0].data or {}
    met = data.get("targets_met", {})
    rows = []
    for side in ("before", "after"):
        found = data.get(side)
        if not found:
            continue
        rows.append(
            Row(
                b.title,
                f"{side}: tiny-cnn, {data.get('capacity')}, CPU: {found['trials']} trials, answer batch "
                f"{found['answer']}"
                + (f" (predicted {found['predicted_batch']})" if found.get("predicted_batch") else ""),
                num(found["seconds"]),
                unit="s",
                target="<= 3 trials, < 60 s" if side == "after" else "",
                met=ctx.verdict(met.get("finder_trials", False) and met.get("finder_seconds", False))
                if side == "after"
                else "",
            )
        )
    ran = data.get("after_trains")
    if ran:
        rows.append(
            Row(
                b.title,
                f"the answer trains 2 steps: exit {ran['exit']}, peak RSS {ran['peak_rss_bytes'] / 1e9:.2f} GB",
                num(ran["seconds"]),
                unit="s",
                target="exit 0",
                met=ctx.verdict(met.get("answer_trains", False)),
            )
        )
    timed = data.get("prediction")
    if timed:
        rows.append(
            Row(
                b.title,
                "one prediction: resnet18 b256, CPU, after warm-up (median; runs: the best)",
                num(timed["median_s"]),
                runs=num(timed["best_s"]),
                unit="s",
                target="< 2 s",
                met=ctx.verdict(met.get("prediction_seconds", False)),
            )
        )
    return rows, data


def finite(value: Any) -> Any:
    """JSON-safe: NaN and infinity (a diverged run's loss, an empty percentile) become None."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


# ---- main ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="names for --only: " + ", ".join(NAMES),
    )
    parser.add_argument("--out", metavar="DIR", help="output folder (default: a new folder under ./benchmark-results/)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes and each script's --quick: a smoke run of a few minutes; the targets are for the full sizes",
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="repeats inside each script (default 3; 2 with --quick)"
    )
    parser.add_argument(
        "--run-repeats",
        type=int,
        default=None,
        help="runs of each CLI benchmark: compare, resnet18, speedrun (default 3; 1 with --quick; 2 with --gpu-check)",
    )
    parser.add_argument("--only", metavar="NAME[,NAME]", help="run only these: " + ", ".join(NAMES))
    parser.add_argument("--markdown", metavar="PATH", help="the table as Markdown (default: OUT/benchmarks.md)")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop starting benchmarks after this many seconds and cap each one's time limit "
        "to what is left (default: none; 170 with --quick, so that it ends within 3 "
        "minutes even on a busy machine; 480 with --gpu-check; 0: none)",
    )
    parser.add_argument(
        "--omp-passive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run every benchmark with OMP_WAIT_POLICY=PASSIVE: on a shared CPU, where another "
        "process holds a core, torch's spinning OpenMP threads can make CPU work 5-100x "
        "slower; passive waiting avoids that (and costs 20-35%% on the resident data path on an idle machine). "
        "Default: on with --quick (a smoke run that must fit 3 minutes), off otherwise",
    )
    parser.add_argument(
        "--gpu-check",
        action="store_true",
        help="what gpu_check.sh runs: the gpu tests, then every benchmark but the GUI at GPU "
        "sizes within --budget; without an NVIDIA GPU: GPU rows skipped, CPU rows --quick",
    )
    args = parser.parse_args(argv)

    started_wall = time.perf_counter()
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    say("[run_all] reading the machine (CPU, RAM, GPUs, torch) ...")
    machine = machine_info()
    try:
        device = resolve_device(args.device, machine)
    except ValueError as error:
        parser.exit(2, f"run_all.py: error: {error}\n")
    notes: list[str] = []
    quick = args.quick
    if args.gpu_check and not device.startswith("cuda"):
        notes.append(
            f"{no_gpu_reason(machine)}: GPU rows skipped (the CPU rows ran at --quick sizes, to check the script)"
        )
        say(f"[run_all] {notes[-1]}")
        quick = True
    global OMP_PASSIVE
    OMP_PASSIVE = args.omp_passive if args.omp_passive is not None else quick
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in NAMES]
        if unknown or not names:
            parser.error(f"--only: unknown {', '.join(unknown) or 'empty list'}; known: {', '.join(NAMES)}")
    else:
        names = list(GPU_CHECK_NAMES if args.gpu_check else DEFAULT_NAMES)
    repeats = args.repeats if args.repeats is not None else (2 if quick else 3)
    run_repeats = args.run_repeats if args.run_repeats is not None else (1 if quick else (2 if args.gpu_check else 3))
    if repeats < 1 or run_repeats < 1:
        parser.error("--repeats and --run-repeats must be at least 1")
    if args.budget is not None:
        budget = max(args.budget, 0.0)
    else:
        budget = 480.0 if args.gpu_check else (170.0 if quick else 0.0)

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path.cwd() / "benchmark-results" / stamp
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    # the benchmarks' runs are recorded and checkpointed beside their results, not in the user's history
    os.environ.setdefault("GPU_TRAIN_MONITOR_RUNS_DB", str(out / "runs.sqlite3"))
    os.environ.setdefault("GPU_TRAIN_MONITOR_CHECKPOINTS", str(out / "checkpoints"))
    md_path = Path(args.markdown) if args.markdown else out / "benchmarks.md"

    ctx = Ctx(out, device, quick, repeats, run_repeats, machine, args.gpu_check)
    benches = plan(ctx, names)
    say(
        f"[run_all] device {device}; {', '.join(b.name for b in benches)}; repeats {repeats}, CLI runs "
        f"{run_repeats}{'; quick' if quick else ''}{f'; budget {budget:.0f} s' if budget else ''}; results in {out}"
    )

    deadline = started_wall + budget if budget else None
    interrupted = False

    def terminated(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (an outer `timeout`): stop the job, still write the table

    signal.signal(signal.SIGTERM, terminated)
    try:
        for bench in benches:
            if bench.skip:
                bench.status = "skipped"
                continue
            for job in bench.jobs:
                timeout = job.timeout
                if deadline is not None:
                    left = deadline - time.perf_counter() - RESERVE_S
                    if left < MIN_JOB_S:
                        job.error = f"not run: the time budget ({budget:.0f} s) was spent"
                        say(f"[run_all] {job.key}: {job.error}")
                        continue
                    timeout = min(timeout, left)
                run_job(job, out, timeout, say)
    except KeyboardInterrupt:
        interrupted = True
        notes.append("interrupted (Ctrl+C or SIGTERM): the rows from there on were not measured")

    rows: list[Row] = []
    failed: list[str] = []
    for bench in benches:
        if bench.status == "skipped":
            bench.rows = [Row(bench.title, f"skipped: {bench.skip}", met="skipped")]
        elif all(j.rc is None and j.error is None for j in bench.jobs):
            bench.status = "not run"
            bench.rows = [Row(bench.title, "not run (interrupted)", met="failed")]
            failed.append(bench.name)
        else:
            good = [j for j in bench.jobs if j.error is None]
            if good and bench.summarize is not None:
                try:
                    bench.rows, bench.results = bench.summarize(bench, ctx)
                except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as error:
                    bench.rows = [
                        Row(
                            bench.title,
                            f"failed: could not read its JSON ({type(error).__name__}: {error})",
                            met="failed",
                        )
                    ]
                    bench.status = "failed"
            bench.rows += failed_rows(bench) + bench.static_rows
            if any(j.error is not None for j in bench.jobs) or bench.status == "failed":
                bench.status = "failed"
                failed.append(bench.name)
            else:
                bench.status = "ok"
        rows += bench.rows

    total = time.perf_counter() - started_wall
    command = "python tests/benchmarks/run_all.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    mline = machine_line(machine)
    header = f"Machine: {mline}. Device `{device}`."
    scope = (
        f"`{command.strip()}`: {'--quick sizes (a smoke run; targets are for the full sizes), ' if quick else ''}"
        f"medians of {repeats} interleaved repeats inside each script, "
        f"{'1 run' if run_repeats == 1 else f'{run_repeats} runs'} of each CLI benchmark (each a median over "
        f"its reports after warm-up){'; OMP_WAIT_POLICY=PASSIVE' if OMP_PASSIVE else ''}; total {total:.0f} s."
    )
    load_notes = []
    for bench in benches:
        shares = bench.results.get("other_processes_cpu_share") if isinstance(bench.results, dict) else None
        for part, share in (shares or {}).items():
            if share is not None and share > 0.10:
                load_notes.append(f"{part} {share:.0%}")
    if load_notes:
        notes.append(
            "other processes used the CPUs during "
            + ", ".join(load_notes)
            + ": expect noisy numbers"
            + (
                ""
                if OMP_PASSIVE
                else " (torch's CPU work can be many times slower while another process "
                "holds a core; --omp-passive, or a quiet machine)"
            )
        )
    if failed:
        notes.append(f"failed: {', '.join(failed)} (logs: NAME.log and NAME.err in {out})")

    result = {
        "machine": machine,
        "device": device,
        "quick": quick,
        "repeats": repeats,
        "run_repeats": run_repeats,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY") if not OMP_PASSIVE else "PASSIVE",
        "budget_s": budget or None,
        "command": command.strip(),
        "total_s": total,
        "interrupted": interrupted,
        "failed": failed,
        "notes": notes,
        "benchmarks": {
            b.name: {
                "title": b.title,
                "status": b.status,
                "skip": b.skip,
                "results": b.results,
                "jobs": [j.record() for j in b.jobs],
                "raw": {j.key: j.data for j in b.jobs if j.data is not None},
            }
            for b in benches
        },
        "rows": [r.__dict__ for r in rows],
        "targets": {
            "resident_vs_seed": TARGET_RESIDENT_VS_SEED,
            "session_vs_bare": TARGET_SESSION,
            "gui_p99_ms": TARGET_GUI_P99_MS,
            "gui_redraw_1m_ms": TARGET_GUI_REDRAW_MS,
            "h200_images_per_s": TARGET_H200,
            "ddp_vs_plain": TARGET_DDP_VS_PLAIN,
        },
    }
    json_path = out / "benchmarks.json"
    json_path.write_text(json.dumps(finite(result), indent=2, allow_nan=False, default=str) + "\n", encoding="utf-8")
    markdown = "\n".join(
        [header, "", scope, "", markdown_table(rows), ""] + [f"- {n}" for n in notes] + ([""] if notes else [])
    )
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text(markdown, encoding="utf-8")

    print()
    print(header)
    print(scope)
    print()
    print(text_table(rows))
    print()
    for note in notes:
        print(note)
    print(f"numbers: {json_path}; Markdown: {md_path}")
    sys.stdout.flush()
    if interrupted:
        return 130
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
