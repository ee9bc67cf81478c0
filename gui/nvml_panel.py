"""The whole-device view through NVML: device used vs PyTorch reserved (and why they differ), the
processes on the GPU, utilization, temperature and power. Without an NVIDIA driver it says so."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from core.units import format_bytes


class NvmlPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.summary = QLabel("Select a CUDA device to see device-wide readings.")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.gap = QLabel()
        self.gap.setWordWrap(True)
        self.gap.setToolTip("nvidia-smi counts every byte on the GPU; PyTorch counts only what its caching "
                            "allocator reserved. The difference is the CUDA context (kernels, cuBLAS/cuDNN "
                            "handles) and other processes.")
        layout.addWidget(self.gap)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["pid", "process", "GPU memory"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        layout.addWidget(self.table, 1)

    def show_unavailable(self, reason: str) -> None:
        self.summary.setText(reason)
        self.gap.setText("")
        self.table.setRowCount(0)

    def show_status(self, status: Any, reserved_bytes: int | None) -> None:
        """`status`: core.nvml.GpuStatus; `reserved_bytes`: PyTorch's reserved on that device, if known."""
        parts = [f"Device used {format_bytes(status.used_bytes)} of {format_bytes(status.total_bytes)}"]
        if status.utilization_percent is not None:
            parts.append(f"utilization {status.utilization_percent}%")
        if status.temperature_c is not None:
            parts.append(f"{status.temperature_c} °C")
        if status.power_w is not None:
            limit = f" / {status.power_limit_w:.0f} W" if status.power_limit_w else ""
            parts.append(f"{status.power_w:.0f} W{limit}")
        self.summary.setText(", ".join(parts))
        own = next((p for p in status.processes if p.pid == os.getpid()), None)
        others = sum(p.used_bytes or 0 for p in status.processes if p.pid != os.getpid())
        if reserved_bytes is not None:
            gap = status.used_bytes - reserved_bytes
            lines = [f"PyTorch reserved {format_bytes(reserved_bytes)}; the device shows "
                     f"{format_bytes(max(gap, 0))} more."]
            if own is not None and own.used_bytes is not None:
                lines.append(f"This process: {format_bytes(own.used_bytes)}, of which "
                             f"{format_bytes(max(own.used_bytes - reserved_bytes, 0))} is the CUDA context and "
                             "libraries (not in PyTorch's counters).")
            lines.append(f"Other processes: {format_bytes(others)}.")
            self.gap.setText(" ".join(lines))
        self.table.setRowCount(len(status.processes))
        for row, p in enumerate(status.processes):
            name = p.name + (" (this app)" if p.pid == os.getpid() else "")
            for col, text in enumerate((str(p.pid), name, format_bytes(p.used_bytes) if p.used_bytes else "n/a")):
                self.table.setItem(row, col, QTableWidgetItem(text))
