"""The Lightning callback records a real `Trainer.fit` (a tiny LightningModule on random tensors, on the CPU): one
step per optimizer step with the mean of its micro-batches' losses, memory reports, the breakdown, and the
ending: completed, stopped by the window's Stop (the trainer ends early), failed, and Ctrl+C."""

from __future__ import annotations

import copy
import os
import pickle
import signal

import lightning.pytorch as L
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from gpu_train_monitor.watch.lightning_callback import GpuTrainMonitorCallback
from tests.support.watched_loops import recorded_run

BATCH = 8

pytestmark = [
    # Lightning's advice for real runs, not a failure of ours: a DataLoader without workers (the tensors are in memory)
    pytest.mark.filterwarnings("ignore:The '.*dataloader' does not have many workers"),
    # Lightning 2.6's own use of a torch pytree class that newer torch deprecates, inside Trainer.fit
    pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning"),
]


class TinyModule(L.LightningModule):
    """A small classifier that keeps each micro-batch's loss (detached) to compare with the store's."""

    def __init__(self, fail_at: int | None = None, error: BaseException | None = None) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
        self.losses: list[torch.Tensor] = []
        self.fail_at, self.error = fail_at, error

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        if self.fail_at is not None and self.global_step + 1 == self.fail_at and self.error is not None:
            raise self.error
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.losses.append(loss.detach())
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=1e-2)


class ManualModule(TinyModule):
    """Manual optimization, as in Lightning's GAN examples: manual_backward() and step(), nothing returned."""

    def __init__(self) -> None:
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        optimizer = self.optimizers()
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.losses.append(loss.detach())
        optimizer.zero_grad()
        self.manual_backward(loss)
        optimizer.step()


def loader(batches: int) -> DataLoader:
    torch.manual_seed(0)
    samples = batches * BATCH
    return DataLoader(TensorDataset(torch.randn(samples, 12), torch.randint(0, 3, (samples,))), batch_size=BATCH)


def fit(module: TinyModule, callbacks: list, max_steps: int, batches: int = 40, accumulate: int = 1) -> L.Trainer:
    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=max_steps,
        accumulate_grad_batches=accumulate,
        callbacks=callbacks,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, loader(batches))
    return trainer


def test_a_fit_is_recorded_step_by_step_with_lightnings_own_losses(tmp_path):
    db = tmp_path / "runs.db"
    module = TinyModule()
    trainer = fit(module, [GpuTrainMonitorCallback(name="lit", runs_db=db, report_interval_s=0.01)], max_steps=20)
    run, steps, reports, events = recorded_run(db)
    assert (run.status, run.name, run.model, run.dataset, run.steps) == (
        "completed",
        "lit",
        "TinyModule",
        "lightning",
        20,
    )
    assert trainer.global_step == 20 and steps.steps == tuple(range(1, 21))
    assert steps.losses == pytest.approx([loss.item() for loss in module.losses], rel=1e-6)
    assert reports[-1].step == 20 and reports[-1].samples == 20 * BATCH and reports[-1].total_steps == 20
    assert all(r.allocated_bytes > 0 for r in reports)
    breakdowns = [e.data for e in events if e.kind == "MemoryBreakdown"]
    assert breakdowns and breakdowns[0]["params_bytes"] == sum(p.numel() * 4 for p in module.parameters())


def test_with_gradient_accumulation_a_step_is_an_optimizer_step_with_its_micro_batches_mean(tmp_path):
    db = tmp_path / "runs.db"
    module = TinyModule()
    # 5 batches an epoch, 2 per step: Lightning steps on the epoch's last batch alone (steps of 2, 2, 1 batches)
    trainer = fit(module, [GpuTrainMonitorCallback(runs_db=db)], max_steps=6, batches=5, accumulate=2)
    run, steps, reports, _ = recorded_run(db)
    micro = [loss.item() for loss in module.losses]
    groups = [micro[0:2], micro[2:4], micro[4:5], micro[5:7], micro[7:9], micro[9:10]]
    assert run.status == "completed" and trainer.global_step == 6 and steps.steps == tuple(range(1, 7))
    assert steps.losses == pytest.approx([sum(group) / len(group) for group in groups], rel=1e-6)
    assert reports[-1].samples == 10 * BATCH


def test_manual_optimization_without_a_returned_loss_records_what_manual_backward_ran_on(tmp_path):
    db = tmp_path / "runs.db"
    module = ManualModule()
    trainer = fit(module, [GpuTrainMonitorCallback(runs_db=db)], max_steps=8)
    run, steps, reports, _ = recorded_run(db)
    assert run.status == "completed" and trainer.global_step == 8 and steps.steps == tuple(range(1, 9))
    assert steps.losses == pytest.approx([loss.item() for loss in module.losses], rel=1e-6)
    assert reports[-1].samples == 8 * BATCH


STOPS = {  # the window's Stop as the watch's signal handler applies it, and the SIGINT it sends (or a Ctrl+C)
    "request_stop": lambda monitor: monitor.watch.controls.request_stop(),
    "sigint": lambda monitor: os.kill(os.getpid(), signal.SIGINT),
}


@pytest.mark.parametrize("stop", STOPS.values(), ids=STOPS.keys())
def test_the_windows_stop_ends_the_fit_early_and_the_run_is_stopped(tmp_path, stop):
    db = tmp_path / "runs.db"
    monitor = GpuTrainMonitorCallback(runs_db=db)

    class StopAtStep4(L.Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if trainer.global_step == 4:
                stop(monitor)

    trainer = fit(TinyModule(), [StopAtStep4(), monitor], max_steps=20)
    run, steps, *_ = recorded_run(db)
    assert run.status == "stopped" and trainer.global_step == 4 and steps.steps[-1] == 4
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the watch's handler is given back


def test_an_exception_fails_the_run_with_its_message(tmp_path):
    db = tmp_path / "runs.db"
    with pytest.raises(ValueError, match="bad batch"):
        fit(TinyModule(fail_at=6, error=ValueError("bad batch")), [GpuTrainMonitorCallback(runs_db=db)], max_steps=20)
    run, steps, *_ = recorded_run(db)
    assert run.status == "failed" and run.message == "ValueError: bad batch" and steps.steps == tuple(range(1, 6))


def test_ctrl_c_that_lightning_turns_into_an_exit_is_stopped(tmp_path):
    db = tmp_path / "runs.db"
    try:
        with pytest.raises(SystemExit):  # Lightning's answer to a KeyboardInterrupt: a graceful exit(1)
            fit(TinyModule(fail_at=3, error=KeyboardInterrupt()), [GpuTrainMonitorCallback(runs_db=db)], max_steps=20)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Lightning ignores Ctrl+C after one
    run, steps, *_ = recorded_run(db)
    assert run.status == "stopped" and steps.steps == (1, 2)


def test_the_module_and_the_callback_pickle_and_copy_during_the_fit(tmp_path):
    db = tmp_path / "runs.db"
    monitor = GpuTrainMonitorCallback(name="copied", runs_db=db)
    module = ManualModule()  # manual optimization: the step capture hooks the module's forward
    copies = []

    class CopyEachStep(L.Callback):  # an EMA or a best-model copy, and the callbacks deep-copied
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            copies.append((copy.deepcopy(pl_module.net), pickle.loads(pickle.dumps(pl_module.net))))
            copies.append((copy.deepcopy(monitor), pickle.loads(pickle.dumps(monitor))))

    fit(module, [monitor, CopyEachStep()], max_steps=3)
    run, steps, *_ = recorded_run(db)
    assert (run.status, steps.steps) == ("completed", (1, 2, 3))
    copied_monitor, loaded_monitor = copies[-1]
    assert (copied_monitor.name, loaded_monitor.runs_db, copied_monitor.watch) == ("copied", db, None)
