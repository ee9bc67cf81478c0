"""The headless command line: `run`, `compare`, `find-batch-size`, `predict`, `runs`, `watch`, `agent`, `snapshot`,
`devices`, `models` and `info`.

Options come from the bounds tables (gpu_train_monitor.cli.options), the same ones that validate `RunConfig` and build
the GUI form. Bad input exits with code 2 and one line on stderr naming the option and what is allowed;
never a traceback. Neither does Ctrl+C (exit 130), SIGTERM (143: a run stops like Stop, with its summary)
or a closed stdout (`| head`, exit 1).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..base.errors import UserError
from ..base.text import printable
from ..distributed.env import DEFAULT_TIMEOUT_S
from ..events.signals import Terminated, sigterm_raises
from ..events.status import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER_ERROR
from .info_commands import command_devices, command_find_batch_size, command_models, command_presets
from .options import (
    EXIT_CODES_HELP,
    PROG,
    OneLineParser,
    add_checkpoint_options,
    add_finder_options,
    add_record_options,
    add_run_options,
    parse_bytes,
    user_error_line,
)
from .remote_options import add_remote_options
from .run_command import command_run
from .stdout import StdoutFailed, flush_stdout, out, stdout_gone
from .version import version_line


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Train a PyTorch model and watch the GPU: loss, throughput and device memory.",
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    run = sub.add_parser("run", help="train headless with a progress bar", epilog=EXIT_CODES_HELP)
    add_run_options(run)
    run.add_argument(
        "--summary-json",
        metavar="PATH",
        help="write the run's summary as JSON to PATH (non-finite numbers as null; checked before the run starts)",
    )
    run.add_argument(
        "--memory-snapshot",
        metavar="PATH",
        help="CUDA: record memory history and save a snapshot for pytorch.org/memory_viz to PATH",
    )
    add_checkpoint_options(run)
    add_record_options(run)
    add_remote_options(run, "train")
    run.add_argument(
        "--dist-timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help="data-parallel runs (--nproc, torchrun): how long any collective may wait for the other "
        f"processes before the run ends naming the one that hung (default: {DEFAULT_TIMEOUT_S:g})",
    )
    compare = sub.add_parser(
        "compare",
        help="race 2 to 4 configurations over the same steps, one after another",
        epilog="example: gpu-train-monitor compare --vs device=cpu --vs device=cuda:0 --model resnet18 "
        "--max-steps 50. " + EXIT_CODES_HELP,
    )
    compare.add_argument(
        "--vs",
        action="append",
        metavar="SETTING=VALUE[,...]",
        help="one configuration: comma-separated overrides of the run options below, e.g. "
        "placement=resident or amp=bf16,channels_last=true (give 2 to 4)",
    )
    add_run_options(compare)
    add_record_options(compare)
    add_remote_options(compare, "race")
    compare.add_argument(
        "--json",
        metavar="PATH",
        help="write every run's throughput, spread, last loss and status, and the speedup, as JSON to PATH",
    )
    finder = sub.add_parser(
        "find-batch-size", help="find the largest batch size that fits in memory", epilog=EXIT_CODES_HELP
    )
    add_run_options(finder)
    finder.add_argument(
        "--capacity",
        metavar="BYTES",
        type=parse_bytes,
        help="memory to plan for, e.g. 80GB or 8e9 (default: the device's; on the CPU, the memory available now)",
    )
    add_finder_options(finder)
    finder.add_argument(
        "--no-predict",
        action="store_true",
        help="measure every candidate with real trials (doubling, then bisection), as before predictions; "
        "by default the search starts from the predicted batch and confirms it with at most 3 trials",
    )
    finder.add_argument("--json", metavar="PATH", help="write the result and every trial as JSON to PATH")
    add_remote_options(finder, "search")
    from .predict_command import add_predict_parser

    add_predict_parser(sub)
    devices = sub.add_parser("devices", help="list the devices a run can use")
    devices.add_argument("--json", action="store_true", help="print JSON instead of a table")
    sub.add_parser("models", help="list the model names --model accepts")
    sub.add_parser("presets", help="list the presets --preset accepts and what each sets")
    sub.add_parser(
        "info", help="print the versions a bug report needs (app, Python, torch, CUDA, GPUs, NVIDIA driver, PySide6)"
    )
    from .agent_command import add_agent_parser
    from .runs_command import add_runs_parser
    from .snapshot_command import add_snapshot_parser
    from .watch_command import add_watch_parser

    add_runs_parser(sub)
    add_watch_parser(sub)
    add_agent_parser(sub)
    add_snapshot_parser(sub)
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


def rank_main(argv: list[str]) -> int:
    """A rank's entry point under `--nproc`'s launcher: the same command line, run as one rank (`main` sees
    RANK / WORLD_SIZE and trains its part). Here, where every command is known: `run` is handed it."""
    from .progress import thread_lock_for_progress_bars  # tqdm: loaded by a run, not by every command

    thread_lock_for_progress_bars()
    return main(argv)


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what each rank of a data-parallel run runs again
    try:
        if args.command == "run":
            return command_run(args, rank_main)
        if args.command == "devices":
            return command_devices(args.json)
        if args.command == "models":
            return command_models()
        if args.command == "presets":
            return command_presets()
        if args.command == "info":
            from ..device.system_info import collect

            out(collect().text())
            return 0
        if args.command == "compare":
            from .compare_command import command_compare

            return command_compare(args)
        if args.command == "find-batch-size":
            return command_find_batch_size(args)
        if args.command == "predict":
            from .predict_command import command_predict

            return command_predict(args)
        if args.command == "runs":
            from .runs_command import command_runs

            return command_runs(args)
        if args.command == "watch":
            from .watch_command import command_watch

            return command_watch(args)
        if args.command == "agent":
            from .agent_command import command_agent

            return command_agent(args)
        if args.command == "snapshot":
            from .snapshot_command import command_snapshot

            return command_snapshot(args)
    except UserError as exc:
        print(f"{PROG}: error: {printable(user_error_line(exc))}", file=sys.stderr)  # it may quote another machine
        return EXIT_USER_ERROR
    parser.print_help()
    return EXIT_USER_ERROR
