"""A comparison's conclusion: the headline ratio, and the check that runs which differ only in speed
settings computed the same losses."""

from __future__ import annotations

import math

import pytest

from gpu_train_monitor.compare.plan import plan
from gpu_train_monitor.compare.result import ContenderResult, conclude
from gpu_train_monitor.config.run_config import RunConfig


def result(
    index: int,
    rate: float | None,
    losses: tuple[float, ...] = (2.3, 2.2, 2.1),
    status: str = "completed",
    label: str = "",
) -> ContenderResult:
    return ContenderResult(
        index,
        label or f"run{index}",
        {},
        status,
        rate,
        None if rate is None else (rate * 0.9, rate),
        losses[-1] if losses else None,
        1,
        None,
        1.0,
        len(losses),
        "" if status == "completed" else "it broke",
        losses,
    )


BASE = RunConfig(device="cpu", model="tiny-cnn", batch_size=256, max_steps=3)


def test_the_headline_ratio_is_fastest_over_slowest() -> None:
    runs = plan(BASE, [{"device": "cpu"}, {"device": "cuda:0"}])
    outcome = conclude(runs, [result(0, 100.0, label="cpu"), result(1, 3820.0, label="cuda:0")], 3, "resnet18", False)
    assert outcome.speedup == pytest.approx(38.2) and (outcome.fastest, outcome.slowest) == (1, 0)
    assert outcome.headline == "cuda:0 trains resnet18 38.2x faster than cpu at batch 256; warm-up excluded"
    assert outcome.status == "completed"
    assert outcome.to_dict()["speedup"] == outcome.speedup and outcome.to_dict()["fastest"] == 1
    assert outcome.losses_agree is None  # different devices: not expected to agree


def test_a_failed_run_gives_no_ratio_and_says_why() -> None:
    runs = plan(BASE, [{"amp": "off"}, {"amp": "bf16"}])
    outcome = conclude(runs, [result(0, 100.0), result(1, None, status="oom")], 3, "tiny-cnn", False)
    assert outcome.speedup is None and outcome.status == "failed"
    assert outcome.headline.startswith("no ratio: run 2") and "oom" in outcome.headline


def test_runs_that_differ_only_in_speed_settings_must_agree() -> None:
    runs = plan(BASE, [{"channels_last": False}, {"channels_last": True}])
    same = conclude(runs, [result(0, 1.0), result(1, 2.0, (2.3, 2.2001, 2.1))], 3, "tiny-cnn", False)
    assert same.losses_agree is True and "same losses" in same.agreement
    different = conclude(runs, [result(0, 1.0), result(1, 2.0, (2.3, 2.5, 2.1))], 3, "tiny-cnn", False)
    assert different.losses_agree is False
    assert "step 2: 2.2000 vs 2.5000" in different.agreement


def test_runs_that_differ_only_in_processes_state_their_scaling_efficiency() -> None:
    contenders = plan(
        RunConfig(device="cpu", batch_size=128, max_steps=10),
        [{"nproc": 1}, {"nproc": 2}, {"nproc": 4, "sync_bn": True}],
    )
    outcome = conclude(contenders, [result(0, 1000.0), result(1, 1800.0), result(2, 3000.0)], 10, "tiny-cnn", False)
    assert outcome.scaling_efficiency == {1: pytest.approx(0.9), 2: pytest.approx(0.75)}
    assert "scaling efficiency nproc=2 90%, nproc=4, sync_bn 75%" in outcome.headline
    assert outcome.to_dict()["scaling_efficiency"] == {"1": pytest.approx(0.9), "2": pytest.approx(0.75)}


def test_no_scaling_efficiency_when_the_runs_differ_in_more_than_processes() -> None:
    contenders = plan(RunConfig(device="cpu", batch_size=128, max_steps=10), [{"nproc": 1}, {"nproc": 2, "lr": 0.1}])
    outcome = conclude(contenders, [result(0, 1000.0), result(1, 1800.0)], 10, "tiny-cnn", False)
    assert outcome.scaling_efficiency == {} and "scaling" not in outcome.headline


def test_the_window_s_texts_keep_each_part_as_a_template() -> None:
    """Headline and verdict are Messages down to each run's reason and status word, so the window translates
    every part (a '; '-joined list stays nested, never one English string)."""
    runs = plan(BASE, [{"amp": "off"}, {"amp": "bf16"}, {"device": "cuda:0"}])
    outcome = conclude(
        runs, [result(0, 100.0), result(1, None, status="oom"), result(2, None, status="stopped")], 3, "tiny-cnn", True
    )
    assert outcome.headline == "no ratio: run 2 (run1) oom: it broke; run 3 (run2) stopped: it broke"
    why = outcome.headline.params["why"]
    assert why.template == "{earlier}; {following}"
    assert why.params["earlier"].template == "run {run} ({label}) {status}: {message}"
    assert why.params["earlier"].params["status"].template == "oom"
    fast = conclude(
        plan(BASE, [{"device": "cpu"}, {"device": "cuda:0"}]),
        [result(0, 100.0, label="cpu"), result(1, 250.0, label="cuda:0")],
        3,
        "tiny-cnn",
        False,
    )
    assert (
        fast.headline.template == "{fast} trains {model} {ratio} faster than {slow} at batch {batch}; warm-up excluded"
    )
    same = conclude(
        plan(BASE, [{"channels_last": False}, {"channels_last": True}]),
        [result(0, 1.0), result(1, 2.0)],
        3,
        "tiny-cnn",
        False,
    )
    assert same.agreement.params == {"steps": 10, "tolerance": 0.02}


def spread_result(
    index: int, label: str, rate: float, low: float, high: float, readings: int = 10, steps: int = 60, warmup: int = 5
) -> ContenderResult:
    return ContenderResult(
        index, label, {}, "completed", rate, (low, high), 2.0, warmup, None, 1.0, steps, "", (2.3, 2.0), readings
    )


def test_overlapping_spreads_name_no_winner_and_say_how_many_steps_would_tell() -> None:
    runs = plan(BASE, [{"placement": "stream"}, {"placement": "resident"}])
    outcome = conclude(
        runs,
        [spread_result(0, "stream", 128.0, 74.0, 182.0), spread_result(1, "resident", 112.0, 80.0, 155.0)],
        60,
        "resnet18",
        False,
    )
    assert "faster" not in outcome.headline and outcome.clear_difference is False
    assert outcome.headline.startswith("no clear difference between stream and resident")
    assert "stream 74-182, resident 80-155" in outcome.headline and "1.14x is within the noise" in outcome.headline
    # sigma 42.1 and 29.3 images/s, medians 16 apart: n = (2.8 x 1.2533)^2 (42.1^2 + 29.3^2) / 16^2 = 127
    # readings of 5.5 steps each (55 steps over 10 readings), plus the 5 warm-up steps
    assert outcome.steps_to_tell == 5 + math.ceil(127 * 5.5)
    assert f"about {outcome.steps_to_tell} steps per run would tell" in outcome.headline
    assert (
        outcome.to_dict()["clear_difference"] is False and outcome.to_dict()["steps_to_tell"] == outcome.steps_to_tell
    )


def test_separate_spreads_or_enough_readings_name_the_winner() -> None:
    runs = plan(BASE, [{"placement": "stream"}, {"placement": "resident"}])
    apart = conclude(
        runs,
        [spread_result(0, "stream", 100.0, 95.0, 105.0), spread_result(1, "resident", 240.0, 230.0, 250.0)],
        60,
        "resnet18",
        False,
    )
    assert apart.headline.startswith("resident trains resnet18 2.40x faster than stream") and apart.clear_difference
    plenty = conclude(
        runs,
        [
            spread_result(0, "stream", 128.0, 74.0, 182.0, readings=500),
            spread_result(1, "resident", 112.0, 80.0, 155.0, readings=500),
        ],
        60,
        "resnet18",
        False,
    )
    assert "1.14x faster" in plenty.headline and plenty.steps_to_tell is None


def test_a_completed_run_without_a_rate_says_why() -> None:
    runs = plan(BASE, [{"placement": "stream"}, {"placement": "resident"}])
    warm_only = ContenderResult(1, "facts.py:good", {}, "completed", None, None, 2.0, 3, None, 0.5, 3, "", (2.0,) * 3)
    outcome = conclude(runs, [spread_result(0, "stream", 100.0, 95.0, 105.0), warm_only], 3, "m", False)
    assert outcome.headline == (
        "no ratio: run 2 (facts.py:good) completed only 3 steps, all in its first report (the "
        "warm-up, left out of images/s): too few for a rate; train more steps"
    )


def test_a_run_with_no_rate_has_no_spread_either() -> None:
    from gpu_train_monitor.compare.comparison import _result
    from gpu_train_monitor.events.events import RunFinished
    from gpu_train_monitor.events.summary import RunSummary

    summary = RunSummary(
        "completed",
        3,
        96,
        0.5,
        190.0,
        2.3,
        2.2,
        None,
        "cpu",
        "",
        0,
        0,
        0,
        {},
        samples_per_s_spread=(190.0, 190.0),
        warmup_steps=3,
    )
    run = _result(
        plan(BASE, [{"placement": "stream"}, {"placement": "resident"}])[0],
        RunFinished("completed", 3, "", False, summary),
        [2.3, 2.2, 2.2],
        1,
    )
    assert run.samples_per_s is None and run.samples_per_s_spread is None and run.readings == 0
