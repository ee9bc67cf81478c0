"""A report: the buffered losses sent to the host in one copy, the event made at the report and completed with them
once they arrive, and the checks they go through."""

from __future__ import annotations

import math

import pytest
import torch

from gpu_train_monitor.engine.loop_state import LoopState
from gpu_train_monitor.engine.report import LOSS_RISE_FACTOR, check_losses, report, with_losses
from gpu_train_monitor.events.outcome import Diverged
from gpu_train_monitor.memory.probe import MemoryProbe


def test_a_report_sends_every_buffered_loss_and_numbers_them_from_the_first_unreported_step() -> None:
    run = LoopState(t0=0.0, step=5, samples=160, epoch=2, total_steps=20)
    run.pending = [torch.tensor(2.5), torch.tensor(2.0)]
    event, losses = report(run, 32, MemoryProbe(torch.device("cpu")))
    assert (event.first_step, event.step, event.losses, event.epoch) == (4, 5, (), 2)  # the losses: on their way
    assert (event.batch_size, event.samples, event.total_steps) == (32, 160, 20)
    assert run.pending == [] and run.epoch_losses == []
    assert losses.count == 2 and losses.done()  # on the CPU the copy is done at once
    event = with_losses(run, event, losses.values())
    assert event.losses == (2.5, 2.0) and run.epoch_losses == [2.5, 2.0]


def test_a_loss_that_is_not_finite_ends_the_run_at_its_step() -> None:
    run = LoopState(t0=0.0, step=3)
    with pytest.raises(Diverged, match="the loss became nan at step 2"):
        check_losses(run, 1, [1.0, math.nan, 1.0])


def test_a_rising_loss_is_a_warning_once() -> None:
    run = LoopState(t0=0.0, step=10)
    assert check_losses(run, 1, [1.0, 1.0]) is None
    warning = check_losses(run, 3, [LOSS_RISE_FACTOR * 1.5])
    assert warning is not None and warning.level == "warning"
    assert warning.text == (
        "the loss rose from 1 to 4.5 by step 10: the run is not converging; try a lower learning rate"
    )
    assert check_losses(run, 4, [LOSS_RISE_FACTOR * 2]) is None
