"""Your own model or dataset as `package.module:factory`: the spec's syntax (in the config), importing it
from the current folder or a file, and calling it, with a message naming the spec for each mistake."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.user_code import accepted_keywords, call_factory, check_spec, load_callable, spec_problem
from gpu_train_monitor.config.field_checks import describe_range
from gpu_train_monitor.config.run_config import RunConfig
from tests.support.cli import cli_in_process
from tests.support.user_code import importable_folder, write_module


@pytest.fixture
def folder(tmp_path, monkeypatch):
    yield from importable_folder(tmp_path, monkeypatch)


# --- the spec in the config: syntax only -------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    ["mymodels:small_net", "My.Pkg.Models:Make", "nets/my net.py:make", r"C:\work\nets.py:make", "mod:Factory.create"],
)
def test_the_config_takes_a_spec_as_typed_without_importing_it(spec: str) -> None:
    config = RunConfig(model=f"  {spec} ", dataset=spec)
    assert config.model == config.dataset == spec  # stripped; case kept (a module name is case-sensitive)
    assert "nosuchmodule" not in sys.modules


def test_built_in_names_keep_their_rules() -> None:
    assert RunConfig(model=" ResNet18 ").model == "resnet18"
    with pytest.raises(
        ConfigError,
        match=r"dataset: must be one of synthetic, .*imagefolder, synthetic-text, text:PATH \(a text file\), or "
        r"package.module:factory, got 'cifar11'",
    ):
        RunConfig(dataset="cifar11")
    assert describe_range("dataset").endswith(", or package.module:factory")


@pytest.mark.parametrize(
    "spec, problem",
    [
        (":make", "no module before the colon"),
        ("mymodels:", "no callable's name after the colon"),
        ("mymodels:make-net", "'make-net' after the colon is not a Python name"),
        ("my models:make", "'my models' before the colon is neither a module name nor a .py file"),
        ("../models:make", "'../models' before the colon is neither a module name nor a .py file"),
    ],
)
def test_a_malformed_spec_is_refused_with_the_form_it_should_have(spec: str, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        RunConfig(model=spec)
    assert raised.value.field == "model"
    assert str(raised.value) == (
        f"model: {spec!r} is not package.module:factory (e.g. mypackage.module:make_net "
        f"or path/to/file.py:make_net): {problem}"
    )
    assert check_spec("dataset", "a.b:c.d") == "a.b:c.d"


# --- importing -------------------------------------------------------------------------------------------


def test_a_module_in_the_current_folder_imports_as_with_python_minus_m(folder: Path) -> None:
    assert str(folder) not in sys.path
    factory = load_callable("model", "mymodels:small_net")
    assert factory.__name__ == "small_net" and factory.__module__ == "mymodels"
    assert load_callable("model", "mymodels:TenWay").__name__ == "TenWay"  # a class is a factory too


def test_a_file_spec_imports_the_file_and_lets_it_import_its_neighbours(folder: Path) -> None:
    elsewhere = folder / "elsewhere"
    elsewhere.mkdir()
    write_module(elsewhere, "helpers", "WIDTH = 6\n")
    write_module(elsewhere, "nets", "from helpers import WIDTH\n\ndef make():\n    return WIDTH\n")
    assert load_callable("model", f"{elsewhere / 'nets.py'}:make")() == 6
    os.chdir(elsewhere)
    assert load_callable("model", "nets.py:make")() == 6  # relative to the current folder
    assert load_callable("model", "./nets.py:make") is not None


def test_an_edited_module_is_imported_again_at_the_next_load(folder: Path) -> None:
    write_module(folder, "editable", "def make():\n    return 1\n")
    assert load_callable("model", "editable:make")() == 1
    path = write_module(folder, "editable", "def make():\n    return 22\n")
    later = os.stat(path).st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(later, later))  # an edit seconds later (bytecode is checked by the second)
    assert load_callable("model", "editable:make")() == 22
    assert load_callable("model", "editable:make")() == 22  # unchanged since: not imported a third time


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "nosuchmodule:make",
            "nosuchmodule:make: no module named 'nosuchmodule' in the current folder ({folder}) or on the Python path",
        ),
        (
            "mymodels.sub:make",
            "mymodels.sub:make: no module named 'mymodels.sub' in the current folder ({folder}) or on the Python path",
        ),
        ("mymodels:nope", "mymodels:nope: mymodels (imported from {folder}/mymodels.py) has no attribute 'nope'"),
        (
            "mymodels:TenWay.nope",
            "mymodels:TenWay.nope: mymodels:TenWay (imported from {folder}/mymodels.py) has no attribute 'nope'",
        ),
        ("mymodels.py:nope", "mymodels.py:nope: mymodels.py has no attribute 'nope'"),
        (
            "mymodels:NUMBER",
            "mymodels:NUMBER is an int, not a callable: point at a function or class that returns a new model",
        ),
        (
            "mymodels:INSTANCE",
            "mymodels:INSTANCE is a model instance (an nn.Module), not a callable: point at a "
            "function or class that returns a new model",
        ),
        ("missing.py:make", "missing.py:make: no file missing.py (relative to the current folder, {folder})"),
    ],
)
def test_what_cannot_be_found_is_named(folder: Path, spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_callable("model", spec)
    assert str(raised.value) == "model: " + message.format(folder=folder)


def test_an_import_that_fails_inside_the_user_module_says_why_in_one_line(folder: Path) -> None:
    write_module(folder, "broken", "def make(:\n    pass\n")
    write_module(folder, "needs_dep", "import some_dependency_not_installed\n")
    write_module(folder, "raises_at_import", "raise ValueError('config file missing\\nsecond line')\n")
    with pytest.raises(
        ConfigError,
        match=r"^dataset: broken:make: importing broken failed: SyntaxError: "
        r"invalid syntax \(broken.py, line 1\)$",
    ):
        load_callable("dataset", "broken:make")
    with pytest.raises(
        ConfigError,
        match=r"^dataset: needs_dep:make: importing needs_dep failed: "
        r"ModuleNotFoundError: No module named 'some_dependency_not_installed'$",
    ):
        load_callable("dataset", "needs_dep:make")
    with pytest.raises(
        ConfigError,
        match=r"^dataset: raises_at_import.py:make: importing raises_at_import.py "
        r"failed: ValueError: config file missing…$",
    ):
        load_callable("dataset", "raises_at_import.py:make")


def test_the_form_can_ask_whether_a_spec_is_there_without_running_it(folder: Path) -> None:
    write_module(folder, "loud", "raise SystemExit('must not run')\n")
    assert spec_problem("loud:make") is None and "loud" not in sys.modules
    assert spec_problem("mymodels.py:small_net") is None
    assert spec_problem("json:dumps") is None  # the standard library is on the path
    assert spec_problem("nosuchmodule:make") == (
        f"no module named 'nosuchmodule' in the current folder ({folder}) or on the Python path"
    )
    assert spec_problem("nowhere/nets.py:make").startswith("no file nowhere/nets.py")


# --- calling ---------------------------------------------------------------------------------------------


def test_a_factory_gets_the_offered_arguments_its_signature_takes() -> None:
    def both(num_classes, in_channels=3):
        return num_classes, in_channels

    def some(num_classes):
        return num_classes

    def anything(**kwargs):
        return kwargs

    offered = {"num_classes": 7, "in_channels": 1}
    assert call_factory("model", "m:both", both, **offered) == (7, 1)
    assert call_factory("model", "m:some", some, **offered) == 7
    assert call_factory("model", "m:anything", anything, **offered) == offered
    assert call_factory("model", "m:nothing", lambda: "built", **offered) == "built"
    assert accepted_keywords("model", "m:dict", dict, offered) == {}  # a builtin: its signature cannot be read


def test_a_factory_that_needs_more_than_the_run_gives_or_raises_is_named() -> None:
    def needs(width, depth, num_classes=10):
        raise AssertionError("never called")

    def raises():
        raise KeyError("weights")

    with pytest.raises(
        ConfigError,
        match=r"^model: m:needs needs the arguments width, depth, but a run calls it "
        r"with num_classes= and in_channels= \(when it takes them\); give them a "
        r"default$",
    ):
        call_factory("model", "m:needs", needs, num_classes=3, in_channels=1)
    with pytest.raises(
        ConfigError,
        match=r"^dataset: d:needs needs the arguments width, depth, but a run calls "
        r"it with no arguments; give them a default$",
    ):
        call_factory("dataset", "d:needs", needs)
    with pytest.raises(ConfigError, match=r"^dataset: d:raises raised KeyError: 'weights'$"):
        call_factory("dataset", "d:raises", raises)


# --- the command line, from the user's project folder ------------------------------------------------------


def test_the_cli_reports_a_mistake_in_your_own_code_as_one_line_naming_it(folder: Path) -> None:
    """Run from the user's folder (the current one, not on sys.path): both modules import from there, and the
    model's mismatch with the data is one line, exit code 2. In this process: only what it prints matters."""
    done = cli_in_process(
        "run",
        "--device",
        "cpu",
        "--model",
        "mymodels:for_28px",
        "--dataset",
        "mydata:blobs",
        "--batch-size",
        "8",
        "--max-steps",
        "2",
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gpu-train-monitor: error: --model: mymodels:for_28px fails on the run's input, a batch shaped 2x3x8x8 "
        "(batch x channels x height x width, from the dataset): RuntimeError: mat1 and mat2 shapes cannot be "
        "multiplied (2x192 and 784x3)"
    ]
    assert "Traceback" not in done.stderr


def test_sys_exit_is_placed_in_the_users_code_also_while_a_watch_wraps_sys_exit() -> None:
    """A watched script's process has sys.exit wrapped (gpu_train_monitor.watch.script_exits): the place named is
    the user's call, not the wrapper's (it said 'in exit (script_exits.py, line 42)')."""
    from gpu_train_monitor.base.user_code import exit_call
    from gpu_train_monitor.watch.script_exits import ScriptExits

    def users_forward() -> None:
        sys.exit(5)

    exits = ScriptExits(lambda code: None).install()
    try:
        users_forward()
    except SystemExit as exc:
        where = str(exit_call(exc))
    finally:
        exits.uninstall()
    line = users_forward.__code__.co_firstlineno + 1
    assert where == f"sys.exit(5) in users_forward (test_user_code.py, line {line})"
