"""The headless command line: `run`, `compare`, `find-batch-size`, `runs`, `devices`, `models` and `info`.

Options come from the bounds tables (core.cli.options), the same ones that validate `RunConfig` and build
the GUI form. Bad input exits with code 2 and one line on stderr naming the option and what is allowed;
never a traceback. Neither does Ctrl+C (exit 130), SIGTERM (143: a run stops like Stop, with its summary)
or a closed stdout (`| head`, exit 1).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from core.base.errors import ConfigError, UserError
from core.base.outputs import (
    check_distinct_outputs,
    check_output_path,
    command_protection,
)
from core.base.text import Message
from core.cli.info_commands import (
    command_devices,
    command_find_batch_size,
    command_models,
    command_presets,
)
from core.cli.options import (
    COMMANDS,
    EXIT_CODES,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USER_ERROR,
    PROG,
    OneLineParser,
    add_checkpoint_options,
    add_finder_options,
    add_record_options,
    add_run_options,
    checkpoint_policy,
    config_from_args,
    option_message,
    option_name,
    parse_bytes,
    resumed_config_from_args,
    user_error_line,
)
from core.cli.stdout import StdoutFailed, flush_stdout, out, save_json, stdout_gone
from core.distributed.env import DEFAULT_TIMEOUT_S
from core.run.signals import SignalsSeen, Terminated, sigterm_raises, stop_on_signals

if TYPE_CHECKING:  # torch loads only when a run starts: bad options are reported at once
    from core.run.events import RunFinished

__all__ = ["COMMANDS", "PROG", "build_parser", "config_from_args", "main", "option_name", "out", "recording",
           "report_finished", "stop_on_signals"]  # re-exported



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
    from core.cli.runs_command import add_runs_parser

    add_runs_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code; Ctrl+C, SIGTERM and a closed stdout end it quietly."""
    try:
        with sigterm_raises():
            try:
                code = _dispatch(argv)
            except SystemExit as exc:  # argparse after -h or a bad option (its message is written already)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USER_ERROR)
            flush_stdout()  # a closed stdout shows here at the latest, while it can still be handled
            return code
    except KeyboardInterrupt:  # Ctrl+C before a run could handle it (torch importing) or a second one
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except StdoutFailed as failed:
        return stdout_gone(failed.error)
    except BrokenPipeError as exc:  # as Python's documentation treats it: the reader of stdout left
        return stdout_gone(exc)



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
            from core.device.system_info import collect

            out(collect().text())
            return 0
        if args.command == "compare":
            from core.cli.compare_command import command_compare

            return command_compare(args)
        if args.command == "find-batch-size":
            return command_find_batch_size(args)
        if args.command == "runs":
            from core.cli.runs_command import command_runs

            return command_runs(args)
    except UserError as exc:
        print(f"{PROG}: error: {user_error_line(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    parser.print_help()
    return EXIT_USER_ERROR



def command_run(args: argparse.Namespace) -> int:
    from core.distributed.env import RankContext

    context = RankContext.from_environment()  # a rank under torchrun or under --nproc's launcher
    config = resumed_config_from_args(args) if args.resume else config_from_args(args)  # UserError -> exit 2
    check_distinct_outputs({"summary_json": args.summary_json, "memory_snapshot": args.memory_snapshot},
                           command_protection(args, [config]))  # never the store, the checkpoint or the data
    if args.sync_bn and context is None and config.nproc == 1:  # an option that would do nothing is refused
        raise ConfigError("sync_bn", Message("synchronises BatchNorm over the processes of a data-parallel run, and "
                                             "this run is one process; add --nproc N (2 or more) or leave --sync-bn "
                                             "out"))
    if context is not None or config.nproc > 1:
        from core.cli.run_command import command_data_parallel

        return command_data_parallel(args, config, context)
    checkpoints = checkpoint_policy(args)
    for field in ("summary_json", "memory_snapshot"):  # a bad path fails now, not after the run
        if getattr(args, field):
            check_output_path(field, getattr(args, field))
    from core.cli.progress import ProgressBar
    from core.engine.session import TrainingSession

    if args.memory_snapshot:
        from core.device.devices import resolve_device
        from core.memory.snapshot import unsupported_reason

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
    from core.store.recorder import open_recorder

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




def _summary_text(finished: RunFinished) -> str:
    from core.base.text import format_bytes
    from core.run.event_text import batch_size_text

    s = finished.summary
    rate = "n/a" if s.samples_per_s is None else f"{s.samples_per_s:,.0f} images/s"
    loss = ("n/a" if s.loss_first is None else f"{s.loss_first:.4f} -> {s.loss_last:.4f}")
    acc = "n/a" if s.val_accuracy is None else f"{s.val_accuracy:.2%}"
    peak = format_bytes(s.peak_allocated_bytes) + ("" if not s.peak_reserved_bytes
                                                   else f" allocated, {format_bytes(s.peak_reserved_bytes)} reserved")
    return "\n".join([
        f"status      {s.status}",
        f"device      {s.device} ({s.device_name})" + (f", {s.world_size} processes (data-parallel)" if s.world_size > 1 else ""),
        f"steps       {s.steps} ({s.samples} images in {s.wall_s:.1f} s)" if not s.start_step else
        f"steps       {s.steps} (resumed at step {s.start_step}: trained {s.steps - s.start_step} in {s.wall_s:.1f} s)",
        f"batch size  {batch_size_text(s)}",
        f"throughput  {rate}" + ("" if s.compile_s is None else f" (after {s.compile_s:.1f} s compiling)"),
        f"loss        {loss}",
        f"val acc     {acc}",
        f"peak memory {peak}" + ("" if s.peak_reserved_bytes else " (process RSS)"),
    ])



if __name__ == "__main__":
    sys.exit(main())
