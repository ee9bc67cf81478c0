"""A recorded run exported (`gpu_train_monitor.export.run_export`) in a thread of its own, so the window stays usable
meanwhile: a long run takes seconds to export (measured, 200,000 steps: JSON 5.5 s, TensorBoard 20 s).

One export at a time. The thread opens a read-only connection of its own (SQLite connections belong to one
thread) and closes it when done. `shutdown` cancels the reading part at once: the connection's progress
handler looks at the cancel flag every thousand SQLite steps and aborts the query under way, and every later
one (a flag the worker reads, where `Connection.interrupt` would miss a query about to start). Writing the
files cannot be cancelled half-way (the writers go to a hidden file renamed into place, so they leave no
half file either): a window closed then waits for the write to end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.store.run_store import RunStore

FORMAT_NAMES = {"json": "JSON", "csv": "CSV", "tensorboard": "TensorBoard"}  # the same in every language
SHUTDOWN_WAIT_MS = 120_000  # reading stops at once; this bounds writing a very long run, or a disk that hangs
CANCEL_CHECK_STEPS = 1_000  # SQLite virtual-machine steps between two looks at the cancel flag (microseconds)


@dataclass(frozen=True)
class ExportJob:
    """What to export, where, and at which loss smoothing (read from the plot in the GUI thread)."""

    run_id: int
    fmt: str  # csv, json or tensorboard
    out: str  # as given: a trailing / makes a JSON export's OUT a folder
    smoothing: float

    @property
    def what(self) -> str:
        """'run 12 as CSV', in the user's language."""
        return QCoreApplication.translate("ExportJob", "run {run_id} as {format}").format(
            run_id=self.run_id, format=FORMAT_NAMES.get(self.fmt, self.fmt)
        )


@dataclass(frozen=True)
class ExportResult:
    job: ExportJob
    written: tuple[Path, ...]
    partial_step: int | None = None  # a live run: exported up to this step (it trains on); None: the whole run

    @property
    def folder(self) -> Path:
        return self.written[0].parent if self.written else Path(self.job.out)


class RunExporter(QObject):
    """Exports runs of the store at `path` in the background; `exported` or `failed`, then `ended`, follow."""

    exported = Signal(object)  # ExportResult
    failed = Signal(str)  # why the export could not be made (one sentence)
    ended = Signal()  # the thread is gone and another export may start

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.job: ExportJob | None = None  # the export under way
        self._task = BackgroundTask(self, thread_name="run-export")
        self._task.done.connect(self._on_done)
        self._task.failed.connect(self._on_failed)
        self._task.ended.connect(self._on_ended)

    @property
    def running(self) -> bool:
        return self._task.running

    def start(self, job: ExportJob) -> None:
        """Start exporting; RuntimeError while another export runs (callers refuse a second one first)."""
        if self.running:
            raise RuntimeError(f"already exporting {self.job.what if self.job else 'a run'}")
        self.job = job
        self._task.start(lambda _report, cancelled: self._export(job, cancelled))

    def _export(self, job: ExportJob, cancelled: Callable[[], bool]) -> ExportResult | UserError:
        """In the worker thread: the export, on a connection of its own that a cancel aborts. A user's
        mistake (a folder where a file must go) comes back as the error itself: its message keeps its
        structure (`gpu_train_monitor.base.text.Message`) to be translated in the GUI thread, not flattened to a
        string."""
        from gpu_train_monitor.export.run_export import export_run

        try:
            with RunStore(self.path, readonly=True) as store:
                db = store.connection
                db.set_progress_handler(lambda: int(cancelled()), CANCEL_CHECK_STEPS)
                db.execute("BEGIN")  # one snapshot: a live run's rows stop at the step its row names
                try:
                    row = store.run(job.run_id)
                    live_steps = row.steps if row.live else None
                    written = export_run(store, job.run_id, job.fmt, job.out, smoothing=job.smoothing)
                finally:
                    if db.in_transaction:
                        db.execute("ROLLBACK")  # nothing was written: only the read snapshot ends
        except UserError as exc:
            return exc
        return ExportResult(job, tuple(written), live_steps)

    @Slot(object)
    def _on_done(self, result: ExportResult | UserError) -> None:
        if self.job is None:  # shut down meanwhile, nobody is told any more
            return
        if isinstance(result, UserError):
            self.failed.emit(error_text(result, with_field=False))  # "out: ..." names no field of the window
        else:
            self.exported.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self.job is not None:  # an unexpected error: its first line, not the traceback
            self.failed.emit(message.splitlines()[0] if message else self.tr("the export failed"))

    @Slot()
    def _on_ended(self) -> None:
        self.job = None
        self.ended.emit()

    def shutdown(self, timeout_ms: int = SHUTDOWN_WAIT_MS) -> bool:
        """Cancel the export (its reading stops at once, a write under way ends) and wait for the thread;
        True when it is gone. Nothing is reported after this."""
        if not self._task.shutdown(timeout_ms):
            return False
        self.job = None
        return True
