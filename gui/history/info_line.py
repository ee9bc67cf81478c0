"""The Runs tab's info line (`gpu_train_monitor.gui.history.panel`): why the run store cannot be read, until it can;
else what an action did or why it could not, for a few seconds; else how many runs the list holds and where the store
is. Its texts keep the Runs tab's translation context ("HistoryPanel")."""

from __future__ import annotations

import html
import time

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QWidget

from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer

NOTICE_S = 10.0  # how long what an action did (or why it could not) stays in the info line


class HistoryInfo(QLabel):
    """One line under the Runs table, for the store at `link`; the panel says what to show (`show_counts`)."""

    def __init__(self, link: StoreLink, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.link = link
        self.setObjectName("runHistoryInfo")
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.store_problem: str | None = None  # why the store cannot be read (until it can)
        self._notice: tuple[str, bool, float] | None = None  # what an action did or why not, error, until when

    def notice(self, text: str, error: bool, seconds: float = NOTICE_S) -> None:
        """What an action did (or, as an `error`, why it could not), shown for `seconds` (refreshes keep it)."""
        self._notice = (text, error, time.monotonic() + seconds)

    def forget_notice(self) -> None:
        self._notice = None

    def show_counts(self, total: int, shown: int, live: int, overlaid: int) -> None:
        """The store's problem, else a notice still due, else the counts: `total` runs, `shown` by the search,
        `live` ones and `overlaid` ones."""
        if self.store_problem:
            self.setText(f"<span style='color:{palette.ERROR}'>{html.escape(self.store_problem)}</span>")
            return
        if self._notice is not None and time.monotonic() < self._notice[2]:
            text, error, _ = self._notice
            colour = palette.ERROR if error else palette.GOOD
            self.setText(f"<span style='color:{colour}'>{html.escape(text)}</span>")
            return
        if not self.link.path.exists():
            self.setText(
                QCoreApplication.translate(
                    "HistoryPanel",
                    "No runs recorded yet in {path}: runs started here or with `gpu-train-monitor run` "
                    "appear as they start.",
                ).format(path=self.link.path)
            )
            return
        self.setText(self._summary_line(total, shown, live, overlaid))

    def _summary_line(self, total: int, shown: int, live: int, overlaid: int) -> str:
        """'3 runs, 1 live, 2 overlaid on the plots — PATH': independent counts, each a text of its own."""
        if shown != total:
            facts = [
                QCoreApplication.translate("HistoryPanel", "{shown} of {total} runs").format(
                    shown=integer(shown), total=integer(total)
                )
            ]
        elif total == 1:
            facts = [QCoreApplication.translate("HistoryPanel", "1 run")]
        else:
            facts = [QCoreApplication.translate("HistoryPanel", "{total} runs").format(total=integer(total))]
        if live:
            facts.append(QCoreApplication.translate("HistoryPanel", "{live} live").format(live=integer(live)))
        if overlaid:
            facts.append(
                QCoreApplication.translate("HistoryPanel", "{overlaid} overlaid on the plots").format(
                    overlaid=integer(overlaid)
                )
            )
        # the separator between two counts of the list (a comma in English)
        listed = QCoreApplication.translate("HistoryPanel", ", ").join(facts)
        if self.link.writable:
            return QCoreApplication.translate("HistoryPanel", "{counts} — {path}").format(
                counts=listed, path=self.link.path
            )
        return QCoreApplication.translate("HistoryPanel", "{counts} — {path} (read-only)").format(
            counts=listed, path=self.link.path
        )
