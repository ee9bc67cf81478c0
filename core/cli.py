"""The headless command line: `run`, `compare`, `find-batch-size`, `runs`, `devices`, `models` and `info`.

Options come from the bounds tables (core.options), the same ones that validate `RunConfig` and build
the GUI form. Bad input exits with code 2 and one line on stderr naming the option and what is allowed;
never a traceback. Neither does Ctrl+C (exit 130), SIGTERM (143: a run stops like Stop, with its summary)
or a closed stdout (`| head`, exit 1).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError, UserError
from core.distributed_env import DEFAULT_TIMEOUT_S
from core.options import (COMMANDS, EXIT_CODES, EXIT_CODES_HELP, EXIT_INTERRUPTED, EXIT_TERMINATED,
                          EXIT_USER_ERROR, PROG, OneLineParser, add_checkpoint_options, add_finder_options,
                          add_record_options, add_run_options, checkpoint_policy, config_from_args, option_message,
                          option_name, parse_bytes, resumed_config_from_args, user_error_line)
from core.outputs import check_output_path, write_json

if TYPE_CHECKING:  # torch loads only when a run starts: bad options are reported at once
    from core.events import RunFinished

__all__ = ["COMMANDS", "PROG", "build_parser", "config_from_args", "main", "option_name"]  # re-exported


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that finally blocks run (the finder kills its trial process)."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="Train a PyTorch model and watch the GPU: loss, "
                                                  "throughput and device memory.", epilog=EXIT_CODES_HELP)
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    run = sub.add_parser("run", help="train headless with a progress bar", epilog=EXIT_CODES_HELP)
    add_run_options(run)
    run.add_argument("--summary-json", metavar="PATH", help="write the run's summary as JSON to PATH (non-finite "
                                                             "numbers as null; checked before the run starts)")
    run.add_argument("--memory-snapshot", metavar="PATH",
                     help="CUDA: record memory history and save a snapshot for pytorch.org/memory_viz to PATH")
    add_checkpoint_options(run)
    add_record_options(run)
    run.add_argument("--dist-timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT_S,
                     help="data-parallel runs (--nproc, torchrun): how long any collective may wait for the other "
                          f"processes before the run ends naming the one that hung (default: {DEFAULT_TIMEOUT_S:g})")
    compare = sub.add_parser(
        "compare", help="race 2 to 4 configurations over the same steps, one after another",
        epilog="example: gpu-train-monitor compare --vs device=cpu --vs device=cuda:0 --model resnet18 "
               "--max-steps 50. " + EXIT_CODES_HELP)
    compare.add_argument("--vs", action="append", metavar="SETTING=VALUE[,...]",
                         help="one configuration: comma-separated overrides of the run options below, e.g. "
                              "placement=resident or amp=bf16,channels_last=true (give 2 to 4)")
    add_run_options(compare)
    add_record_options(compare)
    compare.add_argument("--json", metavar="PATH", help="write every run's throughput, spread, last loss and "
                                                        "status, and the speedup, as JSON to PATH")
    finder = sub.add_parser("find-batch-size", help="find the largest batch size that fits in memory",
                            epilog=EXIT_CODES_HELP)
    add_run_options(finder)
    finder.add_argument("--capacity", metavar="BYTES", type=parse_bytes,
                        help="memory to plan for, e.g. 80GB or 8e9 (default: the device's; on the CPU, "
                             "the memory available now)")
    add_finder_options(finder)
    finder.add_argument("--json", metavar="PATH", help="write the result and every trial as JSON to PATH")
    devices = sub.add_parser("devices", help="list the devices a run can use")
    devices.add_argument("--json", action="store_true", help="print JSON instead of a table")
    sub.add_parser("models", help="list the model names --model accepts")
    sub.add_parser("presets", help="list the presets --preset accepts and what each sets")
    sub.add_parser("info", help="print the versions a bug report needs (app, Python, torch, CUDA, GPUs, "
                                "NVIDIA driver, PySide6)")
    from core.runs_cli import add_runs_parser

    add_runs_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code; Ctrl+C, SIGTERM and a closed stdout end it quietly."""
    try:
        with _sigterm_raises():
            try:
                code = _dispatch(argv)
            except SystemExit as exc:  # argparse after -h or a bad option (its message is written already)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USER_ERROR)
            _flush_stdout()  # a closed stdout shows here at the latest, while it can still be handled
            return code
    except KeyboardInterrupt:  # Ctrl+C before a run could handle it (torch importing) or a second one
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except StdoutFailed as failed:
        return _stdout_gone(failed.error)
    except BrokenPipeError as exc:  # as Python's documentation treats it: the reader of stdout left
        return _stdout_gone(exc)


class StdoutFailed(Exception):
    """Writing to stdout failed: its reader left (| head) or its file cannot grow (> /dev/full)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def out(text: str) -> None:
    """print() to stdout; a failure there becomes StdoutFailed, which main() reports without a traceback."""
    try:
        print(text)
    except OSError as exc:
        raise StdoutFailed(exc) from exc


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except OSError as exc:
        raise StdoutFailed(exc) from exc


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what each rank of a data-parallel run runs again
    try:
        if args.command == "run":
            return command_run(args)
        if args.command == "devices":
            return command_devices(args.json)
        if args.command == "models":
            return command_models()
        if args.command == "presets":
            return command_presets()
        if args.command == "info":
            from core.system_info import collect

            out(collect().text())
            return 0
        if args.command == "compare":
            from core.compare_cli import command_compare

            return command_compare(args)
        if args.command == "find-batch-size":
            return command_find_batch_size(args)
        if args.command == "runs":
            from core.runs_cli import command_runs

            return command_runs(args)
    except UserError as exc:
        print(f"{PROG}: error: {user_error_line(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    parser.print_help()
    return EXIT_USER_ERROR


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises Terminated in the main thread while a command runs; the old handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stdout_gone(exc: OSError) -> int:
    """Exit 1 without a traceback, as Python's documentation advises for SIGPIPE: point stdout at devnull so
    the interpreter's last flush succeeds. A reader that left (| head) needs no message; a full disk does."""
    if not isinstance(exc, BrokenPipeError):
        print(f"{PROG}: error: cannot write to stdout ({exc.strerror or exc})", file=sys.stderr)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (a test's capture)
        pass
    return 1


def command_run(args: argparse.Namespace) -> int:
    from core.distributed_env import RankContext

    context = RankContext.from_environment()  # a rank under torchrun or under --nproc's launcher
    config = resumed_config_from_args(args) if args.resume else config_from_args(args)  # UserError -> exit 2
    if context is not None or config.nproc > 1:
        from core.rank_cli import command_data_parallel

        return command_data_parallel(args, config, context)
    checkpoints = checkpoint_policy(args)
    for field in ("summary_json", "memory_snapshot"):  # a bad path fails now, not after the run
        if getattr(args, field):
            check_output_path(field, getattr(args, field))
    from core.progress import ProgressBar
    from core.session import TrainingSession

    if args.memory_snapshot:
        from core.devices import resolve_device
        from core.snapshot import unsupported_reason

        reason = unsupported_reason(resolve_device(config.device))
        if reason:
            raise ConfigError("memory_snapshot", reason)
    session = TrainingSession(config, [ProgressBar()], snapshot_path=args.memory_snapshot, checkpoints=checkpoints,
                              resume=args.resume)
    with recording(args, session.observers), stop_on_signals(session) as signals:
        finished = session.run()
    return report_finished(args, finished, signals)


def report_finished(args: argparse.Namespace, finished: RunFinished, signals: SignalsSeen) -> int:
    """The end of `run` (or of a data-parallel run's rank 0): the summary JSON, the summary, the exit code."""
    save_error = save_json("summary_json", args.summary_json, finished.summary.to_dict(), "summary")
    if finished.status == "failed" and finished.user_error:
        print(f"{PROG}: error: {option_message(finished.error_field, finished.message)}", file=sys.stderr)
        return EXIT_USER_ERROR
    out(_summary_text(finished))
    if finished.message and finished.status != "completed":
        print(f"{PROG}: {finished.status}: {finished.message}", file=sys.stderr)
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    return EXIT_TERMINATED if signals.terminated and finished.status == "stopped" else EXIT_CODES[finished.status]


@contextlib.contextmanager
def recording(args: argparse.Namespace, observers: list[Any]) -> Iterator[Any]:
    """Record the run(s) in the run store unless --no-record: a store that cannot be used is one warning line
    and the run trains unrecorded. At the end, says where the run was recorded."""
    if args.no_record:
        yield None
        return
    from core.run_recorder import open_recorder

    def warn(text: str) -> None:
        print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True)

    recorder = open_recorder(args.runs_db, warn, on_problem=warn)
    if recorder is not None:
        observers.append(recorder)
    try:
        yield recorder
    finally:
        if recorder is not None:
            recorder.close()
            if recorder.run_ids and recorder.problem is None:
                ids = ", ".join(str(run_id) for run_id in recorder.run_ids)
                print(f"recorded as run {ids} in {recorder.path} (`{PROG} runs show {recorder.run_ids[-1]}`)",
                      file=sys.stderr)


class SignalsSeen:
    terminated = False


@contextlib.contextmanager
def stop_on_signals(controls: Any, abort_on_repeat: bool = True) -> Iterator[SignalsSeen]:
    """While a run (or a comparison) trains: the first Ctrl+C or SIGTERM stops it at the next step, as Stop
    does (summary printed, JSON written); a second one aborts. `terminated` says SIGTERM stopped it. SIGUSR1
    clears the cache and SIGUSR2 pauses or resumes: how a window watching the recorded pid steers the run."""
    seen = SignalsSeen()

    def on_sigint(signum: int, frame: Any) -> None:
        if abort_on_repeat:  # a rank gets a Ctrl+C twice (the terminal's, then its launcher's): the same stop
            signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nstopping at the next step (Ctrl+C again to abort)", file=sys.stderr)
        controls.request_stop()

    def on_sigterm(signum: int, frame: Any) -> None:
        seen.terminated = True
        if abort_on_repeat:
            signal.signal(signal.SIGTERM, previous_term)  # a second SIGTERM aborts
        print("\nterminated: stopping at the next step", file=sys.stderr)
        controls.request_stop()

    def on_sigusr1(signum: int, frame: Any) -> None:  # the window's Clear cache, for a run it watches
        if hasattr(controls, "request_cache_clear"):
            controls.request_cache_clear()

    def on_sigusr2(signum: int, frame: Any) -> None:  # the window's Pause / Resume, for a run it watches
        if hasattr(controls, "pause"):
            controls.resume() if controls.pause_requested else controls.pause()

    previous_int = signal.signal(signal.SIGINT, on_sigint)
    previous_term = signal.signal(signal.SIGTERM, on_sigterm)
    previous_usr1 = signal.signal(signal.SIGUSR1, on_sigusr1)
    previous_usr2 = signal.signal(signal.SIGUSR2, on_sigusr2)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGUSR1, previous_usr1)
        signal.signal(signal.SIGUSR2, previous_usr2)


def save_json(field: str, path: str | None, value: Any, what: str) -> str | None:
    """Write `value` to `path` (atomically); the error line to print when that failed, else None."""
    if not path:
        return None
    try:
        write_json(path, value)
    except OSError as exc:
        return f"{PROG}: error: {option_name(field)}: could not save to {path} ({exc.strerror or exc}); " \
               f"the {what} is on stdout"
    return None


def _summary_text(finished: RunFinished) -> str:
    from core.event_text import batch_size_text
    from core.units import format_bytes

    s = finished.summary
    rate = "n/a" if s.samples_per_s is None else f"{s.samples_per_s:,.0f} images/s"
    loss = ("n/a" if s.loss_first is None else f"{s.loss_first:.4f} -> {s.loss_last:.4f}")
    acc = "n/a" if s.val_accuracy is None else f"{s.val_accuracy:.2%}"
    peak = format_bytes(s.peak_allocated_bytes) + ("" if not s.peak_reserved_bytes
                                                   else f" allocated, {format_bytes(s.peak_reserved_bytes)} reserved")
    return "\n".join([
        f"status      {s.status}",
        f"device      {s.device} ({s.device_name})" + (f", {s.world_size} processes (data-parallel)" if s.world_size > 1 else ""),
        f"steps       {s.steps} ({s.samples} images in {s.wall_s:.1f} s)",
        f"batch size  {batch_size_text(s)}",
        f"throughput  {rate}" + ("" if s.compile_s is None else f" (after {s.compile_s:.1f} s compiling)"),
        f"loss        {loss}",
        f"val acc     {acc}",
        f"peak memory {peak}" + ("" if s.peak_reserved_bytes else " (process RSS)"),
    ])


def command_find_batch_size(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    from core.batch_finder import Trial, check_search_options, find_batch_size  # torch loads lazily

    check_search_options(args.margin, args.start, args.max_batch)  # bad input: one line, before "searching"
    if args.json:
        check_output_path("json", args.json)
    from core.units import format_bytes

    def on_trial(trial: Trial) -> None:
        peak = "out of memory" if trial.peak_bytes is None else format_bytes(trial.peak_bytes)
        print(f"  batch {trial.batch_size:>6}: peak {peak:>12}  {'fits' if trial.fits else 'too big'}",
              file=sys.stderr, flush=True)

    print(f"searching on {config.device} with {config.model}, {TRIAL_NOTE}", file=sys.stderr, flush=True)
    result = find_batch_size(config, capacity=args.capacity, margin=args.margin, start=args.start,
                             max_batch=args.max_batch, on_trial=on_trial)
    save_error = save_json("json", args.json, result.to_dict(), "result")
    out(f"batch size      {result.batch_size}")
    out(f"predicted peak  {format_bytes(result.predicted_peak(result.batch_size))} of "
          f"{format_bytes(result.limit_bytes)} allowed ({format_bytes(result.capacity_bytes)} capacity, "
          f"{result.margin:.0%} margin)")
    out(f"fit             {format_bytes(result.fixed_bytes)} fixed + {format_bytes(result.bytes_per_sample)} "
          f"per sample ({len(result.trials)} trials)")
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    return 0


TRIAL_NOTE = "a few real training steps per candidate"


def command_devices(as_json: bool) -> int:
    from core.devices import list_devices
    from core.units import format_bytes

    devices = list_devices()
    if as_json:
        out(json.dumps([d.__dict__ for d in devices], indent=2))
        return 0
    out(f"{'device':<8} {'kind':<5} {'capacity':>10} {'free':>10} {'used':>10}  name")
    for d in devices:
        out(f"{d.spec:<8} {d.kind:<5} {format_bytes(d.capacity_bytes):>10} {format_bytes(d.free_bytes):>10} "
              f"{format_bytes(d.used_bytes):>10}  {d.name}")
    return 0


def command_models() -> int:
    from core.models import available_models

    out("\n".join(available_models()))
    print("or your own: --model package.module:factory (or path/to/file.py:factory), a callable returning an "
          "nn.Module", file=sys.stderr)  # beside the list, not in it: the list stays one name a line
    return 0


def command_presets() -> int:
    from core.presets import PRESETS, preset_text

    for value in PRESETS.values():
        out(f"{value.name}: {value.description}")
        out(f"  {preset_text(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
