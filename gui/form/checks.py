"""Checks the settings form makes beyond `RunConfig`'s own: what only this machine can answer.

A run would fail on each of these after Start (or, worse, run on another device than the one shown),
so the form says it inline and keeps Start disabled, like any other bad input. Every check raises
`ConfigError` naming the field; a filesystem error becomes one too, so no check can raise anything
else out of a Qt slot. No Qt here: the form calls these on each change. Their texts are
`gpu_train_monitor.base.text.Message`s, as core's are: the form shows them in the user's language
(`gpu_train_monitor.gui.qt.core_text`).
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.base.text import Message, message_of
from gpu_train_monitor.base.user_code import is_spec


def normalised_device(spec: str) -> str:
    """'cuda' names the first GPU, as torch reads it, and 'mps:0' the one Apple GPU the list calls 'mps';
    case and spaces do not matter."""
    spec = spec.strip().lower()
    return {"cuda": "cuda:0", "mps:0": "mps"}.get(spec, spec)


def check_device(spec: str, present: Iterable[str]) -> None:
    """`present`: the specs `gpu_train_monitor.device.devices.list_devices()` found ("cpu", "cuda:0", ...)."""
    present = list(present)
    if normalised_device(spec) == "auto" or normalised_device(spec) in present:
        return
    raise ConfigError(
        "device",
        Message("{spec} is not on this machine; it has {present} (or auto)", spec=spec, present=", ".join(present)),
    )


@dataclass(frozen=True)
class NprocMeaning:
    """What the form's "nproc" counts here: one process per GPU on a CUDA device, CPU processes elsewhere.
    `limit` is None until torch has listed the devices (the config's own bound applies until then)."""

    label: str  # "GPUs", "CPU processes", or "Processes" before the devices are known
    counts: str  # what the limit counts: "gpu" (this machine's CUDA GPUs), "cpu" (its cores), "" (not known)
    limit: int | None
    tooltip: str


def nproc_meaning(kind: str, cuda_gpus: int | None, cpus: int | None = None) -> NprocMeaning:
    """`kind`: the selected device's ('cpu', 'cuda', 'mps'); `cuda_gpus`: how many this machine has (None: not
    known yet); `cpus`: os.cpu_count() unless given."""
    if cuda_gpus is None:  # the form shows the bound's own help until then
        return NprocMeaning(Message("Processes"), "", None, "")
    if kind == "cuda" and cuda_gpus > 0:
        return NprocMeaning(
            Message("GPUs"),
            "gpu",
            cuda_gpus,
            Message(
                "GPUs training together, one process each: data-parallel processes (torch.distributed): each step's "
                "batch is split evenly over them (1 to {gpus} here)",
                gpus=cuda_gpus,
            ),
        )
    cores = cpus if cpus is not None else (os.cpu_count() or 1)
    return NprocMeaning(
        Message("CPU processes"),
        "cpu",
        cores,
        Message(
            "CPU processes training together: data-parallel processes (torch.distributed): each step's batch is split "
            "evenly over them (1 to {cores}, this machine's cores)",
            cores=cores,
        ),
    )


def check_nproc(nproc: int, meaning: NprocMeaning) -> None:
    """More processes than this machine has GPUs (each takes one) or CPU cores (they would only slow each
    other down) is refused; a saved value from a bigger machine shows this until it is lowered."""
    if meaning.limit is None or nproc <= meaning.limit:
        return
    if meaning.counts == "gpu":
        raise ConfigError(
            "nproc",
            Message(
                "{nproc} asked, but this machine has {limit} GPUs; use 1 to {limit}", nproc=nproc, limit=meaning.limit
            ),
        )
    raise ConfigError(
        "nproc",
        Message(
            "{nproc} asked, but this machine has {limit} CPU cores; use 1 to {limit}", nproc=nproc, limit=meaning.limit
        ),
    )


def check_findable(field: str, spec: str) -> None:
    """Your own model or dataset (`package.module:factory`): its file, or its top-level module, must be
    there. Nothing of it runs here (the run imports it at Start, where its own errors show)."""
    from gpu_train_monitor.base.user_code import spec_problem

    problem = spec_problem(spec)
    if problem:
        raise ConfigError(field, Message("{spec}: {problem}", spec=spec, problem=problem))


def folder_stat(path: str) -> os.stat_result | None:
    """The folder's stat, None when nothing is there; any other OSError (a name too long, no permission,
    a broken disk) becomes a ConfigError saying what the system said."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(
            "data_dir", Message("cannot use {path}: {reason}", path=_short(path), reason=exc.strerror or str(exc))
        ) from None
    except ValueError as exc:  # an embedded NUL byte
        raise ConfigError(
            "data_dir", Message("cannot use {path}: {reason}", path=_short(path), reason=str(exc))
        ) from None


def check_data_folder(path: str) -> os.stat_result:
    """The data folder must exist and be a folder (not a file); returns its stat."""
    info = folder_stat(path)
    if info is None:
        raise ConfigError(
            "data_dir",
            Message("the folder {path} does not exist (choose another, or tick download)", path=_short(path)),
        )
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(
            "data_dir",
            Message("{path} is a file, not a folder; choose the folder that holds the dataset", path=_short(path)),
        )
    return info


class FolderCounts:
    """Training images per image folder, read once per (folder, modification time).

    Counting lists every file of the folder, so it is done when a path is settled (not per keystroke)
    and remembered: a folder whose entries change gets a new mtime and is counted again."""

    def __init__(self) -> None:
        # a count, the reason the folder is unusable, or None when it could not be counted
        self._counts: dict[tuple[str, int], int | str | None] = {}
        self.scans = 0  # folders counted (each one lists every file)

    def lookup(self, path: str, info: os.stat_result, scan: bool) -> int | None:
        """The count; None when unknown (not counted yet and `scan` is False, or not countable).
        Raises ConfigError for a folder the loader would refuse."""
        key = (str(Path(path)), info.st_mtime_ns)
        if key not in self._counts:
            if not scan:
                return None
            self.scans += 1
            self._counts[key] = _count(path)
        found = self._counts[key]
        if isinstance(found, str):
            raise ConfigError("data_dir", found)
        return found


def _count(path: str) -> int | str | None:
    try:
        from gpu_train_monitor.data.datasets.imagefolder import count_train_images
    except Exception:  # torch or torchvision not importable: the run will say so
        return None
    try:
        return int(count_train_images(Path(path)))
    except UserError as exc:
        return message_of(exc)  # a Message when the loader raised one: it stays translatable
    except OSError as exc:
        return Message("cannot read {path}: {reason}", path=_short(path), reason=exc.strerror or str(exc))
    except Exception:  # a scan that fails some other way must not break the form: the run will tell
        return None


def _short(path: str, limit: int = 120) -> str:
    """A path fit for one line of the form: a too-long one keeps its start and end."""
    return path if len(path) <= limit else f"{path[: limit // 2]}…{path[-limit // 2 :]}"


# A fast path switched on alone, to ask `gpu_train_monitor.device.fast_paths` whether a device can run it (the keys name
# the field, or field=value for one choice of a field)
FAST_PATH_PROBES: dict[str, dict[str, object]] = {
    "cudnn_benchmark": {"cudnn_benchmark": True},
    "compile": {"compile": True},
    "fused_optimizer": {"fused_optimizer": True},
    "amp=bf16": {"amp": "bf16"},
}


def fast_path_problems(devices: Iterable[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """For each (spec, kind) of this machine's devices, the fast paths it cannot run and why, in the words
    of `gpu_train_monitor.device.fast_paths` (the run's own check). Asked once per device list, after torch has loaded:
    the form then checks each change against this table instead of asking torch again.

    A fused optimizer is not asked of a CUDA device (torch fuses SGD and AdamW on every one, and asking
    would allocate on the GPU at rest); a probe that fails unexpectedly leaves the choice to the run's check."""
    import torch

    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.device.fast_paths import check_fast_paths

    found: dict[str, dict[str, str]] = {}
    for spec, kind in devices:
        problems: dict[str, str] = {}
        for key, changes in FAST_PATH_PROBES.items():
            if key == "fused_optimizer" and kind == "cuda":
                continue
            try:
                check_fast_paths(RunConfig(fused_optimizer=False).replace(**changes), torch.device(spec))
            except ConfigError as exc:
                problems[key] = _one_line(exc.detail)
            except Exception:  # noqa: BLE001 - a probe must never break the form; the run checks again
                continue
        found[spec] = problems
    return found


def _one_line(reason: str, limit: int = 200) -> str:
    """A reason fit for a tooltip and the form's message line: torch's own errors can run to a page (a
    dispatcher error lists every backend), so its first line, cut at `limit` characters. A reason that fits
    is returned as it is (a `Message` stays translatable)."""
    if len(reason) <= limit and "\n" not in reason and reason == reason.strip():
        return reason
    lines = reason.strip().splitlines()
    first = lines[0] if lines else reason
    return first if len(first) <= limit and len(lines) <= 1 else first[:limit].rstrip() + "…"


@functools.lru_cache(maxsize=64)
def checkpointing_problem(model: str, device_kind: str) -> str | None:
    """Why activation checkpointing cannot apply to `model` on a `device_kind` device (it has no blocks), or None.
    Built on the meta device once per name (0.1-1.5 s for a torchvision model, no memory); your own model is not
    built here (its code runs at Start, which refuses it then), nor one that does not build so."""
    if is_spec(model):
        return None
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.model.activation_checkpointing import check_checkpointable

    try:
        check_checkpointable(RunConfig(model=model, activation_checkpointing=True), device_kind)
    except ConfigError as exc:
        return exc.detail if exc.field == "activation_checkpointing" else None
    except Exception:  # noqa: BLE001 - a model the form cannot judge is left to the run's own check
        return None
    return None


def check_fast_paths_known(values: dict[str, object], problems: dict[str, str]) -> None:
    """ConfigError for the first fast path in `values` that the device's `problems` refuse."""
    for field in ("amp", "cudnn_benchmark", "compile", "fused_optimizer"):
        value = values.get(field)
        key = f"{field}={value}" if field == "amp" else field
        if (value is True or field == "amp") and key in problems:
            raise ConfigError(field, problems[key])
