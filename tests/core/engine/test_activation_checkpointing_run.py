"""A run with activation checkpointing, as its observers and the command line see it."""

from __future__ import annotations

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import Event, MemoryBreakdown, RunFinished, StepsReported
from tests.support.cli import FAST, cli_in_process, user_error_line

SHORT = dict(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, max_steps=2, report_interval=0.01)


def run(**overrides: object) -> list[Event]:
    events: list[Event] = []
    TrainingSession(RunConfig(**{**SHORT, **overrides}), [events.append]).run()  # type: ignore[arg-type]
    return events


def test_a_checkpointed_run_holds_less_for_backward_and_trains_the_same_losses() -> None:
    plain, checkpointed = run(), run(activation_checkpointing=True)
    finished = [e for e in checkpointed if isinstance(e, RunFinished)][0]
    assert finished.status == "completed", finished.message
    assert finished.summary.config["activation_checkpointing"] is True
    before = max(e.activations_bytes for e in plain if isinstance(e, MemoryBreakdown))
    after = [e for e in checkpointed if isinstance(e, MemoryBreakdown)]
    assert after and after[0].method == "saved-tensors"
    assert 0 < max(e.activations_bytes for e in after) < 0.75 * before
    losses = [
        [loss for e in events if isinstance(e, StepsReported) for loss in e.losses] for events in (plain, checkpointed)
    ]
    assert len(losses[0]) == 2 and losses[1] == losses[0]


def test_a_model_without_blocks_ends_the_run_as_bad_input_naming_the_option() -> None:
    finished = [
        e for e in run(model="googlenet", batch_size=8, activation_checkpointing=True) if isinstance(e, RunFinished)
    ][0]
    assert (finished.status, finished.user_error, finished.error_field) == ("failed", True, "activation_checkpointing")
    assert "googlenet has no blocks to checkpoint" in finished.message


def test_the_command_line_refuses_it_in_one_line_with_exit_2() -> None:
    result = cli_in_process(
        "run", *FAST[:2], "--model", "googlenet", "--synthetic-samples", "256", "--batch-size", "8",
        "--max-steps", "1", "--no-record", "--activation-checkpointing",
    )  # fmt: skip
    user_error_line(result, "--activation-checkpointing", "googlenet has no blocks to checkpoint")


def test_the_command_line_option_turns_it_on_and_off() -> None:
    from gpu_train_monitor.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["run", "--activation-checkpointing"]).activation_checkpointing is True
    assert parser.parse_args(["run", "--no-activation-checkpointing"]).activation_checkpointing is False
