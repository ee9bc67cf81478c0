"""The headless command line: `run`, `devices` and `models`.

Options come from `BOUNDS`, the same table that validates `RunConfig` and builds the GUI form. Bad input
exits with code 2 and one line on stderr naming the option and what is allowed; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from core.config import BOUNDS, RunConfig, describe_range
from core.errors import ConfigError, UserError

if TYPE_CHECKING:  # torch loads only when a run starts: bad options are reported at once
    from core.events import RunFinished

PROG = "gpu-train-monitor"
EXIT_CODES = {"completed": 0, "stopped": 130, "diverged": 1, "oom": 1, "failed": 1}
EXIT_USER_ERROR = 2
COMMANDS = ("run", "devices", "models", "find-batch-size")


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad input as one line (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message}\n")


def option_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """One option per RunConfig field, typed and documented from BOUNDS (ranges are checked by RunConfig)."""
    group = parser.add_argument_group("run options")
    for field, bound in BOUNDS.items():
        flag = option_name(field)
        help_text = f"{bound.help} ({describe_range(field)}; default: {bound.default})"
        if bound.kind is bool:
            group.add_argument(flag, dest=field, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            group.add_argument(flag, dest=field, type=bound.kind, default=None, metavar=field.upper(), help=help_text)


def config_from_args(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    """The RunConfig the options describe; unset options keep `base`'s values (the defaults)."""
    changes = {field: getattr(args, field) for field in BOUNDS if getattr(args, field, None) is not None}
    return (base or RunConfig()).replace(**changes) if changes else (base or RunConfig())


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="Train a PyTorch model and watch the GPU: loss, "
                                                  "throughput and device memory.")
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    run = sub.add_parser("run", help="train headless with a progress bar")
    add_run_options(run)
    run.add_argument("--summary-json", metavar="PATH", help="write the run's summary as JSON to PATH")
    run.add_argument("--memory-snapshot", metavar="PATH",
                     help="CUDA: record memory history and save a snapshot for pytorch.org/memory_viz to PATH")
    finder = sub.add_parser("find-batch-size", help="find the largest batch size that fits in memory")
    add_run_options(finder)
    finder.add_argument("--capacity", metavar="BYTES", type=parse_bytes,
                        help="memory to plan for, e.g. 80GB or 8e9 (default: the device's; on the CPU, "
                             "the memory available now)")
    finder.add_argument("--margin", type=float, default=0.1, help="fraction of capacity kept free (default: 0.1)")
    finder.add_argument("--start", type=int, default=1, help="first batch size tried (default: 1)")
    finder.add_argument("--max-batch", type=int, default=65536, help="largest batch size tried (default: 65536)")
    finder.add_argument("--json", metavar="PATH", help="write the result and every trial as JSON to PATH")
    devices = sub.add_parser("devices", help="list the devices a run can use")
    devices.add_argument("--json", action="store_true", help="print JSON instead of a table")
    sub.add_parser("models", help="list the model names --model accepts")
    return parser


def user_error_line(exc: UserError) -> str:
    """'--batch-size: must be ...' for config errors (the option the user typed), the message otherwise."""
    if isinstance(exc, ConfigError):
        text = str(exc)
        prefix = f"{exc.field}: "
        return f"{option_name(exc.field)}: {text[len(prefix):] if text.startswith(prefix) else text}"
    return str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return command_run(args)
        if args.command == "devices":
            return command_devices(args.json)
        if args.command == "models":
            return command_models()
        if args.command == "find-batch-size":
            return command_find_batch_size(args)
    except UserError as exc:
        print(f"{PROG}: error: {user_error_line(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    parser.print_help()
    return EXIT_USER_ERROR


def command_run(args: argparse.Namespace) -> int:
    config = config_from_args(args)  # ConfigError -> exit 2 in main()
    if args.summary_json and not Path(args.summary_json).parent.is_dir():  # fail now, not after the run
        raise ConfigError("summary_json", f"the folder for {args.summary_json} does not exist")
    from core.progress import ProgressBar
    from core.session import TrainingSession

    if args.memory_snapshot and not Path(args.memory_snapshot).resolve().parent.is_dir():
        raise ConfigError("memory_snapshot", f"the folder for {args.memory_snapshot} does not exist")
    if args.memory_snapshot:
        from core.devices import resolve_device
        from core.snapshot import unsupported_reason

        reason = unsupported_reason(resolve_device(config.device))
        if reason:
            raise ConfigError("memory_snapshot", reason)
    session = TrainingSession(config, [ProgressBar()], snapshot_path=args.memory_snapshot)

    def on_sigint(signum: int, frame: Any) -> None:  # first Ctrl+C stops cleanly, a second one aborts
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nstopping at the next step (Ctrl+C again to abort)", file=sys.stderr)
        session.request_stop()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        finished = session.run()
    finally:
        signal.signal(signal.SIGINT, previous)
    summary = finished.summary
    if args.summary_json:
        try:
            summary.write_json(args.summary_json)
        except OSError as exc:
            print(f"{PROG}: error: --summary-json: cannot write {args.summary_json} ({exc.strerror or exc})",
                  file=sys.stderr)
            return EXIT_USER_ERROR
    if finished.status == "failed" and finished.user_error:
        message = _option_message(finished.message)
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(_summary_text(finished))
    if finished.message and finished.status != "completed":
        print(f"{PROG}: {finished.status}: {finished.message}", file=sys.stderr)
    return EXIT_CODES[finished.status]


def _option_message(message: str) -> str:
    """'device: cuda:7 is not available' (a session's ConfigError) -> '--device: ...', the option typed."""
    field, sep, rest = message.partition(": ")
    return f"{option_name(field)}: {rest}" if sep and field in BOUNDS else message


def _summary_text(finished: RunFinished) -> str:
    from core.units import format_bytes

    s = finished.summary
    rate = "n/a" if s.samples_per_s is None else f"{s.samples_per_s:,.0f} images/s"
    loss = ("n/a" if s.loss_first is None else f"{s.loss_first:.4f} -> {s.loss_last:.4f}")
    acc = "n/a" if s.val_accuracy is None else f"{s.val_accuracy:.2%}"
    peak = format_bytes(s.peak_allocated_bytes) + ("" if not s.peak_reserved_bytes
                                                   else f" allocated, {format_bytes(s.peak_reserved_bytes)} reserved")
    return "\n".join([
        f"status      {s.status}",
        f"device      {s.device} ({s.device_name})",
        f"steps       {s.steps} ({s.samples} images in {s.wall_s:.1f} s)",
        f"throughput  {rate}",
        f"loss        {loss}",
        f"val acc     {acc}",
        f"peak memory {peak}" + ("" if s.peak_reserved_bytes else " (process RSS)"),
    ])


def parse_bytes(text: str) -> int:
    """'80GB', '7.5GiB', '512MB', '8e9' -> bytes (decimal units unless the i says binary)."""
    units = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
             "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
    match = re.fullmatch(r"\s*([0-9.eE+]+)\s*([a-zA-Z]*)\s*", text)
    try:
        value = float(match.group(1)) * units[match.group(2).lower()] if match else -1.0
    except (ValueError, KeyError):
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: use bytes or a unit, e.g. 80GB, 7.5GiB, 8e9")
    return int(value)


def command_find_batch_size(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    if args.json and not Path(args.json).resolve().parent.is_dir():
        raise ConfigError("json", f"the folder for {args.json} does not exist")
    from core.batch_finder import Trial, check_search_options, find_batch_size
    from core.units import format_bytes

    check_search_options(args.margin, args.start, args.max_batch)  # bad input: one line, before "searching"

    def on_trial(trial: Trial) -> None:
        peak = "out of memory" if trial.peak_bytes is None else format_bytes(trial.peak_bytes)
        print(f"  batch {trial.batch_size:>6}: peak {peak:>12}  {'fits' if trial.fits else 'too big'}",
              file=sys.stderr, flush=True)

    print(f"searching on {config.device} with {config.model}, {TRIAL_NOTE}", file=sys.stderr, flush=True)
    result = find_batch_size(config, capacity=args.capacity, margin=args.margin, start=args.start,
                             max_batch=args.max_batch, on_trial=on_trial)
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(f"batch size      {result.batch_size}")
    print(f"predicted peak  {format_bytes(result.predicted_peak(result.batch_size))} of "
          f"{format_bytes(result.limit_bytes)} allowed ({format_bytes(result.capacity_bytes)} capacity, "
          f"{result.margin:.0%} margin)")
    print(f"fit             {format_bytes(result.fixed_bytes)} fixed + {format_bytes(result.bytes_per_sample)} "
          f"per sample ({len(result.trials)} trials)")
    return 0


TRIAL_NOTE = "a few real training steps per candidate"


def command_devices(as_json: bool) -> int:
    from core.devices import list_devices
    from core.units import format_bytes

    devices = list_devices()
    if as_json:
        print(json.dumps([d.__dict__ for d in devices], indent=2))
        return 0
    print(f"{'device':<8} {'kind':<5} {'capacity':>10} {'free':>10} {'used':>10}  name")
    for d in devices:
        print(f"{d.spec:<8} {d.kind:<5} {format_bytes(d.capacity_bytes):>10} {format_bytes(d.free_bytes):>10} "
              f"{format_bytes(d.used_bytes):>10}  {d.name}")
    return 0


def command_models() -> int:
    from core.models import available_models

    print("\n".join(available_models()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
