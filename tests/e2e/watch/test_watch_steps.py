"""What `watch --` counts in a step, on scripts as people write them: LBFGS (a closure evaluated up to 20 times a
step), a time-major LSTM (T x B inputs), a language model (tokens), a partial last batch, and a script that
updates its weights by hand (no optimizer at all)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.watched_loops import run_watched


def printed(stdout: str, name: str) -> list[float]:
    return [float(value) for value in re.findall(rf"^{name} (\S+)$", stdout, re.MULTILINE)]


LBFGS = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=20)
x, y = torch.randn(6, 3), torch.randn(6, 1)
for step in range(3):
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        losses.append(loss.item())
        return loss

    optimizer.step(closure)
    print("evaluations", len(losses))
    print("first", repr(losses[0]))
"""


def test_an_lbfgs_step_is_its_first_closures_loss_on_one_batch(tmp_path: Path) -> None:
    result = run_watched(tmp_path, LBFGS)
    assert result.returncode == 0, result.stderr
    assert printed(result.stdout, "evaluations")[0] > 1  # the closure really ran several times a step
    run, losses, _ = result.run()
    assert (run.status, run.steps, run.batch_size) == ("completed", 3, 6)
    assert losses == pytest.approx(printed(result.stdout, "first"), rel=1e-6)  # the loss at each step's start
    assert result.reports()[-1].samples == 3 * 6


TIME_MAJOR = """
import torch
from torch import nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 8)  # batch_first=False: inputs are time x batch x features
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[-1])

torch.manual_seed(0)
model = Tagger()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(12, 5, 3), torch.randn(5, 1)  # 12 time steps, a batch of 5
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_time_major_lstms_batch_is_its_second_dimension(tmp_path: Path) -> None:
    result = run_watched(tmp_path, TIME_MAJOR)
    assert result.returncode == 0, result.stderr
    run, _, config = result.run()
    assert (run.status, run.steps, run.batch_size, config["counted"]) == ("completed", 4, 5, "samples")
    assert result.reports()[-1].samples == 4 * 5


LANGUAGE_MODEL = """
import torch
from torch import nn

class WordModel(nn.Module):  # as PyTorch's word_language_model example: sequence x batch ids, flat logits
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.rnn = nn.LSTM(16, 16)
        self.decoder = nn.Linear(16, 50)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.decoder(out).view(-1, 50)

torch.manual_seed(0)
model = WordModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randint(0, 50, (97, 4))  # batchified: 97 positions x 4 streams
for start, length in ((0, 35), (35, 35), (70, 26)):  # chunks of 35 positions, the last one shorter
    ids, targets = data[start:start + length], data[start + 1:start + 1 + length]
    nn.functional.cross_entropy(model(ids), targets.reshape(-1)).backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_language_models_steps_count_tokens(tmp_path: Path) -> None:
    result = run_watched(tmp_path, LANGUAGE_MODEL)
    assert result.returncode == 0, result.stderr
    run, _, config = result.run()
    assert (run.status, run.steps, config["counted"]) == ("completed", 3, "tokens")
    assert run.batch_size == 35 * 4  # tokens a step: its most common one, not the last, partial chunk
    assert result.reports()[-1].samples == (35 + 35 + 26) * 4


PARTIAL_LAST_BATCH = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(10, 4), torch.randn(10, 1)), batch_size=4)
fixed = torch.randn(64, 4)
for x, y in loader:  # batches of 4, 4 and 2
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
    model(fixed)  # a look at fixed inputs, without no_grad: no training forward
"""


def test_the_batch_size_is_the_most_common_and_only_training_forwards_count(tmp_path: Path) -> None:
    result = run_watched(tmp_path, PARTIAL_LAST_BATCH)
    assert result.returncode == 0, result.stderr
    run, _, _ = result.run()
    assert (run.status, run.steps, run.batch_size) == ("completed", 3, 4)
    assert result.reports()[-1].samples == 10


ENDS_IN_NAN = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    loss = nn.functional.mse_loss(model(torch.randn(5, 4)), torch.randn(5, 1))
    if step == 3:
        loss = loss * float("nan")
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print("loss", repr(loss.item()))
"""


def test_the_summarys_first_and_last_loss_are_the_first_and_last_steps(tmp_path: Path) -> None:
    result = run_watched(tmp_path, ENDS_IN_NAN)
    assert result.returncode == 0, result.stderr
    run, losses, _ = result.run()
    assert (run.status, run.steps) == ("diverged", 4)
    summary = result.summary()
    assert summary["loss_first"] == pytest.approx(printed(result.stdout, "loss")[0], rel=1e-6)  # not a mean
    assert summary["loss_last"] is None  # the last step's nan (stored as null), not a finite mean before it
    assert losses[:3] == pytest.approx(printed(result.stdout, "loss")[:3], rel=1e-6)


BY_HAND = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
for step in range(5):
    loss = nn.functional.mse_loss(model(torch.randn(5, 4)), torch.randn(5, 1))
    loss.backward()
    with torch.no_grad():  # no torch.optim: the weights updated by hand
        for parameter in model.parameters():
            parameter -= 0.1 * parameter.grad
            parameter.grad = None
    print("loss", repr(loss.item()))
"""


def test_a_script_that_updates_its_weights_by_hand_records_each_backward_as_a_step(tmp_path: Path) -> None:
    result = run_watched(tmp_path, BY_HAND)
    assert result.returncode == 0, result.stderr
    run, losses, config = result.run()
    assert (run.status, run.steps, run.model, run.batch_size) == ("completed", 5, "Linear", 5)
    assert config["steps"] == "backward" and config["optimizer"] == ""
    assert losses == pytest.approx(printed(result.stdout, "loss"), rel=1e-6)
    said = [event.data["text"] for event in result.events() if event.kind == "LogMessage"]
    assert any("each backward() is recorded as a step" in text for text in said)
