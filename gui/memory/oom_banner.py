"""After a run stops out of memory, in training or in validation: what happened, what held the memory by module
and the batch predicted to fit (the event's autopsy), and the three ways on (smaller batch, finder, stop)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import OutOfMemory
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.locale_format import integer


class OomBanner(QFrame):
    retry_smaller = Signal(int)  # the batch size to retry with
    run_finder = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("oomBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            f"#oomBanner {{ background: {palette.ERROR_BACKGROUND}; border: 1px solid {palette.ERROR}; }}"
        )
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.holders = QLabel()  # the modules that held the most at the failure: name, bytes, share
        self.holders.setObjectName("oomHolders")
        self.holders.setTextFormat(Qt.TextFormat.RichText)
        self.holders.hide()
        self.fits = QLabel()  # the batch the event's prediction says fits, until the advice's search says it
        self.fits.setObjectName("oomFits")
        self.fits.setTextFormat(Qt.TextFormat.PlainText)
        self.fits.hide()
        self.advice = QLabel()  # what the prediction says would fit (gpu_train_monitor.gui.memory.insight works it out)
        self.advice.setObjectName("oomAdvice")
        self.advice.setWordWrap(True)
        self.advice.setTextFormat(Qt.TextFormat.PlainText)
        self.advice.hide()
        self.retry_button = QPushButton()
        self.finder_button = QPushButton(self.tr("Find a batch size that fits"))
        self.dismiss_button = QPushButton(self.tr("Stop here"))
        self.retry_button.clicked.connect(self._on_retry)
        self.finder_button.clicked.connect(self.run_finder.emit)
        self.dismiss_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        texts = QVBoxLayout()
        texts.addWidget(self.message)
        texts.addWidget(self.holders)
        texts.addWidget(self.fits)
        texts.addWidget(self.advice)
        layout.addLayout(texts, 1)
        for button in (self.retry_button, self.finder_button, self.dismiss_button):
            layout.addWidget(button)
        self._smaller = 1
        self._requested = 1
        self.hide()

    @Slot()
    def _on_retry(self) -> None:
        self.retry_smaller.emit(self._smaller)

    def offer(self, batch_size: int, headline: str, message: str, retry: bool = True) -> None:
        """`batch_size`: the batch that did not fit (validation runs at the training batch size, so halving
        it helps either way); `headline`: 'Out of memory during ...'; `message`: the details (both already in
        the user's language). `retry` False (a watched script's own settings ran out): what happened, with
        no Retry or finder, which would start a run of the form's settings."""
        self.retry_button.setVisible(retry)
        self.finder_button.setVisible(retry)
        self.dismiss_button.setText(self.tr("Stop here") if retry else self.tr("Dismiss"))
        self._smaller = max(batch_size // 2, 1)
        self._requested = batch_size
        self.advice.hide()
        self.holders.hide()
        self.fits.hide()
        self.message.setText(
            self.tr("<b>{headline}.</b> {message}").format(headline=html.escape(headline), message=html.escape(message))
        )
        self.retry_button.setText(self.tr("Retry with batch {size}").format(size=integer(self._smaller)))
        self.retry_button.setEnabled(batch_size > 1)
        self.show()

    def show_autopsy(self, event: OutOfMemory) -> None:
        """What held the memory by module when `event` happened (the five largest, with their share of the step) and
        the batch its prediction says fits, which Retry offers when it is smaller than the batch that ran out."""
        if event.holders:
            whole = event.holders_total_bytes
            rows = "".join(
                "<tr><td><code>{name}</code></td><td align='right'>&nbsp;&nbsp;{size}</td>"
                "<td align='right'>&nbsp;&nbsp;{share}</td></tr>".format(
                    name=html.escape(row.name),
                    size=format_bytes(row.total_bytes),
                    share=html.escape(event_text.share_text(row.total_bytes, whole)),  # as the log says it
                )
                for row in event.holders
            )
            caption = self.tr("Largest holders by module ({source}), share of {total}:").format(
                source=html.escape(core_text(event_text.holders_source(event.holders_source, event.holders_step))),
                total=format_bytes(whole),
            )
            self.holders.setText(f"{caption}<table cellspacing='0' cellpadding='0'>{rows}</table>")
        self.holders.setVisible(bool(event.holders))
        if event.fits_batch is not None:
            self.fits.setText(core_text(event_text.fits_text(event.fits_batch)))
        self.fits.setVisible(event.fits_batch is not None)
        self._offer_fit(event.fits_batch or 0)

    def _offer_fit(self, fits_batch: int) -> None:
        """Retry offers `fits_batch` in place of half when it is smaller than the batch that ran out (and not 0)."""
        if 0 < fits_batch < self._requested and not self.retry_button.isHidden():
            self._smaller = fits_batch
            self.retry_button.setText(self.tr("Retry with batch {size}").format(size=integer(fits_batch)))

    def show_advice(self, text: str, fits_batch: int = -1) -> None:
        """What the prediction advises (`text`, in the user's language; "" hides it); `fits_batch`: the largest
        batch its search predicts to fit (-1: the text names none yet), which Retry then offers in place of half
        when it is smaller than the batch that ran out."""
        self.advice.setText(text)
        self.advice.setVisible(bool(text))
        if fits_batch >= 0:  # searched with more predictions than the event's one: it says the batch from now on
            self.fits.hide()
        self._offer_fit(fits_batch)
