"""`gpu-train-monitor compare`: race 2 to 4 configurations and print their throughputs and the ratio.

Each run shows its own progress bar on stderr; stdout gets one table row per run and the headline.
Exit codes as for `run`: 0 when every run completed, 2 for bad input (a `--vs` that does not parse
names itself), 130/143 when stopped, 1 when a run failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ..base.errors import ConfigError
from ..base.outputs import check_distinct_outputs, check_output_path
from ..base.text import printable
from ..compare.events import ComparisonStarted
from ..compare.result import ComparisonResult, ratio_text
from ..events.events import ContenderEvent, Event, RunFinished
from ..events.signals import stop_on_signals
from ..events.status import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER_ERROR
from .options import PROG, command_protection, comparison_from_args, option_message
from .recording import recording_as_asked
from .remote_options import remote_target
from .stdout import out, save_json


def command_compare(args: argparse.Namespace) -> int:
    if not args.vs and not args.ready:
        raise ConfigError(
            "vs", "give 2 to 4 configurations, e.g. --vs device=cpu --vs device=cuda:0, or a --ready comparison"
        )
    base, overrides = comparison_from_args(args)  # ConfigError -> exit 2, before torch loads
    if args.json:
        check_distinct_outputs({"json": args.json}, command_protection(args, [base, *overrides]))
        check_output_path("json", args.json)
    target = remote_target(args)
    if target is not None:  # the runs train there, followed here (and recorded in --runs-db with that host)
        from ..remote.client.jobs import RemoteComparison

        comparison: Any = RemoteComparison(target, base, overrides, [ComparisonProgress()])
    else:
        from ..compare.comparison import Comparison

        comparison = Comparison(base, overrides, [ComparisonProgress()])
    with recording_as_asked(args, comparison.observers), stop_on_signals(comparison) as signals:
        result = comparison.run()
    save_error = save_json("json", args.json, result.to_dict(), "comparison")
    failed_input = _user_error(comparison, result)
    if failed_input:
        print(printable(f"{PROG}: error: {failed_input}"), file=sys.stderr)
        return EXIT_USER_ERROR
    out(printable(comparison_table(result), newlines=True))  # a remote comparison's labels are the remote's
    if result.agreement:
        out(printable(("note: " if result.losses_agree else "warning: ") + result.agreement))
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    if result.status == "stopped":
        return EXIT_TERMINATED if signals.terminated else EXIT_INTERRUPTED
    return 0 if result.status == "completed" else 1


def _user_error(comparison: object, result: ComparisonResult) -> str | None:
    """The first run's bad input (an unavailable device, fp16 on the CPU), as `run` would report it."""
    finished = getattr(comparison, "user_errors", {})
    for run in result.runs:
        if run.index in finished:
            field, message = finished[run.index]
            return f"configuration {run.index + 1} ({run.label}): {option_message(field, message)}"
    return None


def comparison_table(result: ComparisonResult) -> str:
    """One row per run (images/s with its spread, last loss, status), then the headline. Text runs' throughput is
    tokens/s (samples/s x each run's seq_len)."""
    tokens = bool(result.runs) and all(run.tokens_per_sample for run in result.runs)
    unit = "tokens/s" if tokens else "images/s"
    rows = [
        f"{'#':<2} {'configuration':<28} {unit:>10} {'spread (p10-p90)':>19} {'vs slowest':>10} "
        f"{'last loss':>9}  status"
    ]
    slowest = None if result.slowest is None else result.runs[result.slowest].samples_per_s
    for run in result.runs:
        scale = run.tokens_per_sample if tokens else 1
        rate = "n/a" if run.samples_per_s is None else f"{run.samples_per_s * scale:,.0f}"
        spread = (
            "n/a"
            if run.samples_per_s_spread is None
            else f"{run.samples_per_s_spread[0] * scale:,.0f}-{run.samples_per_s_spread[1] * scale:,.0f}"
        )
        ratio = (
            ""
            if slowest is None or run.samples_per_s is None or result.clear_difference is False  # in the noise
            else ratio_text(run.samples_per_s / slowest)
        )
        loss = "n/a" if run.loss_last is None else f"{run.loss_last:.4f}"
        status = run.status + (f" (compiled in {run.compile_s:.1f} s)" if run.compile_s is not None else "")
        rows.append(f"{run.index + 1:<2} {run.label[:28]:<28} {rate:>10} {spread:>19} {ratio:>10} {loss:>9}  {status}")
    rows.append(result.headline)
    return "\n".join(rows)


class ComparisonProgress:
    """A progress bar per run on stderr, each introduced by its place and label."""

    def __init__(self) -> None:
        from .progress import ProgressBar

        self._bar_factory: Callable[[], Callable[[Event], None]] = ProgressBar
        self._bar: Callable[[Event], None] | None = None
        self._labels: dict[int, str] = {}
        self._count = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, ComparisonStarted):
            self._labels = {c.index: c.label for c in event.contenders}
            self._count = len(event.contenders)
            print(
                f"comparing {self._count} configurations, {event.steps} steps each, one after another",
                file=sys.stderr,
                flush=True,
            )
        elif isinstance(event, ContenderEvent):
            if self._bar is None:
                print(
                    printable(f"run {event.index + 1}/{self._count}: {self._labels.get(event.index, '')}"),
                    file=sys.stderr,
                    flush=True,
                )
                self._bar = self._bar_factory()
            self._bar(event.event)
            if isinstance(event.event, RunFinished):
                self._bar = None
