"""Checkpoint files: where a run saves them, how they are written, and how they are read back safely.

A checkpoint is one `torch.save` file of plain values and tensors only (gpu_train_monitor.engine.checkpointing fills
it): the model, optimizer and gradient-scaler states, the run's config as a dict, its step, epoch and identity
(`run_uid`, the run store's key), the random generators' states and how far the epoch got. It is read
with `torch.load(weights_only=True)`, which refuses any pickle that would import or call code: such a file
is refused with a message that says so, and nothing in it runs. Writes go to a temporary file renamed
over the target, so a full disk or a kill leaves the previous checkpoint, never a truncated one.

Default place: `checkpoints/<run_uid>/step-<N>.pt` in the user data folder (beside the datasets and the
run store), or under $GPU_TRAIN_MONITOR_CHECKPOINTS, or under `--checkpoint-dir DIR`.
"""

from __future__ import annotations

import os
import pickle
import re
import secrets
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.errors import ConfigError, UserError
from ..base.text import Message, message_of
from ..config.run_config import RunConfig
from ..config.sequences import SYNTHETIC_TEXT

FORMAT = "gpu-train-monitor checkpoint"
VERSION = 1
ENV_DIR = "GPU_TRAIN_MONITOR_CHECKPOINTS"
AUTOMATIC_REASONS = ("epoch", "every", "stop", "end")  # the policy's own checkpoints: the oldest are pruned
LENGTH_FIELDS = ("epochs", "max_steps")  # a resumed run may be given a new length
# Fields that make a run what it is: a resumed run keeps its checkpoint's values. The others (device,
# placement, workers, compile, report interval, ...) change how it trains, not what, and may differ.
IDENTITY_FIELDS = (
    "model",
    "dataset",
    "synthetic_samples",
    "seq_len",
    "layers",
    "width",
    "heads",
    "seed",
    "batch_size",
    "optimizer",
    "lr",
    "momentum",
    "weight_decay",
    "amp",
)
_REQUIRED = {
    "run_uid": str,
    "step": int,
    "epoch": int,
    "epoch_complete": bool,
    "samples": int,
    "config": dict,
    "placement": str,
    "device_type": str,
    "model": dict,
    "optimizer": dict,
    "scaler": dict,
    "rng": dict,
    "progress": dict,
    "batch_size": int,
    "data": dict,
}


@dataclass(frozen=True)
class CheckpointPolicy:
    """When a run saves checkpoints by itself, and where. Requests (`request_checkpoint`) are saved whatever
    this says, and never pruned."""

    directory: str | None = None  # None: default_dir()
    epoch_end: bool = True  # at each epoch's end, and where a stop or max_steps ends the run mid-epoch
    every_steps: int = 0  # also every this many steps (0: never)
    keep: int = 2  # the run's newest automatic checkpoints kept; older ones are deleted (0: keep all)

    def folder(self, run_uid: str) -> Path:
        root = Path(self.directory).expanduser() if self.directory else default_dir()
        return root / run_uid


ON_REQUEST = CheckpointPolicy(epoch_end=False)  # a session's default: checkpoints only when asked for


def default_dir() -> Path:
    """$GPU_TRAIN_MONITOR_CHECKPOINTS, else `checkpoints` in the per-user data folder."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpu-train-monitor")) / "checkpoints"


def step_path(folder: Path, step: int) -> Path:
    return folder / f"step-{step}.pt"


def saved_steps(folder: Path) -> list[int]:
    """The steps of the checkpoints in `folder` (step-<N>.pt), in order; none when it cannot be read."""
    try:
        names = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return []
    return sorted(int(match.group(1)) for name in names if (match := re.fullmatch(r"step-(\d+)\.pt", name)))


def branch_identity(policy: CheckpointPolicy, run_uid: str, step: int) -> tuple[str, str]:
    """(the uid a run resumed at `step` of run `run_uid` goes on as, the uid it branches from or '').

    When the run's checkpoint folder holds checkpoints past `step`, the run went on from there: the resumed
    one is a branch, a run of its own, with a uid (its checkpoints' folder, its row in the run store) of its
    own, so its checkpoints never replace the ones the run it left saved and lists."""
    if any(saved > step for saved in saved_steps(policy.folder(run_uid))):
        return f"{run_uid}-{secrets.token_hex(4)}", run_uid
    return run_uid, ""


@dataclass(frozen=True)
class CheckpointInfo:
    """What a checkpoint says about its run, without its tensors."""

    path: str
    run_uid: str
    step: int
    epoch: int  # the epoch under way, or the last one finished when `epoch_complete`
    epoch_complete: bool
    config: RunConfig  # the run's config (its model resolved: never `auto`)
    placement: str  # the placement it trained with
    device_type: str  # "cpu", "cuda" or "mps"


# ---- writing -------------------------------------------------------------------------------------------
def save(path: Path, payload: dict[str, Any]) -> int:
    """Write `payload` to `path` atomically (its folder made first); returns the size in bytes. Raises
    OSError or RuntimeError (torch's writer on a full disk) with the target left as it was."""
    import torch

    from ..base.outputs import replace_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(path, lambda temporary: torch.save(payload, temporary))
    return path.stat().st_size


# ---- reading -------------------------------------------------------------------------------------------
def load(path: str | os.PathLike[str], mapped: bool = True) -> dict[str, Any]:
    """The checkpoint at `path`, its tensors on the CPU: memory-mapped when `mapped` (reading its config
    costs little), else read into memory (a resumed run trains on them: the file is left free). UserError,
    with one sentence, for a file that is missing, unreadable, damaged, carries code, or is not a
    checkpoint of this app."""
    import torch

    shown = os.fspath(path)
    target = Path(shown).expanduser()
    try:
        with open(target, "rb") as file:
            zipped = file.read(4) == b"PK\x03\x04"  # torch's own format: memory-mapped loading works
        with warnings.catch_warnings():  # torch warns about old pickle protocols before it refuses them
            warnings.simplefilter("ignore")
            payload = torch.load(target, map_location="cpu", weights_only=True, mmap=zipped and mapped)
    except OSError as exc:
        raise UserError(
            Message("cannot read the checkpoint {path}: {why}", path=shown, why=exc.strerror or str(exc))
        ) from None
    except pickle.UnpicklingError as exc:
        called = re.search(r"GLOBAL ([\w.]+)", str(exc)) or re.search(r"[Uu]nsupported class ([\w.]+)", str(exc))
        if called:
            raise UserError(
                Message(
                    "{path} is not a checkpoint this app can load safely: it carries code (it would "
                    "call {callable}); nothing in it was run",
                    path=shown,
                    callable=called.group(1),
                )
            ) from None
        detail = re.search(r"WeightsUnpickler error: \s*(.+)", str(exc))
        what = detail.group(1).strip() if detail else (str(exc).strip().splitlines() or ["refused"])[0][:200]
        raise UserError(
            Message(
                "{path} is damaged or not a checkpoint (its contents are not tensors and plain "
                "values: {what}; nothing in it was run)",
                path=shown,
                what=what,
            )
        ) from None
    except (RuntimeError, EOFError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UserError(
            Message("{path} is damaged or not a checkpoint (it may be incomplete: {error})", path=shown, error=first)
        ) from None
    _check_format(payload, shown)
    return payload


def _check_format(payload: Any, shown: str) -> None:
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise UserError(
            Message(
                "{path} is not a gpu-train-monitor checkpoint (a PyTorch file without a run's "
                "record; resume from a file the app saved under checkpoints/)",
                path=shown,
            )
        )
    version = payload.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise UserError(
            Message(
                "{path} was saved by a newer gpu-train-monitor (checkpoint format {version}); "
                "update the app to resume it",
                path=shown,
                version=version,
            )
        )
    for key, kind in _REQUIRED.items():
        if not isinstance(payload.get(key), kind):
            raise UserError(
                Message(
                    "{path} is damaged: its {key!r} entry is missing or not a {kind}",
                    path=shown,
                    key=key,
                    kind=kind.__name__,
                )
            )


def info_of(payload: dict[str, Any], path: str | os.PathLike[str]) -> CheckpointInfo:
    shown = os.fspath(path)
    try:
        config = RunConfig.from_dict(payload["config"])
    except UserError as exc:
        raise UserError(
            Message("{path} holds a config this version cannot run ({error})", path=shown, error=message_of(exc))
        ) from None
    return CheckpointInfo(
        shown,
        payload["run_uid"],
        payload["step"],
        payload["epoch"],
        payload["epoch_complete"],
        config,
        payload["placement"],
        payload["device_type"],
    )


def read_info(path: str | os.PathLike[str]) -> CheckpointInfo:
    """The run a checkpoint belongs to and where it stopped (UserError if it cannot be read)."""
    return info_of(load(path), path)


def read_config(path: str | os.PathLike[str]) -> RunConfig:
    """The config to resume a checkpoint with (the window's "Resume from checkpoint"); UserError if unreadable."""
    return read_info(path).config


# ---- what a resumed run may change ---------------------------------------------------------------------
def prepare_resume(path: str, config: RunConfig) -> tuple[RunConfig, str, dict[str, Any]]:
    """Read `path` to resume it with `config`: (the config the resumed run trains with, its run_uid, the
    checkpoint). UserError (ConfigError naming a field) when it cannot be resumed so."""
    saved = load(path, mapped=False)
    info = info_of(saved, path)
    return check_resumable(config, info), info.run_uid, saved


def resume_config(info: CheckpointInfo, changes: dict[str, Any]) -> RunConfig:
    """The checkpoint's config with the options given on a command line. A new length (epochs and/or
    max_steps, counted from the run's start) replaces both length settings: `--epochs 3` alone lifts a
    max_steps the first run had. Everything else is checked by `check_resumable`."""
    config = info.config
    length = {field: changes.get(field) for field in LENGTH_FIELDS} if set(LENGTH_FIELDS) & set(changes) else {}
    rest = {field: value for field, value in changes.items() if field not in LENGTH_FIELDS}
    return config.replace(**length, **rest) if length or rest else config


def check_resumable(config: RunConfig, info: CheckpointInfo) -> RunConfig:
    """`config` as the resumed run trains it, or ConfigError naming the field it may not change. `auto`
    stands for the checkpoint's model, and mid-epoch for its placement (the epoch's position is in its terms)."""
    saved = info.config
    if config.model == "auto":
        config = config.replace(model=saved.model)
    if (config.model, config.dataset) != (saved.model, saved.dataset):
        field = "model" if config.model != saved.model else "dataset"
        raise ConfigError(
            field,
            Message(
                "{path} is a checkpoint of {saved_model} trained on {saved_dataset}, not "
                "{model} on {dataset}; resume it with its own model and dataset, or start "
                "a new run without resuming",
                path=info.path,
                saved_model=saved.model,
                saved_dataset=saved.dataset,
                model=config.model,
                dataset=config.dataset,
            ),
        )
    for field in IDENTITY_FIELDS:
        if field == "synthetic_samples" and config.dataset not in ("synthetic", SYNTHETIC_TEXT):
            continue
        if getattr(config, field) != getattr(saved, field):
            raise ConfigError(
                field,
                Message(
                    "a resumed run keeps its checkpoint's {field} ({saved}); {value} would "
                    "train something else: start a new run instead",
                    field=field,
                    saved=getattr(saved, field),
                    value=getattr(config, field),
                ),
            )
    if not info.epoch_complete:
        if config.placement == "auto":
            config = config.replace(placement=info.placement)
        elif config.placement != info.placement:
            raise ConfigError(
                "placement",
                Message(
                    "{path} was saved mid-epoch with the {placement} placement; resume "
                    "it with that placement (one saved at an epoch's end may change "
                    "it)",
                    path=info.path,
                    placement=info.placement,
                ),
            )
    return config
