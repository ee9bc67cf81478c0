"""The summary of one run: what `--summary-json` writes and what the GUI shows at the end."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATUSES = ("completed", "stopped", "diverged", "oom", "failed")


@dataclass(frozen=True)
class RunSummary:
    status: str
    steps: int
    samples: int
    wall_s: float
    samples_per_s: float | None  # median over reports after warm-up
    loss_first: float | None  # mean loss of the first report
    loss_last: float | None  # mean loss of the last report
    val_accuracy: float | None  # last epoch's; None if no validation ran
    device: str
    device_name: str
    peak_allocated_bytes: int
    peak_reserved_bytes: int  # 0 where the device has no caching allocator
    peak_rss_bytes: int
    config: dict[str, Any]
    memory_breakdown: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, allow_nan=True) + "\n", encoding="utf-8")
