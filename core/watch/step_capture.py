"""What an unchanged training script does, seen from outside: its optimizer steps, each step's loss and how many
samples it trained on, without a line of the script changed and without a host sync.

- **A step** is an optimizer's `step()` (torch's global `register_optimizer_step_post_hook`, so every optimizer,
  whatever built it). A script with several optimizers (a GAN: a generator's and a discriminator's) is reported
  by its largest one, the optimizer with the most parameter elements: one run has one loss curve and one step
  count, and the largest optimizer is the model the run is about. Its step's loss then sums every `backward()`
  since its previous step (the discriminator's too): the objective of everything that trained in between. An
  optimizer created later with more parameters (a second fine-tuning phase over the whole model) takes over, as
  does one as large that steps twice while the leader does not (a new model and optimizer per fold).
- **A step's loss** is the sum of the scalars `backward()` was called on since the previous step: the objective
  the step's gradients come from. With the usual `(loss / accumulation_steps).backward()` per micro-batch it is
  the mean micro-batch loss. A loss a `GradScaler` scaled counts unscaled (the scaled tensor remembers it), and
  an iteration whose step the scaler skipped (inf gradients) trained nothing: its losses and samples are dropped.
  Patched: `torch.autograd.backward` (which `Tensor.backward` calls), `GradScaler.scale` and `GradScaler.step`.
  Only the outermost call with an implicit gradient counts (a checkpointed segment's inner backward passes its
  gradients). The losses stay detached on their device: the sum is queued there, nothing is read.
- **The model** is found once, at the first step, from the optimizer's parameters: the outermost `nn.Module` among
  those holding all of them (a DDP or compiled wrapper rather than the model inside it). **Samples** are the
  leading dimension of the first tensor given to its `forward` while gradients are enabled (a validation pass
  under `no_grad` does not count), summed over the micro-batches of a step. Until the model is known a global
  forward pre-hook notes every module's inputs, so the first step has its samples too; it is removed then.

Nothing here reads a tensor's value: shapes, devices and dtypes are metadata. Nothing here may fail the script's
backward, forward or step: a failure of ours is one line on stderr, then nothing more is captured. Several
captures may be installed at once (the patches are shared and removed with the last one).
"""

from __future__ import annotations

import functools
import gc
import sys
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.optim import Optimizer
from torch.optim.optimizer import register_optimizer_step_post_hook

from ..base.text import Message, message_of
from .trained_model import live_objects, model_of, parameter_count

StepCallback = Callable[[Optimizer, "torch.Tensor | None", "int | None"], None]
UNSCALED = "_gpu_train_monitor_unscaled"  # the attribute a scaled loss keeps its unscaled value in

_active: list[StepCapture] = []
_originals: list[tuple[Any, str, Any]] = []  # (owner, attribute, original) of every patch in place
_backward_depth = 0  # nested backward calls (a checkpointed segment's) are not losses


class StepCapture:
    """Optimizer steps of whatever trains in this process: `on_step(optimizer, loss, samples)` after each step of
    the largest optimizer, with the summed loss (a 0-d tensor on its device, or None when no `backward()` ran)
    and the samples its model's forward saw (None when unknown). Exceptions from `on_step` (a requested stop)
    reach the script through its `optimizer.step()`."""

    def __init__(self, on_step: StepCallback) -> None:
        self.on_step = on_step
        self.model: nn.Module | None = None
        self._leader: weakref.ref[Optimizer] | None = None
        self._leader_size = 0
        self._challenger: weakref.ref[Optimizer] | None = None  # as large as the leader, stepped once since it
        self._held: tuple[torch.Tensor | None, int] = (None, 0)  # the leader's loss and samples before that step
        self._loss: torch.Tensor | None = None
        self._samples = 0
        self._early_samples: dict[int, int] = {}  # id(module) -> samples, until the model is known
        self._step_handle: Any = None
        self._early_handle: Any = None
        self._model_handle: Any = None
        self._stepped_in_scaler = False
        self._broken = False  # a failure of ours: capture nothing more
        self._modules: list[nn.Module] | None = None  # this step's scan for the leader, for its model too

    @property
    def leader(self) -> Optimizer | None:
        """The optimizer whose steps are the run's steps; None before the first step."""
        return self._leader() if self._leader is not None else None

    def install(self) -> StepCapture:
        if self in _active:
            return self
        if not _active:
            _patch()
        _active.append(self)
        self._step_handle = register_optimizer_step_post_hook(self._after_step)
        self._early_handle = register_module_forward_pre_hook(self._early_forward)
        return self

    def uninstall(self) -> None:
        if self not in _active:
            return
        _active.remove(self)
        for handle in (self._step_handle, self._early_handle, self._model_handle):
            if handle is not None:
                handle.remove()
        self._step_handle = self._early_handle = self._model_handle = None
        self._early_samples.clear()
        self._loss = None
        if not _active:
            _unpatch()

    # ---- what the patches and hooks report -----------------------------------------------------------
    def _backward(self, loss: torch.Tensor) -> None:
        if self._broken:
            return
        loss = loss.detach()
        if self._loss is None:
            self._loss = loss
        else:
            if loss.device != self._loss.device:
                loss = loss.to(self._loss.device, non_blocking=True)
            self._loss = self._loss + loss

    def _early_forward(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        if torch.is_grad_enabled() and not self._broken:
            try:
                samples = _leading_dimension(args)
                if samples:
                    self._early_samples[id(module)] = self._early_samples.get(id(module), 0) + samples
            except Exception as exc:  # noqa: BLE001 - never the script's forward
                self.give_up(exc)

    def _model_forward(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if torch.is_grad_enabled() and not self._broken:
            try:
                self._samples += _leading_dimension(args) or _leading_dimension(kwargs.values()) or 0
            except Exception as exc:  # noqa: BLE001
                self.give_up(exc)

    def _after_step(self, optimizer: Optimizer, args: Any, kwargs: Any) -> None:
        self._stepped_in_scaler = True
        if self._broken:
            return
        try:
            if not self._leads(optimizer):
                return
            if self.model is None:
                self._find_model(optimizer)
            loss, samples = self._loss, self._samples
            self._loss, self._samples = None, 0
        except Exception as exc:  # noqa: BLE001 - never the script's optimizer step
            self.give_up(exc)
            return
        finally:
            self._modules = None  # this step's scan only
        self.on_step(optimizer, loss, samples or None)

    def give_up(self, exc: BaseException) -> None:
        """A failure of ours: said once on stderr, and nothing more is captured (hooks cannot be removed while
        torch runs them, so they stay, doing nothing)."""
        if not self._broken:
            self._broken = True
            self._loss, self._samples = None, 0
            error = Message("watching stopped: {kind}: {error}", kind=type(exc).__name__, error=message_of(exc))
            print(f"gpu-train-monitor: {error}", file=sys.stderr, flush=True)

    def _skipped_step(self, optimizer: Optimizer) -> None:
        """The GradScaler skipped this optimizer's step: the iteration's losses and samples trained nothing."""
        if optimizer is self.leader:
            self._loss, self._samples = None, 0
            self._early_samples.clear()

    # ---- which optimizer, which model ----------------------------------------------------------------
    def _leads(self, optimizer: Optimizer) -> bool:
        leader = self.leader
        if leader is optimizer:
            if self._challenger is not None:  # it was not replaced: what trained meanwhile is its step's too
                self._challenger = None
                self._take_back()
            return True
        size = parameter_count(optimizer)
        if leader is None:  # the first step (or the leader is gone): the largest optimizer alive now
            gc.collect()  # once per run: an optimizer that is garbage but not yet collected is no candidate
            alive, self._modules = live_objects(Optimizer, nn.Module)  # one scan: the model is looked for next
            best = max([optimizer, *alive], key=parameter_count)
            self._lead(best, parameter_count(best))
            return best is optimizer
        if size > self._leader_size or (size == self._leader_size and self._steps_again(optimizer)):
            self._lead(optimizer, size)
            return True
        return False

    def _steps_again(self, optimizer: Optimizer) -> bool:
        """Whether this optimizer, as large as the leader, steps a second time while the leader did not: the
        script replaced it (a new optimizer per fold), and the old one may live on in a reference cycle until
        the collector runs."""
        if self._challenger is not None and self._challenger() is optimizer:
            self._challenger, self._held = None, (None, 0)  # the old leader's last losses: in no step
            return True
        self._take_back()
        self._challenger = weakref.ref(optimizer)
        self._held, self._loss, self._samples = (self._loss, self._samples), None, 0  # its step's, if it takes over
        return False

    def _take_back(self) -> None:
        """What was held at a challenger's first step: the leader's step's after all (the challenger did not take
        over), added to what trained since."""
        held_loss, held_samples = self._held
        self._held = (None, 0)
        if held_loss is not None:
            self._loss = held_loss if self._loss is None else held_loss + self._loss.to(held_loss.device)
        self._samples += held_samples

    def _lead(self, optimizer: Optimizer, size: int) -> None:
        if self.leader is not None and self.leader is not optimizer:
            self.model = None  # a new leader trains another model (or more of it): find it again
        self._leader = weakref.ref(optimizer)
        self._leader_size = size

    def _find_model(self, optimizer: Optimizer) -> None:
        modules = self._modules if self._modules is not None else live_objects(nn.Module)[0]
        model = model_of(optimizer, modules)
        if self._model_handle is not None:
            self._model_handle.remove()
            self._model_handle = None
        self.model = model
        if model is not None:
            self._samples += self._early_samples.get(id(model), 0)
            self._model_handle = model.register_forward_pre_hook(self._model_forward, with_kwargs=True)
        if self._early_handle is not None:
            self._early_handle.remove()
            self._early_handle = None
        self._early_samples.clear()


def _leading_dimension(values: Iterable[Any]) -> int | None:
    """The leading dimension of the first tensor among `values` (looking one level into lists and dicts)."""
    for value in values:
        if isinstance(value, (list, tuple)):
            value = next((item for item in value if isinstance(item, torch.Tensor)), None)
        elif isinstance(value, dict):
            value = next((item for item in value.values() if isinstance(item, torch.Tensor)), None)
        if isinstance(value, torch.Tensor):
            return int(value.shape[0]) if value.dim() > 0 else None
    return None


def _losses_of(tensors: Any) -> list[torch.Tensor]:
    """The scalars a backward with an implicit gradient starts from (their unscaled values)."""
    if isinstance(tensors, torch.Tensor):
        tensors = [tensors]
    elif not isinstance(tensors, (list, tuple)):
        return []
    losses = []
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != 1:
            return []  # a GradientEdge, or a non-scalar: not a loss
        losses.append(getattr(tensor, UNSCALED, tensor).reshape(()))
    return losses


# ---- the patches ---------------------------------------------------------------------------------------
def _patch() -> None:
    backward = torch.autograd.backward

    @functools.wraps(backward)
    def watched_backward(tensors: Any, grad_tensors: Any = None, *args: Any, **kwargs: Any) -> Any:
        global _backward_depth
        outermost = _backward_depth == 0 and grad_tensors is None and kwargs.get("grad_variables") is None
        _backward_depth += 1
        try:
            result = backward(tensors, grad_tensors, *args, **kwargs)
        finally:
            _backward_depth -= 1
        if outermost and _active:
            for capture in list(_active):
                try:
                    for loss in _losses_of(tensors):
                        capture._backward(loss)
                except Exception as exc:  # noqa: BLE001 - never the script's backward
                    capture.give_up(exc)
        return result

    scale = torch.amp.GradScaler.scale

    @functools.wraps(scale)
    def watched_scale(self: torch.amp.GradScaler, outputs: Any) -> Any:
        scaled = scale(self, outputs)
        if isinstance(outputs, torch.Tensor) and isinstance(scaled, torch.Tensor) and scaled is not outputs:
            try:
                setattr(scaled, UNSCALED, outputs.detach())
            except (AttributeError, TypeError):  # a tensor subclass without a __dict__: counted scaled
                pass
        return scaled

    step = torch.amp.GradScaler.step

    @functools.wraps(step)
    def watched_step(self: torch.amp.GradScaler, optimizer: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for capture in _active:
            capture._stepped_in_scaler = False
        result = step(self, optimizer, *args, **kwargs)
        for capture in list(_active):
            if not capture._stepped_in_scaler:
                capture._skipped_step(optimizer)
        return result

    for owner, name, patched in (
        (torch.autograd, "backward", watched_backward),
        (torch.amp.GradScaler, "scale", watched_scale),
        (torch.amp.GradScaler, "step", watched_step),
    ):
        _originals.append((owner, name, getattr(owner, name)))
        setattr(owner, name, patched)


def _unpatch() -> None:
    while _originals:
        owner, name, original = _originals.pop()
        setattr(owner, name, original)
