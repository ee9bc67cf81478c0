"""Import torch behind a window that is already shown: the import takes seconds, so it runs in a plain thread,
and what it brings back (ready, or why not) arrives in the GUI thread as the loader's signals.
"""

from __future__ import annotations

import importlib
import threading
import time

from PySide6.QtCore import QObject, Signal, Slot


class TorchLoader(QObject):
    """`start()` imports torch and torchvision in a thread of its own; then `loaded(seconds since launched)` or
    `failed(message)` is emitted in the thread the loader lives in (the GUI thread), so a plain function
    connected to them runs there too."""

    loaded = Signal(float)  # seconds since `launched`
    failed = Signal(str)  # the import's exception, as "Type: message"
    _imported = Signal(float)  # emitted by the import thread, queued to the loader's own slots
    _import_failed = Signal(str)

    def __init__(self, launched: float, parent: QObject | None = None) -> None:
        """`launched`: the process's start time (time.time() seconds), which `loaded` counts from."""
        super().__init__(parent)
        self._launched = launched
        self._imported.connect(self._on_imported)  # queued: the loader lives in the GUI thread, the emitter not
        self._import_failed.connect(self._on_import_failed)

    def start(self) -> None:
        threading.Thread(target=self._import_torch, name="import-torch", daemon=True).start()

    def _import_torch(self) -> None:
        try:
            importlib.import_module("torch")
            importlib.import_module("torchvision")
        except Exception as exc:  # a broken install: say so in the window rather than wait forever
            self._import_failed.emit(f"{type(exc).__name__}: {exc}")
            return
        warm_fast_path_checks()
        self._imported.emit(time.time() - self._launched)

    @Slot(float)
    def _on_imported(self, after: float) -> None:
        self.loaded.emit(after)

    @Slot(str)
    def _on_import_failed(self, message: str) -> None:
        self.failed.emit(message)


def warm_fast_path_checks() -> None:
    """Import here, off the GUI thread, what the form's torch.compile check needs (TorchDynamo; Triton's
    probe on CUDA, cached by torch): the device list asks it in the GUI thread once torch is ready."""
    try:
        import torch
        import torch._dynamo  # noqa: F401 - seconds on its own; torchvision usually brought it already

        if torch.cuda.is_available():
            from torch.utils._triton import has_triton

            has_triton()
    except Exception:  # noqa: BLE001 - the check itself runs later and reports any problem
        pass
