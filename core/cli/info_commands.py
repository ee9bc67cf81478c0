"""The command line's quick answers: `find-batch-size`, `devices`, `models` and `presets`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..base.outputs import check_distinct_outputs, check_output_path
from ..base.text import printable
from ..events.status import EXIT_INTERRUPTED, EXIT_USER_ERROR
from .options import PROG, command_protection, config_from_args
from .remote_options import remote_target
from .stdout import out, save_json


def command_find_batch_size(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    from ..finder.search import Trial, check_one_process, check_search_options, find_batch_size  # torch: lazily

    check_one_process(config)  # options that would do nothing are refused
    check_search_options(args.margin, args.start, args.max_batch)  # bad input: one line, before "searching"
    if args.json:
        check_distinct_outputs({"json": args.json}, command_protection(args, [config]))
        check_output_path("json", args.json)
    from ..base.text import format_bytes

    def on_trial(trial: Trial) -> None:
        peak = "out of memory" if trial.peak_bytes is None else format_bytes(trial.peak_bytes)
        predicted = "" if trial.predicted_bytes is None else f"  (predicted {format_bytes(trial.predicted_bytes)})"
        print(
            f"  batch {trial.batch_size:>6}: peak {peak:>12}  {'fits' if trial.fits else 'too big'}{predicted}",
            file=sys.stderr,
            flush=True,
        )

    note = TRIAL_NOTE if args.no_predict else PREDICTED_NOTE
    target = remote_target(args)
    where = config.device if target is None else f"{config.device} on {target.host}"
    print(f"searching on {where} with {config.model}, {note}", file=sys.stderr, flush=True)
    options = {"capacity": args.capacity, "margin": args.margin, "start": args.start, "max_batch": args.max_batch}
    if target is not None:
        result = _search_there(target, config, args, {**options, "on_trial": on_trial})
        if result is None:
            return EXIT_INTERRUPTED
    else:
        result = find_batch_size(config, on_trial=on_trial, predict=None if args.no_predict else "auto", **options)
    if result.prediction_note:
        print(printable(result.prediction_note), file=sys.stderr)  # a remote search's is the remote's
    save_error = save_json("json", args.json, result.to_dict(), "result")
    out(f"batch size      {result.batch_size}")
    out(
        f"predicted peak  {format_bytes(result.predicted_peak(result.batch_size))} of "
        f"{format_bytes(result.limit_bytes)} allowed ({format_bytes(result.capacity_bytes)} capacity, "
        f"{result.margin:.0%} margin)"
    )
    out(
        f"fit             {format_bytes(result.fixed_bytes)} fixed + {format_bytes(result.bytes_per_sample)} "
        f"per sample ({len(result.trials)} trials)"
    )
    if result.predicted_batch is not None:
        out(f"predicted       batch {result.predicted_batch} before any trial")
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    return 0


def _search_there(target: Any, config: Any, args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """The search on the machine --remote names; None when Ctrl+C (or SIGTERM) stopped it there (said on stderr)."""
    import signal
    import threading

    from ..base.errors import UserError
    from ..remote.client.jobs import remote_find_batch_size

    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        print("\nstopping the search there", file=sys.stderr, flush=True)
        stop.set()

    previous = {number: signal.signal(number, on_signal) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        return remote_find_batch_size(target, config, should_stop=stop.is_set, predict=not args.no_predict, **options)
    except UserError as exc:
        if not stop.is_set():
            raise
        print(printable(f"{PROG}: {exc}"), file=sys.stderr)
        return None
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


TRIAL_NOTE = "a few real training steps per candidate"
PREDICTED_NOTE = "from the predicted batch, confirmed by at most 3 real trials"


def command_devices(as_json: bool) -> int:
    from ..base.text import format_bytes
    from ..device.devices import list_devices

    devices = list_devices()
    if as_json:
        out(json.dumps([d.__dict__ for d in devices], indent=2))
        return 0
    out(f"{'device':<8} {'kind':<5} {'capacity':>10} {'free':>10} {'used':>10}  name")
    for d in devices:
        out(
            f"{d.spec:<8} {d.kind:<5} {format_bytes(d.capacity_bytes):>10} {format_bytes(d.free_bytes):>10} "
            f"{format_bytes(d.used_bytes):>10}  {d.name}"
        )
    return 0


def command_models() -> int:
    from ..model.models import available_models

    out("\n".join(available_models()))
    print(
        "or your own: --model package.module:factory (or path/to/file.py:factory), a callable returning an nn.Module",
        file=sys.stderr,
    )  # beside the list, not in it: the list stays one name a line
    return 0


def command_presets() -> int:
    from ..config.presets import PRESETS, preset_text

    for value in PRESETS.values():
        out(f"{value.name}: {value.description}")
        out(f"  {preset_text(value)}")
    return 0
