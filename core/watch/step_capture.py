"""What an unchanged training script does, seen from outside: its optimizer steps, each step's loss and how many
samples it trained on, without a line of the script changed and without a host sync.

- **A step** is an optimizer's `step()` (torch's global optimizer step hooks, so every optimizer, whatever built
  it). A script with several optimizers (a GAN: a generator's and a discriminator's) is reported by its largest
  one, the optimizer with the most parameter elements: one run has one loss curve and one step count, and the
  largest optimizer is the model the run is about. Its step's loss then sums every `backward()` since its previous
  step (the discriminator's too): the objective of everything that trained in between. An optimizer created later
  with more parameters (a second fine-tuning phase over the whole model) takes over, as does one as large that
  steps twice while the leader does not (a new model and optimizer per fold). At the first step a larger optimizer
  alive elsewhere is waited for: if it steps next it leads (the smaller one's loss is in its step), if the smaller
  one steps again first the larger one never trains (a teacher's, one kept for later) and the smaller one leads.
- **A step's loss** is the sum of the scalars `backward()` was called on since the previous step: the objective
  the step's gradients come from. With the usual `(loss / accumulation_steps).backward()` per micro-batch it is
  the mean micro-batch loss. A loss a `GradScaler` scaled counts unscaled, and an iteration whose step the scaler
  skipped (inf gradients) trained nothing: its losses and samples are dropped (gpu_train_monitor.watch.
  capture_patches). Inside an optimizer step only the first closure evaluation counts (LBFGS evaluates its closure
  up to 20 times a step: the step's loss is the loss at its start, its samples one batch).
- **No optimizer at all** (weights updated by hand, `w -= lr * w.grad`): when no optimizer is alive at the first
  `backward()`, each `backward()` is a step (`by_backward`), until an optimizer steps.
- **The model** is found once, at the first step, from the optimizer's parameters: the outermost `nn.Module` among
  those holding all of them (a DDP or compiled wrapper rather than the model inside it); without an optimizer, the
  outermost module whose parameters got gradients. **Samples** are counted from its training forwards
  (gpu_train_monitor.watch.step_samples).

Nothing here reads a tensor's value: shapes, devices and dtypes are metadata. Nothing here may fail the script's
backward, forward or step: a failure of ours is one line on stderr, then nothing more is captured. Several
captures may be installed at once (the patches are shared and removed with the last one).
"""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any, ClassVar

import torch
from torch import nn
from torch.optim import Optimizer
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from ..base.text import Message, message_of
from ..model.step import PhaseMarks
from .capture_patches import UNSCALED, _active, optimizers_made, patch, unpatch, with_first_closure_counted
from .captured_steps import HeldStep, Step, StepCallback, weak
from .step_samples import BatchLayout, SampleCounter
from .trace_thread import unless_tracing
from .trained_model import live_objects, model_of, parameter_count, trained_module

__all__ = ["UNSCALED", "StepCallback", "StepCapture"]


class StepCapture:
    """Optimizer steps of whatever trains in this process: `on_step(optimizer, loss, samples)` after each step of
    the largest optimizer, with the summed loss (a 0-d tensor on its device, or None when no `backward()` ran)
    and the samples its model's forward saw (None when unknown); `optimizer` is None for a step that was a
    `backward()` (no optimizer). Exceptions from `on_step` (a requested stop) reach the script through its
    `optimizer.step()` (or its `backward()`)."""

    follows_any_optimizer: ClassVar[bool] = True  # False: one optimizer named by a framework (OptimizerCapture)

    def __init__(self, on_step: StepCallback) -> None:
        self.on_step = on_step
        self.model: nn.Module | None = None
        self.by_backward = False  # the run's steps are backward()s: no optimizer in this process
        self.stepped_in_scaler = False
        self._leader: weakref.ref[Optimizer] | None = None
        self._leader_size = 0
        self._challenger: weakref.ref[Optimizer] | None = None  # as large as the leader, stepped once since it
        self._held: Step = (None, 0)  # the leader's loss and samples before the challenger's step
        self._first: HeldStep | None = None  # a first step waiting for a larger optimizer's
        self._loss: torch.Tensor | None = None
        self._samples = SampleCounter(self._counting, self.give_up)
        self._handles: list[Any] = []
        self._broken = False  # a failure of ours: capture nothing more
        self._modules: list[nn.Module] | None = None  # the first step's scan for the leader, for its model too
        # the first backward()'s scan (after a collection), kept for the first optimizer step while no optimizer is
        # made in between: one pass over the heap per run, not two (each costs ~0.1-0.2 s in a large process)
        # (weak references: a script that never steps keeps nothing alive through it)
        self._scanned: tuple[int, list[weakref.ref[Optimizer]], list[weakref.ref[nn.Module]]] | None = None
        self._model_looked_for = False  # once per leader: a model-less optimizer must not scan every step
        self.ignoring = 0  # inside a closure evaluated again (LBFGS's): its backward and forwards count nothing
        self._optimizer_seen = False
        self._without_optimizer: bool | None = None  # asked at the first backward()
        self._optimizers_made = 0  # how many had been made then
        self.timer: PhaseMarks | None = None  # a `watch --` script's step phases (time_phases)

    @property
    def leader(self) -> Optimizer | None:
        """The optimizer whose steps are the run's steps; None before the first step."""
        return self._leader() if self._leader is not None else None

    @property
    def has_loss(self) -> bool:
        """Whether a backward() since the last step gave the next step its loss."""
        return self._loss is not None

    @property
    def layout(self) -> BatchLayout:
        """What a step's samples count ("samples", or "tokens" for a language model, with its sequence length)."""
        return self._samples.layout

    def install(self) -> StepCapture:
        if self in _active:
            return self
        if not _active:
            patch()
        _active.append(self)
        self._handles = [
            register_optimizer_step_pre_hook(self._before_step),
            register_optimizer_step_post_hook(self._after_step),
        ]
        self._samples.follow_all()
        return self

    def uninstall(self) -> None:
        if self not in _active:
            return
        _active.remove(self)
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._samples.uninstall()
        self._loss = None
        if not _active:
            unpatch()

    def give_up(self, exc: BaseException) -> None:
        """A failure of ours: said once on stderr, and nothing more is captured (hooks cannot be removed while
        torch runs them, so they stay, doing nothing)."""
        if not self._broken:
            self._broken = True
            self._loss = None
            self._samples.take()
            error = Message("watching stopped: {kind}: {error}", kind=type(exc).__name__, error=message_of(exc))
            print(f"gpu-train-monitor: {error}", file=sys.stderr, flush=True)

    # ---- what the patches and hooks report -----------------------------------------------------------
    def _counting(self) -> bool:
        """Whether a forward may count now: not in a closure an optimizer step evaluates again (LBFGS's)."""
        return not self._broken and not self.ignoring

    def time_phases(self, timer: PhaseMarks) -> None:
        self.timer = self._samples.timer = timer  # told where a step's forward, backward and update end

    def backward_done(self, losses: list[torch.Tensor]) -> None:
        """An outermost backward() from `losses` has run (capture_patches); a step of its own without optimizer."""
        if self._broken:
            return
        if self.ignoring:
            return  # a closure evaluated again (LBFGS): not the step's loss
        try:
            for loss in losses:
                self._add(loss)
            if not self._steps_by_backward():
                return
            step = self._backward_step()
        except Exception as exc:  # noqa: BLE001 - never the script's backward
            self.give_up(exc)
            return
        self.on_step(None, step[0], step[1] or None)

    def _add(self, loss: torch.Tensor) -> None:
        loss = loss.detach()
        if self._loss is None:
            self._loss = loss
        else:
            if loss.device != self._loss.device:
                loss = loss.to(self._loss.device, non_blocking=True)
            self._loss = self._loss + loss

    @unless_tracing
    def _before_step(self, optimizer: Optimizer, args: Any, kwargs: Any) -> tuple[Any, Any] | None:
        if not self._optimizer_seen:
            self._optimizer_seen = True
            if self.by_backward:  # an optimizer after all: its steps are the run's from here
                self.by_backward = False
                self._leader, self.model, self._model_looked_for = None, None, False
                self._samples.forget_model()
        if self._broken:
            return None
        return with_first_closure_counted(self, args, kwargs)

    @unless_tracing
    def _after_step(self, optimizer: Optimizer, args: Any, kwargs: Any) -> None:
        if self.timer is not None:  # since the backward: clipping, unscaling, the update
            self.timer.mark("optimizer")
        self.stepped_in_scaler = True
        if self._broken:
            return
        try:
            steps = self._steps_of(optimizer)
        except Exception as exc:  # noqa: BLE001 - never the script's optimizer step
            self.give_up(exc)
            return
        finally:
            self._modules = self._scanned = None  # this step's scan only
        for loss, samples in steps:
            self.on_step(optimizer, loss, samples or None)

    def skipped_step(self, optimizer: Optimizer) -> None:
        """The GradScaler skipped this optimizer's step: the iteration's losses and samples trained nothing."""
        if optimizer is self.leader:
            self._loss = None
            self._samples.drop()

    def _take(self) -> Step:
        loss, self._loss = self._loss, None
        return loss, self._samples.take()

    # ---- which optimizer, which model ----------------------------------------------------------------
    def _steps_of(self, optimizer: Optimizer) -> list[Step]:
        """The steps to report after `optimizer` stepped: none (not the leader's, or a first step held), one, or
        a held first step and this one."""
        if self._first is not None:
            return self._after_held_step(optimizer)
        if self.leader is None and self.follows_any_optimizer:  # the first step (or the leader is gone)
            size = parameter_count(optimizer)
            if self._larger_alive(optimizer, size):
                self._first = HeldStep(weakref.ref(optimizer), size, self._take())
                return []
            self._lead(optimizer, size)
        elif not self._leads(optimizer):
            return []
        self._find_model(optimizer)
        return [self._take()]

    def release(self) -> None:
        """The script ends: a first step still waiting for a larger optimizer's is reported (that one never
        stepped)."""
        held, self._first = self._first, None
        optimizer = held.optimizer() if held is not None else None
        if held is None or optimizer is None or self._broken:
            return
        try:
            self._lead(optimizer, held.size)
            self._find_model(optimizer)
        except Exception as exc:  # noqa: BLE001
            self.give_up(exc)
            return
        self.on_step(optimizer, held.step[0], held.step[1] or None)

    def _larger_alive(self, optimizer: Optimizer, size: int) -> bool:
        alive, self._modules = self._scan()  # one scan: the model is looked for next
        return any(other is not optimizer and parameter_count(other) > size for other in alive)

    def _scan(self) -> tuple[list[Optimizer], list[nn.Module]]:
        """The live optimizers and modules, after a collection (an optimizer that is garbage but not yet collected
        is no candidate): the first backward()'s scan when no optimizer was made since, else a new one."""
        scanned, self._scanned = self._scanned, None
        if scanned is not None and scanned[0] == optimizers_made[0]:
            optimizers = [o for o in (ref() for ref in scanned[1]) if o is not None]
            return optimizers, [m for m in (ref() for ref in scanned[2]) if m is not None]
        gc.collect()
        optimizers, modules = live_objects(Optimizer, nn.Module)
        return optimizers, modules

    def _after_held_step(self, optimizer: Optimizer) -> list[Step]:
        held = self._first
        assert held is not None
        size = parameter_count(optimizer)
        if held.optimizer() is optimizer:  # it steps again before any larger one: those never train
            self._first = None
            self._lead(optimizer, held.size)
            self._find_model(optimizer)
            return [held.step, self._take()]
        if size <= held.size:
            return []  # a smaller one (a GAN's third network): its losses count in the next step
        self._first = None  # a larger one steps: it leads, and the held step's losses are in its step
        self._lead(optimizer, size)
        self._find_model(optimizer)
        loss, samples = self._take()
        held_loss, held_samples = held.step
        if held_loss is not None:
            loss = held_loss if loss is None else held_loss + loss.to(held_loss.device)
        return [(loss, samples + held_samples)]

    def _leads(self, optimizer: Optimizer) -> bool:
        leader = self.leader
        if leader is optimizer:
            if self._challenger is not None:  # it was not replaced: what trained meanwhile is its step's too
                self._challenger = None
                self._take_back()
            return True
        size = parameter_count(optimizer)
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
        self._held = self._take()  # its step's, if it takes over
        return False

    def _take_back(self) -> None:
        """What was held at a challenger's first step: the leader's step's after all (the challenger did not take
        over), added to what trained since."""
        held_loss, held_samples = self._held
        self._held = (None, 0)
        if held_loss is not None:
            self._loss = held_loss if self._loss is None else held_loss + self._loss.to(held_loss.device)
        self._samples.add(held_samples)

    def _lead(self, optimizer: Optimizer, size: int) -> None:
        if self.leader is not None and self.leader is not optimizer:
            self.model = None  # a new leader trains another model (or more of it): find it again
            self._model_looked_for = False
            self._samples.forget_model()
        self._leader = weakref.ref(optimizer)
        self._leader_size = size

    def _find_model(self, optimizer: Optimizer) -> None:
        """The model the leader trains, looked for once per leader (an optimizer over raw tensors has none)."""
        if self.model is not None or self._model_looked_for:
            return
        self._model_looked_for = True
        modules = self._modules if self._modules is not None else live_objects(nn.Module)[0]
        self.model = model_of(optimizer, modules)
        self._samples.count(self.model)

    # ---- no optimizer: steps are backward()s --------------------------------------------------------
    def _steps_by_backward(self) -> bool:
        """Whether this backward() is a step: no optimizer has stepped, and none was alive at the first backward."""
        if self._optimizer_seen or not self.follows_any_optimizer:
            return False
        if self._without_optimizer is None:  # one scan, at the first backward(): garbage is no optimizer
            optimizers, modules = self._scan()
            self._without_optimizer = not optimizers
            self._optimizers_made = optimizers_made[0]
            if optimizers:  # the first optimizer step looks for the leader and its model in the same objects
                self._scanned = (self._optimizers_made, weak(optimizers), weak(modules))
        # an optimizer made since: the backward()s from here are its first step's
        return self._without_optimizer and optimizers_made[0] == self._optimizers_made

    def _backward_step(self) -> Step:
        if not self.by_backward:
            self.by_backward = True
            self._model_looked_for = True
            self.model = trained_module(live_objects(nn.Module)[0])
            self._samples.count(self.model)
        return self._take()
