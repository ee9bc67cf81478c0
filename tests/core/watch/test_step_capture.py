"""StepCapture sees an unchanged loop's optimizer steps, the loss each step's gradients come from (accumulated,
unscaled) and the samples it trained on, finds the model from the optimizer, and never reads a tensor's value."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch import nn

from gpu_train_monitor.watch.step_capture import StepCapture
from gpu_train_monitor.watch.trained_model import model_of


class Steps:
    """What the capture reported: one (optimizer, loss, samples) per step."""

    def __init__(self) -> None:
        self.seen: list[tuple[torch.optim.Optimizer, torch.Tensor | None, int | None]] = []

    def __call__(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor | None, samples: int | None) -> None:
        self.seen.append((optimizer, loss, samples))

    @property
    def losses(self) -> list[float]:
        return [float("nan") if loss is None else loss.item() for _, loss, _ in self.seen]

    @property
    def samples(self) -> list[int | None]:
        return [samples for _, _, samples in self.seen]


@contextlib.contextmanager
def captured() -> Iterator[tuple[StepCapture, Steps]]:
    steps = Steps()
    capture = StepCapture(steps).install()
    try:
        yield capture, steps
    finally:
        capture.uninstall()


def small_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def batch(size: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(size, 4), torch.randn(size, 1)


def test_a_plain_loop_reports_every_step_with_its_loss_and_batch_size() -> None:
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    expected = []
    with captured() as (capture, steps):
        for _ in range(5):
            x, y = batch(6)
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            expected.append(loss.item())
    assert steps.losses == pytest.approx(expected)
    assert steps.samples == [6] * 5  # the first step's too, seen before the model was known
    assert capture.model is model


def test_gradient_accumulation_reports_the_mean_micro_batch_loss_and_all_samples() -> None:
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    expected = []
    with captured() as (_, steps):
        for _ in range(3):
            micro = []
            for _ in range(4):
                x, y = batch(5)
                loss = nn.functional.mse_loss(model(x), y)
                (loss / 4).backward()
                micro.append(loss.item())
            optimizer.step()
            optimizer.zero_grad()
            expected.append(sum(micro) / 4)
    assert steps.losses == pytest.approx(expected)
    assert steps.samples == [20, 20, 20]


def test_a_grad_scaler_loss_counts_unscaled_and_a_skipped_step_is_dropped() -> None:
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    assert scaler.is_enabled()  # the CPU scaler really scales (65536 by default), so the patch path runs
    expected = []
    with captured() as (_, steps):
        for poison in (False, True, False):
            x, y = batch(3)
            loss = nn.functional.mse_loss(model(x), y)
            if poison:  # inf gradients: the scaler skips this optimizer step
                loss = loss * float("inf")
            scaled = scaler.scale(loss)
            if not poison:
                assert scaled.item() == pytest.approx(loss.item() * scaler.get_scale())
            scaled.backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            if not poison:
                expected.append(loss.item())
    assert steps.losses == pytest.approx(expected)  # the skipped iteration's inf loss is in neither
    assert steps.samples == [3, 3]


def test_the_largest_of_two_optimizers_defines_a_step_and_its_loss_sums_both_backwards() -> None:
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 4))
    discriminator = nn.Linear(4, 1)
    g_opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    expected = []
    with captured() as (capture, steps):
        for _ in range(3):
            fake = generator(torch.randn(7, 2))
            d_loss = discriminator(fake.detach()).mean()
            d_loss.backward()
            d_opt.step()  # first: before the generator ever stepped
            d_opt.zero_grad()
            g_loss = -discriminator(fake).mean()
            g_loss.backward()
            g_opt.step()
            g_opt.zero_grad()
            expected.append(d_loss.item() + g_loss.item())
    assert [opt for opt, _, _ in steps.seen] == [g_opt] * 3
    assert steps.losses == pytest.approx(expected)
    assert capture.model is generator
    assert steps.samples == [7, 7, 7]  # the generator's inputs, not the discriminator's (two per step)


def test_a_larger_optimizer_made_later_takes_over() -> None:
    model = small_model()
    head_only = torch.optim.SGD(model[2].parameters(), lr=0.1)
    with captured() as (capture, steps):
        x, y = batch(2)
        nn.functional.mse_loss(model(x), y).backward()
        head_only.step()
        everything = torch.optim.SGD(model.parameters(), lr=0.1)
        nn.functional.mse_loss(model(x), y).backward()
        everything.step()
        nn.functional.mse_loss(model(x), y).backward()
        head_only.step()  # the smaller one: no longer a step of the run
    assert [opt for opt, _, _ in steps.seen] == [head_only, everything]
    assert capture.model is model


def test_a_new_optimizer_as_large_takes_over_at_its_second_step_while_the_old_one_lives_on() -> None:
    folds, losses = [], []
    with captured() as (capture, steps):
        for _ in range(2):  # a new model and optimizer per fold; the old ones kept (a reference cycle would)
            model = small_model()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            folds.append((model, optimizer))
            for _ in range(3):
                x, y = batch(2)
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                losses.append(loss.item())
    first, second = folds[0][1], folds[1][1]
    assert [opt for opt, _, _ in steps.seen] == [first] * 3 + [second] * 2  # the second fold's first step is lost
    assert steps.losses == pytest.approx(losses[:3] + losses[4:])  # and in no other step's loss
    assert steps.samples == [2, 2, 2, None, 2]  # the new model's forward ran before it was known
    assert capture.model is folds[1][0]


def test_the_model_is_the_outermost_module_holding_the_optimizers_parameters() -> None:
    inner = small_model()
    wrapper = nn.Sequential(inner)  # as DDP or torch.compile wrap a model
    unrelated = nn.Linear(3, 3)
    optimizer = torch.optim.SGD(inner.parameters(), lr=0.1)
    assert model_of(optimizer, [inner[0], unrelated, inner, wrapper]) is wrapper
    head = torch.optim.SGD(inner[2].parameters(), lr=0.1)  # fine-tuning only the head: still the whole model
    assert model_of(head, [inner[2], inner, unrelated]) is inner
    assert model_of(optimizer, [unrelated]) is None


def test_keyword_inputs_count_and_validation_under_no_grad_does_not() -> None:
    class KeywordModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(4, 1)

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return self.linear(input_ids)

    model = KeywordModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured() as (_, steps):
        for _ in range(3):
            model(input_ids=torch.randn(9, 4)).mean().backward()
            optimizer.step()
            with torch.no_grad():
                model(input_ids=torch.randn(50, 4))
    assert steps.samples == [9, 9, 9]  # the first step's too


def test_a_step_without_backward_has_no_loss_and_uninstall_restores_torch() -> None:
    backward, scale = torch.autograd.backward, torch.amp.GradScaler.scale
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured() as (_, steps):
        assert torch.autograd.backward is not backward
        optimizer.step()
    assert steps.seen == [(optimizer, None, None)]
    assert torch.autograd.backward is backward and torch.amp.GradScaler.scale is scale
    nn.functional.mse_loss(model(batch(2)[0]), batch(2)[1]).backward()
    optimizer.step()
    assert len(steps.seen) == 1  # uninstalled: nothing reported


def test_a_failure_of_ours_is_one_line_and_the_loop_trains_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr("gpu_train_monitor.watch.step_capture.model_of", broken)
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    with captured() as (_, steps):
        for _ in range(3):
            x, y = batch(2)
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    assert steps.seen == []
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))  # it trained
    assert capsys.readouterr().err == "gpu-train-monitor: watching stopped: RuntimeError: a bug of ours\n"


class HostSyncs:
    """Counts the ways a tensor's value reaches the host: item, cpu, tolist, bool, float, int, numpy."""

    NAMES = ("item", "cpu", "tolist", "__bool__", "__float__", "__int__", "numpy")

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for name in self.NAMES:
            original = getattr(torch.Tensor, name)
            monkeypatch.setattr(torch.Tensor, name, self._counting(original))

    def _counting(self, original: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(*args, **kwargs)

        return counted


def test_capturing_reads_no_tensor_value(monkeypatch: pytest.MonkeyPatch) -> None:
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    data = [batch(4) for _ in range(8)]

    def train(steps: int) -> None:
        for x, y in data[:steps]:
            for part in range(2):
                loss = nn.functional.mse_loss(model(x[part::2]), y[part::2]) / 2
                scaler.scale(loss).backward()
            scaler.step(optimizer)  # reads found_inf itself: the bare loop has syncs, the capture adds none
            scaler.update()
            optimizer.zero_grad()

    syncs = HostSyncs(monkeypatch)
    train(8)
    bare = syncs.count
    syncs.count = 0
    with captured() as (_, steps):
        train(8)
        captured_count = syncs.count
    assert len(steps.seen) == 8
    assert bare > 0  # the counting sees the scaler's own reads
    assert captured_count == bare


def test_a_larger_optimizer_that_never_steps_does_not_take_the_steps() -> None:
    teacher = nn.Linear(200, 200)  # larger, alive, never stepped
    teacher_optimizer = torch.optim.SGD(teacher.parameters(), lr=0.1)
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    expected = []
    with captured() as (capture, steps):
        for _ in range(3):
            x, y = batch(2)
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            expected.append(loss.item())
        assert len(steps.seen) == 3  # the first step waited for the larger one's, then came with the second
        capture.release()
    assert [opt for opt, _, _ in steps.seen] == [optimizer] * 3 and capture.model is model
    assert steps.losses == pytest.approx(expected)
    assert steps.samples == [None, 4, 2]  # the first step's samples come with the second: its model was found then
    assert teacher_optimizer.param_groups


def test_a_single_step_waiting_for_a_larger_optimizer_is_reported_at_the_end() -> None:
    teacher_optimizer = torch.optim.SGD(nn.Linear(200, 200).parameters(), lr=0.1)
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured() as (capture, steps):
        nn.functional.mse_loss(model(batch(2)[0]), batch(2)[1]).backward()
        optimizer.step()
        assert steps.seen == []
        capture.release()
    assert [opt for opt, _, _ in steps.seen] == [optimizer] and teacher_optimizer.param_groups


def test_an_optimizer_over_raw_tensors_looks_for_its_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu_train_monitor.watch import step_capture

    scans = []
    scan = step_capture.live_objects
    monkeypatch.setattr(step_capture, "live_objects", lambda *kinds: scans.append(kinds) or scan(*kinds))
    weights = torch.zeros(4, requires_grad=True)
    optimizer = torch.optim.SGD([weights], lr=0.1)
    with captured() as (capture, steps):
        for _ in range(20):
            (weights - 1).pow(2).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
    assert len(steps.seen) == 20 and capture.model is None
    assert len(scans) <= 2  # the first backward's look for an optimizer, the first step's for the model


def test_without_any_optimizer_each_backward_is_a_step_until_an_optimizer_steps() -> None:
    weights = torch.zeros(3, requires_grad=True)  # raw tensors, no module
    with captured() as (capture, steps):
        for _ in range(3):
            loss = (weights - 1).pow(2).sum()
            loss.backward()
            with torch.no_grad():
                weights -= 0.1 * weights.grad
                weights.grad = None
        assert capture.by_backward and capture.model is None
        optimizer = torch.optim.SGD([weights], lr=0.1)  # a later phase with an optimizer: its steps from here
        (weights - 1).pow(2).sum().backward()
        optimizer.step()
    assert [opt for opt, _, _ in steps.seen] == [None, None, None, optimizer]
    assert not capture.by_backward
    assert steps.losses[0] == pytest.approx(3.0)


def test_a_backward_is_no_step_while_an_optimizer_is_alive() -> None:
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured() as (capture, steps):
        for _ in range(4):  # gradient accumulation: backward()s before the first step
            nn.functional.mse_loss(model(batch(2)[0]), batch(2)[1]).backward()
        optimizer.step()
    assert [opt for opt, _, _ in steps.seen] == [optimizer] and not capture.by_backward
