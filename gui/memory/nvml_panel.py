"""The whole-device view through NVML: device used vs PyTorch reserved (and why they differ), the allocator's cache
and its retries (fragmentation), the processes on the GPU, utilization, temperature and power. Without an NVIDIA
driver it says so; on a device without CUDA's allocator it says why there is no cache to show."""

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
        self.cache = QLabel()  # the allocator's cache and its retries: fragmentation, where it shows
        self.cache.setWordWrap(True)
        self.cache.setToolTip(
            self.tr(
                "Reserved minus allocated is memory PyTorch's caching allocator holds in free blocks for reuse. "
                "When no cached block fits a request, the allocator frees its cache and calls cudaMalloc again "
                "(a retry): many retries mean fragmented memory (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                "can help)."
            )
        )
        layout.addWidget(self.cache)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels([self.tr("pid"), self.tr("process"), self.tr("GPU memory")])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        layout.addWidget(self.table, 1)

    def show_unavailable(self, reason: str) -> None:
        self.summary.setText(reason)
        self.gap.setText("")
        self.table.setRowCount(0)

    def show_cache(self, sample: Any, device_kind: str) -> None:
        """The allocator's cache (reserved minus allocated), its retries and cudaMalloc failures from `sample` (a
        `MemorySample` of the selected device, None before the first); on a device without CUDA's allocator, why
        there are none."""
        if device_kind != "cuda":
            self.cache.setText(
                self.tr(
                    "Fragmentation: the cache, allocation retries and cudaMalloc failures are counted by CUDA's "
                    "caching allocator; {kind} has none."
                ).format(kind=device_kind)
            )
            return
        if sample is None or sample.alloc_retries is None:
            self.cache.setText("")
            return
        cached = max(sample.reserved_bytes - sample.allocated_bytes, 0)
        self.cache.setText(
            self.tr(
                "Allocator cache: {cached} reserved but not allocated. Since the process started: {retries} "
                "allocation retries (cache freed to fit a request), {ooms} cudaMalloc failures."
            ).format(
                cached=format_bytes(cached),
                retries=integer(sample.alloc_retries),
                ooms=integer(sample.allocator_ooms or 0),
            )
        )

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
