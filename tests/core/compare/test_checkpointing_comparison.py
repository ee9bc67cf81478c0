"""The ready-made "activation checkpointing off vs on": its headline states the peak saved and the time it cost,
as the two runs measured them, and a real race of it on the CPU."""

from __future__ import annotations

import pytest

from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.compare.plan import plan, ready_comparisons
from gpu_train_monitor.compare.result import ContenderResult, conclude
from gpu_train_monitor.config.run_config import RunConfig

BASE = RunConfig(device="cpu", model="tiny-cnn", batch_size=64, max_steps=12)
OFF_ON = next(c for c in ready_comparisons(BASE, None, False) if c.name == "activation checkpointing off vs on")
LOSSES = (2.3, 2.2, 2.1)


def measured(
    index: int, rate: float, spread: tuple[float, float], peak: int | None, method: str = "saved-tensors"
) -> ContenderResult:
    label = "activation_checkpointing" if index else "no activation_checkpointing"
    return ContenderResult(
        index, label, {}, "completed", rate, spread, 2.1, 1, None, 1.0, 12, "", LOSSES, 10, peak, method
    )


def test_the_headline_states_the_peak_saved_and_the_time_it_cost() -> None:
    runs = plan(BASE, OFF_ON.overrides)
    off, on = measured(0, 1000.0, (980.0, 1020.0), 45_200_000), measured(1, 700.0, (690.0, 710.0), 28_100_000)
    outcome = conclude(runs, [off, on], 12, "tiny-cnn", False)
    assert outcome.headline == (
        "activation checkpointing took the step's peak memory from 45.20 MB to 28.10 MB (38% less), and it cost "
        "43% more time per image (1000 images/s without, 700 with); peaks counted from the tensors a step held "
        "(no allocator peak on this device), warm-up excluded"
    )
    assert outcome.losses_agree is True  # the same computation: the first steps' losses are checked
    assert outcome.to_dict()["runs"][1]["peak_bytes"] == 28_100_000


def test_a_cost_inside_the_noise_and_a_peak_that_did_not_fall_are_said_as_such() -> None:
    runs = plan(BASE, OFF_ON.overrides)
    off = measured(0, 1000.0, (900.0, 1100.0), 30_000_000, "allocator")
    on = measured(1, 990.0, (890.0, 1090.0), 31_000_000, "allocator")
    headline = conclude(runs, [off, on], 12, "tiny-cnn", False).headline
    assert headline.startswith("activation checkpointing did not lower the step's peak memory (30.00 MB without")
    assert "its time cost is within the noise (1000 images/s without, 990 with)" in headline
    assert headline.endswith("the allocator's peaks, warm-up excluded")


def test_other_comparisons_and_runs_without_a_sampled_step_keep_the_speed_headline() -> None:
    runs = plan(BASE, OFF_ON.overrides)
    off, on = measured(0, 1000.0, (980.0, 1020.0), None), measured(1, 700.0, (690.0, 710.0), 28_100_000)
    assert conclude(runs, [off, on], 12, "tiny-cnn", False).headline.startswith("no activation_checkpointing trains")
    amp = plan(BASE, [{"amp": "off"}, {"amp": "bf16"}])
    off, on = measured(0, 1000.0, (980.0, 1020.0), 1), measured(1, 700.0, (690.0, 710.0), 2)
    assert "faster than" in conclude(amp, [off, on], 12, "tiny-cnn", False).headline


@pytest.mark.slow  # two runs of 12 steps: 10-20 s on a shared 2-core machine
def test_racing_it_on_the_cpu_measures_both_and_agrees_on_the_losses() -> None:
    base = BASE.replace(synthetic_samples=256, batch_size=32, report_interval=0.01)
    outcome = Comparison(base, OFF_ON.overrides).run()
    assert outcome.status == "completed", [r.message for r in outcome.runs]
    off, on = outcome.runs
    assert off.peak_bytes and on.peak_bytes and on.peak_bytes < off.peak_bytes
    assert outcome.headline.startswith("activation checkpointing took the step's peak memory from")
    assert outcome.losses_agree is True, outcome.agreement
