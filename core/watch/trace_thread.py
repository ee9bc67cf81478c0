"""Which thread traces a watched step's prediction: the watch's own hooks and patches are process-global (torch's
global module and optimizer hooks, `torch.autograd.backward`, `Optimizer.__init__`), so while the first step is
traced on a thread of ours beside the training (gpu_train_monitor.watch.step_prediction), each of them asks
`tracing_here()` first and lets the trace's forward, backward, optimizer and update pass unseen. The training
thread's calls are seen as ever: the flag is the tracing thread's own."""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

_here = threading.local()
traced_objects: weakref.WeakSet[Any] = weakref.WeakSet()  # a trace's model copies and optimizers: no candidates
# for the step capture's scans of live objects (a trace beside the training, or one not yet collected)
Hook = TypeVar("Hook", bound=Callable[..., Any])


def tracing_here() -> bool:
    """True on a thread that is tracing a prediction: nothing it runs is the script's training."""
    return getattr(_here, "tracing", False)


@contextlib.contextmanager
def tracing() -> Iterator[None]:
    """Mark this thread as tracing while the block runs."""
    _here.tracing = True
    try:
        yield
    finally:
        _here.tracing = False


def unless_tracing(hook: Hook) -> Hook:
    """`hook` for the training thread's calls only: on the tracing thread it does nothing and returns None."""

    @functools.wraps(hook)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        return None if tracing_here() else hook(*args, **kwargs)

    return guarded  # type: ignore[return-value]
