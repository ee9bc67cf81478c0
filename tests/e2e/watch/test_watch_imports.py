"""`watch --` on scripts that ask for torch before importing it: transformers, datasets and many scripts check
`importlib.util.find_spec("torch")` first, and the watch must still install itself when torch is imported."""

from __future__ import annotations

from pathlib import Path

from tests.support.watched_loops import run_watched

LOOP = """
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(5, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_script_that_looks_for_torch_before_importing_it_is_watched(tmp_path: Path) -> None:
    script = 'import importlib.util\nassert importlib.util.find_spec("torch") is not None\nimport torch\n' + LOOP
    result = run_watched(tmp_path, script)
    assert result.returncode == 0, result.stderr
    run, losses, _ = result.run()
    assert (run.status, run.steps, len(losses)) == ("completed", 3, 3)


def test_a_script_that_imports_transformers_first_is_watched(tmp_path: Path) -> None:
    script = "import transformers\nfrom transformers import set_seed\nset_seed(0)\nimport torch\n" + LOOP
    result = run_watched(tmp_path, script)
    assert result.returncode == 0, result.stderr
    run, losses, config = result.run()
    assert (run.status, run.steps, config["model"]) == ("completed", 3, "Linear")
