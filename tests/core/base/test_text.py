"""Core's texts for people are `gpu_train_monitor.base.text.Message`s: English that keeps its template and values.

The window translates them from that structure (gpu_train_monitor.gui.qt.core_text), so these tests check the structure
itself: errors keep their field apart from a `Message` detail that re-renders to the same English, a
`Message` crosses processes intact, and, walking the source of `core/`, no user error is raised with a
text the translator cannot see (an f-string or a plain literal) and every template is a literal whose
fields are exactly the values given (lupdate reads only literals; a field without a value would raise
the moment the error is raised).
"""

from __future__ import annotations

import ast
import pickle
import string
import warnings
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.base.errors import ConfigError, DatasetError, UserError
from gpu_train_monitor.base.text import Message, and_list, message_of, semicolon_list
from gpu_train_monitor.base.user_code import check_spec
from gpu_train_monitor.config.field_checks import describe_range
from gpu_train_monitor.config.run_config import RunConfig

CORE = Path(__file__).resolve().parents[3] / "core"

# Files whose user errors reach only the command line (stderr, then exit code 2), never the window: the CLI's
# output stays English (scripts parse it), so their messages stay plain strings.
CLI_ONLY = {
    "cli/main.py": "the headless CLI's parser and dispatch",
    "cli/run_command.py": "the `run` subcommand, and the entry point of a data-parallel run's rank processes "
    "(launched by the CLI or the window, which reads their reports, not these errors)",
    "cli/runs_command.py": "the `runs` subcommand",
    "cli/compare_command.py": "the `compare` subcommand",
    "cli/options.py": "argparse options: --resume, --checkpoint-* and --preset checks, printed before any window "
    "exists",
}
# Files that rebuild a `Message` from a template stored earlier (pickle, JSON): the template was a literal where
# the `Message` was made.
REBUILDERS = {"base/text.py"}


def rerender(message: Message) -> str:
    """The text built again from the template and the values alone (nested `Message`s too), as the window does
    with a translated template."""
    params = {name: rerender(value) if isinstance(value, Message) else value for name, value in message.params.items()}
    return message.template.format(**params) if params else message.template


def marked(message: Message) -> str:
    """The text with every template wrapped in [..]: shows which parts went through a template (translatable)."""
    params = {name: marked(value) if isinstance(value, Message) else value for name, value in message.params.items()}
    return "[" + (message.template.format(**params) if params else message.template) + "]"


# ---- errors keep their field and a structured detail ------------------------------------------------


def test_a_validation_error_keeps_its_field_and_a_message_detail_that_renders_the_same_english() -> None:
    with pytest.raises(ConfigError) as caught:
        RunConfig(batch_size=0)
    error = caught.value
    assert error.field == "batch_size"
    assert isinstance(error.detail, Message)
    assert error.detail == "must be an integer from 1 to 65536, got 0"
    assert error.detail.template == "must be {allowed}, got {value}"
    assert isinstance(error.detail.params["allowed"], Message)  # the range is a sentence too
    assert rerender(error.detail) == error.detail
    assert str(error) == "batch_size: must be an integer from 1 to 65536, got 0"
    assert isinstance(message_of(error), Message) and rerender(message_of(error)) == str(error)


@pytest.mark.parametrize(
    "changes, field, text",
    [
        ({"optimizer": "adam"}, "optimizer", "must be one of sgd, adamw, got 'adam'"),
        (
            {"model": "net:"},
            "model",
            "'net:' is not package.module:factory (e.g. mypackage.module:make_net or "
            "path/to/file.py:make_net): no callable's name after the colon",
        ),
        ({"compile": "yes"}, "compile", "must be true or false, got 'yes'"),
        (
            {"device": ""},
            "device",
            "must be a non-empty string (device to train on: auto, cpu, cuda, cuda:N or mps), got ''",
        ),
        (
            {"nproc": 3, "batch_size": 128},
            "batch_size",
            "128 does not split evenly over 3 processes; use a multiple of 3 "
            "(each process trains batch_size / nproc images a step)",
        ),
    ],
)
def test_config_errors_are_whole_templates_all_the_way_down(changes: dict, field: str, text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        RunConfig(**changes)
    detail = caught.value.detail
    assert caught.value.field == field and detail == text
    assert rerender(detail) == text
    assert "[" in marked(detail)  # rendered from a template, not glued English


def test_the_range_of_every_field_is_a_message() -> None:
    assert describe_range("lr") == "a number from 1e-08 to 10"
    assert describe_range("lr").template == "a number from {minimum} to {maximum}"
    assert describe_range("dataset") == (
        "one of synthetic, cifar10, mnist, fashion-mnist, imagefolder, synthetic-text, text:PATH (a text file), or "
        "package.module:factory"
    )
    assert all(isinstance(describe_range(name), Message) for name in ("batch_size", "amp", "download", "data_dir"))


def test_a_dataset_error_from_a_reader_is_a_message(tmp_path: Path) -> None:
    from gpu_train_monitor.data.datasets.imagefolder import load_imagefolder

    with pytest.raises(DatasetError) as caught:
        load_imagefolder(tmp_path / "missing")
    text = message_of(caught.value)
    assert isinstance(text, Message) and text == f"image folder {tmp_path / 'missing'} does not exist"
    assert rerender(text) == str(caught.value)


def test_a_warning_of_a_reader_reaches_the_run_log_as_a_message(tmp_path: Path) -> None:
    """Image-folder entries left out: a warning the run's log shows, fully translatable (every part a template)."""
    import os

    from PIL import Image

    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.data.placement import load_placed

    for name in ("cat", "dog"):
        (tmp_path / name).mkdir()
        for index in range(3):
            Image.new("RGB", (8, 8)).save(tmp_path / name / f"{index}.png")
    os.symlink(tmp_path / "nowhere.png", tmp_path / "cat" / "broken.png")
    config = RunConfig(dataset="imagefolder", data_dir=str(tmp_path), batch_size=2, placement="stream")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, _, notes = load_placed(config, torch.device("cpu"), 10**9)
    assert len(notes) == 1 and isinstance(notes[0], Message)
    assert notes[0] == f"image folder {tmp_path}: left out 1 entry: {tmp_path / 'cat' / 'broken.png'} (a broken link)"
    assert marked(notes[0]) == (
        f"[image folder {tmp_path}: left out 1 entry: [{tmp_path / 'cat' / 'broken.png'} ([a broken link])]]"
    )


def test_lists_in_sentences_are_nested_messages_with_the_english_of_a_plain_join() -> None:
    parts = [Message("a broken link"), "x", Message("and {count} more", count=2)]
    assert semicolon_list(parts) == "a broken link; x; and 2 more"
    assert marked(semicolon_list(parts)) == "[[[a broken link]; x]; [and 2 more]]"
    assert and_list(["num_classes=", "in_channels="]) == "num_classes= and in_channels="
    assert and_list(["a"]) == "a" and semicolon_list([]) == ""


# ---- crossing processes -----------------------------------------------------------------------------


def test_a_message_survives_pickle_with_its_structure() -> None:
    inner = Message("{count} more", count=3)
    message = Message("{spec}: {problem} ({ratio:.1f})", spec="pkg:make", problem=inner, ratio=0.25)
    copy = pickle.loads(pickle.dumps(message))
    assert type(copy) is Message and copy == "pkg:make: 3 more (0.2)"
    assert copy.template == message.template and copy.params == message.params
    assert type(copy.params["problem"]) is Message and copy.params["problem"].template == "{count} more"


def test_a_config_error_survives_pickle_with_its_field_and_detail() -> None:
    with pytest.raises(ConfigError) as caught:
        check_spec("dataset", ":make")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is ConfigError and copy.field == "dataset"
    assert isinstance(copy.detail, Message) and copy.detail.template == caught.value.detail.template
    assert str(copy) == str(caught.value)


# ---- the source of core/ ------------------------------------------------------------------------------


def _error_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """UserError and every class of core/ that derives from it (however deep)."""
    names = {"UserError", "ConfigError", "DatasetError"}
    while True:
        found = {
            node.name
            for tree in trees.values()
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            and any(isinstance(base, ast.Name) and base.id in names for base in node.bases)
        }
        if found <= names:
            return names
        names |= found


def _called(node: ast.Call) -> str | None:
    return (
        node.func.id
        if isinstance(node.func, ast.Name)
        else node.func.attr
        if isinstance(node.func, ast.Attribute)
        else None
    )


def _plain_text(node: ast.AST) -> bool:
    """An expression that is certainly an untranslatable text: an f-string, a literal, text glued or formatted."""
    if isinstance(node, ast.JoinedStr) or isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.BinOp):
        return _plain_text(node.left) or _plain_text(node.right)
    if isinstance(node, ast.IfExp):
        return _plain_text(node.body) or _plain_text(node.orelse)
    return isinstance(node, ast.Call) and _called(node) in ("format", "join")


def _core_sources() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in sorted(CORE.rglob("*.py"))}


def test_no_user_error_in_core_is_raised_with_text_the_window_cannot_translate() -> None:
    trees = _core_sources()
    classes = _error_classes(trees)
    flagged = []
    for path, tree in trees.items():
        if path.relative_to(CORE).as_posix() in CLI_ONLY:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _called(node) not in classes:
                continue
            position = 1 if _called(node) == "ConfigError" else 0
            text = (
                node.args[position]
                if len(node.args) > position
                else next((keyword.value for keyword in node.keywords if keyword.arg in ("message", "detail")), None)
            )
            if text is not None and _plain_text(text):
                flagged.append(f"{path.relative_to(CORE.parent)}:{node.lineno} {_called(node)}")
    assert not flagged, (
        "user errors with plain text (make the message a gpu_train_monitor.base.text.Message):\n" + "\n".join(flagged)
    )


def test_every_message_template_in_core_is_a_literal_whose_fields_are_the_values_given() -> None:
    problems = []
    for path, tree in _core_sources().items():
        if path.relative_to(CORE).as_posix() in REBUILDERS:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id != "Message":
                continue
            where = f"{path.relative_to(CORE.parent)}:{node.lineno}"
            if not node.args or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
                problems.append(f"{where}: the template is not a string literal (lupdate cannot see it)")
                continue
            template = node.args[0].value
            given = {keyword.arg for keyword in node.keywords}
            fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
            if None in given:  # **values: the names are not known here
                continue
            if not given:  # used as it is: braces are literal, but a {name} would be shown as such
                fields = [name for name in fields if name.isidentifier()]
                if fields:
                    problems.append(f"{where}: {fields} have no values")
                continue
            if set(fields) != given:
                problems.append(f"{where}: fields {sorted(set(fields))}, values {sorted(given)}")
    assert not problems, "\n".join(problems)


def test_user_error_is_the_base_of_every_error_the_walk_checks() -> None:
    assert {"UserError", "ConfigError", "DatasetError", "StoreError"} <= _error_classes(_core_sources())
    assert issubclass(ConfigError, UserError) and issubclass(DatasetError, UserError)
