"""One build recipe for a run's parts, from a RunConfig and a device.

The training session and the batch-size finder (and its trial process) build their model, optimizer,
gradient scaler and step here, so a trial measures exactly what the run will train: same memory
format, same fused optimizer, same autocast. `build_run` adds the data: the dataset, its placement and
the batch source.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.batches import BatchSource, Note, ResidentBatches, StreamBatches
from core.config import RunConfig, check_batch_fits
from core.datasets import DatasetSplits
from core.datasets.placement import Placement, load_placed
from core.devices import amp_dtype, check_amp
from core.models import ModelSpec, build_model, model_spec
from core.preprocess import DevicePreprocess
from core.step import Trainer, build_optimizer


def build_trainer(config: RunConfig, device: torch.device, in_channels: int, num_classes: int) -> Trainer:
    """Model on `device` (channels_last when asked), optimizer (fused on CUDA: one kernel per update and
    no host sync in fp16's gradient scaler), scaler (fp16 only) and autocast."""
    check_amp(device, config.amp)
    memory_format = torch.channels_last if config.channels_last else torch.preserve_format
    model = build_model(config.model, num_classes, in_channels).to(device, memory_format=memory_format)
    optimizer = build_optimizer(model, config.optimizer, config.lr, config.momentum, config.weight_decay,
                                fused=device.type == "cuda")
    scaler = torch.amp.GradScaler(device.type, enabled=config.amp == "fp16")
    return Trainer(model, optimizer, scaler, device.type, amp_dtype(config.amp))


@dataclass(frozen=True)
class RunParts:
    """Everything a session trains with. `placement.device_bytes(device)` is the data's share of memory."""

    splits: DatasetSplits
    placement: Placement
    source: BatchSource
    trainer: Trainer
    spec: ModelSpec
    notes: tuple[Note, ...]  # (level, text) for the run's log: placement, copies, workers, dataset readers


def build_run(config: RunConfig, device: torch.device, free_bytes: int, generator: torch.Generator) -> RunParts:
    """Load and place the data, then build the trainer and the batch source. `generator` (on `device`)
    drives shuffling and augmentation; seeding it is the caller's."""
    check_amp(device, config.amp)  # before the data loads: a bad choice is reported at once
    splits, placement, reader_notes = load_placed(config, device, free_bytes)
    check_batch_fits(config.batch_size, len(splits.train))
    spec = model_spec(config.model, splits.channels)
    trainer = build_trainer(config, device, spec.in_channels, splits.num_classes)
    preprocess = DevicePreprocess(splits, device, spec.in_channels, spec.input_size, config.channels_last,
                                  flip=splits.name not in ("mnist", "fashion-mnist"), generator=generator)
    source: BatchSource
    if placement.name == "resident":
        source = ResidentBatches(splits, device, config.batch_size, preprocess, generator)
    else:
        source = StreamBatches(splits, device, config.batch_size, preprocess, config.workers, config.pin_memory,
                               config.non_blocking, config.seed)
    notes = tuple(("warning", text) for text in reader_notes)
    if placement.note:
        notes += (("warning", placement.note),)
    return RunParts(splits, placement, source, trainer, spec, notes + tuple(source.notes))


def generator_for(device: torch.device) -> torch.Generator:
    """A random generator on `device`, named with its index: some ops refuse a generator made for "mps"
    when their tensors are on "mps:0" (pytorch#110820), so both use the indexed name."""
    if device.type in ("cuda", "mps") and device.index is None:
        device = torch.device(device.type, 0)
    return torch.Generator(device=device)
