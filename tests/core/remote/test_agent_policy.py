"""What the agent may run is decided on its machine: scripts, users' own models and datasets, and dataset folders
only under the folders it was started with (`agent --allow`), paths resolved first; the built-ins always."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.remote.agent.ops import OPS
from gpu_train_monitor.remote.agent.policy import AgentPolicy
from gpu_train_monitor.remote.agent.server import Agent
from gpu_train_monitor.remote.agent.spawn import log_folder
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.run_store import RunStore

HELLO = {"id": 0, "op": "hello", "protocol": protocol.PROTOCOL_VERSION, "app": "1.2.3"}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """An allowed project folder (a script, a package, a model file, a dataset folder) and a folder beside it."""
    allowed, outside = tmp_path / "projects", tmp_path / "elsewhere"
    for folder in (allowed, outside):
        folder.mkdir()
        (folder / "train.py").write_text("print('hi')\n")
    (allowed / "pkg").mkdir()
    (allowed / "pkg" / "__init__.py").write_text("")
    (allowed / "pkg" / "train.py").write_text("")
    (allowed / "tool").mkdir()
    (allowed / "tool" / "__main__.py").write_text("")
    (allowed / "models.py").write_text("def make():\n    return None\n")
    (allowed / "data").mkdir()
    (outside / "models.py").write_text("def make():\n    return None\n")
    (allowed / "escape.py").symlink_to(outside / "train.py")
    (allowed / "outside-data").symlink_to(outside, target_is_directory=True)
    return allowed, outside


def policy(*allowed: Path) -> AgentPolicy:
    return AgentPolicy.of([str(folder) for folder in allowed], "gpu-box")


def test_scripts_and_modules_under_an_allowed_folder_are_watched(folders):
    allowed, _ = folders
    rules = policy(allowed)
    assert rules.watch_folder(str(allowed), ["train.py", "--epochs", "3"]) == allowed.resolve()
    assert rules.watch_folder(str(allowed / "pkg"), ["train.py"]) == (allowed / "pkg").resolve()
    assert rules.watch_folder("", ["train.py"]) == allowed.resolve()  # no folder given: the first allowed one
    assert rules.watch_folder(str(allowed), ["-m", "pkg.train"]) == allowed.resolve()
    assert rules.watch_folder(str(allowed), ["-m", "tool"]) == allowed.resolve()
    with pytest.raises(UserError, match="no module pkg in"):
        rules.watch_folder(str(allowed), ["-m", "pkg"])  # a package without __main__.py


@pytest.mark.parametrize(
    ("cwd", "argv", "said"),
    [
        ("{outside}", ["train.py"], "the folder to start in {outside} is outside the folders"),
        ("{allowed}", ["../elsewhere/train.py"], "the script {allowed}/../elsewhere/train.py is outside"),
        ("{allowed}", ["{outside}/train.py"], "is outside the folders the agent on gpu-box allows"),
        ("{allowed}", ["escape.py"], "the script {allowed}/escape.py is outside"),  # a link out
        ("{allowed}/outside-data", ["train.py"], "the folder to start in {allowed}/outside-data is outside"),
        ("/usr/lib/python3", ["-m", "http.server"], "the folder to start in /usr/lib/python3 is outside"),
        ("{allowed}", ["-m", "http.server"], "no module http.server in"),  # an installed module: not a file here
        ("{allowed}", ["-c", "print(1)"], "python -c is not run on gpu-box"),
    ],
)
def test_anything_outside_the_allowed_folders_is_refused_in_one_line(folders, cwd, argv, said):
    allowed, outside = folders
    fill = {"allowed": str(allowed), "outside": str(outside)}
    argv = [word.format(**fill) for word in argv]
    with pytest.raises(UserError) as refused:
        policy(allowed).watch_folder(cwd.format(**fill), argv)
    assert said.format(**fill) in str(refused.value) and "\n" not in str(refused.value)


def test_without_allow_the_agent_runs_no_script_and_says_how_to_allow_one(folders):
    allowed, _ = folders
    with pytest.raises(UserError) as refused:
        policy().watch_folder(str(allowed), ["train.py"])
    assert str(refused.value) == (
        "the agent on gpu-box may not watch a script: it runs only the built-in models and datasets unless it is "
        "started with --allow FOLDER (e.g. gpu-train-monitor agent --allow ~/projects)"
    )


def test_own_models_and_datasets_come_only_from_allowed_folders(folders):
    allowed, outside = folders
    rules = policy(allowed)
    assert rules.run_folder([RunConfig()]) is None  # the built-ins: anywhere
    assert rules.run_folder([RunConfig(model="models:make")]) == allowed.resolve()  # run there: it imports that
    assert rules.run_folder([RunConfig(model="pkg.train:make")]) == allowed.resolve()
    assert rules.run_folder([RunConfig(model=f"{allowed}/models.py:make")]) == allowed.resolve()
    assert rules.run_folder([RunConfig(dataset="imagefolder", data_dir=str(allowed / "data"))]) is None
    refused = {
        "tempfile:mkdtemp": "tempfile is a module of Python's standard library",
        "http.server:test": "http is a module of Python's standard library",
        f"{outside}/models.py:make": "runs your own code only from a file under the folders it allows",
        "not_there:make": "runs your own code only from a file under the folders it allows",
    }
    for spec, said in refused.items():
        with pytest.raises(ConfigError) as error:
            rules.run_folder([RunConfig(model=spec)])
        assert error.value.field == "model" and said in str(error.value), spec
    for data_dir in (outside, allowed / "outside-data", allowed / ".." / "elsewhere"):
        with pytest.raises(ConfigError) as error:
            rules.run_folder([RunConfig(dataset="imagefolder", data_dir=str(data_dir))])
        assert error.value.field == "data_dir" and "is outside the folders" in str(error.value)
    with pytest.raises(ConfigError, match="runs only the built-in models and datasets unless"):
        policy().run_folder([RunConfig(model="models:make")])


def test_an_allow_that_is_no_folder_is_one_line(tmp_path):
    with pytest.raises(UserError, match="--allow: .*nowhere is not a folder"):
        AgentPolicy.of([str(tmp_path / "nowhere")], "gpu-box")


def test_the_agent_refuses_a_factory_from_outside_and_starts_nothing(folders, tmp_path):
    allowed, outside = folders
    requests = [
        HELLO,
        {"id": 1, "op": "start", "config": {"model": "tempfile:mkdtemp"}, "uid": "r1"},
        {"id": 2, "op": "watch", "argv": ["train.py"], "cwd": str(outside), "uid": "r2"},
        {
            "id": 3,
            "op": "compare",
            "config": {},
            "overrides": [{"model": f"{outside}/models.py:make"}, {"batch_size": 8}],
        },
        {"id": 4, "op": "find", "config": {"dataset": "imagefolder", "data_dir": str(outside)}},
    ]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in requests)
    out = io.BytesIO()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        Agent(store, io.BytesIO(data), out, "1.2.3", "gpu-box", (allowed.resolve(),), ops=OPS).serve()
    answers = [json.loads(line) for line in out.getvalue().splitlines()[2:]]
    assert [answer["kind"] for answer in answers] == ["user_error"] * 4, answers
    assert [answer.get("field") for answer in answers] == ["model", None, "model", "data_dir"]
    assert not log_folder(tmp_path / "runs.sqlite3").exists()  # nothing was started
