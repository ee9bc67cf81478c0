"""One build recipe for a run's parts, from a RunConfig and a device.

The training session and the batch-size finder (and its trial process) build their model, optimizer,
gradient scaler and step here, so a trial measures exactly what the run will train: same memory
format, same fused optimizer, same autocast. `build_run` adds the data: the dataset, its placement and
the batch source.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..base.text import Message
from ..base.user_code import is_spec
from ..config.run_checks import check_batch_fits
from ..config.run_config import RunConfig
from ..data.batches import BatchSource, Note, StreamBatches
from ..data.datasets import DatasetSplits, TextSplits
from ..data.placement import Placement, load_placed
from ..data.preprocess import DevicePreprocess
from ..data.resident_batches import ResidentBatches
from ..data.sharding import ONE, Shard
from ..data.text_batches import ResidentText, StreamText
from ..device.devices import amp_dtype
from ..device.fast_paths import check_fast_paths
from ..model.activation_checkpointing import checkpoint_blocks
from ..model.models import ModelSpec, build_model, model_options, model_spec, resolve_model
from ..model.step import TrainingStep, build_optimizer


def check_model_input(
    config: RunConfig, model: torch.nn.Module, channels: int, height: int, width: int, num_classes: int
) -> None:
    """Your own model (`package.module:factory`) gets one forward pass of two images shaped like the run's
    before training: a ConfigError naming it when it fails on them or gives other than one logit per class.
    The pass also builds its lazy modules (nn.LazyLinear, ...). The built-in models are made for any input."""
    if is_spec(config.model):
        from ..model.user_models import check_output

        check_output(model, config.model, channels, height, width, num_classes, config.channels_last)


def config_for_device(config: RunConfig, device: torch.device) -> RunConfig:
    """`config` with what depends on the device resolved: the model `auto` stands for."""
    model = resolve_model(config.model, device.type, config.dataset)
    return config if model == config.model else config.replace(model=model)


def build_trainer(
    config: RunConfig,
    device: torch.device,
    in_channels: int,
    num_classes: int,
    image_size: tuple[int, int] | None = None,
) -> TrainingStep:
    """Model on `device` (your own checked on images of `image_size`, height x width, by `check_model_input`;
    then channels_last when asked; its blocks checkpointed when asked; wrapped by torch.compile when asked,
    which compiles lazily at the first step), optimizer (fused when asked: one kernel per update, and on CUDA no
    host sync in fp16's gradient scaler), scaler (fp16 only) and autocast."""
    config = config_for_device(config, device)
    check_fast_paths(config, device)
    model = build_model(config.model, num_classes, in_channels, **model_options(config, num_classes)).to(device)
    return assemble_trainer(config, model, device.type, in_channels, num_classes, image_size)


def assemble_trainer(
    config: RunConfig,
    model: torch.nn.Module,
    device_type: str,
    in_channels: int,
    num_classes: int,
    image_size: tuple[int, int] | None,
    *,
    traced_for: str | None = None,
) -> TrainingStep:
    """The step's parts around `model` (on its device): what a run trains and what a prediction traces
    (`traced_for`: the device kind a prediction is for, gpu_train_monitor.engine.prediction), built by one recipe
    so the two cannot differ in a setting. A traced step differs on purpose only where fake tensors must or a
    trace cannot: the memory format is changed without `.to()` (which fake parameters refuse), a non-fused CUDA
    update is asked to be multi-tensor (as torch picks for real CUDA tensors, not for fake ones or the CPU
    standing in), fp16's gradient scaler is left out (it unscales in place: a few scalars) and nothing is
    compiled (the trace is eager)."""
    if image_size is not None:  # before the memory format and the optimizer: lazy modules get their parameters
        check_model_input(config, model, in_channels, *image_size, num_classes)
    if config.channels_last:  # only now: an uninitialised (lazy) parameter has no memory format to change
        if traced_for:
            to_channels_last(model)
        else:
            model = model.to(memory_format=torch.channels_last)
    if config.activation_checkpointing:  # on the model itself: the eager model, DDP and torch.compile all run it
        checkpoint_blocks(model, config.model)
    optimizer = build_optimizer(
        model, config.optimizer, config.lr, config.momentum, config.weight_decay, fused=config.fused_optimizer
    )
    if traced_for == "cuda" and not config.fused_optimizer:  # also where the CPU stands in for CUDA
        for group in optimizer.param_groups:
            group["foreach"] = True
    scaler = torch.amp.GradScaler(device_type, enabled=config.amp == "fp16" and not traced_for)
    compiled = torch.compile(model) if config.compile and not traced_for else None
    return TrainingStep(model, optimizer, scaler, device_type, amp_dtype(config.amp), compiled)


def to_channels_last(model: torch.nn.Module) -> None:
    """`model.to(memory_format=torch.channels_last)` without `.to()`, which fake parameters refuse: every 4-d
    parameter and buffer replaced by a channels_last copy, as `.to` does."""
    for module in model.modules():
        for name, param in list(module._parameters.items()):
            if param is not None and param.dim() == 4:
                module._parameters[name] = torch.nn.Parameter(
                    param.detach().contiguous(memory_format=torch.channels_last), param.requires_grad
                )
        for name, buffer in list(module._buffers.items()):
            if buffer is not None and buffer.dim() == 4:
                module._buffers[name] = buffer.contiguous(memory_format=torch.channels_last)


@dataclass(frozen=True)
class RunParts:
    """Everything a session trains with. `placement.device_bytes(device)` is the data's share of memory."""

    splits: DatasetSplits | TextSplits
    placement: Placement
    source: BatchSource
    trainer: TrainingStep
    spec: ModelSpec
    notes: tuple[Note, ...]  # (level, text) for the run's log: placement, copies, workers, dataset readers


def build_run(
    config: RunConfig, device: torch.device, free_bytes: int, generator: torch.Generator, shard: Shard = ONE
) -> RunParts:
    """Load and place the data, then build the trainer and the batch source. `generator` (on `device`)
    drives shuffling and augmentation; seeding it is the caller's. `shard`: a rank of a data-parallel run,
    whose batch source serves `config.batch_size / world` images a step (gpu_train_monitor.data.sharding)."""
    config = config_for_device(config, device)
    check_fast_paths(config, device)  # before the data loads: a choice the device cannot run is reported at once
    if device.type == "cuda":  # process-wide: each run sets it, so runs in one process do not inherit it
        torch.backends.cudnn.benchmark = config.cudnn_benchmark
    splits, placement, reader_notes = load_placed(config, device, free_bytes)
    if isinstance(splits, TextSplits):
        check_batch_fits(config.batch_size, len(splits.train), config.seq_len)
        return _text_run(config, device, splits, placement, generator, shard, reader_notes)
    check_batch_fits(config.batch_size, len(splits.train))
    batch_size = config.batch_size // shard.world
    spec = model_spec(config.model, splits.channels)
    trainer = build_trainer(config, device, spec.in_channels, splits.num_classes, splits.image_size)
    preprocess = DevicePreprocess(
        splits,
        device,
        spec.in_channels,
        spec.input_size,
        config.channels_last,
        flip=splits.name not in ("mnist", "fashion-mnist"),
        generator=generator,
        shard=shard,
    )
    source: BatchSource
    if placement.name == "resident":
        source = ResidentBatches(splits, device, batch_size, preprocess, generator, shard)
    else:
        source = StreamBatches(
            splits,
            device,
            batch_size,
            preprocess,
            config.workers,
            config.pin_memory,
            config.non_blocking,
            config.seed,
            shard,
        )
    notes = tuple(("warning", text) for text in reader_notes)
    if is_spec(config.dataset):  # what the run does to the user's images, said once: it is not their transform
        notes += (("info", _own_dataset_note(splits, preprocess)),)
    if placement.note:
        notes += (("warning", placement.note),)
    return RunParts(splits, placement, source, trainer, spec, notes + tuple(source.notes))


def _text_run(
    config: RunConfig,
    device: torch.device,
    splits: TextSplits,
    placement: Placement,
    generator: torch.Generator,
    shard: Shard,
    reader_notes: tuple[str, ...],
) -> RunParts:
    """A language model's parts: its trainer (token ids in, one logit per vocabulary entry out) and the text's
    batch source (gpu_train_monitor.data.text_batches)."""
    batch_size = config.batch_size // shard.world
    trainer = build_trainer(config, device, 1, splits.num_classes)
    source: BatchSource
    if placement.name == "resident":
        source = ResidentText(splits, device, batch_size, generator, shard)
    else:
        source = StreamText(
            splits,
            device,
            batch_size,
            generator,
            config.workers,
            config.pin_memory,
            config.non_blocking,
            config.seed,
            shard,
        )
    notes = tuple(("warning", text) for text in reader_notes)
    if placement.note:
        notes += (("warning", placement.note),)
    return RunParts(splits, placement, source, trainer, ModelSpec(1, None), notes + tuple(source.notes))


def _own_dataset_note(splits: DatasetSplits, preprocess: DevicePreprocess) -> Message:
    """What a run does to your own dataset's images (one sentence with the flip, one without)."""
    values = {
        "train": len(splits.train),
        "val": len(splits.val),
        "classes": splits.num_classes,
        "shape": f"{splits.channels}x{splits.image_size[0]}x{splits.image_size[1]}",
        "pad": preprocess.pad,
    }
    if preprocess.flip:
        return Message(
            "your own dataset: {train:,} training and {val:,} validation images of {shape}, {classes} "
            "classes; each epoch crops them at random (up to {pad} px) and flips them, and every batch is "
            "normalised per channel by the training images' mean and std",
            **values,
        )
    return Message(
        "your own dataset: {train:,} training and {val:,} validation images of {shape}, {classes} classes; "
        "each epoch crops them at random (up to {pad} px), and every batch is normalised per channel by "
        "the training images' mean and std",
        **values,
    )


def generator_for(device: torch.device) -> torch.Generator:
    """A random generator on `device`, named with its index: some ops refuse a generator made for "mps"
    when their tensors are on "mps:0" (pytorch#110820), so both use the indexed name."""
    if device.type in ("cuda", "mps") and device.index is None:
        device = torch.device(device.type, 0)
    return torch.Generator(device=device)
