"""The summary of one run: what `--summary-json` writes and what the GUI shows at the end."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config.sequences import Throughput, throughput


@dataclass(frozen=True)
class RunSummary:
    status: str
    steps: int
    samples: int
    wall_s: float
    samples_per_s: float | None  # median over reports after warm-up
    loss_first: float | None  # the first step's loss
    loss_last: float | None  # the last step's loss (nan when the run ended in one)
    val_accuracy: float | None  # last epoch's; None if no validation ran
    device: str
    device_name: str
    peak_allocated_bytes: int
    peak_reserved_bytes: int  # 0 where the device has no caching allocator
    peak_rss_bytes: int
    config: Mapping[str, Any]  # as run: device and placement resolved, batch_size the one in force at the end
    memory_breakdown: Mapping[str, int] | None = None
    batch_size: int = 0  # in force at the end (smaller than requested after an out-of-memory shrink)
    batch_size_changes: tuple[Mapping[str, int], ...] = ()  # {"step", "from", "to"} per out-of-memory shrink
    skipped_samples: int = 0  # training images of the planned epochs left out after a shrink (remainders)
    samples_per_s_spread: tuple[float, float] | None = None  # 10th..90th percentile over reports after warm-up
    warmup_steps: int = 0  # steps of the first report, left out of samples_per_s
    compile_s: float | None = None  # torch.compile's time in the first step (in wall_s, not in samples_per_s)
    world_size: int = 1  # processes that trained together (data-parallel); samples_per_s is their total
    ranks: tuple[Mapping[str, Any], ...] = ()  # a data-parallel run: per rank {"rank", "device", "samples_per_s",
    # "peak_allocated_bytes", "peak_reserved_bytes", "peak_rss_bytes"}
    start_step: int = 0  # steps trained before this run resumed from a checkpoint: it trained steps - start_step
    step_phases_s: Mapping[str, float] | None = None  # median seconds per step of data, copy, forward, backward,
    # optimizer, recording (STEP_PHASES) over the reports after warm-up, and "step" (one step's whole time)
    verdict: str | None = None  # "input-bound", "host-bound" or "compute-bound" (gpu_train_monitor.engine.step_phases)
    verdict_text: str = ""  # the verdict for people, with what to try
    device_step_phases_s: Mapping[str, float] | None = None  # on CUDA: the same phases on the GPU's own clock
    gpu_caught_up: float | None = None  # on CUDA: the share of step starts at which the GPU waited for the host
    expandable_segments: bool | None = None  # on CUDA, for a run that set them: whether its allocator's segments
    # were expandable, read back from them at its end (None: not read, none made, or of both kinds)

    @property
    def throughput(self) -> Throughput:
        """The run's unit: images/s, or tokens/s for a text run (samples/s x seq_len) and a watched language model."""
        return throughput(self.config)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (read-only mappings become ordinary dicts and lists), and `tokens_per_s`: a text
        run's samples/s x seq_len (a watched language model's samples/s, which counts tokens), null otherwise."""
        values = dataclasses.asdict(self)
        unit = self.throughput
        values["tokens_per_s"] = unit.of(self.samples_per_s) if unit.tokens else None
        values["config"] = dict(self.config)
        values["memory_breakdown"] = None if self.memory_breakdown is None else dict(self.memory_breakdown)
        values["batch_size_changes"] = [dict(change) for change in self.batch_size_changes]
        values["ranks"] = [dict(rank) for rank in self.ranks]
        values["samples_per_s_spread"] = None if self.samples_per_s_spread is None else list(self.samples_per_s_spread)
        values["step_phases_s"] = None if self.step_phases_s is None else dict(self.step_phases_s)
        values["device_step_phases_s"] = None if self.device_step_phases_s is None else dict(self.device_step_phases_s)
        return values
