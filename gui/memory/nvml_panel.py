"""The whole-device view through NVML: device used vs PyTorch reserved (and why they differ), the
processes on the GPU, utilization, temperature and power. Without an NVIDIA driver it says so."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.qt.locale_format import integer, number


class NvmlPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.summary = QLabel(self.tr("Select a CUDA device to see device-wide readings."))
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.gap = QLabel()
        self.gap.setWordWrap(True)
        self.gap.setToolTip(
            self.tr(
                "nvidia-smi counts every byte on the GPU; PyTorch counts only what its caching "
                "allocator reserved. The difference is the CUDA context (kernels, cuBLAS/cuDNN "
                "handles) and other processes."
            )
        )
        layout.addWidget(self.gap)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels([self.tr("pid"), self.tr("process"), self.tr("GPU memory")])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        layout.addWidget(self.table, 1)

    def show_unavailable(self, reason: str) -> None:
        self.summary.setText(reason)
        self.gap.setText("")
        self.table.setRowCount(0)

    def show_status(self, status: Any, reserved_bytes: int | None) -> None:
        """`status`: gpu_train_monitor.device.nvml.GpuStatus; `reserved_bytes`: PyTorch's reserved on that device, if
        known."""
        # readings listed one after another (each its own text), not a sentence glued from pieces
        parts = [
            self.tr("Device used {used} of {total}").format(
                used=format_bytes(status.used_bytes), total=format_bytes(status.total_bytes)
            )
        ]
        if status.utilization_percent is not None:
            parts.append(self.tr("utilization {percent}%").format(percent=integer(status.utilization_percent)))
        if status.temperature_c is not None:
            parts.append(f"{integer(status.temperature_c)} °C")
        if status.power_w is not None:
            parts.append(
                f"{number(status.power_w, 0)} W / {number(status.power_limit_w, 0)} W"
                if status.power_limit_w
                else f"{number(status.power_w, 0)} W"
            )
        self.summary.setText(self.tr(", ", "between the readings of the NVML summary").join(parts))
        own = next((p for p in status.processes if p.pid == os.getpid()), None)
        others = sum(p.used_bytes or 0 for p in status.processes if p.pid != os.getpid())
        if reserved_bytes is not None:
            gap = status.used_bytes - reserved_bytes
            lines = [
                self.tr("PyTorch reserved {reserved}; the device shows {more} more.").format(
                    reserved=format_bytes(reserved_bytes), more=format_bytes(max(gap, 0))
                )
            ]
            if own is not None and own.used_bytes is not None:
                lines.append(
                    self.tr(
                        "This process: {used}, of which {context} is the CUDA context and libraries "
                        "(not in PyTorch's counters)."
                    ).format(
                        used=format_bytes(own.used_bytes), context=format_bytes(max(own.used_bytes - reserved_bytes, 0))
                    )
                )
            lines.append(self.tr("Other processes: {used}.").format(used=format_bytes(others)))
            self.gap.setText(" ".join(lines))
        self.table.setRowCount(len(status.processes))
        for row, p in enumerate(status.processes):
            name = self.tr("{name} (this app)").format(name=p.name) if p.pid == os.getpid() else p.name
            used = format_bytes(p.used_bytes) if p.used_bytes else self.tr("n/a")
            for col, text in enumerate((str(p.pid), name, used)):
                self.table.setItem(row, col, QTableWidgetItem(text))
