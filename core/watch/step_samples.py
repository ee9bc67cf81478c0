"""How many samples an unchanged script's step trained on, seen from its model's forward: shapes only, never a
tensor's value (no host sync).

- **A training forward only.** A forward under gradients counts once backward has reached its output: the forward
  of a fixed-noise batch a GAN draws for its pictures, an evaluation that forgot `no_grad`, a copy of the model
  (an EMA) train nothing and count nothing. An output that holds no tensor we can follow counts at its forward.
- **The batch dimension.** The leading dimension of the forward's first tensor (positional or keyword), except for
  a time-major model: one holding a module with `batch_first=False` (an RNN, an LSTM, attention) that received the
  model's input with its first two dimensions as they were (T x B: the batch is the second).
- **Tokens for a language model.** A model given integer ids (batch x sequence, or sequence x batch) whose output
  has one row per position (logits B x T x V, or (B*T) x V) counts tokens: sequence x batch per step.

Until the model is known (the first optimizer step) a global forward hook notes every module's forwards; the
model's own forward (else the outermost module inside it that holds all it trains) is then counted by a hook on
that module alone (gpu_train_monitor.watch.model_hooks: never pickled with it). Nothing here may fail the script's
forward or backward: a failure of ours reaches `on_failure` and counting stops. While the global hook is in
place, torch.compile's warning about global hooks is ours to silence, not the script's to read.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.nn.modules import module as _modules
from torch.nn.modules.module import register_module_forward_hook

from .model_hooks import forward_hook, forward_pre_hook, gradient_hook
from .trace_thread import tracing_here

if TYPE_CHECKING:
    from ..model.step import PhaseMarks

_OUTPUT_TENSORS = 8  # an output's tensors looked at (a model returns a few: logits, loss, hidden states)


@dataclass(frozen=True)
class BatchLayout:
    """Where a model's input holds its batch: `batch_dim` (0, or 1 for a time-major model), and whether a step
    counts tokens (batch x sequence) rather than samples, with the sequence length of the first forward's ids."""

    batch_dim: int = 0
    tokens: bool = False
    sequence: int = 0

    @property
    def unit(self) -> str:
        return "tokens" if self.tokens else "samples"

    def samples(self, shape: tuple[int, ...]) -> int:
        if self.tokens and len(shape) >= 2:
            return shape[0] * shape[1]
        return shape[self.batch_dim] if len(shape) > self.batch_dim else (shape[0] if shape else 0)


@dataclass
class _Forward:
    """One forward under gradients, before the model was known: its first input's shape and kind, its output's
    tensor shapes, and whether backward has reached that output yet."""

    shape: tuple[int, ...]
    integer: bool
    outputs: tuple[tuple[int, ...], ...]
    trained: bool = False

    def train(self, _gradient: torch.Tensor) -> None:
        self.trained = True


@dataclass
class _Early:
    forwards: dict[int, list[_Forward]] = field(default_factory=dict)  # id(module) -> its forwards
    handle: Any = None
    quiet: Any = None  # the warnings filter in place while the global hook is


class SampleCounter:
    """The samples of the training forwards since `take()` was last called. `counting()` says whether a forward
    now may count (False inside an optimizer step after its first closure: LBFGS evaluates it again and again)."""

    def __init__(self, counting: Callable[[], bool], on_failure: Callable[[BaseException], None]) -> None:
        self.counting = counting
        self.on_failure = on_failure
        self.layout = BatchLayout()
        self.module: nn.Module | None = None  # the one whose forwards count
        self._samples = 0
        self._early = _Early()
        self._handle: Any = None
        self._pre_handle: Any = None
        self.timer: PhaseMarks | None = None  # told when the model's training forward starts and ends

    # ---- before the model is known -----------------------------------------------------------------------------
    def follow_all(self) -> None:
        if self._early.handle is None:
            self._early.handle = register_module_forward_hook(self._early_forward, with_kwargs=True)
            self._early.quiet = quiet_about_global_hooks()

    def _early_forward(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        if not torch.is_grad_enabled() or not self.counting() or tracing_here():
            return
        try:
            tensor = input_tensor(args, kwargs)
            if tensor is None or tensor.dim() == 0:
                return
            outputs = list(output_tensors(output))
            forward = _Forward(tuple(tensor.shape), _is_integer(tensor), tuple(tuple(t.shape) for t in outputs))
            followed = [t for t in outputs if t.requires_grad]
            if followed:
                for t in followed:
                    gradient_hook(t, forward.train)
            else:  # nothing backward could reach that we can see: counted as it runs
                forward.trained = True
            self._early.forwards.setdefault(id(module), []).append(forward)
        except Exception as exc:  # noqa: BLE001 - never the script's forward
            self.on_failure(exc)

    def stop_following_all(self) -> None:
        """No more global hook (every module's forward pays for one): the model's own hook counts from here."""
        handle, self._early.handle = self._early.handle, None
        if handle is not None:
            handle.remove()
            _modules._global_forward_hooks_with_kwargs.pop(handle.id, None)  # torch leaves it (see step_inputs)
        quiet, self._early.quiet = self._early.quiet, None
        if quiet is not None:
            speak_again(quiet)
        self._early.forwards.clear()

    # ---- the model -----------------------------------------------------------------------------------------------
    def count(self, model: nn.Module | None) -> None:
        """Count `model`'s training forwards from now on; those of the step just made (seen by the global hook)
        count too. None: count nothing."""
        self.forget_model()
        forwards = self._early.forwards
        counted = _counted_module(model, forwards) if model is not None else None
        if counted is not None:
            seen = forwards.get(id(counted), [])
            self.layout = layout_of(counted, seen[0], forwards) if seen else BatchLayout()
            self._samples += sum(self.layout.samples(f.shape) for f in seen if f.trained)
            self.module = counted
            self._handle = forward_hook(counted, self._model_forward)
            self._pre_handle = forward_pre_hook(counted, self._model_forward_starts)
        self.stop_following_all()

    def forget_model(self) -> None:
        for handle in (self._handle, self._pre_handle):
            if handle is not None:
                handle.remove()
        self._handle = self._pre_handle = None
        self.module = None

    def _model_forward_starts(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.timer is not None and torch.is_grad_enabled():  # a training forward: the batch was ready
            self.timer.mark("data")

    def _model_forward(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        if not torch.is_grad_enabled() or not self.counting():
            return
        if self.timer is not None:
            self.timer.mark("forward")
        try:
            tensor = input_tensor(args, kwargs)
            if tensor is None or tensor.dim() == 0:
                return
            samples = self.layout.samples(tuple(tensor.shape))
            followed = [t for t in output_tensors(output) if t.requires_grad]
            if not followed:
                self._samples += samples
                return
            once = _Once(self, samples)
            for t in followed:
                gradient_hook(t, once)
        except Exception as exc:  # noqa: BLE001 - never the script's forward
            self.on_failure(exc)

    def add(self, samples: int) -> None:
        self._samples += samples

    # ---- the step's count ----------------------------------------------------------------------------------------
    def take(self) -> int:
        """The samples since the last take (0: none seen)."""
        samples, self._samples = self._samples, 0
        return samples

    def drop(self) -> None:
        """What trained nothing (a step the GradScaler skipped) counts nothing."""
        self._samples = 0
        for forwards in self._early.forwards.values():
            forwards.clear()

    def uninstall(self) -> None:
        self.forget_model()
        self.stop_following_all()
        self._samples = 0


class _Once:
    """Adds one forward's samples when backward first reaches any of its outputs."""

    def __init__(self, counter: SampleCounter, samples: int) -> None:
        self.counter, self.samples = counter, samples

    def __call__(self, _gradient: torch.Tensor) -> None:
        if self.samples:
            self.counter.add(self.samples)
            self.samples = 0


# what torch.compile says at each call of a compiled module while any global module hook is in place: ours, until
# the first step, are the watch's business, not a line in the script's stderr
GLOBAL_HOOKS_WARNING = r"Using `torch\.compile\(module\)` when there are global hooks on modules"


def quiet_about_global_hooks() -> Any:
    """Silence torch.compile's warning about global hooks while ours is in place; the filter, to take out after."""
    warnings.filterwarnings("ignore", message=GLOBAL_HOOKS_WARNING, category=UserWarning)
    return warnings.filters[0]


def speak_again(entry: Any) -> None:
    """Take out a filter of quiet_about_global_hooks(): the script's own global hooks are its to hear about."""
    with contextlib.suppress(ValueError):
        warnings.filters.remove(entry)
        mutated = getattr(warnings, "_filters_mutated", None)  # the warnings module's caches of the filters
        if mutated is not None:
            mutated()


def input_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor | None:
    """A forward's first tensor: among its positional arguments, else its keyword ones (a transformers model's)."""
    tensor = first_tensor(args)
    return tensor if tensor is not None else first_tensor(kwargs.values())


def first_tensor(values: Iterable[Any]) -> torch.Tensor | None:
    """The first tensor among `values`, looking one level into lists, tuples and dicts."""
    for value in values:
        if isinstance(value, (list, tuple)):
            value = next((item for item in value if isinstance(item, torch.Tensor)), None)
        elif isinstance(value, dict):
            value = next((item for item in value.values() if isinstance(item, torch.Tensor)), None)
        if isinstance(value, torch.Tensor):
            return value
    return None


def output_tensors(output: Any) -> Iterator[torch.Tensor]:
    """The tensors of a forward's output (a tensor, or those in a tuple, a list or a dict such as a transformers
    ModelOutput, one level down too), a few at most."""
    found = 0
    stack = [output]
    while stack and found < _OUTPUT_TENSORS:
        value = stack.pop(0)
        if isinstance(value, torch.Tensor):
            found += 1
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def layout_of(model: nn.Module, first: _Forward, forwards: dict[int, list[_Forward]]) -> BatchLayout:
    """How `model` holds its batch, from its first forward and those of its modules (see the module's docstring)."""
    shape = first.shape
    if len(shape) < 2:
        return BatchLayout()
    if first.integer and any(_per_position(out, shape) for out in first.outputs):
        return BatchLayout(tokens=True, sequence=shape[1])  # ids B x T, as language models take them
    for module in model.modules():  # the model itself too (an nn.LSTM trained alone)
        if getattr(module, "batch_first", None) is not False:
            continue
        seen = forwards.get(id(module))  # batched time-major inputs are T x B x features; (T x features): unbatched
        if seen and len(seen[0].shape) >= 3 and seen[0].shape[:2] == shape[:2]:
            return BatchLayout(batch_dim=1)
    return BatchLayout()


def _per_position(out: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether an output of this shape has a row per position of an input of `shape` (a language model's logits)."""
    return (len(out) >= 3 and out[:2] == shape[:2]) or (len(out) == 2 and out[0] == shape[0] * shape[1] > shape[0])


def _is_integer(tensor: torch.Tensor) -> bool:
    return not tensor.is_floating_point() and not tensor.is_complex() and tensor.dtype != torch.bool


def _counted_module(model: nn.Module, forwards: dict[int, list[_Forward]]) -> nn.Module | None:
    """The module whose forwards count: the model, or, when its own forward was not called (a LightningModule whose
    training_step calls `self.net(x)`), the outermost module inside it that holds every parameter it trains."""
    if id(model) in forwards:
        return model
    trained = {id(p) for p in model.parameters() if p.requires_grad}
    for module in model.modules():  # outermost first
        if id(module) in forwards and trained <= {id(p) for p in module.parameters()}:
            return module
    return model
