"""What a CPU trial may use: the finder's default capacity on the CPU is what is available to a trial now, never the
machine's total nor a limit's whole size; the largest batch is the training set's size."""

from __future__ import annotations

import resource

import psutil
import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.host_memory import host_free_bytes
from gpu_train_monitor.finder import budget
from gpu_train_monitor.finder.search import default_capacity

CPU = RunConfig(device="cpu", model="tiny-cnn")
SLACK = 256 * 2**20  # what other programs or this process took between two readings


def test_the_cpu_capacity_is_what_is_available_now_not_the_machine_s_total() -> None:
    capacity = default_capacity(CPU)
    assert capacity == pytest.approx(budget.cpu_trial_bytes(), abs=SLACK)
    assert capacity <= psutil.virtual_memory().available + SLACK < psutil.virtual_memory().total


def test_under_ulimit_v_the_cpu_capacity_is_what_the_limit_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """It was the limit's whole size: under `ulimit -v 5000000` torch's libraries alone take 3.3 GB of it, so the
    finder planned trials the limit could never hold."""
    limit = psutil.Process().memory_info().vms + 2 * 2**30
    monkeypatch.setattr(
        resource,
        "getrlimit",
        lambda which: (
            (limit, resource.RLIM_INFINITY)
            if which == resource.RLIMIT_AS
            else (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        ),
    )
    capacity = default_capacity(CPU)
    assert capacity <= 2 * 2**30  # what the address space has left, not the 2 GB more than this process maps
    assert capacity == pytest.approx(host_free_bytes(), abs=SLACK) == pytest.approx(budget.cpu_trial_bytes(), abs=SLACK)


def test_a_trial_s_guard_is_what_it_plans_for_never_above_what_is_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "cpu_trial_bytes", lambda: 20 * 10**9)
    assert budget.guard_bytes(3 * 10**9) == 3 * 10**9 + budget.GUARD_SLACK_BYTES
    assert budget.guard_bytes(80 * 10**9) == 20 * 10**9 + budget.GUARD_SLACK_BYTES  # planning for a larger GPU


@pytest.mark.parametrize(
    ("config", "largest"),
    [
        (RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=2560), 2560),
        (RunConfig(device="cpu", model="tiny-cnn", dataset="cifar10"), 50_000),
        (RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=100_000), 65_536),  # the search's own bound
    ],
)
def test_the_largest_batch_is_the_training_set_s_size(config: RunConfig, largest: int) -> None:
    assert budget.largest_batch(config, 65_536) == largest


def test_what_a_process_holds_of_its_own_is_what_a_trial_process_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "_measured_own_bytes", None)
    assert budget.own_bytes() == budget.OWN_BYTES_GUESS
    budget.remember_own_bytes(612_345_678)
    assert budget.own_bytes() == 612_345_678
