"""After a run stops out of memory, in training or in validation: what happened, and the three ways on
(smaller batch, finder, stop)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gpu_train_monitor.gui.qt import palette
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
        self.message.setText(
            self.tr("<b>{headline}.</b> {message}").format(headline=html.escape(headline), message=html.escape(message))
        )
        self.retry_button.setText(self.tr("Retry with batch {size}").format(size=integer(self._smaller)))
        self.retry_button.setEnabled(batch_size > 1)
        self.show()

    def show_advice(self, text: str, fits_batch: int = 0) -> None:
        """What the prediction advises (`text`, in the user's language; "" hides it); `fits_batch`: the largest
        batch predicted to fit, which Retry then offers in place of half when it is smaller than the batch that
        ran out."""
        self.advice.setText(text)
        self.advice.setVisible(bool(text))
        if 0 < fits_batch < self._requested and not self.retry_button.isHidden():
            self._smaller = fits_batch
            self.retry_button.setText(self.tr("Retry with batch {size}").format(size=integer(fits_batch)))
