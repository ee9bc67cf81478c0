"""The watch's promise: neither `step()` nor a report makes the host wait for the device. Between reports a
watched step reads nothing on the host; each report sends the buffered losses to the host in one copy that nothing
waits for (`to("cpu", non_blocking=True)`), read once it is done.

Counted on the CPU with the tensor methods that would sync on a GPU wrapped (tests.support.host_syncs); the
training loop here makes none itself (checked first), so every call counted is the watch's. The same promise is
checked on CUDA with torch's sync debug mode in tests/gpu/test_watch_sync.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from gpu_train_monitor.model.models import build_model
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch import watch
from tests.support.host_syncs import HostSyncs, counting_host_syncs

STEPS, BATCH = 40, 8
AFTER_THE_LOOP = STEPS + 1  # where the counter stands once the loop is over: finish() and its last report


def train(syncs: HostSyncs, on_step: Callable[[torch.Tensor, int], None], per_sample: bool = False) -> None:
    """Our tiny-cnn (batch norm, so autograd saves plenty for the watch's breakdown to count) trained with SGD
    on small random images, with no host read of its own: the loss stays a tensor."""
    torch.manual_seed(0)
    model = build_model("tiny-cnn", 10, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images, labels = torch.randn(STEPS, BATCH, 3, 8, 8), torch.randint(0, 10, (STEPS, BATCH))
    for step in range(1, STEPS + 1):
        syncs.step = step
        loss = F.cross_entropy(model(images[step - 1]), labels[step - 1], reduction="none" if per_sample else "mean")
        loss.mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        on_step(loss, BATCH)
    syncs.step = AFTER_THE_LOOP


def report_steps(db) -> list[int]:
    with RunStore(db, readonly=True) as store:
        (run,) = store.list_runs()
        assert run.steps == STEPS and run.status == "completed"
        return [report.step for report in store.reports(run.id)]


def test_the_counter_sees_a_blocking_copy_and_not_a_copy_nothing_waits_for() -> None:
    losses = torch.stack([torch.tensor(1.0), torch.tensor(2.0)])
    with counting_host_syncs() as syncs:
        syncs.step = 1
        assert losses.to("cpu", non_blocking=True).tolist() == [1.0, 2.0]  # none: read once its event is done
        syncs.step = 2
        assert losses.cpu().tolist() == [1.0, 2.0]  # one: the copy, not its reading
    assert syncs.per_step() == Counter({2: 1}) and syncs.names() == ["cpu"]


def test_the_loop_itself_makes_no_host_sync() -> None:
    with counting_host_syncs() as syncs:
        train(syncs, lambda loss, samples: None)
    assert syncs.calls == []


@pytest.mark.parametrize("per_sample", [False, True], ids=["mean-loss", "per-sample-losses"])
def test_a_watched_step_makes_no_host_sync_nor_does_the_report_at_the_end(tmp_path, per_sample: bool) -> None:
    db = tmp_path / "runs.db"
    with counting_host_syncs() as syncs:
        with watch(runs_db=db, report_interval_s=3600.0, signals=False) as w:  # no report until the end
            train(syncs, w.step, per_sample)
    assert syncs.calls == []
    assert report_steps(db) == [STEPS]  # the one transfer held every step's loss


def test_each_report_is_a_copy_that_nothing_waits_for(tmp_path) -> None:
    db = tmp_path / "runs.db"
    with counting_host_syncs() as syncs:
        with watch(runs_db=db, report_interval_s=0.0, signals=False) as w:  # a report at every step
            train(syncs, w.step)
    assert report_steps(db) == list(range(1, STEPS + 1))
    assert syncs.calls == []


def test_the_breakdown_of_a_given_model_reads_no_values(tmp_path) -> None:
    """With the model and optimizer given, the watch measures what they hold at sampled steps (sizes only)."""
    db = tmp_path / "runs.db"
    torch.manual_seed(0)
    model = build_model("tiny-cnn", 10, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images, labels = torch.randn(STEPS, BATCH, 3, 8, 8), torch.randint(0, 10, (STEPS, BATCH))
    with counting_host_syncs() as syncs:
        with watch(model, optimizer, runs_db=db, report_interval_s=3600.0, signals=False) as w:
            for step in range(1, STEPS + 1):
                syncs.step = step
                loss = F.cross_entropy(model(images[step - 1]), labels[step - 1])
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                w.step(loss, samples=BATCH)
            syncs.step = AFTER_THE_LOOP
    assert syncs.calls == []
    with RunStore(db, readonly=True) as store:
        (run,) = store.list_runs()
        breakdowns = store.events(run.id, kinds=("MemoryBreakdown",))
    assert breakdowns and breakdowns[0].data["activations_bytes"] > 0  # the sampled step was measured
