"""Nothing the watch attaches to a script's objects may change how they pickle or copy: a script under `watch --`
that keeps a best-model copy or an EMA (`copy.deepcopy`) and saves its whole model and optimizer after each step
(`torch.save`) runs as it does unwatched, and what it saved loads without our package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.processes import ENV, WAIT_S
from tests.support.watched_loops import run_watched

SAVES_EVERYTHING = """
import copy, torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
ema = copy.deepcopy(model)
for step in range(4):
    model(torch.randn(6, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    best = copy.deepcopy(model)  # a best-model copy
    with torch.no_grad():
        for kept, live in zip(ema.parameters(), model.parameters()):
            kept.mul_(0.9).add_(live, alpha=0.1)
    torch.save(model, "model.pt")  # the whole model, pickled
    torch.save({"optimizer": copy.deepcopy(optimizer), "best": best, "ema": ema}, "state.pt")
print("saved", len(model._forward_hooks) + len(model._forward_pre_hooks))
"""

LOADS = """
import sys, torch
assert "gpu_train_monitor" not in sys.modules
model = torch.load("model.pt", weights_only=False)
state = torch.load("state.pt", weights_only=False)
hooks = [module._forward_hooks or module._forward_pre_hooks for module in (model, state["best"], state["ema"])]
print("loaded", model(torch.randn(2, 4)).shape[0], type(state["optimizer"]).__name__, hooks)
"""


def test_a_script_that_copies_and_saves_its_whole_model_each_step_runs_as_unwatched(tmp_path: Path) -> None:
    result = run_watched(tmp_path, SAVES_EVERYTHING)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("saved")
    run, losses, _ = result.run()
    assert (run.status, run.steps, len(losses)) == ("completed", 4, 4)
    # the files hold nothing of the watch: they load where our package is not imported (nor installed), hookless
    loads = subprocess.run(
        [sys.executable, "-c", LOADS], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=WAIT_S
    )
    assert loads.returncode == 0, loads.stderr
    assert loads.stdout == "loaded 2 AdamW [OrderedDict(), OrderedDict(), OrderedDict()]\n"
