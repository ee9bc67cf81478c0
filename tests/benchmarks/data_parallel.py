"""Benchmark: what data-parallel training buys on this machine, and what the DDP wrapper costs.

Run it as a script (it is not part of the pytest run):

    python tests/benchmarks/data_parallel.py [--device auto] [--repeats 3] [--json PATH] [--quick]
        [--part all|scaling|ddp] [--nproc N] [--placements resident[,stream]] [--batch N] [--steps N]
        [--models tiny-cnn,resnet18] [--tiny-batch N] [--tiny-steps N] [--resnet-batch N] [--resnet-steps N]

`tests/benchmarks/run_all.py` runs it (`parallel`) with the other benchmarks and puts its numbers into one
table.

Part 1, scaling: the same run with 1 process and with N, raced by `python -m gpu_train_monitor compare --vs nproc=1
--vs nproc=N` once per round (the order flips every round, to cancel machine drift). On the CPU: tiny-cnn,
synthetic, resident, global batch 256 (128 per process with N = 2), 24 steps (about 12 s a run on 2 cores),
N = 2 gloo processes. Threads: the 1-process run uses torch's default (every core), each rank gets
cores / N (the engine sets OMP_NUM_THREADS for its ranks unless it is set already); on a 2-core machine the
launcher and rank 0's relay share the same cores, so there is no target for CPU scaling, only the number.
On a machine with k >= 2 CUDA GPUs: 1 GPU against k, resnet18 at global batch 256 x k (256 per GPU with k
GPUs), 300 steps; with one GPU the part says so and is skipped. Each run's images/s is the comparison's:
the median over its reports after warm-up (rank 0's total for the N-process run). Reported: each side's
median, the median of the per-round ratios N-proc / 1-proc, and of the comparison's scaling efficiency
(N-proc images/s / (N x 1-proc images/s)).

Part 2, the DDP wrapper's overhead: one process trains the same config as an ordinary
`gpu_train_monitor.engine.session.TrainingSession` and as a data-parallel session
(`gpu_train_monitor.distributed.strategy.data_parallel_session`) in a world of 1 (this process is rank 0 of 1:
the model in DistributedDataParallel, a gloo group on the CPU, NCCL on CUDA, every report an all_gather), in this
process, alternating (D P, P D, ...). Each run's samples/s is
its summary's (the median over its reports after warm-up); the ratio is the median of the per-pair ratios
DDP / plain. Both runs draw the same data and weights, so their losses are printed side by side as a check.
Target on a GPU: >= 0.97 (resnet18, batch 256); on the CPU (tiny-cnn at batch 256, resnet18 at batch 16)
the ratio is reported against no target.

The share of CPU time other processes used is printed for each part: it says how far to trust the
numbers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.devices import resolve_device
from gpu_train_monitor.events.events import RunStarted, StepsReported

REPO = Path(__file__).resolve().parent.parent.parent
TARGET_DDP_VS_PLAIN_GPU = 0.97  # data-parallel session (world of 1) / TrainingSession samples/s, on a GPU
DDP_MODELS = ("tiny-cnn", "resnet18")
COMPARE_STOP_GRACE_S = 10.0  # a comparison past its limit gets SIGTERM (its ranks stop), then SIGKILL
LOSS_STEPS = 10  # the first steps whose losses the DDP and plain runs should share


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---- how busy the machine is -----------------------------------------------------------------------


def cpu_ticks() -> tuple[float, float, float] | None:
    """(busy CPU seconds of the whole machine, of this process and its reaped children, wall clock);
    None where /proc/stat does not exist. The comparisons' rank processes are reaped by the comparison,
    which this process reaps: their CPU time counts as ours once it has ended."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    busy = sum(fields[:3]) + sum(fields[5:8])
    return busy / os.sysconf("SC_CLK_TCK"), sum(os.times()[:4]), time.perf_counter()


@dataclass
class OtherLoad:
    """Share of all CPUs that other processes used since this was made (Linux; else None)."""

    start: tuple[float, float, float] | None = field(default_factory=cpu_ticks)

    def share(self) -> float | None:
        end = cpu_ticks()
        if self.start is None or end is None:
            return None
        busy, own, wall = (e - s for e, s in zip(end, self.start))
        return min(max((busy - own) / ((os.cpu_count() or 1) * max(wall, 1e-9)), 0.0), 1.0)


def busy_note(share: float | None) -> str:
    return "" if share is None else f" (other processes: {share:.0%} CPU)"


# ---- part 1: 1 process against N -------------------------------------------------------------------


@dataclass
class ScalingSizes:
    model: str
    nproc: int
    batch: int
    steps: int
    synthetic_samples: int
    device: str  # as the CLI takes it: cpu or cuda


def compare_once(sizes: ScalingSizes, placement: str, first: int, json_path: Path, limit_s: float) -> dict[str, Any]:
    """One round: `compare --vs nproc=first --vs nproc=other`; the comparison's JSON."""
    other = sizes.nproc if first == 1 else 1
    argv = [
        sys.executable,
        "-m",
        "gpu_train_monitor",
        "compare",
        "--vs",
        f"nproc={first}",
        "--vs",
        f"nproc={other}",
        "--device",
        sizes.device,
        "--model",
        sizes.model,
        "--dataset",
        "synthetic",
        "--batch-size",
        str(sizes.batch),
        "--synthetic-samples",
        str(sizes.synthetic_samples),
        "--max-steps",
        str(sizes.steps),
        "--placement",
        placement,
        "--seed",
        "0",
        "--json",
        str(json_path),
        "--no-record",
    ]
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""),
    )
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            code = proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)  # the comparison stops its ranks
            try:
                proc.wait(timeout=COMPARE_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise RuntimeError(f"compare ({placement}, nproc {first} first) took over {limit_s:.0f} s") from None
        stderr.seek(0)
        tail = " | ".join(line.strip() for line in stderr.read().decode(errors="replace").splitlines()[-3:])
    if code != 0:
        raise RuntimeError(f"compare ({placement}) exited {code}: {tail[-400:]}")
    return json.loads(json_path.read_text(encoding="utf-8"))


def bench_scaling(sizes: ScalingSizes, placements: list[str], repeats: int, limit_s: float) -> dict[str, Any]:
    """Per placement: each side's images/s per round, the ratios and the comparison's scaling efficiency."""
    results: dict[str, Any] = {}
    folder = Path(tempfile.mkdtemp(prefix="bench-parallel-"))
    for placement in placements:
        one, many, ratios, efficiencies, shares = [], [], [], [], []
        for rep in range(repeats):
            first = 1 if rep % 2 == 0 else sizes.nproc
            gc.collect()
            load = OtherLoad()
            data = compare_once(sizes, placement, first, folder / f"{placement}-{rep}.json", limit_s)
            shares.append(load.share())
            by_nproc = {run["overrides"]["nproc"]: run for run in data["runs"]}
            if data["status"] != "completed" or any(r["samples_per_s"] is None for r in by_nproc.values()):
                raise RuntimeError(f"compare ({placement}) did not measure both runs: {data['headline']}")
            r1, rn = by_nproc[1]["samples_per_s"], by_nproc[sizes.nproc]["samples_per_s"]
            index = str(by_nproc[sizes.nproc]["index"])
            efficiency = data["scaling_efficiency"].get(index, rn / (sizes.nproc * r1))
            one.append(r1)
            many.append(rn)
            ratios.append(rn / r1)
            efficiencies.append(efficiency)
            log(
                f"[scaling] {placement} round {rep + 1}/{repeats} (nproc {first} first{busy_note(shares[-1])}): "
                f"1 process {r1:,.0f}, {sizes.nproc} processes {rn:,.0f} images/s, ratio {rn / r1:.2f}, "
                f"efficiency {efficiency:.0%}"
            )
        results[placement] = {
            "one_process_images_per_s": statistics.median(one),
            "n_process_images_per_s": statistics.median(many),
            "one_process_runs": one,
            "n_process_runs": many,
            "ratio": statistics.median(ratios),
            "ratios": ratios,
            "scaling_efficiency": statistics.median(efficiencies),
            "scaling_efficiencies": efficiencies,
            "other_processes_cpu_share_runs": shares,
        }
    return results


def scaling_sizes(
    device: torch.device, nproc: int | None, batch: int | None, steps: int | None, quick: bool
) -> ScalingSizes | str:
    """What part 1 races here, or why it cannot run here."""
    if device.type == "cuda":
        count = torch.cuda.device_count()
        n = nproc or count
        if n < 2 or n > count:
            return (
                f"needs 2 or more CUDA GPUs (this machine has {count})"
                if count < 2
                else f"--nproc {n}: this machine has {count} CUDA GPUs"
            )
        global_batch = batch or 256 * n
        steps = steps or (100 if quick else 300)
        return ScalingSizes("resnet18", n, global_batch, steps, min(global_batch * steps, 50_000), "cuda")
    if device.type != "cpu":
        return f"data-parallel runs train on CUDA GPUs or CPU processes, not {device.type}"
    cores = os.cpu_count() or 1
    n = nproc or 2
    if n < 2 or n > cores:
        return (
            f"needs {n} CPU cores for {n} processes (this machine has {cores})"
            if n > cores
            else "--nproc must be 2 or more"
        )
    global_batch = batch or 256
    steps = steps or (12 if quick else 24)
    return ScalingSizes("tiny-cnn", n, global_batch, steps, max(global_batch * steps, 256), "cpu")


# ---- part 2: data-parallel session (world of 1) against TrainingSession ---------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class SessionRun:
    samples_per_s: float
    losses: list[float]
    world_size: int


def run_one(config: RunConfig, device: torch.device, ddp: bool) -> SessionRun:
    """One run in this process: ordinary, or as rank 0 of a world of 1 (a fresh rendezvous port each time)."""
    import torch.distributed as dist

    from gpu_train_monitor.distributed.env import RankContext
    from gpu_train_monitor.distributed.strategy import data_parallel_session
    from gpu_train_monitor.engine.session import TrainingSession

    losses: list[float] = []
    started: list[RunStarted] = []

    def observe(event: object) -> None:
        if isinstance(event, StepsReported):
            losses.extend(event.losses)
        elif isinstance(event, RunStarted):
            started.append(event)

    if not ddp:
        finished = TrainingSession(config, [observe]).run()
    else:
        names = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")
        before = {name: os.environ.get(name) for name in names}
        local = device.index or 0  # the rank's GPU is cuda:LOCAL_RANK
        os.environ.update(
            MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1", LOCAL_RANK=str(local)
        )
        try:
            session = data_parallel_session(config.replace(device=device.type), RankContext(0, 1, local), [observe])
            finished = session.run()
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        if dist.is_initialized():
            raise RuntimeError("the data-parallel session left its process group open")
    if finished.status != "completed" or finished.summary.samples_per_s is None:
        raise RuntimeError(f"{'DDP' if ddp else 'plain'} run ended {finished.status}: {finished.message}")
    world = started[0].world_size if started else 0
    if ddp and world != 1:
        raise RuntimeError(f"the DDP run started with world size {world}, not 1")
    return SessionRun(finished.summary.samples_per_s, losses, world)


def bench_ddp(device: torch.device, model: str, batch: int, steps: int, repeats: int) -> dict[str, Any]:
    # One epoch of exactly `steps` batches on the CPU: validation comes after the timed steps.
    samples = max(batch * steps, 256) if device.type == "cpu" else min(max(batch * steps, 256), 50_000)
    config = RunConfig(
        device=str(device),
        model=model,
        dataset="synthetic",
        synthetic_samples=samples,
        batch_size=batch,
        max_steps=steps,
        placement="resident",
        seed=0,
    )
    plain, ddp, ratios, diffs, shares = [], [], [], [], []
    for rep in range(repeats):
        order = (True, False) if rep % 2 == 0 else (False, True)
        runs: dict[bool, SessionRun] = {}
        load = OtherLoad()
        for is_ddp in order:
            gc.collect()
            runs[is_ddp] = run_one(config, device, is_ddp)
        shares.append(load.share())
        d, p = runs[True], runs[False]
        plain.append(p.samples_per_s)
        ddp.append(d.samples_per_s)
        ratios.append(d.samples_per_s / p.samples_per_s)
        n = min(len(d.losses), len(p.losses), LOSS_STEPS)
        diffs.append(max((abs(a - b) for a, b in zip(d.losses[:n], p.losses[:n])), default=float("nan")))
        log(
            f"[ddp] {model} b{batch} pair {rep + 1}/{repeats} ({'DDP first' if order[0] else 'plain first'}"
            f"{busy_note(shares[-1])}): DDP {d.samples_per_s:,.1f}, plain {p.samples_per_s:,.1f} samples/s, "
            f"ratio {ratios[-1]:.3f}; first {n} losses differ by at most {diffs[-1]:.2e}"
        )
    return {
        "batch": batch,
        "steps": steps,
        "plain_samples_per_s": statistics.median(plain),
        "ddp_samples_per_s": statistics.median(ddp),
        "plain_runs": plain,
        "ddp_runs": ddp,
        "ratio": statistics.median(ratios),
        "pair_ratios": ratios,
        "max_abs_loss_diff": max(diffs),
        "backend": "nccl" if device.type == "cuda" else "gloo",
        "other_processes_cpu_share_runs": shares,
    }


def ddp_sizes(
    device: torch.device, models: list[str], args: argparse.Namespace, quick: bool
) -> list[tuple[str, int, int]]:
    """(model, batch, steps) per model of part 2."""
    if device.type == "cuda":
        defaults = {"resnet18": (256, 100 if quick else 300), "tiny-cnn": (256, 300 if quick else 1000)}
    else:
        defaults = {"tiny-cnn": (256, 10 if quick else 20), "resnet18": (16, 5 if quick else 8)}
    chosen = {"tiny-cnn": (args.tiny_batch, args.tiny_steps), "resnet18": (args.resnet_batch, args.resnet_steps)}
    return [(m, chosen[m][0] or defaults[m][0], chosen[m][1] or defaults[m][1]) for m in models]


# ---- report ----------------------------------------------------------------------------------------


def fmt(value: float) -> str:
    if value < 10:
        return f"{value:.3f}"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def print_table(rows: list[tuple[str, list[float], str]]) -> None:
    header = ("measurement", "median", "min", "max", "ratio")
    cells = [header] + [(name, fmt(statistics.median(v)), fmt(min(v)), fmt(max(v)), ratio) for name, v, ratio in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(5)]
    for i, row in enumerate(cells):
        print("  ".join(row[c].ljust(widths[c]) if c == 0 else row[c].rjust(widths[c]) for c in range(5)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda[:N] (default: auto)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="rounds of each part, medians reported (default 3; 1 with --quick)"
    )
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer steps, tiny-cnn only in part 2")
    parser.add_argument("--part", choices=("all", "scaling", "ddp"), default="all")
    parser.add_argument(
        "--nproc",
        type=int,
        default=None,
        help="processes of part 1 (default: 2 on the CPU, every GPU on a CUDA machine)",
    )
    parser.add_argument(
        "--placements",
        default="resident",
        help="placements of part 1, comma-separated: resident, stream (default: resident)",
    )
    parser.add_argument(
        "--batch", type=int, default=None, help="global batch of part 1 (default 256 on the CPU, 256 x GPUs on CUDA)"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="steps per run of part 1 (default 24 on the CPU, 12 with --quick; 300 on CUDA)",
    )
    parser.add_argument(
        "--models",
        default=None,
        help="models of part 2, comma-separated (default: tiny-cnn,"
        "resnet18 on the CPU, tiny-cnn with --quick; resnet18 on CUDA)",
    )
    parser.add_argument("--tiny-batch", type=int, default=None, help="tiny-cnn batch of part 2 (default 256)")
    parser.add_argument("--tiny-steps", type=int, default=None, help="tiny-cnn steps of part 2 (CPU default 20)")
    parser.add_argument(
        "--resnet-batch", type=int, default=None, help="resnet18 batch of part 2 (default 16 on the CPU, 256 on CUDA)"
    )
    parser.add_argument("--resnet-steps", type=int, default=None, help="resnet18 steps of part 2 (CPU default 8)")
    args = parser.parse_args(argv)

    quick = args.quick
    repeats = args.repeats if args.repeats is not None else (1 if quick else 3)
    for option in ("repeats", "nproc", "batch", "steps", "tiny_batch", "tiny_steps", "resnet_batch", "resnet_steps"):
        value = repeats if option == "repeats" else getattr(args, option)
        if value is not None and value < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1")
    placements = [p.strip() for p in args.placements.split(",") if p.strip()]
    if not placements or any(p not in ("resident", "stream") for p in placements):
        parser.error("--placements takes a comma-separated list of resident, stream")
    device = resolve_device(args.device)
    kind = "cpu" if device.type == "cpu" else "gpu"
    default_models = ["resnet18"] if device.type == "cuda" else (["tiny-cnn"] if quick else list(DDP_MODELS))
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else default_models
    if not models or any(m not in DDP_MODELS for m in models):
        parser.error(f"--models takes a comma-separated list of {', '.join(DDP_MODELS)}")
    started = time.perf_counter()
    threads_one = torch.get_num_threads()
    log(f"device {device}, torch {torch.__version__}, {threads_one} threads, {os.cpu_count()} cores, repeats {repeats}")

    result: dict[str, Any] = {
        "device": str(device),
        "device_kind": kind,
        "repeats": repeats,
        "quick": quick,
        "targets": {"ddp_vs_plain_gpu": TARGET_DDP_VS_PLAIN_GPU},
        "scaling": {},
        "ddp": {},
    }
    rows: list[tuple[str, list[float], str]] = []
    verdicts: list[str] = []
    loads: dict[str, float | None] = {}
    failures: list[str] = []

    if args.part in ("all", "scaling"):
        sizes = scaling_sizes(device, args.nproc, args.batch, args.steps, quick)
        if isinstance(sizes, str):
            result["scaling"] = {"skipped": sizes}
            verdicts.append(f"scaling: skipped: {sizes}")
        else:
            n = sizes.nproc
            per_rank = os.environ.get("OMP_NUM_THREADS") or str(max(1, (os.cpu_count() or 1) // n))
            threads = {"one_process": threads_one, "per_rank": int(per_rank)} if device.type == "cpu" else None
            result["scaling"] = {
                "model": sizes.model,
                "nproc": n,
                "batch": sizes.batch,
                "steps": sizes.steps,
                "synthetic_samples": sizes.synthetic_samples,
                "device": sizes.device,
                "backend": "nccl" if device.type == "cuda" else "gloo",
                "threads": threads,
                "placements": {},
            }
            # a run is ~12 s on 2 cores; each comparison also starts the ranks: a generous limit, a hang ends
            limit = 240.0 if device.type == "cpu" else 300.0
            load = OtherLoad()
            try:
                result["scaling"]["placements"] = bench_scaling(sizes, placements, repeats, limit)
            except (RuntimeError, OSError, ValueError, KeyError) as error:
                failures.append(f"scaling: {error}")
            loads["scaling"] = load.share()
            one_side, n_side = (
                ("1 GPU", f"{n} GPUs")
                if device.type == "cuda"
                else (f"1 process ({threads_one} threads)", f"{n} processes ({per_rank} thread(s) each)")
            )
            for placement, r in result["scaling"]["placements"].items():
                what = f"{sizes.model} b{sizes.batch} {placement}, {sizes.steps} steps"
                rows.append((f"images/s {what}: {one_side}", r["one_process_runs"], "1.00 (reference)"))
                rows.append(
                    (f"images/s {what}: {n_side}", r["n_process_runs"], f"{r['ratio']:.2f}x (median of rounds)")
                )
                rows.append(
                    (
                        f"  scaling efficiency: {n} x 1's images/s against {n}'s",
                        r["scaling_efficiencies"],
                        f"{r['scaling_efficiency']:.0%}",
                    )
                )
                verdicts.append(
                    f"scaling, {placement}: {n_side} train {r['ratio']:.2f}x as fast as {one_side}; "
                    f"efficiency {r['scaling_efficiency']:.0%} (no target: reported)"
                )
            if threads:
                verdicts.append(
                    f"threads: the 1-process run uses torch's default ({threads_one}); each of the {n} "
                    f"ranks gets {per_rank} (OMP_NUM_THREADS"
                    f"{' as set' if os.environ.get('OMP_NUM_THREADS') else ' = cores / N, set by the engine'})"
                    "; the launcher and the relay share the cores too"
                )

    if args.part in ("all", "ddp"):
        if device.type not in ("cpu", "cuda"):
            result["ddp"] = {"skipped": f"data-parallel runs train on CUDA GPUs or CPU processes, not {device.type}"}
            verdicts.append(f"DDP overhead: skipped: {result['ddp']['skipped']}")
        for model, batch, steps in ddp_sizes(device, models, args, quick) if device.type in ("cpu", "cuda") else []:
            load = OtherLoad()
            try:
                r = bench_ddp(device, model, batch, steps, repeats)
            except (RuntimeError, OSError, ValueError) as error:
                failures.append(f"DDP overhead, {model}: {type(error).__name__}: {error}")
                continue
            finally:
                loads[f"DDP overhead, {model}"] = load.share()
            result["ddp"][model] = r
            backend = r["backend"]
            rows.append((f"samples/s {model} b{batch}: TrainingSession", r["plain_runs"], "1.00 (reference)"))
            rows.append(
                (
                    f"samples/s {model} b{batch}: data-parallel session, world of 1 (DDP, {backend})",
                    r["ddp_runs"],
                    f"{r['ratio']:.3f} (paired median; {min(r['pair_ratios']):.3f}..{max(r['pair_ratios']):.3f})",
                )
            )
            target = (
                (
                    f"target >= {TARGET_DDP_VS_PLAIN_GPU} on a GPU: "
                    + ("met" if r["ratio"] >= TARGET_DDP_VS_PLAIN_GPU else "NOT met")
                )
                if kind == "gpu"
                else f"target >= {TARGET_DDP_VS_PLAIN_GPU} is for a GPU: reported"
            )
            verdicts.append(
                f"DDP overhead, {model} b{batch}: DDP / plain {r['ratio']:.3f} ({target})  [first "
                f"{LOSS_STEPS} losses differ by at most {r['max_abs_loss_diff']:.2e}]"
            )

    total = time.perf_counter() - started
    result["total_s"] = total
    result["other_processes_cpu_share"] = loads
    print()
    if rows:
        print_table(rows)
        print()
    for verdict in verdicts:
        print(verdict)
    for part, share in loads.items():
        if share is not None:
            print(
                f"other processes used {share:.0%} of the CPUs during {part}"
                + ("  <- a busy machine: expect noisy numbers" if share > 0.10 else "")
            )
    print(f"device {device}; total {total:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if failures:
        for failure in failures:
            log(f"FAILED: {failure}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
