"""The CLI's progress bar (gpu_train_monitor.cli.progress) on a StringIO stream: the lines it writes and the bar it
closes."""

from __future__ import annotations

import dataclasses
import io

from gpu_train_monitor.cli.progress import ProgressBar
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import CheckpointSaved, EpochEnded, LogMessage, RunFinished, StepsReported
from gpu_train_monitor.events.module_bytes import ModuleBytes
from tests.support.events import oom, sample, started, summary


def steps(step: int, epoch: int, total_steps: int = 0) -> StepsReported:
    return StepsReported(
        step=step,
        epoch=epoch,
        first_step=step - 1,
        losses=(0.5, 0.7),
        samples=step * 256,
        samples_per_s=5_000.0,
        elapsed_s=1.0,
        eta_s=2.0,
        batch_size=256,
        memory=sample(),
        total_steps=total_steps,
    )


def test_a_run_writes_its_start_epochs_and_warnings_and_closes_the_bar():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    start = started(epochs=2, total_steps=390)
    bar(start)
    assert bar.bar is not None and bar.bar.total == 390
    assert stream.getvalue().splitlines()[0] == event_text.run_started(start)  # the window's words too

    bar(steps(100, 1))
    assert bar.bar.n == 100
    assert "epoch 1/2 loss 0.6000 5,000 img/s mem 3.00 GB" in bar.bar.postfix
    epoch = EpochEnded(1, 195, 0.6, 0.55, 0.81)
    bar(epoch)
    bar(oom("train", action="shrink"))
    bar(steps(300, 2, total_steps=585))  # the shrink halved the batch: more steps to go
    assert bar.bar.total == 585 and bar.bar.n == 300
    bar(LogMessage("warning", "slow data loading"))
    bar(LogMessage("info", "plain note"))
    bar(steps(585, 2, total_steps=585))
    bar(RunFinished("completed", 585, "", False, summary()))
    assert bar.bar is None  # closed: later output is not drawn over

    lines = [line.strip("\r") for line in stream.getvalue().replace("\r", "\n").splitlines() if line.strip()]
    written = [line for line in lines if "step/s" not in line and "%|" not in line]  # the bar's own redraws out
    assert event_text.epoch_ended(epoch) in written
    assert f"warning: {oom('train', action='shrink').message}" in written
    assert "warning: slow data loading" in written and "plain note" in written
    assert written.index(event_text.epoch_ended(epoch)) < written.index("plain note")
    assert any("585/585" in line for line in lines)  # the bar's last state stays (leave=True)


def test_a_run_bounded_by_max_steps_shows_the_epoch_without_a_total():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar(started(epochs=None, total_steps=1_000))
    bar(steps(10, 3))
    assert "epoch 3 loss" in bar.bar.postfix and "epoch 3/" not in bar.bar.postfix
    bar(RunFinished("stopped", 10, "", False, summary(status="stopped")))
    assert bar.bar is None


def test_lines_before_the_run_starts_are_printed_plainly():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar(LogMessage("info", "downloading cifar10"))
    bar(RunFinished("failed", 0, "no data", True, summary(status="failed")))  # failed in setup: no bar to close
    assert stream.getvalue() == "downloading cifar10\n"
    assert bar.bar is None


def test_checkpoints_are_written_and_a_stopped_run_says_how_to_continue():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar(dataclasses.replace(started(epochs=2, total_steps=390), start_step=195))
    assert bar.bar.n == 195  # a resumed run's bar starts where it resumed
    saved = CheckpointSaved(step=200, epoch=2, path="/ck/step-200.pt", size_bytes=1000, reason="stop")
    bar(saved)
    bar(RunFinished("stopped", 200, "stopped by request", False, summary(status="stopped")))
    written = stream.getvalue().splitlines()
    assert event_text.checkpoint_saved(saved) in written
    assert written[-1] == event_text.resume_hint("/ck/step-200.pt")


def test_a_completed_run_does_not_print_the_resume_hint():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar(started(epochs=1, total_steps=195))
    bar(CheckpointSaved(step=195, epoch=1, path="/ck/step-195.pt", size_bytes=1000, reason="epoch"))
    bar(RunFinished("completed", 195, "", False, summary()))
    assert "to continue" not in stream.getvalue()


def test_an_out_of_memory_is_followed_by_its_autopsy_lines():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    held = (ModuleBytes("layer4", activations_bytes=3 * 10**9), ModuleBytes("layer3", activations_bytes=10**9))
    event = dataclasses.replace(
        oom("train"),
        holders=held,
        holders_total_bytes=8 * 10**9,
        holders_source="measured",
        holders_step=5,
        fits_batch=96,
    )
    bar(event)
    assert stream.getvalue().splitlines() == [
        f"warning: {event.message}",
        "  largest holders by module (measured at step 5): layer4 3.00 GB (38%), layer3 1.00 GB (13%)",
        "  batch 96 is predicted to fit",
    ]
    stream.seek(0)
    stream.truncate()
    bar(oom("train"))  # an event without an autopsy (recorded before it): its own line only
    assert stream.getvalue().splitlines() == [f"warning: {oom('train').message}"]
