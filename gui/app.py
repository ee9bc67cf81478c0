"""`gpu-train-monitor`: with no subcommand it opens the window; a subcommand (gpu_train_monitor.cli.options.COMMANDS)
goes to the headless CLI, which is imported only then.

The window appears first and torch loads behind it (`gpu_train_monitor.gui.qt.torch_loader`), which is safe on Linux; on
Windows torch must be imported before Qt (pytorch#166628), so it is. `--screenshot PATH` runs the window unattended and
saves a picture of it (`gpu_train_monitor.gui.window.screenshot`). `--remote HOST` connects the window to another
machine over SSH at once (`gpu_train_monitor.gui.window.remote_machine`), as File ▸ Connect to a machine… does. Options
and error lines come from gpu_train_monitor.cli.options, as the CLI's do. Ctrl+C exits 130 and SIGTERM 143, quietly, at
any point (`gpu_train_monitor.gui.window.exit_signals`).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import time
from collections.abc import Sequence

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.cli.options import (
    COMMANDS,
    PROG,
    OneLineParser,
    add_record_options,
    add_run_options,
    command_protection,
    config_from_args,
    user_error_line,
)
from gpu_train_monitor.cli.version import version_line
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.field_checks import describe_range
from gpu_train_monitor.events.status import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER_ERROR
from gpu_train_monitor.gui.qt.availability import display_problem, is_qt_missing, qt_missing_line
from gpu_train_monitor.gui.window.exit_signals import deferred_signals, end_on_signals, restore_default_signals


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Open the GPU Training Monitor window. Subcommands "
        f"{', '.join(COMMANDS)} run headless (see `{PROG} run -h`).",
    )
    parser.add_argument("--version", action="version", version=version_line())
    parser.add_argument(
        "--screenshot",
        metavar="PATH",
        help="run --steps steps, save a PNG of the window, exit "
        "(exit 0 saved, 1 the run failed, 2 bad input or not saved)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=30,
        help=f"steps to run in screenshot mode ({describe_range('max_steps')}; default: 30)",
    )
    parser.add_argument(
        "--compare",
        metavar="NAME",
        help="with --screenshot: race a ready-made comparison of the Compare menu (e.g. "
        "'stream vs resident'), --steps steps each run, instead of one run",
    )
    parser.add_argument(
        "--language",
        choices=("system", "en", "zh_CN"),
        help="the window's language for this start (default: the one chosen in Settings ▸ Language, "
        "else the system's); the command line's own messages stay English",
    )
    parser.add_argument(
        "--remote",
        metavar="HOST",
        help="connect to this machine over SSH at start (an alias from ~/.ssh/config, user@host or "
        "user@host:port): its devices are listed beside this machine's",
    )
    parser.add_argument(
        "--agent-command",
        metavar="CMD",
        help="with --remote: the command that starts the agent there (default: gpu-train-monitor agent)",
    )
    add_run_options(parser)
    add_record_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: the window, or a headless command; Ctrl+C at any point exits 130 quietly."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # e.g. while Qt or torch is still importing
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in COMMANDS:
        # The entry point for the headless commands: the only place the window's module loads the CLI,
        # and only when one was asked for (a lazy import, not a dependency of the window).
        from gpu_train_monitor.cli.main import main as cli_main

        return cli_main(args_list)
    args = build_parser().parse_args(args_list)
    try:
        config = config_from_args(args)
        if args.screenshot:
            if not 1 <= args.steps <= BOUNDS["max_steps"].maximum:
                raise ConfigError("steps", f"must be {describe_range('max_steps')}, got {args.steps}")
            config = config.replace(max_steps=args.steps)
            from gpu_train_monitor.base.outputs import check_distinct_outputs, check_output_path

            check_distinct_outputs({"screenshot": args.screenshot}, command_protection(args, [config]))  # not the store
            check_output_path("screenshot", args.screenshot)  # before a window opens and a run trains
        if args.remote is not None:
            from gpu_train_monitor.remote.client.target import RemoteTarget

            RemoteTarget.parse(args.remote, args.agent_command)  # a HOST ssh would misread: one line, exit 2
        elif args.agent_command is not None:
            raise ConfigError("agent_command", "names the agent's command on the --remote HOST: give --remote too")
        if args.compare and not args.screenshot:
            raise ConfigError(
                "compare",
                "races a comparison for a screenshot: give --screenshot PATH too (in the window, use the Compare menu)",
            )
    except UserError as exc:
        print(f"{PROG}: error: {user_error_line(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    record = not args.no_record and (args.runs_db is not None or not args.screenshot)  # a screenshot records only
    return run_window(
        config if _any_run_option(args) or args.screenshot else None,
        args.screenshot,  # where told
        args.compare,
        args.runs_db,
        record,
        args.language,
        args.remote,
        args.agent_command or "",
    )


def _any_run_option(args: argparse.Namespace) -> bool:
    return any(getattr(args, field, None) is not None for field in BOUNDS)


def run_window(
    config,
    screenshot: str | None = None,
    compare: str | None = None,
    runs_db: str | None = None,
    record: bool = True,
    language: str | None = None,
    remote: str | None = None,
    agent_command: str = "",
) -> int:
    """Show the window, load torch behind it, and run the Qt event loop; returns the exit code."""
    launched = _process_start_time()
    problem = display_problem()
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    pending = deferred_signals()
    if sys.platform == "win32":
        importlib.import_module("torch")  # before Qt on Windows (c10.dll load order)
    try:
        from gpu_train_monitor.gui.qt.torch_loader import TorchLoader
        from gpu_train_monitor.gui.window.main_window import MainWindow  # Qt and pyqtgraph load here
        from gpu_train_monitor.gui.window.screenshot import ScreenshotDriver, screenshot_settings
    except ImportError as exc:
        if not is_qt_missing(exc):
            raise
        print(f"{PROG}: error: {qt_missing_line(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR

    if pending:  # Ctrl+C or SIGTERM while Qt loaded: no window to open
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED if pending[0] == signal.SIGINT else EXIT_TERMINATED
    app = make_application()
    settings = screenshot_settings() if screenshot else None
    installed = install_language(language, settings)  # before any widget: texts are set as widgets are built
    window = MainWindow(settings, runs_db, record)
    window.language = installed  # its translators live as long as the window
    exit_code = [0]
    driver = ScreenshotDriver(window, app, screenshot, config, compare, exit_code) if screenshot else None
    if config is not None:
        window.parts.form.set_config(config)
    window.show()
    if remote is not None:  # connects off the GUI thread: the window draws meanwhile
        window.parts.remote.connect_to(remote, agent_command)
    shown_after = time.time() - launched

    loader = TorchLoader(launched, window)
    loader.loaded.connect(lambda ready_after: show_torch_ready(window, driver, shown_after, ready_after))
    loader.failed.connect(lambda message: show_torch_failed(window, driver, message))
    # torch's import holds the GIL for seconds at a time (loading its libraries): started before the window's
    # first paint, it left the window black that long. The window paints first, then torch loads behind it.
    after_first_paint(window, loader.start)

    end_on_signals(app, window, exit_code, pending)
    code = app.exec()
    restore_default_signals()  # the window is gone: signals act as they do before a window opens
    return exit_code[0] or code


def make_application():
    """The QApplication (the one there is already, under tests), named for the desktop, with the app's icon and
    style sheet; plots drawn light, to match the widgets around them."""
    import pyqtgraph as pg
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from gpu_train_monitor.gui.qt.resources import ICON, asset, style_sheet

    pg.setConfigOptions(background="w", foreground="k")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("GPU Training Monitor")
    app.setOrganizationName("gpu-train-monitor")
    app.setDesktopFileName("gpu-train-monitor")
    app.setWindowIcon(QIcon(str(asset(ICON))))
    app.setStyleSheet(style_sheet())
    return app


def install_language(language: str | None, settings=None):
    """Install the translators for `language` (None: the one saved in `settings`, or the user's settings, else
    the system's) and return what was installed; a problem is a warning on stderr, and the window stays English."""
    from gpu_train_monitor.gui.i18n import language as i18n
    from gpu_train_monitor.gui.window.settings import user_settings

    choice = language or i18n.saved_choice(settings if settings is not None else user_settings())
    installed = i18n.install(i18n.resolve(choice))
    if installed.problem:
        print(f"{PROG}: warning: the window stays English: {installed.problem}", file=sys.stderr)
    return installed


def show_torch_ready(window, driver, shown_after: float, ready_after: float) -> None:
    """Torch has loaded: the times in the log, the window's devices and models filled, a screenshot's run started."""
    from PySide6.QtCore import QCoreApplication

    from gpu_train_monitor.gui.qt.locale_format import number

    window.parts.view.log.add(
        QCoreApplication.translate("app", "window shown {shown} s after launch; PyTorch ready after {ready} s").format(
            shown=number(shown_after, 2), ready=number(ready_after, 1)
        )
    )
    if driver is not None:  # the command line's line stays English
        driver.report_times(shown_after, ready_after)
    window.on_torch_ready()
    if driver is not None:
        driver.start()


def show_torch_failed(window, driver, message: str) -> None:
    """Torch could not be imported: say so in the window (and end a screenshot run with 1)."""
    from PySide6.QtCore import QCoreApplication

    window.parts.view.log.add(
        QCoreApplication.translate(
            "app", "PyTorch could not be loaded, so nothing can train: {error}. Reinstall with `pip install -e .`"
        ).format(error=message),
        "error",
    )
    window.parts.device_watch.show_torch_failed()
    if driver is not None:
        driver.torch_failed(message)


FIRST_PAINT_WAIT_MS = 2000  # a window that is not painted (minimised, no compositor) loads torch anyway


def after_first_paint(window, then) -> None:
    """Call `then()` once `window` has painted for the first time (its menu bar has: it always paints), or
    after FIRST_PAINT_WAIT_MS, whichever comes first; once only."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    class FirstPaint(QObject):
        def eventFilter(self, watched, event) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                QTimer.singleShot(0, go)  # after this paint pass has reached the screen
            return False

    done: list[bool] = []

    def go() -> None:
        if not done:
            done.append(True)
            window.menuBar().removeEventFilter(watcher)
            then()

    watcher = FirstPaint(window)
    window.menuBar().installEventFilter(watcher)
    QTimer.singleShot(FIRST_PAINT_WAIT_MS, go)


def _process_start_time() -> float:
    try:
        import psutil

        return psutil.Process().create_time()
    except Exception:
        return time.time()


if __name__ == "__main__":
    sys.exit(main())
