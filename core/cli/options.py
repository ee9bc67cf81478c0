"""Command-line options read from the bounds tables, and how errors become one line.

Shared by the headless CLI (gpu_train_monitor.cli.main) and the window's entry point (gpu_train_monitor.gui.app), so the
window never imports the CLI. Importing this module loads neither torch nor Qt.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..base.errors import ConfigError, UserError
from ..base.outputs import Protected, store_protection
from ..base.text import Message
from ..config.bounds import BOUNDS, FINDER_BOUNDS, Bound
from ..config.field_checks import describe_range
from ..config.run_config import RunConfig, option_name
from ..events.status import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER_ERROR

if TYPE_CHECKING:
    from ..engine.checkpoint_files import CheckpointPolicy

PROG = "gpu-train-monitor"
COMMANDS = (
    "run",
    "compare",
    "devices",
    "models",
    "presets",
    "find-batch-size",
    "predict",
    "info",
    "runs",
    "watch",
    "agent",
    "snapshot",
)
EXIT_CODES_HELP = (
    f"exit codes: 0 completed; 1 diverged, out of memory or failed (or stdout was closed); "
    f"{EXIT_USER_ERROR} bad input, or a result file that could not be saved (the result is "
    f"still printed); {EXIT_INTERRUPTED} stopped by Ctrl+C; {EXIT_TERMINATED} stopped by SIGTERM"
)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad input as one line (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message}\n")


def _help(name: str, bound: Bound) -> str:
    return f"{bound.help} ({describe_range(name)}; default: {bound.default})"


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """One option per RunConfig field, typed and documented from BOUNDS (ranges are checked by RunConfig),
    and --preset, whose overrides apply under the options given explicitly."""
    group = parser.add_argument_group("run options")
    group.add_argument(
        "--preset",
        metavar="NAME",
        help="start from a named set of settings (`gpu-train-monitor presets` lists them); other options override it",
    )
    for field, bound in BOUNDS.items():
        flag = option_name(field)
        if bound.kind is bool:
            group.add_argument(
                flag, dest=field, action=argparse.BooleanOptionalAction, default=None, help=_help(field, bound)
            )
        else:
            group.add_argument(
                flag, dest=field, type=bound.kind, default=None, metavar=field.upper(), help=_help(field, bound)
            )


def add_record_options(parser: argparse.ArgumentParser) -> None:
    """--runs-db and --no-record: where the run store is, or not to record at all."""
    group = parser.add_argument_group("recording")
    group.add_argument(
        "--runs-db",
        metavar="PATH",
        help="the run store (SQLite) to record into (default: "
        "$GPU_TRAIN_MONITOR_RUNS_DB, else runs/runs.sqlite3 in the "
        "user data folder); the window shows its runs",
    )
    group.add_argument("--no-record", action="store_true", help="do not record this run in the run store")


def add_finder_options(parser: argparse.ArgumentParser) -> None:
    """find-batch-size's --margin, --start and --max-batch from FINDER_BOUNDS (checked by the finder)."""
    group = parser.add_argument_group("search options")
    for name, bound in FINDER_BOUNDS.items():
        group.add_argument(
            option_name(name),
            dest=name,
            type=bound.kind,
            default=bound.default,
            metavar=name.upper(),
            help=_help(name, bound),
        )


def config_from_args(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    """The RunConfig the options describe; unset options keep the preset's values, or `base`'s (the defaults)."""
    base = base or RunConfig()
    if getattr(args, "preset", None):
        from ..config.presets import preset

        chosen = preset(args.preset)  # an unknown name fails before torch loads
        from ..device.devices import device_kind  # loads torch, so only when a preset needs it

        base = chosen.apply(base, device_kind(getattr(args, "device", None) or base.device))
    changes = explicit_options(args)
    return base.replace(**changes) if changes else base


def store_path(runs_db: str | None) -> Path:
    """The run store --runs-db names, else the default one: where `runs` reads and a remote run is followed into."""
    from ..store.run_store import default_store_path  # the store loads only for a command that uses it

    return Path(runs_db).expanduser() if runs_db else default_store_path()


def command_protection(args: object, configs: Iterable[object] = ()) -> list[Protected]:
    """What a command's outputs must not replace: the run store it records into (unless --no-record), the
    checkpoint it resumes, and each config's (a RunConfig, or a compare --vs's overrides) --data-dir files
    and model or dataset code files."""
    guards: list[Protected] = []
    if hasattr(args, "runs_db") and not getattr(args, "no_record", False):
        from ..store.run_store import default_store_path  # the store loads only for a command that records

        runs_db = getattr(args, "runs_db", None)
        guards += store_protection(runs_db or default_store_path(), "--runs-db" if runs_db else "")
    resume = getattr(args, "resume", None)
    if resume:
        guards.append(Protected(Message("the checkpoint being resumed"), "--resume", (Path(resume).expanduser(),)))
    for config in configs:
        data_dir = _text(config, "data_dir")
        if data_dir:
            guards.append(
                Protected(Message("the dataset's folder"), "--data-dir", (Path(data_dir).expanduser(),), part=True)
            )
        for name, what in (("model", Message("your model's code")), ("dataset", Message("your dataset's code"))):
            source = _text(config, name).rpartition(":")[0].strip()
            if source.endswith(".py"):
                guards.append(Protected(what, option_name(name), (Path(source).expanduser(),)))
    return guards


def _text(config: object, name: str) -> str:
    """A config's (a RunConfig's, or a mapping of overrides') text setting `name`; '' when it has none."""
    found = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
    return found.strip() if isinstance(found, str) else ""


def explicit_options(args: argparse.Namespace) -> dict[str, Any]:
    """The RunConfig fields given on the command line (unset options are None)."""
    return {field: getattr(args, field) for field in BOUNDS if getattr(args, field, None) is not None}


def add_checkpoint_options(parser: argparse.ArgumentParser) -> None:
    """`run`'s --resume and when and where it saves checkpoints."""
    group = parser.add_argument_group("checkpoints")
    group.add_argument(
        "--resume",
        metavar="PATH",
        help="continue the run a checkpoint holds, with its settings, step count and loss curve; "
        "--epochs/--max-steps give it a new length (counted from the run's start), options "
        "on how it runs (--device, --placement, --workers, ...) may change, and ones that "
        "change what it trains (--model, --dataset, --batch-size, --lr, ...) are refused",
    )
    group.add_argument(
        "--checkpoint-epochs",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="save a checkpoint at each epoch's end, and when a stop (Ctrl+C) or --max-steps ends "
        "the run mid-epoch (default: on)",
    )
    group.add_argument(
        "--checkpoint-every",
        metavar="N",
        type=int,
        default=0,
        help="also save a checkpoint every N steps (default: 0, never)",
    )
    group.add_argument(
        "--checkpoint-dir",
        metavar="DIR",
        help="save checkpoints as DIR/<run id>/step-N.pt (default: the checkpoints folder in the user data folder)",
    )
    group.add_argument(
        "--checkpoint-keep",
        metavar="N",
        type=int,
        default=2,
        help="keep the run's newest N automatic checkpoints and delete older ones (0: keep all; "
        "default: 2); requested ones are always kept",
    )


def checkpoint_policy(args: argparse.Namespace) -> CheckpointPolicy:
    """The checkpoint options as a policy; ConfigError naming the option for a bad value."""
    from pathlib import Path

    from ..engine.checkpoint_files import CheckpointPolicy

    for field in ("checkpoint_every", "checkpoint_keep"):
        if getattr(args, field) < 0:
            raise ConfigError(field, f"must be 0 or more, got {getattr(args, field)}")
    if (
        args.checkpoint_dir
        and Path(args.checkpoint_dir).expanduser().exists()
        and not Path(args.checkpoint_dir).expanduser().is_dir()
    ):
        raise ConfigError("checkpoint_dir", f"{args.checkpoint_dir} is a file; give a folder")
    return CheckpointPolicy(
        directory=args.checkpoint_dir,
        epoch_end=args.checkpoint_epochs,
        every_steps=args.checkpoint_every,
        keep=args.checkpoint_keep,
    )


def resumed_config_from_args(args: argparse.Namespace) -> RunConfig:
    """The config of `--resume PATH`: the checkpoint's, with the options given (checked by the session)."""
    from ..engine.checkpoint_files import read_info, resume_config

    if getattr(args, "preset", None):
        raise ConfigError("preset", "a resumed run keeps its checkpoint's settings; leave --preset out")
    info, given = read_info(args.resume), explicit_options(args)
    from ..base.user_code import is_spec

    for field in ("model", "dataset"):  # weights_only keeps pickled code out; a spec in the config is code too
        spec = getattr(info.config, field)
        if is_spec(spec) and given.get(field) != spec:
            raise ConfigError(
                field,
                f"{args.resume} was trained with your own {field} {spec}: resuming imports and "
                f"runs that code, so confirm it with --{field} {spec}",
            )
    return resume_config(info, given)


def parse_bytes(text: str) -> int:
    """'80GB', '7.5GiB', '512MB', '8e9' -> bytes (decimal units unless the i says binary)."""
    units = {
        "": 1,
        "b": 1,
        "kb": 10**3,
        "mb": 10**6,
        "gb": 10**9,
        "tb": 10**12,
        "kib": 2**10,
        "mib": 2**20,
        "gib": 2**30,
        "tib": 2**40,
    }
    match = re.fullmatch(r"\s*([0-9.eE+]+)\s*([a-zA-Z]*)\s*", text)
    try:
        value = float(match.group(1)) * units[match.group(2).lower()] if match else -1.0
    except (ValueError, KeyError):
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: use bytes or a unit, e.g. 80GB, 7.5GiB, 8e9")
    return int(value)


def option_message(field: str | None, message: str) -> str:
    """'batch_size: must be ...' naming `field` -> '--batch-size: must be ...', the option the user typed.

    `field` comes from the error itself (ConfigError.field, RunFinished.error_field), never from parsing
    the text; without one the message is shown as it is."""
    if not field:
        return message
    prefix = f"{field}: "
    return f"{option_name(field)}: {message[len(prefix) :] if message.startswith(prefix) else message}"


def user_error_line(exc: UserError) -> str:
    """What follows 'gpu-train-monitor: error: ' for a user error: the option for a config error."""
    return option_message(exc.field if isinstance(exc, ConfigError) else None, str(exc))


def comparison_from_args(args: argparse.Namespace) -> tuple[RunConfig, list[dict]]:
    """compare's shared settings and its --vs overrides (or --ready's), each checked (ConfigError naming the
    option)."""
    from ..compare.plan import parse_overrides, plan

    base = config_from_args(args)
    if getattr(args, "ready", None):
        from .ready_option import FIELD, ready_overrides

        if args.vs:
            raise ConfigError(FIELD, Message("give a ready-made comparison or --vs lines, not both"))
        overrides = ready_overrides(args.ready, base, remote=getattr(args, "remote", None) is not None)
    else:
        overrides = [parse_overrides(text) for text in args.vs or []]
    contenders = plan(base, overrides)  # the count, the ranges, duplicates: before torch loads
    if args.sync_bn and all(contender.config.nproc == 1 for contender in contenders):  # it would do nothing
        raise ConfigError(
            "sync_bn",
            Message(
                "synchronises BatchNorm over the processes of a data-parallel run, and "
                "every configuration here is one process; give a --vs nproc=N (2 or "
                "more) or leave --sync-bn out"
            ),
        )
    return base, overrides
