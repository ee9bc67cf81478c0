"""The sentences of a run, written once (gpu_train_monitor.events.event_text) for the CLI's progress bar and the
window's log."""

from __future__ import annotations

import dataclasses
import math

import pytest

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    LogMessage,
    OutOfMemory,
    RunFinished,
    SnapshotSaved,
    StepsReported,
)
from gpu_train_monitor.events.module_bytes import ModuleBytes
from tests.support.events import oom, sample, started, summary


def test_run_started_names_the_model_device_data_and_the_plan():
    text = event_text.run_started(started(epochs=10))
    assert text == (
        "training resnet18 on cuda:0 (NVIDIA H200): 11,173,962 parameters, cifar10 (50,000 train / "
        "10,000 val images, 184.32 MB), resident placement, batch 256, 1,950 steps over 10 epochs"
    )
    assert event_text.run_started(started(epochs=1, total_steps=1)).endswith("1 step over 1 epoch")


def test_a_run_bounded_by_max_steps_alone_has_no_epoch_total():
    text = event_text.run_started(started(epochs=None, total_steps=5_000))
    assert text.endswith("5,000 steps over as many epochs as that takes")
    assert event_text.epoch_of(3, None) == "epoch 3"
    assert event_text.epoch_of(3, 10) == "epoch 3/10"


def test_steps_postfix_averages_the_finite_losses_of_the_report():
    event = StepsReported(
        step=40,
        epoch=2,
        first_step=31,
        losses=(1.0, 3.0, math.nan, math.inf),
        samples=10_240,
        samples_per_s=12_345.6,
        elapsed_s=3.0,
        eta_s=9.0,
        batch_size=256,
        memory=sample(),
    )
    assert event_text.steps_postfix(event, 10) == "epoch 2/10 loss 2.0000 12,346 img/s mem 3.00 GB"
    assert event_text.steps_postfix(event, None).startswith("epoch 2 loss")
    on_cpu = StepsReported(40, 2, 31, (math.nan,), 10_240, 100.0, 3.0, None, 256, sample(allocator=False))
    assert event_text.steps_postfix(on_cpu, None) == "epoch 2 loss nan 100 img/s mem 900.00 MB"  # RSS on the CPU


def test_epoch_ended_says_n_a_for_what_was_not_measured():
    assert event_text.epoch_ended(EpochEnded(3, 585, 0.51234, 0.6, 0.8765)) == (
        "epoch 3: train loss 0.5123, val loss 0.6000, val accuracy 87.65%"
    )
    assert event_text.epoch_ended(EpochEnded(1, 10, None, None, None)) == (
        "epoch 1: train loss n/a, val loss n/a, val accuracy n/a"
    )


def test_cache_clear_snapshot_and_log_lines():
    assert event_text.cache_cleared(CacheCleared(None, 12_345_678, sample())) == (
        "cache cleared at rest: 12.35 MB freed, reserved now 4.00 GB"
    )
    assert event_text.cache_cleared(CacheCleared(8, 4096, sample())).startswith("cache cleared at step 8: 4.10 kB")
    assert event_text.cache_cleared_mark(CacheCleared(8, 4096, sample())) == "cleared 4.10 kB"
    assert event_text.snapshot_saved(SnapshotSaved(12, "/tmp/s.pickle", 2_500_000)) == (
        "memory snapshot saved to /tmp/s.pickle (2.50 MB) at step 12: open it at https://pytorch.org/memory_viz"
    )
    assert event_text.log_message(LogMessage("info", "hello")) == "hello"
    assert event_text.log_message(LogMessage("warning", "careful")) == "warning: careful"


def test_out_of_memory_in_training_and_in_validation():
    assert event_text.out_of_memory_headline(oom("train")) == "Out of memory during training"
    assert event_text.out_of_memory_headline(oom("validation")) == "Out of memory during validation"
    assert event_text.out_of_memory(oom("train")) == oom("train").message  # the session's words
    # a message that does not say where it happened gets the phase; one that does is left alone
    assert event_text.out_of_memory(oom("validation")).endswith("(during validation)")
    said = oom("validation", message="out of memory during validation after epoch 2 with batch size 256")
    assert event_text.out_of_memory(said) == said.message


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("completed", "finished: 1950 steps in 61.2 s, 8,150 images/s, peak 5.25 GB"),
        ("stopped", "stopped at step 812"),
        ("diverged", "diverged: loss is nan at step 812"),
    ],
)
def test_run_finished(status, expected):
    message = "" if status in ("completed", "stopped") else "loss is nan at step 812"
    event = RunFinished(status, 812, message, False, summary(status=status))
    assert event_text.run_finished(event) == expected


def test_run_finished_without_a_measured_speed():
    event = RunFinished("completed", 3, "", False, summary(steps=3, samples_per_s=None))
    assert ", n/a, " in event_text.run_finished(event)


def test_run_requested_uses_the_config_as_entered():
    from gpu_train_monitor.config.run_config import RunConfig

    config = RunConfig(model="tiny-cnn", device="cpu", batch_size=16)
    assert event_text.run_requested(config) == "starting: tiny-cnn on cpu, synthetic, batch 16"


def test_a_resumed_run_says_where_it_resumed():
    resumed = dataclasses.replace(started(epochs=10), start_step=585)
    assert event_text.run_started(resumed) == event_text.run_started(started(epochs=10)) + " (resumed at step 585)"


def test_a_resumed_run_s_end_says_the_steps_it_trained_and_where_they_lie():
    """Resumed at step 20 and finished at 60: the time, images/s and peak beside it are those 40 steps'."""
    event = RunFinished("completed", 60, "", False, summary(steps=60, start_step=20))
    assert event_text.run_finished(event) == (
        "finished: trained 40 steps (steps 21-60) in 61.2 s, 8,150 images/s, peak 5.25 GB"
    )
    one = RunFinished("completed", 21, "", False, summary(steps=21, start_step=20))
    assert event_text.run_finished(one).startswith("finished: trained 1 step (step 21) in ")
    from gpu_train_monitor.cli.summary_text import summary_text  # the CLI's closing table says it the same way

    assert "steps       60 (resumed at step 20: trained 40 in 61.2 s)" in summary_text(event.summary).splitlines()


@pytest.mark.parametrize(
    ("reason", "why"),
    [
        ("epoch", "end of epoch 3"),
        ("every", "periodic"),
        ("request", "requested"),
        ("stop", "the run stopped"),
        ("end", "the run ended mid-epoch"),
    ],
)
def test_a_checkpoint_line_says_when_why_where_and_how_big(reason, why):
    saved = CheckpointSaved(step=585, epoch=3, path="/data/ck/step-585.pt", size_bytes=89_400_000, reason=reason)
    assert (
        event_text.checkpoint_saved(saved) == f"checkpoint saved at step 585 ({why}): /data/ck/step-585.pt (89.40 MB)"
    )
    assert (
        event_text.resume_hint("/my data/step-5.pt")
        == "to continue: gpu-train-monitor run --resume '/my data/step-5.pt'"
    )


def test_the_window_s_lines_keep_their_templates_and_values():
    """The window translates these from their structure (gpu_train_monitor.base.text): every line, and each varying part
    of one (the plan, a reason, a status word), is a Message of its own."""
    text = event_text.run_started(dataclasses.replace(started(epochs=None, total_steps=1), start_step=1))
    assert isinstance(text, Message) and text.template == "{started} (resumed at step {step:,})"
    plan = text.params["started"].params["plan"]
    assert plan.template == "{steps} over as many epochs as that takes" and plan.params["steps"].template == "1 step"
    ended = event_text.epoch_ended(EpochEnded(1, 10, 0.5, None, None))
    assert ended.params["train_loss"] == "0.5000" and ended.params["val_loss"].template == "n/a"
    saved = CheckpointSaved(step=5, epoch=2, path="/ck/step-5.pt", size_bytes=10, reason="epoch")
    assert event_text.checkpoint_saved(saved).params["why"].template == "end of epoch {epoch}"
    finished = event_text.run_finished(RunFinished("oom", 7, "out of memory at step 8", False, summary(status="oom")))
    assert finished.template == "{status}: {message}" and finished.params["status"].template == "oom"
    for line in (
        event_text.run_requested(RunConfig()),
        event_text.cache_cleared(CacheCleared(None, 1, sample())),
        event_text.cache_cleared_mark(CacheCleared(3, 1, sample())),
        event_text.snapshot_saved(SnapshotSaved(1, "/s", 1)),
        event_text.out_of_memory_headline(oom("train")),
        event_text.out_of_memory(oom("validation")),
        event_text.run_finished(
            RunFinished(
                "completed",
                3,
                "",
                False,
                summary(batch_size_changes=({"step": 1, "from": 64, "to": 32},), batch_size=32),
            )
        ),
    ):
        assert isinstance(line, Message), line


def test_shares_round_halves_up_and_a_small_part_is_less_than_one_percent_not_none():
    assert [event_text.share_text(part, 8) for part in (3, 1, 0)] == ["38%", "13%", "0%"]
    assert event_text.share_text(48_250, 41_810_000) == "<1%" and event_text.share_text(1, 0) == "?"


def test_an_out_of_memory_without_an_autopsy_has_no_lines_and_one_with_says_where_its_split_came_from():
    plain = OutOfMemory(3, 64, None, 0, 0, "stop", None, "out of memory")
    assert event_text.oom_autopsy(plain) == []
    held = (ModuleBytes("blocks.0", activations_bytes=600), ModuleBytes("blocks.1", temporaries_bytes=2))
    predicted = dataclasses.replace(
        plain, holders=held, holders_total_bytes=1000, holders_source="predicted", holders_step=64, fits_batch=0
    )
    assert event_text.oom_autopsy(predicted) == [
        "largest holders by module (predicted for batch 64): blocks.0 600 B (60%), blocks.1 2 B (<1%)",
        "not even batch 1 is predicted to fit",
    ]
