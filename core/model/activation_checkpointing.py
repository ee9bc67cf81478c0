"""Activation checkpointing: a model's blocks keep only their inputs for backward and run their forward again
there, trading compute for the memory of their activations (`torch.utils.checkpoint`, non-reentrant).

The blocks: resnet stages (layer1..layer4), our models' groups (tiny-cnn's three conv blocks, speedrun-net's
stem and three groups, a GPT's transformer blocks, one at a time), a vision transformer's encoder layers, the
non-leaf children of a `features` Sequential (VGG-like flat ones split after each pooling layer), else the container
of the model (or of one of its direct children) with the most sub-blocks. A model with none of these, your own
included, is refused by a ConfigError saying so: checkpointing all of it as one piece would save nothing.

Wrapping replaces the blocks' `forward` on the instances only, so the module tree and its state_dict keys stay
as they are (checkpoints and exports read the same with or without). Without gradients (validation) the blocks
run as usual. The recomputation in backward would update BatchNorm's running statistics a second time; they
are put back after it, so a run with checkpointing trains the same model as one without.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.checkpoint import checkpoint

from ..base.errors import ConfigError
from ..base.text import Message
from ..memory.breakdown import measuring_saved_tensors, storage_key

FIELD = "activation_checkpointing"
_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d)
_POOLS += (nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d)
Segment = tuple[int, int]  # [start, stop) of a flat Sequential's children


class Blocks:
    """What a model checkpoints: whole modules, and runs of a flat Sequential's layers."""

    def __init__(self, whole: Sequence[nn.Module] = (), runs: Sequence[tuple[nn.Sequential, Sequence[Segment]]] = ()):
        self.whole = list(whole)
        self.runs = [(seq, list(segments)) for seq, segments in runs]

    def __len__(self) -> int:
        return len(self.whole) + sum(len(segments) for _, segments in self.runs)


def find_blocks(model: nn.Module) -> Blocks:
    """The model's blocks to checkpoint (empty when it has no recognisable ones)."""
    from .gpt import GPT
    from .models import _LogitsOnly

    if isinstance(model, GPT):  # each transformer block, even a GPT of one block (its embeddings and head stay)
        return Blocks(whole=list(model.blocks))
    inner = model.inner if isinstance(model, _LogitsOnly) else model  # torchvision's, wrapped to give plain logits
    groups = getattr(inner, "checkpoint_groups", None)  # speedrun-net: a flat Sequential in known groups
    if groups is not None:
        return Blocks(runs=[(inner.features, groups)])
    stages = [
        getattr(inner, f"layer{i}") for i in range(1, 5) if isinstance(getattr(inner, f"layer{i}", None), nn.Module)
    ]
    if len(stages) >= 2:  # resnet, resnext, wide_resnet
        return Blocks(whole=stages)
    layers = getattr(getattr(inner, "encoder", None), "layers", None)  # vision transformers
    if isinstance(layers, (nn.Sequential, nn.ModuleList)) and len(_non_leaf(layers)) >= 2:
        return Blocks(whole=_non_leaf(layers))
    features = getattr(inner, "features", None)
    if isinstance(features, nn.Sequential):
        found = _container_blocks(features)
        if len(found) >= 2:
            return found
    candidates = [inner] if isinstance(inner, (nn.Sequential, nn.ModuleList)) else []
    candidates += [c for c in inner.children() if isinstance(c, (nn.Sequential, nn.ModuleList))]
    best = max((_container_blocks(c) for c in candidates), key=len, default=Blocks())
    return best if len(best) >= 2 else Blocks()


def _non_leaf(container: nn.Module) -> list[nn.Module]:
    """Children that hold modules of their own (a block), not single layers; parameter-free ones left out."""
    return [c for c in container.children() if any(True for _ in c.children()) and any(True for _ in c.parameters())]


def _container_blocks(container: nn.Module) -> Blocks:
    """A container's sub-blocks, or for a flat Sequential its layers split after each pooling layer."""
    blocks = _non_leaf(container)
    if len(blocks) >= 2:
        return Blocks(whole=blocks)
    if not isinstance(container, nn.Sequential) or blocks:
        return Blocks()
    segments, start = [], 0
    for index, layer in enumerate(container):
        if isinstance(layer, _POOLS):
            segments.append((start, index + 1))
            start = index + 1
    if segments and start < len(container):  # trailing layers join the last segment
        segments[-1] = (segments[-1][0], len(container))
    return Blocks(runs=[(container, segments)]) if len(segments) >= 2 else Blocks()


def no_blocks_error(model_name: str) -> ConfigError:
    return ConfigError(
        FIELD,
        Message(
            "{model} has no blocks to checkpoint (resnet stages, a features or encoder Sequential of blocks, "
            "or a Sequential of sub-modules); run it without activation checkpointing",
            model=model_name,
        ),
    )


def checkpoint_blocks(model: nn.Module, model_name: str) -> int:
    """Checkpoint the model's blocks in place; how many. ConfigError naming the field when it has none."""
    blocks = find_blocks(model)
    if not len(blocks):
        raise no_blocks_error(model_name)
    for module in blocks.whole:
        module.forward = _checkpointed(module.forward, module)  # type: ignore[method-assign]
    for sequential, segments in blocks.runs:
        sequential.forward = _segmented(sequential, segments)  # type: ignore[method-assign]
    return len(blocks)


def check_checkpointable(config: Any, device_kind: str = "cpu", in_channels: int = 3, num_classes: int = 10) -> None:
    """Refuse before anything trains a config asking to checkpoint a model without blocks: the model (`auto` as
    it stands on a `device_kind` device) is built on the meta device, without memory."""
    if not getattr(config, FIELD, False):
        return
    from .models import build_model, resolve_model

    name = resolve_model(config.model, device_kind, config.dataset)
    try:
        with torch.device("meta"):
            model = build_model(name, num_classes, in_channels)
    except Exception:  # noqa: BLE001 - a model that cannot be built without memory is checked as the run builds it
        return
    if not len(find_blocks(model)):
        raise no_blocks_error(name)


def _checkpointed(forward: Callable[..., Any], module: nn.Module) -> Callable[..., Any]:
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]

    def run(*args: Any, **kwargs: Any) -> Any:
        if not torch.is_grad_enabled():
            return forward(*args, **kwargs)
        if torch.compiler.is_compiling():  # torch.compile traces the recomputation itself
            return checkpoint(forward, *args, use_reentrant=False, **kwargs)
        recorder = measuring_saved_tensors()
        block = None if recorder is None else recorder.note_checkpointed(_bytes_of(args))
        return checkpoint(forward, *args, use_reentrant=False, context_fn=lambda: _contexts(norms, block), **kwargs)

    return run


def _bytes_of(values: Sequence[Any]) -> int:
    return sum(v.untyped_storage().nbytes() for v in values if isinstance(v, torch.Tensor))


def _segmented(sequential: nn.Sequential, segments: Sequence[Segment]) -> Callable[[torch.Tensor], torch.Tensor]:
    layers = list(sequential)
    starts = {start: stop for start, stop in segments}
    pieces: list[Callable[[torch.Tensor], torch.Tensor]] = []
    index = 0
    while index < len(layers):
        stop = starts.get(index, index + 1)
        part = nn.Sequential(*layers[index:stop])  # shares the layers: no new parameters
        pieces.append(_checkpointed(part.forward, part) if index in starts else part)
        index = stop

    def run(x: torch.Tensor) -> torch.Tensor:
        for piece in pieces:
            x = piece(x)
        return x

    return run


def _contexts(
    norms: list[nn.Module], block: int | None
) -> tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]:
    """(around the forward, around the recomputation): the latter puts BatchNorm's statistics back and, on a
    step whose saved tensors are being counted (`block`: this block's index there), counts what it holds."""
    return contextlib.nullcontext(), _recomputation(norms, block)


@contextlib.contextmanager
def _recomputation(norms: list[nn.Module], block: int | None) -> Iterator[None]:
    kept = [
        (m, m.running_mean.clone(), m.running_var.clone(), m.num_batches_tracked.clone())
        for m in norms
        if m.training and m.track_running_stats and m.running_mean is not None
    ]
    recorder = measuring_saved_tensors() if block is not None else None
    counter = _HeldBytes() if recorder is not None else contextlib.nullcontext()
    try:
        with counter:
            yield
    finally:
        with torch.no_grad():
            for module, mean, var, count in kept:
                module.running_mean.copy_(mean)
                module.running_var.copy_(var)
                module.num_batches_tracked.copy_(count)
        if recorder is not None and block is not None and isinstance(counter, _HeldBytes):
            recorder.note_recomputed(block, counter.total)


class _HeldBytes(TorchDispatchMode):
    """The bytes of the distinct storages a block's recomputation produces: what it holds in backward until
    its gradients are computed (counted on sampled CPU steps only, where autograd's hooks cannot see them)."""

    def __init__(self) -> None:
        super().__init__()
        self.storages: dict[int, int] = {}

    @property
    def total(self) -> int:
        return sum(self.storages.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        # a view, an in-place result or a detached weight shares an input's storage: nothing new is held
        inputs = {storage_key(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor) and storage_key(leaf) not in inputs:
                self.storages[storage_key(leaf)] = leaf.untyped_storage().nbytes()
        return out
