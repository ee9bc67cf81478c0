"""Watch any PyTorch training, not only ours: a user's own loop (`watch(model, optimizer)`), an unchanged script
(`gpu-train-monitor watch -- python train.py`) and the Lightning / transformers callbacks, recorded in the run
store and followed live by the window like a run of ours. No host sync, per step or per report: losses stay on the
device until one transfer per report interval that nothing waits for.

May import every core package below cli. Imports inside `core` are relative, so that this package also loads
under our own import name, `gpu_train_monitor` (`from gpu_train_monitor.watch import watch`): a research folder
with a `core/` of its own shadows ours, and a script under `watch --` must import its own `core`.
"""

from importlib import import_module
from typing import Any

_PUBLIC = {"Watch": "session", "WatchStopped": "steering"}  # name -> the module holding it


def __getattr__(name: str) -> Any:
    """`from gpu_train_monitor.watch import watch` loads torch only then: the start-up code of `watch --` imports this
    package in every Python process the script starts, most of which never train."""
    if name in _PUBLIC:
        return getattr(import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def watch(model: Any = None, optimizer: Any = None, **options: Any) -> Any:
    """Watch a training loop: `with watch(model, optimizer, name="my-run") as w:` ... `w.step(loss, samples=n)`
    after each optimizer step. Options are `Watch`'s (runs_db, total_steps, report_interval_s, ...); returns the
    `Watch` (gpu_train_monitor.watch.session), loaded only now."""
    from .session import Watch

    return Watch(model, optimizer, **options)
