"""What a comparison runs: 2 to 4 configurations that differ from one base by overrides.

`--vs "device=cpu,amp=off"` is parsed here into typed RunConfig overrides checked against the one bounds
table; every run gets the same number of steps (the base's `max_steps`). The ready-made comparisons
(CPU vs GPU, stream vs resident, ...) are plain override pairs, offered only where they apply. Imports
no torch, so the form and the CLI can check a comparison before torch has loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.errors import ConfigError
from ..base.readonly import ReadOnlyDict
from ..base.text import Message, message_of
from ..config.bounds import BOUNDS
from ..config.field_checks import validate_field
from ..config.run_config import RunConfig
from ..config.sequences import is_gpt

MIN_RUNS, MAX_RUNS = 2, 4
DEFAULT_STEPS = 60  # when the base sets no max_steps: enough reports after warm-up for a median and a spread
SHARED_ONLY = ("max_steps", "epochs")  # the same for every run, or the race would not be fair
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


@dataclass(frozen=True)
class Contender:
    """One configuration of a comparison: its place, a short label, what it changes, the config it runs."""

    index: int
    label: str
    overrides: Mapping[str, Any]
    config: RunConfig


def parse_overrides(text: str) -> dict[str, Any]:
    """'device=cuda:0,amp=bf16' -> {'device': 'cuda:0', 'amp': 'bf16'}, each value typed and range-checked
    by the bounds table. A ConfigError names the override that does not parse (field 'vs')."""
    overrides: dict[str, Any] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, raw = item.partition("=")
        field = key.strip().lstrip("-").replace("-", "_")
        if not sep or not field:
            raise ConfigError("vs", Message("{item!r} is not setting=value (e.g. device=cpu or amp=bf16)", item=item))
        _check_setting(item, field)
        overrides[field] = _checked_value(item, field, lambda: _typed(field, raw.strip()))
    if not overrides:
        raise ConfigError(
            "vs", Message("{text!r} sets nothing; write setting=value pairs separated by commas", text=text)
        )
    return overrides


def checked_overrides(values: Mapping[str, Any]) -> dict[str, Any]:
    """One run's overrides as values (a comparison asked for from another machine): each setting checked as
    `parse_overrides` checks it, with the same ConfigError (field 'vs')."""
    overrides: dict[str, Any] = {}
    for field, value in values.items():
        item = f"{field}={value}"
        _check_setting(item, str(field))
        overrides[field] = _checked_value(item, field, lambda: value)  # noqa: B023 - called at once
    if not overrides:
        raise ConfigError("vs", Message("a run sets nothing; give setting=value pairs"))
    return overrides


def _check_setting(item: str, field: str) -> None:
    if field not in BOUNDS:
        raise ConfigError(
            "vs",
            Message(
                "{item!r}: unknown setting {field!r}; settings: {settings}",
                item=item,
                field=field,
                settings=", ".join(BOUNDS),
            ),
        )
    if field in SHARED_ONLY:
        raise ConfigError(
            "vs",
            Message(
                "{item!r}: {field} is shared by every run of a comparison (so they race "
                "over the same steps); give it once, as {option}",
                item=item,
                field=field,
                option="--" + field.replace("_", "-"),
            ),
        )


def _checked_value(item: str, field: str, value: Callable[[], Any]) -> Any:
    try:
        return validate_field(field, value())
    except ConfigError as exc:
        raise ConfigError("vs", Message("{item!r}: {error}", item=item, error=message_of(exc))) from None


def _typed(field: str, raw: str) -> Any:
    bound = BOUNDS[field]
    if bound.optional and raw.lower() in ("none", ""):
        return None
    if bound.kind is bool:
        lowered = raw.lower()
        return True if lowered in _TRUE else False if lowered in _FALSE else raw
    if bound.kind in (int, float):
        try:
            number = float(raw)
        except ValueError:
            return raw  # validate_field names the field and its range
        return int(number) if bound.kind is int and number.is_integer() else number
    return raw


def plan(base: RunConfig, overrides: Sequence[Mapping[str, Any]]) -> tuple[Contender, ...]:
    """The runs of a comparison: `base` with each override set, all for the same number of steps."""
    if not MIN_RUNS <= len(overrides) <= MAX_RUNS:
        raise ConfigError(
            "vs",
            Message(
                "a comparison needs {min_runs} to {max_runs} configurations, got {count}",
                min_runs=MIN_RUNS,
                max_runs=MAX_RUNS,
                count=len(overrides),
            ),
        )
    shared = base.replace(max_steps=base.max_steps or DEFAULT_STEPS, epochs=None)
    distinct = _distinct_fields(overrides)
    contenders: list[Contender] = []
    for index, changes in enumerate(overrides):
        try:
            config = shared.replace(**changes)
        except ConfigError as exc:
            raise ConfigError(
                "vs", Message("configuration {index}: {error}", index=index + 1, error=message_of(exc))
            ) from None
        for other in contenders:
            if other.config == config:
                raise ConfigError(
                    "vs",
                    Message(
                        "configurations {first} and {second} are the same run; change at "
                        "least one setting between them",
                        first=other.index + 1,
                        second=index + 1,
                    ),
                )
        shown = {field: value for field, value in changes.items() if field in distinct}
        contenders.append(Contender(index, label(shown or changes), ReadOnlyDict(dict(changes)), config))
    return tuple(contenders)


def _distinct_fields(overrides: Sequence[Mapping[str, Any]]) -> set[str]:
    """The fields whose value is not the same in every override set: what tells the runs apart (a label
    'stream' rather than 'cpu, stream' when every run sets device=cpu)."""
    fields = {field for changes in overrides for field in changes}
    return {field for field in fields if len({repr(changes.get(field, _UNSET)) for changes in overrides}) > 1}


_UNSET = object()


def label(overrides: Mapping[str, Any]) -> str:
    """A short name for what a run changes: 'cuda:0', 'resident', 'amp bf16', 'channels_last', 'no compile'."""
    parts = []
    for field, value in overrides.items():
        if isinstance(value, bool):
            parts.append(field if value else f"no {field}")
        elif field in ("device", "placement", "model"):
            parts.append(str(value))
        elif field == "amp":
            parts.append(f"amp {value}")
        elif field == "attention":
            parts.append(f"{value} attention")
        else:
            parts.append(f"{field}={value}")
    return ", ".join(parts) or "base"


@dataclass(frozen=True)
class ReadyComparison:
    """A comparison offered in the window's menu: a name (also what the window's --compare takes), a description
    (Messages, for the window to translate) and the override sets it races."""

    name: str
    description: str
    overrides: tuple[Mapping[str, Any], ...]


def ready_comparisons(
    base: RunConfig, gpu: str | None, compile_available: bool, processes: int = 1
) -> list[ReadyComparison]:
    """The ready-made comparisons that apply here. `gpu` is this machine's GPU ('cuda:0', 'mps') or None;
    the GPU-only ones run on it, and stream vs resident runs on the GPU when there is one, else the CPU.
    A CPU side drops what the CPU refuses (fp16, cuDNN's autotuner) and says so in its overrides.
    `processes`: how many data-parallel processes this machine takes (its CUDA GPUs, or its CPU cores)."""
    offered: list[ReadyComparison] = []
    device = gpu or "cpu"
    if gpu is not None:
        cpu: dict[str, Any] = {"device": "cpu"}
        if base.amp == "fp16":
            cpu["amp"] = "off"
        if base.cudnn_benchmark:
            cpu["cudnn_benchmark"] = False
        offered.append(
            ReadyComparison(
                Message("CPU vs GPU"),
                Message("the same run on the CPU and on {gpu}", gpu=gpu),
                ({**cpu}, {"device": gpu}),
            )
        )
    offered.append(
        ReadyComparison(
            Message("stream vs resident"),
            Message("data streamed from host memory by a DataLoader against data kept on {device}", device=device),
            ({"device": device, "placement": "stream"}, {"device": device, "placement": "resident"}),
        )
    )
    if gpu is not None:
        offered.append(
            ReadyComparison(
                Message("AMP off vs bf16"),
                Message("full precision against bf16 autocast on {gpu}", gpu=gpu),
                ({"device": gpu, "amp": "off"}, {"device": gpu, "amp": "bf16"}),
            )
        )
        offered.append(
            ReadyComparison(
                "channels_last",  # the option's name: nothing to translate
                Message("the default memory format against channels_last on {gpu}", gpu=gpu),
                ({"device": gpu, "channels_last": False}, {"device": gpu, "channels_last": True}),
            )
        )
    offered.append(
        ReadyComparison(
            Message("activation checkpointing off vs on"),
            Message(
                "the model's blocks keeping their activations against recomputing them in backward on {device}: "
                "the peak memory saved and the time it costs",
                device=device,
            ),
            (
                {"device": device, "activation_checkpointing": False},
                {"device": device, "activation_checkpointing": True},
            ),
        )
    )
    if gpu is not None and gpu.startswith("cuda"):
        offered.append(
            ReadyComparison(
                Message("expandable segments off vs on"),
                Message(
                    "CUDA's caching allocator keeping fixed segments against growing them in place on {gpu}: "
                    "each run's peak reserved memory and its cache gap (reserved but not allocated)",
                    gpu=gpu,
                ),
                ({"device": gpu, "expandable_segments": "off"}, {"device": gpu, "expandable_segments": "on"}),
            )
        )
    if is_gpt(base.model):
        offered.append(
            ReadyComparison(
                Message("attention: fused (SDPA) vs plain (softmax of QK^T)"),
                Message(
                    "the GPT's attention through scaled_dot_product_attention against the softmax of QK^T written "
                    "by hand, on {device}: each one's peak memory, and how it grows when the sequence doubles",
                    device=device,
                ),
                ({"device": device, "attention": "fused"}, {"device": device, "attention": "plain"}),
            )
        )
    scaling = _scaling_comparison(base, gpu, processes)
    if scaling is not None:
        offered.append(scaling)
    if compile_available:
        offered.append(
            ReadyComparison(
                Message("compiled vs eager"),
                Message("torch.compile against eager PyTorch on {device} (compile time shown apart)", device=device),
                ({"device": device, "compile": False}, {"device": device, "compile": True}),
            )
        )
    return offered


@dataclass(frozen=True)
class AbsentComparison:
    """A ready-made comparison this machine cannot run: what it needs ('needs a CUDA GPU') and why. The window's
    menu shows it greyed out, so a user learns it exists and what it takes."""

    name: str
    needs: str
    reason: str


def absent_comparisons(gpu: str | None) -> list[AbsentComparison]:
    """The ready-made comparisons `ready_comparisons` leaves out for `gpu` (as it takes it) because they need a
    CUDA GPU, each with what it needs and why."""
    if gpu is not None and gpu.startswith("cuda"):
        return []
    if gpu is None:
        why = Message("expandable segments are a setting of CUDA's caching allocator, and this machine has no CUDA GPU")
    else:
        why = Message(
            "expandable segments are a setting of CUDA's caching allocator, and {gpu} is not a CUDA GPU", gpu=gpu
        )
    return [AbsentComparison(Message("expandable segments off vs on"), Message("needs a CUDA GPU"), why)]


def _scaling_comparison(base: RunConfig, gpu: str | None, processes: int) -> ReadyComparison | None:
    """1 process against the most this machine takes whose share of the batch is whole: CUDA GPUs (NCCL) or
    CPU processes (gloo); the comparison states the scaling efficiency."""
    n = next((n for n in range(min(processes, 8), 1, -1) if base.batch_size % n == 0), None)
    if n is None:
        return None
    cuda = gpu is not None and gpu.startswith("cuda")
    side = {"device": "cuda" if cuda else "cpu", "on_oom": "stop"}
    races = ({**side, "nproc": 1}, {**side, "nproc": n})
    if cuda:
        return ReadyComparison(
            Message("1 vs {n} GPUs", n=n),
            Message(
                "data-parallel: one process against {n} GPUs training the same global batch of "
                "{batch_size} (scaling efficiency shown)",
                n=n,
                batch_size=base.batch_size,
            ),
            races,
        )
    return ReadyComparison(
        Message("1 vs {n} CPU processes", n=n),
        Message(
            "data-parallel: one process against {n} CPU processes training the same global "
            "batch of {batch_size} (scaling efficiency shown)",
            n=n,
            batch_size=base.batch_size,
        ),
        races,
    )
