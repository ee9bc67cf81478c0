"""The samples of a step: the model's training forwards only (a fixed-noise look, an EMA copy and LBFGS's repeated
closures count nothing), in the batch dimension of the model's input (the second for a time-major model), keyword
inputs from the first step on, and tokens for a language model."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

import torch
from torch import nn

from gpu_train_monitor.watch.step_capture import StepCapture
from gpu_train_monitor.watch.step_samples import BatchLayout


class Steps:
    def __init__(self) -> None:
        self.seen: list[tuple[object, torch.Tensor | None, int | None]] = []

    def __call__(self, optimizer: object, loss: torch.Tensor | None, samples: int | None) -> None:
        self.seen.append((optimizer, loss, samples))

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


def test_a_gans_fixed_noise_look_and_an_ema_copy_count_nothing() -> None:
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 4))
    discriminator = nn.Linear(4, 1)
    g_opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    ema = copy.deepcopy(generator)
    fixed_noise = torch.randn(64, 2)
    with captured() as (capture, steps):
        for _ in range(3):
            fake = generator(torch.randn(7, 2))
            discriminator(fake.detach()).mean().backward()
            d_opt.step()
            d_opt.zero_grad()
            (-discriminator(fake).mean()).backward()
            g_opt.step()
            g_opt.zero_grad()
            pictures = generator(fixed_noise)  # no no_grad: a look at the same noise, never trained on
            ema(fixed_noise)
            del pictures
    assert capture.model is generator
    assert steps.samples == [7, 7, 7]


def test_keyword_inputs_count_from_the_first_step() -> None:
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
    assert steps.samples == [9, 9, 9]


def test_lbfgs_counts_its_first_closure_once() -> None:
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=20)
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    evaluations: list[float] = []

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        evaluations.append(loss.item())
        return loss

    with captured() as (_, steps):
        optimizer.step(closure)
        first = len(evaluations)
        optimizer.step(closure)
    assert first > 1
    assert steps.samples == [6, 6]
    assert [loss.item() for _, loss, _ in steps.seen] == [evaluations[0], evaluations[first]]


def test_a_time_major_model_counts_its_second_dimension_and_a_batch_first_one_its_first() -> None:
    for batch_first, shape in ((False, (11, 3, 2)), (True, (3, 11, 2))):
        torch.manual_seed(0)
        model = nn.GRU(2, 4, batch_first=batch_first)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with captured() as (capture, steps):
            for _ in range(2):
                model(torch.randn(*shape))[0].sum().backward()
                optimizer.step()
        assert capture.model is model and steps.samples == [3, 3]


def test_a_transformer_encoder_fed_batch_first_then_transposed_counts_its_batch() -> None:
    class Encoder(nn.Module):  # ids batch x sequence, attention time-major inside
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(20, 8)
            self.attention = nn.MultiheadAttention(8, 2)
            self.head = nn.Linear(8, 2)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            x = self.embed(ids).transpose(0, 1)
            return self.head(self.attention(x, x, x)[0].mean(0))  # one prediction per sequence

    torch.manual_seed(0)
    model = Encoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured() as (capture, steps):
        for _ in range(2):
            model(torch.randint(0, 20, (5, 9))).sum().backward()
            optimizer.step()
    assert capture.layout.unit == "samples" and steps.samples == [5, 5]


def test_a_language_model_counts_tokens() -> None:
    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(20, 8)
            self.head = nn.Linear(8, 20)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.head(self.embed(ids))  # batch x sequence x vocabulary

    torch.manual_seed(0)
    model = Tiny()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured() as (capture, steps):
        for _ in range(2):
            model(torch.randint(0, 20, (5, 9))).logsumexp(-1).mean().backward()
            optimizer.step()
    assert (capture.layout.unit, capture.layout.sequence) == ("tokens", 9) and steps.samples == [45, 45]


def test_a_layout_counts_a_shape() -> None:
    assert BatchLayout().samples((8, 3, 32, 32)) == 8
    assert BatchLayout(batch_dim=1).samples((35, 20, 4)) == 20
    assert BatchLayout(tokens=True).samples((4, 128)) == 512
    assert BatchLayout(batch_dim=1).samples((7,)) == 7  # a vector has one dimension: its length


def test_a_step_that_raised_in_its_closure_leaves_the_next_steps_counted() -> None:
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=5)
    x = torch.randn(4, 3)

    def failing() -> torch.Tensor:
        model(x).sum().backward()
        raise RuntimeError("out of data")

    with captured() as (_, steps):
        try:
            optimizer.step(failing)
        except RuntimeError:
            pass  # the script caught it and trains on, without closures
        optimizer.zero_grad()
        for _ in range(2):
            model(x).pow(2).mean().backward()
            optimizer.step(lambda: model(x).pow(2).mean())
    assert len(steps.seen) == 2 and steps.samples[-1] == 4  # counted again after the step that raised
    assert all(loss is not None for _, loss, _ in steps.seen)
