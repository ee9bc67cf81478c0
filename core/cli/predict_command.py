"""`gpu-train-monitor predict`: a training step's peak memory predicted without running it, per batch size,
against the device's capacity, and the what-if table (gpu_train_monitor.finder.what_if) for --batch-size. For a text
model, --seq-lens makes it a grid: every batch size at every sequence length (gpu_train_monitor.finder.fit_grid).

Exit codes: 0 predicted; 2 bad input (one line, as every command); 1 when the step cannot be traced (one line
saying why: `find-batch-size` measures it with real steps instead), like a run that failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..base.errors import ConfigError
from ..base.outputs import check_distinct_outputs, check_output_path
from ..base.text import Message, format_bytes
from ..config.bounds import BOUNDS, FINDER_BOUNDS
from ..config.field_checks import validate_field
from ..config.run_config import RunConfig
from ..events.status import EXIT_FAILED, EXIT_USER_ERROR
from .grid_text import grid_lines, largest_fitting_lines, seq_lens
from .module_text import add_by_module_option, module_lines, modules_json
from .options import EXIT_CODES_HELP, PROG, add_run_options, command_protection, config_from_args, parse_bytes
from .stdout import out, save_json
from .timeline_text import add_timeline_option, timeline_json, timeline_lines

NOT_TRACED = (
    "not included: the allocator's rounding and cache, and on a GPU the CUDA context (300-600 MB); "
    "find-batch-size measures them with real steps"
)


def add_predict_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "predict",
        help="predict a training step's peak memory per batch size, and what each change would save",
        epilog="example: gpu-train-monitor predict --model resnet18 --device cuda --capacity 24GB "
        "--batch-sizes 128,256,512. " + EXIT_CODES_HELP,
    )
    add_run_options(parser)
    parser.add_argument(
        "--batch-sizes",
        metavar="N,N,...",
        type=_batch_sizes,
        help="predict these batch sizes (default: --batch-size's); the what-if table is for --batch-size",
    )
    parser.add_argument(
        "--seq-lens",
        metavar="N,N,...",
        type=seq_lens,
        help="text models: predict every batch size at each of these sequence lengths, a grid (default: --seq-len's)",
    )
    parser.add_argument(
        "--capacity",
        metavar="BYTES",
        type=parse_bytes,
        help="memory to plan for, e.g. 80GB or 8e9 (default: the device's; on the CPU, the memory available now)",
    )
    margin = FINDER_BOUNDS["margin"]
    parser.add_argument(
        "--margin",
        metavar="FRACTION",
        type=float,
        default=margin.default,
        help=f"{margin.help} (default: {margin.default})",
    )
    add_by_module_option(parser)
    add_timeline_option(parser)
    parser.add_argument("--json", metavar="PATH", help="write every prediction and the what-if table as JSON to PATH")


def _batch_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of batch sizes, e.g. 64,128,256") from None
    if not sizes:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of batch sizes, e.g. 64,128,256")
    return sizes


def command_predict(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    sizes = args.batch_sizes or [config.batch_size]
    for size in sizes:
        try:
            validate_field("batch_size", size)
        except ConfigError as exc:
            raise ConfigError("batch_sizes", exc.detail) from None
    validate_field("margin", args.margin)
    if args.seq_lens is not None:
        from ..finder.fit_grid import check_grid_sizes

        check_grid_sizes(config, sizes, args.seq_lens)
    if args.json:
        check_distinct_outputs({"json": args.json}, command_protection(args, [config]))
        check_output_path("json", args.json)
    from ..device.devices import device_kind
    from ..finder.what_if import verdict, what_if
    from ..memory.predict import PredictionUnavailable

    kind = device_kind(config.device)
    capacity = args.capacity if args.capacity is not None else _device_capacity(config)
    predict = _memoized()
    grid = None
    try:
        table = what_if(config, capacity, args.margin, device=kind, max_batch=_max_batch(), predict=predict)
        if args.seq_lens is not None:
            from ..finder.fit_grid import fit_grid

            grid = fit_grid(config, sizes, args.seq_lens, capacity, args.margin, device=kind, predict=predict)
        predictions = [] if grid is not None else [predict(config, size, device=kind) for size in sizes]
    except PredictionUnavailable as exc:
        print(f"{PROG}: {exc.reason}; `{PROG} find-batch-size` with the same options measures it", file=sys.stderr)
        return EXIT_FAILED
    limit = table.limit_bytes
    out(
        f"{table.current.what}: capacity {format_bytes(capacity)}, limit {format_bytes(limit)} "
        f"({args.margin:.0%} margin)"
    )
    rows = []
    if grid is not None:
        for line in grid_lines(grid) + largest_fitting_lines(grid):
            out(line)
        rows = [{**_prediction_json(c.prediction), "seq_len": c.seq_len, "verdict": c.verdict} for c in grid.cells]
    else:
        out(f"{'batch':>7} {'peak':>11} {'params':>10} {'grads':>10} {'optimizer':>10} {'batch data':>10} "
            f"{'activations':>11}  verdict")  # fmt: skip
    for p in predictions:
        said = verdict(p.total_bytes, capacity, args.margin)
        out(
            f"{p.batch_size:>7} {format_bytes(p.total_bytes):>11} {format_bytes(p.params_bytes):>10} "
            f"{format_bytes(p.grads_bytes):>10} {format_bytes(p.optimizer_bytes):>10} "
            f"{format_bytes(p.batch_bytes):>10} {format_bytes(p.activations_bytes):>11}  {said}"
        )
        rows.append({**_prediction_json(p), **_seq_len(config), "verdict": said})
        if args.by_module:
            rows[-1]["modules"] = modules_json(p.modules)
        if args.timeline:
            rows[-1]["timeline"] = timeline_json(p.timeline)
    at_tokens = f" at {config.seq_len:,} tokens" if _seq_len(config) else ""
    out(f"largest batch that fits{at_tokens}: {table.fits_batch}")
    if args.by_module:
        for p in predictions:
            out("")
            out(f"by module at batch {p.batch_size} (the peak: {format_bytes(p.peak_bytes)})")
            for line in module_lines(p.modules, layers=args.by_module == "layers"):
                out(line)
    if args.timeline:
        for p in predictions:
            out("")
            out(f"step timeline at batch {p.batch_size} ({p.timeline.events:,} allocations and frees traced)")
            for line in timeline_lines(p.timeline):
                out(line)
    out("")
    now = f"{format_bytes(table.total_bytes)}, {table.verdict}"
    x_tokens = f" x {config.seq_len:,} tokens" if _seq_len(config) else ""
    out(f"what if (at batch {config.batch_size}{x_tokens}; now {now})")
    width = max([32] + [len(str(row.label)) for row in table.rows])  # a GPT's checkpointing row is longer
    out(f"  {'change':<{width}} {'peak':>11} {'saves':>11} {'fits up to':>10}  verdict")
    for row in table.rows:
        if row.total_bytes is None:
            out(f"  {row.label:<{width}} {row.reason}")
            continue
        out(
            f"  {row.label:<{width}} {format_bytes(row.total_bytes):>11} {format_bytes(row.saved_bytes):>11} "
            f"{row.fits_batch if row.fits_batch is not None else '?':>10}  {row.verdict}"
        )
        if row.blocks:
            out("    less at the peak in " + ", ".join(f"{name} ({format_bytes(size)})" for name, size in row.blocks))
    print(NOT_TRACED, file=sys.stderr)
    result = {
        "what": str(table.current.what),
        "device_kind": kind,
        "capacity_bytes": capacity,
        "margin": args.margin,
        "limit_bytes": limit,
        "fits_batch": table.fits_batch,
        "predictions": rows,
        "what_if": {
            "batch_size": config.batch_size,
            **_seq_len(config),
            "total_bytes": table.total_bytes,
            "verdict": table.verdict,
            "rows": [_row_json(row) for row in table.rows],
        },
    }
    save_error = save_json("json", args.json, result, "prediction")
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    return 0


def _device_capacity(config: RunConfig) -> int:
    from ..finder.search import default_capacity

    try:
        return default_capacity(config)
    except ConfigError as exc:  # a device this machine lacks: the prediction needs none, the capacity does
        raise ConfigError(
            exc.field,
            Message("{detail} (to predict for a device this machine lacks, give --capacity)", detail=exc.detail),
        ) from None


def _seq_len(config: RunConfig) -> dict[str, int]:
    """A text model's prediction says its sequence length (an image model's has none)."""
    from ..config.sequences import is_text_dataset

    return {"seq_len": config.seq_len} if is_text_dataset(config.dataset) else {}


def _max_batch() -> int:
    return int(BOUNDS["batch_size"].maximum)


def _memoized() -> Any:
    """gpu_train_monitor.engine.prediction.predict, each (config, batch, device) traced once for the table and the
    sizes."""
    from ..engine.prediction import predict

    cache: dict[tuple[RunConfig, int, str | None], Any] = {}

    def cached(config: RunConfig, batch_size: int | None = None, *, device: str | None = None) -> Any:
        key = (config, batch_size or config.batch_size, device)
        if key not in cache:
            cache[key] = predict(config, batch_size, device=device)
        return cache[key]

    return cached


def _prediction_json(p: Any) -> dict[str, Any]:
    return {
        "batch_size": p.batch_size,
        "peak_bytes": p.peak_bytes,
        "total_bytes": p.total_bytes,
        "params_bytes": p.params_bytes,
        "grads_bytes": p.grads_bytes,
        "optimizer_bytes": p.optimizer_bytes,
        "batch_bytes": p.batch_bytes,
        "activations_bytes": p.activations_bytes,
        # as a real step's breakdown reads them: every gradient once the step is done, what autograd saved for
        # backward (less the weights and the batch), and the batch's share of that
        "grads_end_bytes": p.grads_end_bytes,
        "saved_activations_bytes": p.saved_activations_bytes,
        "saved_inputs_bytes": p.saved_inputs_bytes,
        "elapsed_s": round(p.elapsed_s, 3),
    }


def _row_json(row: Any) -> dict[str, Any]:
    return {
        "change": row.change,
        "label": str(row.label),
        "overrides": row.config_overrides,
        "batch_size": row.batch_size,
        "total_bytes": row.total_bytes,
        "saved_bytes": row.saved_bytes,
        "fits_batch": row.fits_batch,
        "verdict": row.verdict,
        "reason": None if row.reason is None else str(row.reason),
        "blocks": [{"name": name, "saved_bytes": size} for name, size in row.blocks],
    }
