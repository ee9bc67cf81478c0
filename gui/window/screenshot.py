"""`--screenshot PATH [--compare NAME]`: once torch is ready, run what the form shows (or race the ready-made
comparison NAME); once the window's run has ended, save a PNG of the whole window and exit with the CLI's codes
(0 saved after a finished run, 1 the run did not finish, 2 bad input or a PNG not saved). A run that does not
end within SCREENSHOT_TIMEOUT_S gives up with 1. The messages are the CLI's, in English.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from gpu_train_monitor.cli.options import PROG, option_message
from gpu_train_monitor.events.status import EXIT_USER_ERROR

SCREENSHOT_TIMEOUT_S = 600
SAVE_DELAY_MS = 400  # the plots' last redraw lands before the picture is taken


def screenshot_settings():
    """Settings in a fresh file of their own: a screenshot must not read or change the user's saved settings."""
    from PySide6.QtCore import QSettings

    return QSettings(str(Path(tempfile.mkdtemp()) / "screenshot.ini"), QSettings.Format.IniFormat)


class ScreenshotDriver:
    """Drives the window for `--screenshot`: no checkpoints in the user's data folder, the run (or the ready-made
    comparison `compare`) started once torch is ready, the window saved to `path` when it ends (`follow_run`).
    `config`: the command line's settings, for what the form cannot show on this device."""

    def __init__(self, window, app, path: str, config, compare: str | None, exit_code: list[int]) -> None:
        from gpu_train_monitor.engine.checkpoint_files import ON_REQUEST

        self.window, self.app, self.config, self.compare = window, app, config, compare
        window.controller.checkpoints = ON_REQUEST  # nor write checkpoints into the user's data folder
        follow_run(window, app, path, exit_code)

    def report_times(self, shown_after: float, ready_after: float) -> None:
        """The launch's times on stderr (the window logs them in its own language)."""
        print(
            f"window shown {shown_after:.2f} s after launch; PyTorch ready after {ready_after:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    def start(self) -> None:
        """Torch is ready: race the comparison, or start the run as Start would (the form's reading, without the
        options greyed out on this device)."""
        if self.compare:
            self._start_comparison()
        else:
            form = self.window.parts.form
            self.window.start_run(form.config() if form.valid else self.config)

    def _start_comparison(self) -> None:
        """--compare NAME: the ready-made comparison of that name, as the Compare menu offers it here."""
        ready = {r.name: r for r in self.window.parts.compare_menu.ready()}
        absent = {a.name: a for a in self.window.parts.compare_menu.absent()}
        chosen = ready.get(self.compare or "")
        if chosen is not None:
            error = self.window.start_comparison([dict(o) for o in chosen.overrides], chosen.name, base=self.config)
        elif self.compare in absent:
            error = f"{self.compare!r} {absent[self.compare].needs}: {absent[self.compare].reason}"
        else:
            error = f"no ready-made comparison {self.compare!r} here; this machine offers: {', '.join(ready) or 'none'}"
        if error:
            print(f"{PROG}: error: --compare: {error}", file=sys.stderr)
            self.window.close()
            self.app.exit(EXIT_USER_ERROR)

    def torch_failed(self, message: str) -> None:
        """Nothing can run: say so and exit 1."""
        print(f"{PROG}: error: PyTorch could not be loaded: {message}", file=sys.stderr)
        self.app.exit(1)


def follow_run(window, app, path: str, exit_code: list[int]) -> None:
    """Save the window to `path` once its run has ended (`window.run_ended`); give up after the timeout.
    `exit_code[0]` is set to 1 when it gives up."""
    from PySide6.QtCore import QTimer

    finished: list = []  # the run's RunFinished, to tell bad input (exit 2) from a failed run (1)

    def remember(event: object) -> None:
        from gpu_train_monitor.events.events import RunFinished  # torch has loaded by the time a run reports

        if isinstance(event, RunFinished):
            finished.append(event)

    window.controller.event.connect(remember)

    def save(state: str) -> None:
        QTimer.singleShot(
            SAVE_DELAY_MS, lambda: save_screenshot(window, path, app, state, finished[-1] if finished else None)
        )

    def give_up() -> None:
        print(f"{PROG}: error: the screenshot run did not finish within {SCREENSHOT_TIMEOUT_S} s", file=sys.stderr)
        exit_code[0] = 1
        window.close()
        if not window.isVisible():
            app.exit(1)
        # else the close waits for the run's thread (never destroy a running QThread: Qt aborts); the
        # window closes itself once that thread has ended, and the app quits with its last window

    window.run_ended.connect(save)
    QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, give_up)


def save_screenshot(window, path: str, app, state: str = "finished", finished=None) -> None:
    """Save the window as a PNG (atomically). Exit 0 when saved after a finished run, 1 when the run did not
    finish, 2 for bad input or a PNG that could not be saved: the CLI's codes."""
    from gpu_train_monitor.base.outputs import replace_atomically

    window.parts.view.loss_plot.refresh()
    window.parts.view.memory_plot.refresh()
    window.parts.compare.view.draw_now()
    image = window.grab()

    def write(target: Path) -> None:
        if not image.save(str(target), "PNG"):
            raise OSError(f"Qt could not write a PNG to {target}")

    try:
        replace_atomically(path, write)
        ok = True
        print(f"saved a {image.width()}x{image.height()} screenshot to {path}")
    except OSError as exc:
        ok = False
        print(f"{PROG}: error: --screenshot: could not save to {path} ({exc.strerror or exc})", file=sys.stderr)
    code = 0
    if finished is not None and finished.status == "failed" and finished.user_error:
        # the picture is kept (it shows the error), but the input was bad: the CLI's line and exit code
        print(f"{PROG}: error: {option_message(finished.error_field, finished.message)}", file=sys.stderr)
        code = EXIT_USER_ERROR
    elif state != "finished":  # the picture is kept (it shows the error), but the run did not succeed
        lines = window.parts.view.log.lines()
        last = lines[-1] if lines else ""
        print(f"{PROG}: error: the screenshot run ended {state}: {last}", file=sys.stderr)
        code = 1
    if not ok:
        code = EXIT_USER_ERROR
    window.close()
    app.exit(code)
