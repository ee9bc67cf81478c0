"""A comparison's conclusion: the headline ratio, and the check that runs which differ only in speed
settings computed the same losses."""

from __future__ import annotations

import pytest

from core.compare_plan import plan
from core.compare_result import ContenderResult, conclude
from core.config import RunConfig


def result(index: int, rate: float | None, losses: tuple[float, ...] = (2.3, 2.2, 2.1), status: str = "completed",
           label: str = "") -> ContenderResult:
    return ContenderResult(index, label or f"run{index}", {}, status, rate, None if rate is None else (rate * 0.9, rate),
                           losses[-1] if losses else None, 1, None, 1.0, len(losses), "" if status == "completed"
                           else "it broke", losses)


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
    contenders = plan(RunConfig(device="cpu", batch_size=128, max_steps=10),
                      [{"nproc": 1}, {"nproc": 2}, {"nproc": 4, "sync_bn": True}])
    outcome = conclude(contenders, [result(0, 1000.0), result(1, 1800.0), result(2, 3000.0)], 10, "tiny-cnn", False)
    assert outcome.scaling_efficiency == {1: pytest.approx(0.9), 2: pytest.approx(0.75)}
    assert "scaling efficiency nproc=2 90%, nproc=4, sync_bn 75%" in outcome.headline
    assert outcome.to_dict()["scaling_efficiency"] == {"1": pytest.approx(0.9), "2": pytest.approx(0.75)}


def test_no_scaling_efficiency_when_the_runs_differ_in_more_than_processes() -> None:
    contenders = plan(RunConfig(device="cpu", batch_size=128, max_steps=10),
                      [{"nproc": 1}, {"nproc": 2, "lr": 0.1}])
    outcome = conclude(contenders, [result(0, 1000.0), result(1, 1800.0)], 10, "tiny-cnn", False)
    assert outcome.scaling_efficiency == {} and "scaling" not in outcome.headline


def test_the_window_s_texts_keep_each_part_as_a_template() -> None:
    """Headline and verdict are Messages down to each run's reason and status word, so the window translates
    every part (a '; '-joined list stays nested, never one English string)."""
    runs = plan(BASE, [{"amp": "off"}, {"amp": "bf16"}, {"device": "cuda:0"}])
    outcome = conclude(runs, [result(0, 100.0), result(1, None, status="oom"), result(2, None, status="stopped")], 3,
                       "tiny-cnn", True)
    assert outcome.headline == "no ratio: run 2 (run1) oom: it broke; run 3 (run2) stopped: it broke"
    why = outcome.headline.params["why"]
    assert why.template == "{earlier}; {following}"
    assert why.params["earlier"].template == "run {run} ({label}) {status}: {message}"
    assert why.params["earlier"].params["status"].template == "oom"
    fast = conclude(plan(BASE, [{"device": "cpu"}, {"device": "cuda:0"}]),
                    [result(0, 100.0, label="cpu"), result(1, 250.0, label="cuda:0")], 3, "tiny-cnn", False)
    assert fast.headline.template == "{fast} trains {model} {ratio} faster than {slow} at batch {batch}; warm-up excluded"
    same = conclude(plan(BASE, [{"channels_last": False}, {"channels_last": True}]), [result(0, 1.0), result(1, 2.0)],
                    3, "tiny-cnn", False)
    assert same.agreement.params == {"steps": 10, "tolerance": 0.02}
