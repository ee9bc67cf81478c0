"""Saving the window's plots as PNG or SVG, one file per plot.

One file per plot because each plot is its own scene: the SVG keeps its curves, axes and text as
vectors, which a picture of the whole window could not, and a report or a paper takes its figures one
by one. The file name the user chooses is the stem: `run.png` gives `run-loss.png`, `run-memory.png`...
PNG comes from pyqtgraph's `ImageExporter`. SVG comes from Qt's own generator in SVG 1.1 mode, which
keeps the plot's clipping (a zoomed curve stops at the axes): pyqtgraph 0.14's `SVGExporter` fails on
the closed paths that Qt 6 writes for a plot's frame and bars (pyqtgraph issue 3495). Writes are atomic
(`gpu_train_monitor.base.outputs`): a full disk leaves the old file or none, never half an image.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QT_TRANSLATE_NOOP, QBuffer, QCoreApplication, QIODevice, QRectF
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.outputs import check_output_path, replace_atomically

FORMATS = ("png", "svg")
# the save dialog's filters, each naming the format it writes (shown translated: `file_filters`)
_FILTERS = (
    (QT_TRANSLATE_NOOP("plot_export", "PNG image (*.png)"), "png"),
    (QT_TRANSLATE_NOOP("plot_export", "SVG image (*.svg)"), "svg"),
)


def file_filters() -> dict[str, str]:
    """The save dialog's filters in the user's language, each mapped to the format it writes."""
    return {QCoreApplication.translate("plot_export", text): fmt for text, fmt in _FILTERS}


def format_for(path: str, filter_format: str) -> str:
    """'png' or 'svg': the suffix typed in `path` when it names one, else the format of the dialog's chosen
    filter (`filter_format`)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return suffix if suffix in FORMATS else filter_format


def target_paths(path: str, names: Sequence[str], fmt: str) -> list[Path]:
    """One file per plot beside `path`: its stem (a .png or .svg suffix dropped), a dash, the plot's name."""
    chosen = Path(path).expanduser()
    stem = chosen.stem if chosen.suffix.lower() in (".png", ".svg") else chosen.name
    return [chosen.with_name(f"{stem}-{name}.{fmt}") for name in names]


def save_plots(plots: Sequence[tuple[str, pg.PlotWidget]], path: str, fmt: str) -> list[Path]:
    """Write each (name, plot) as `fmt` ('png' or 'svg') to `target_paths`; returns the files written.
    OSError, with the reason, when one cannot be written (checked for all first; a failure while writing
    keeps the files written before it)."""
    targets = target_paths(path, [name for name, _ in plots], fmt)
    for target in targets:  # a missing or read-only folder is named before anything is drawn
        try:
            check_output_path("plots", target)
        except ConfigError as exc:
            raise OSError(exc.detail) from None  # the reason alone (a `Message`: the window translates it)
    written = []
    for (_, plot), target in zip(plots, targets):
        if fmt == "svg":
            data = svg_bytes(plot)
            replace_atomically(target, lambda temporary: temporary.write_bytes(data))
        else:
            image = ImageExporter(plot.getPlotItem()).export(toBytes=True)
            replace_atomically(target, lambda temporary: _write_png(image, temporary))
        written.append(target)
    return written


def svg_bytes(plot: pg.PlotWidget) -> bytes:
    """The plot (title, axes, legend, curves; not the widgets around it) as an SVG 1.1 document, drawn on
    the plot's background at the size it has on screen."""
    item = plot.getPlotItem()
    source = item.sceneBoundingRect()
    target = QRectF(0, 0, source.width(), source.height())
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)  # 1.1 keeps clipping; Tiny 1.2 drops it
    generator.setOutputDevice(buffer)
    generator.setResolution(round(plot.logicalDpiX()))  # pens and text at their on-screen size
    generator.setSize(target.size().toSize())
    generator.setViewBox(target)
    generator.setTitle(item.titleLabel.text or "plot")
    painter = QPainter(generator)
    try:
        painter.fillRect(target, plot.backgroundBrush())
        plot.scene().render(painter, target, source)
    finally:
        painter.end()
    return bytes(buffer.data())


def _write_png(image: object, path: Path) -> None:
    if not image.save(str(path), "PNG"):  # type: ignore[attr-defined] - a QImage
        raise OSError(QCoreApplication.translate("plot_export", "Qt could not write the PNG"))
