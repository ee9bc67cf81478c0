"""Reports whose losses are on their way to the host: emitted in order, each once its copy is done, all of them
when the run must have them; the copy itself nothing waits for."""

from __future__ import annotations

import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.loop_state import LoopState
from gpu_train_monitor.engine.loss_transfer import LossesInFlight, LossesRead, ReportsInFlight
from gpu_train_monitor.engine.report import steps_reported
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import RunStarted, StepsReported
from gpu_train_monitor.memory.probe import MemoryProbe
from tests.support.host_syncs import counting_host_syncs


class CopyUnderWay:
    """Losses whose copy is not done until `arrive()`: a CUDA copy's event as the host sees it (no CUDA here)."""

    def __init__(self, values: list[float]) -> None:
        self.count, self._values, self._done, self.waited = len(values), values, False, False

    def arrive(self) -> None:
        self._done = True

    def done(self) -> bool:
        return self._done

    def values(self) -> list[float]:
        self.waited = self.waited or not self._done
        return self._values


def made_report(run: LoopState, steps: int):
    run.step += steps
    run.samples += 8 * steps
    return steps_reported(run, steps, float(run.step), 8, MemoryProbe(torch.device("cpu")).sample())


def test_a_report_waits_for_its_copy_and_never_passes_an_earlier_one() -> None:
    run, in_flight = LoopState(t0=0.0), ReportsInFlight()
    first, second = CopyUnderWay([3.0, 2.9]), CopyUnderWay([2.8])
    in_flight.add(made_report(run, 2), first)
    in_flight.add(made_report(run, 1), second)
    second.arrive()
    assert list(in_flight.arrived(wait=False)) == []  # the first is still on its way: the second waits behind it
    first.arrive()
    arrived = list(in_flight.arrived(wait=False))
    assert [(a.report.first_step, a.losses) for a in arrived] == [(1, [3.0, 2.9]), (3, [2.8])]
    assert not in_flight and not first.waited and not second.waited


def test_where_the_run_must_have_them_every_report_arrives_waiting_for_its_copy() -> None:
    run, in_flight = LoopState(t0=0.0), ReportsInFlight()
    copy = CopyUnderWay([1.5])
    in_flight.add(made_report(run, 1), copy, extra={"kept": True})
    (arrived,) = in_flight.arrived(wait=True)
    assert arrived.losses == [1.5] and arrived.extra == {"kept": True} and copy.waited


def test_the_copy_of_cpu_losses_is_done_at_once_and_a_read_report_is_there_already() -> None:
    losses = LossesInFlight([torch.tensor(2.0), torch.tensor(1.0, dtype=torch.float16)])
    assert (losses.count, losses.done(), losses.values()) == (2, True, [2.0, 1.0])
    read = LossesRead([0.5])
    assert (read.count, read.done(), read.values()) == (1, True, [0.5])


def test_the_run_knows_what_it_has_not_reported() -> None:
    run = LoopState(t0=0.0)
    assert not run.unreported
    run.pending.append(torch.tensor(1.0))
    assert run.unreported
    run.pending = []
    run.in_flight.add(made_report(run, 1), LossesRead([1.0]))
    assert run.unreported


def test_a_runs_steps_and_reports_make_no_host_sync() -> None:
    """Counted on the CPU with the tensor methods that would sync on a GPU wrapped: from the run's start to its last
    report nothing is read on the host (the validation after it reads its totals: that is the epoch's one)."""

    config = RunConfig(
        device="cpu", model="tiny-cnn", synthetic_samples=512, batch_size=16, max_steps=24, report_interval=0.01
    )
    seen: list[tuple[str, int]] = []
    with counting_host_syncs() as syncs:
        finished = TrainingSession(config, [lambda event: seen.append((type(event).__name__, len(syncs.calls)))]).run()
    assert finished.status == "completed", finished.message
    started = next(count for kind, count in seen if kind == RunStarted.__name__)
    reports = [count for kind, count in seen if kind == StepsReported.__name__]
    assert len(reports) >= 3
    assert reports[-1] == started, syncs.calls[started : reports[-1]]
    assert len(syncs.calls) > started  # the counter is counting: validation read its totals after the last report
