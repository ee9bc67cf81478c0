"""The transformers callback records a real `Trainer.train()` (a tiny GPT-2 built from a config, random token ids,
on the CPU, nothing downloaded): one step per optimizer step with the loss the Trainer logs, memory reports, the
breakdown, and the ending: completed, and stopped by the window's Stop (the Trainer ends early)."""

from __future__ import annotations

import copy
import os
import pickle
import signal

import pytest
import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.transformers_callback import GpuTrainMonitorCallback
from tests.support.watched_loops import recorded_run

BATCH = 4
TOKENS = 16


class RandomTokens(Dataset):
    """Random token ids, the labels the inputs themselves (a language model's objective)."""

    def __init__(self, samples: int) -> None:
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, 100, (samples, TOKENS), generator=generator)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[index], "labels": self.ids[index]}


def tiny_gpt2() -> torch.nn.Module:
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=100, n_positions=TOKENS, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(config)


def train(tmp_path, callbacks: list, max_steps: int, accumulate: int = 1) -> Trainer:
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=max_steps,
        per_device_train_batch_size=BATCH,
        gradient_accumulation_steps=accumulate,
        logging_steps=1,  # the Trainer's logged loss is then each step's own (the mean over one step)
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    model = tiny_gpt2()
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(BATCH * accumulate * 40), callbacks=callbacks)
    trainer.train()
    return trainer


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a tiny model from a config: nothing may be downloaded


def logged_losses(trainer: Trainer) -> list[float]:
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]


@pytest.mark.parametrize("accumulate", [1, 2])
def test_a_training_is_recorded_step_by_step_with_the_loss_the_trainer_logs(tmp_path, accumulate):
    db = tmp_path / "runs.db"
    monitor = GpuTrainMonitorCallback(name="hf", runs_db=db, report_interval_s=0.01)
    trainer = train(tmp_path, [monitor], max_steps=10, accumulate=accumulate)
    run, steps, reports, events = recorded_run(db)
    assert (run.status, run.name, run.model, run.dataset) == ("completed", "hf", "GPT2LMHeadModel", "transformers")
    assert trainer.state.global_step == 10 and steps.steps == tuple(range(1, 11))
    assert steps.losses == pytest.approx(logged_losses(trainer), rel=1e-5)
    assert reports[-1].step == 10 and reports[-1].samples == 10 * accumulate * BATCH
    assert reports[-1].total_steps == 10 and all(r.allocated_bytes > 0 for r in reports)
    with RunStore(db) as store:
        assert store.config(run.id)["optimizer"] == "AdamW"  # accelerate's wrapper unwrapped
    breakdowns = [e.data for e in events if e.kind == "MemoryBreakdown"]
    model = trainer.model
    assert breakdowns and breakdowns[0]["params_bytes"] == sum(p.numel() * 4 for p in model.parameters())
    assert torch.autograd.backward.__name__ == "backward" and not hasattr(torch.autograd.backward, "__wrapped__")


STOPS = {  # the window's Stop as the watch's signal handler applies it, and the SIGINT it sends (or a Ctrl+C)
    "request_stop": lambda monitor: monitor.watch.controls.request_stop(),
    "sigint": lambda monitor: os.kill(os.getpid(), signal.SIGINT),
}


@pytest.mark.parametrize("stop", STOPS.values(), ids=STOPS.keys())
def test_the_windows_stop_ends_the_training_early_and_the_run_is_stopped(tmp_path, stop):
    db = tmp_path / "runs.db"
    monitor = GpuTrainMonitorCallback(runs_db=db)

    class StopAtStep4(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 4:
                stop(monitor)

    trainer = train(tmp_path, [StopAtStep4(), monitor], max_steps=20)
    run, steps, *_ = recorded_run(db)
    assert run.status == "stopped" and trainer.state.global_step == 4 and steps.steps[-1] == 4
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the watch's handler is given back


def test_a_training_that_raised_is_failed_when_the_same_callback_trains_again(tmp_path):
    db = tmp_path / "runs.db"
    monitor = GpuTrainMonitorCallback(runs_db=db)

    class RaiseAtStep3(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 3:
                raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):  # the Trainer does not tell its callbacks
        train(tmp_path, [monitor, RaiseAtStep3()], max_steps=10)
    train(tmp_path, [monitor], max_steps=2)  # a notebook's next cell
    with RunStore(db) as store:
        first, second = sorted(store.list_runs(), key=lambda run: run.id)
        assert (first.status, first.steps) == ("failed", 3) and "does not pass to callbacks" in first.message
        assert (second.status, second.steps) == ("completed", 2)


def test_a_larger_optimizer_alive_elsewhere_does_not_take_the_trainers_steps(tmp_path):
    db = tmp_path / "runs.db"
    other = torch.nn.Linear(1000, 1000)  # a second model in a notebook, larger than the one trained
    other_optimizer = torch.optim.SGD(other.parameters(), lr=0.1)
    trainer = train(tmp_path, [GpuTrainMonitorCallback(runs_db=db)], max_steps=3)
    run, steps, *_ = recorded_run(db)
    assert (run.status, steps.steps) == ("completed", (1, 2, 3))
    assert steps.losses == pytest.approx(logged_losses(trainer), rel=1e-5)
    assert other_optimizer.param_groups  # alive until here


def test_the_model_and_the_callback_pickle_and_copy_during_the_training(tmp_path):
    db = tmp_path / "runs.db"
    monitor = GpuTrainMonitorCallback(name="copied", runs_db=db)
    copies = []

    class CopyEachStep(TrainerCallback):  # an EMA or a best-model copy, and a Trainer's callbacks pickled
        def on_step_end(self, args, state, control, model=None, **kwargs):
            copies.append((copy.deepcopy(model), pickle.loads(pickle.dumps(model)), copy.deepcopy(monitor)))
            pickle.dumps(monitor)

    train(tmp_path, [monitor, CopyEachStep()], max_steps=2)
    run, steps, *_ = recorded_run(db)
    assert (run.status, steps.steps) == ("completed", (1, 2)) and len(copies) == 2
    copied_model, loaded_model, copied_monitor = copies[-1]
    assert not copied_model._forward_pre_hooks and not loaded_model._forward_pre_hooks
    assert (copied_monitor.name, copied_monitor.runs_db, copied_monitor.watch) == ("copied", db, None)
