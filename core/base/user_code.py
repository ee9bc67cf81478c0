"""Your own model or dataset: a `package.module:factory` (or `path/to/file.py:factory`) spec, imported and called.

`--model` and `--dataset` accept such a spec besides the built-in names. `RunConfig` checks only its
syntax (no import: the config must stay cheap to build, and the window builds one per keystroke); the
run imports it when it is built, so a mistake arrives as the run's user error, like a missing dataset.

Imports work as `python -m` makes them work: the current folder comes first on the path; a file spec
also puts the file's own folder on the path, so the file can import its neighbours. A module (or file)
that changed since it was imported here is imported again at the next run: a window can stay open
while its user edits the model (modules *it* imports are not reloaded).

Every mistake becomes a `ConfigError` for the field ("model" or "dataset") whose message starts with
the spec and says what went wrong in one line: the user's code raised, an import failed, the name is
missing or not callable, the factory needs arguments the run cannot give. No traceback: it is the
user's code, and the one-line cause names the file and line where Python says them (SyntaxError).
This module imports no torch.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import ConfigError
from .text import Message, and_list

SPEC_FIELDS = ("model", "dataset")  # the RunConfig fields that take a spec besides their built-in names
SPEC_FORM = "package.module:factory"  # how help texts and messages name the form
TEXT_PREFIX = "text:"  # `--dataset text:PATH`: a local text file, not a spec (a module named `text` is given as a file)
_MESSAGE_LIMIT = 300  # characters of the user's exception message kept in ours

_mtimes: dict[str, int] = {}  # module name -> source mtime (ns) when this module imported it


def is_spec(value: str) -> bool:
    """A spec rather than a built-in name: built-in names never hold a colon, and `text:PATH` names a text file."""
    return ":" in value and not value.startswith(TEXT_PREFIX)


def check_spec(field: str, value: str) -> str:
    """`value` stripped, or a ConfigError when it is not `module:callable` / `file.py:callable`."""
    value = value.strip()
    target, _, attr = value.rpartition(":")  # rpartition: a Windows path (C:\\x.py:make) keeps its drive
    target = target.strip()
    problem = None
    if not target:
        problem = Message("no module before the colon")
    elif not attr:
        problem = Message("no callable's name after the colon")
    elif not all(part.isidentifier() for part in attr.split(".")):
        problem = Message("{name} after the colon is not a Python name", name=repr(attr))
    elif not target.endswith(".py") and not all(part.isidentifier() for part in target.split(".")):
        problem = Message("{name} before the colon is neither a module name nor a .py file", name=repr(target))
    if problem:
        name = "make_net" if field == "model" else "make_data"
        raise ConfigError(
            field,
            Message(
                "{value} is not {spec_form} (e.g. {module_example} or {file_example}): {problem}",
                value=repr(value),
                spec_form=SPEC_FORM,
                module_example=f"mypackage.module:{name}",
                file_example=f"path/to/file.py:{name}",
                problem=problem,
            ),
        )
    return f"{target}:{attr}"


def spec_problem(spec: str) -> str | None:
    """What makes `spec` fail to import, where that shows without running any of its code (the form asks
    on every change): a missing file, or a top-level module found neither here nor on the path. None
    when it may well import (its code may still fail when the run imports it)."""
    target, _, _ = spec.rpartition(":")
    if target.endswith(".py"):
        path = Path(target).expanduser()
        try:
            return None if path.is_file() else _no_file(path)
        except (OSError, ValueError) as exc:  # a name too long, a NUL byte
            return Message("cannot use {path}: {error}", path=str(path), error=str(exc))
    top = target.split(".")[0]
    if top in sys.modules or top in sys.builtin_module_names:
        return None
    if importlib.machinery.PathFinder.find_spec(top, [os.getcwd(), *sys.path]) is not None:
        return None
    return _no_module(top)


def load_callable(field: str, spec: str) -> Callable[..., Any]:
    """Import the spec's module and return its callable; ConfigError (see the module docstring) otherwise."""
    spec = check_spec(field, spec)
    target, _, attr = spec.rpartition(":")
    module = _import_file(field, spec, Path(target)) if target.endswith(".py") else _import_module(field, spec, target)
    found: Any = module
    parts = attr.split(".")
    for depth, part in enumerate(parts):
        try:
            found = getattr(found, part)
        except AttributeError:
            owner = target if depth == 0 else f"{target}:{'.'.join(parts[:depth])}"
            source = getattr(module, "__file__", None)  # which file: a name may find another module than meant
            if source and not target.endswith(".py"):
                raise ConfigError(
                    field,
                    Message(
                        "{spec}: {owner} (imported from {source}) has no attribute {attribute}",
                        spec=spec,
                        owner=owner,
                        source=source,
                        attribute=repr(part),
                    ),
                ) from None
            raise ConfigError(
                field,
                Message("{spec}: {owner} has no attribute {attribute}", spec=spec, owner=owner, attribute=repr(part)),
            ) from None
    if callable(found) and not _is_instance_of_module(found):
        return found
    what = Message("a model instance (an nn.Module)") if _is_instance_of_module(found) else a_type(found)
    if field == "model":
        raise ConfigError(
            field,
            Message(
                "{spec} is {what}, not a callable: point at a function or class that returns a new model",
                spec=spec,
                what=what,
            ),
        )
    raise ConfigError(
        field,
        Message(
            "{spec} is {what}, not a callable: point at a function or class that returns a new dataset",
            spec=spec,
            what=what,
        ),
    )


def call_factory(field: str, spec: str, factory: Callable[..., Any], **offered: Any) -> Any:
    """Call `factory` with those of the `offered` keywords its signature accepts (all of them when it takes
    **kwargs; none when the signature cannot be read). Anything it raises becomes a ConfigError."""
    kwargs = accepted_keywords(field, spec, factory, offered)
    try:
        return factory(**kwargs)
    except (Exception, SystemExit) as exc:  # the user's code: its error, in one line, naming the factory
        raise ConfigError(field, Message("{spec} raised {error}", spec=spec, error=one_line(exc))) from None


def accepted_keywords(field: str, spec: str, factory: Callable[..., Any], offered: dict[str, Any]) -> dict[str, Any]:
    """The part of `offered` that `factory` takes; ConfigError when it needs an argument that is not offered."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or an extension type: call it with nothing
        return {}
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(offered)
    taken = {
        p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    needed = [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty
        and p.name not in offered
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if needed:
        raise ConfigError(field, _needs_arguments(spec, needed, [f"{name}=" for name in offered]))
    return {name: value for name, value in offered.items() if name in taken}


def _needs_arguments(spec: str, needed: list[str], offered: list[str]) -> Message:
    """One sentence per case (one argument or several, a run that offers some or none): no glued plurals."""
    names = ", ".join(needed)
    if not offered:
        if len(needed) == 1:
            return Message(
                "{spec} needs the argument {names}, but a run calls it with no arguments; give it a default",
                spec=spec,
                names=names,
            )
        return Message(
            "{spec} needs the arguments {names}, but a run calls it with no arguments; give them a default",
            spec=spec,
            names=names,
        )
    if len(needed) == 1:
        return Message(
            "{spec} needs the argument {names}, but a run calls it with {offered} (when it takes them); "
            "give it a default",
            spec=spec,
            names=names,
            offered=and_list(offered),
        )
    return Message(
        "{spec} needs the arguments {names}, but a run calls it with {offered} (when it takes them); "
        "give them a default",
        spec=spec,
        names=names,
        offered=and_list(offered),
    )


def a_type(value: object) -> str:
    """'a list', 'an int', 'None': what a value is, for a message."""
    if value is None:
        return "None"
    name = type(value).__name__
    if name[:1].lower() in "aeiou":
        return Message("an {type}", type=name)
    return Message("a {type}", type=name)


def one_line(exc: BaseException) -> str:
    """'ValueError: bad shape': the exception's type and the first line of its message, cut to a line."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > _MESSAGE_LIMIT or len(lines) > 1:
        text = text[:_MESSAGE_LIMIT].rstrip() + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_PACKAGE = Path(__file__).resolve().parents[1]  # gpu_train_monitor/ (core/ in a source tree)


def exit_call(exc: SystemExit) -> str:
    """'sys.exit(5) in forward (mymodels.py, line 12)': the traceback's last frame outside this package is the code
    that called it (a watched script's process has sys.exit wrapped by gpu_train_monitor.watch.script_exits)."""
    code = "" if exc.code is None else repr(exc.code)
    last = None
    frame = exc.__traceback__
    while frame is not None:
        if not Path(frame.tb_frame.f_code.co_filename).resolve().is_relative_to(_PACKAGE):
            last = frame
        frame = frame.tb_next
    if last is None:
        return Message("sys.exit({code})", code=code)
    return Message(
        "sys.exit({code}) in {function} ({file}, line {line})",
        code=code,
        function=last.tb_frame.f_code.co_name,
        file=Path(last.tb_frame.f_code.co_filename).name,
        line=last.tb_lineno,
    )


# ---- importing -------------------------------------------------------------------------------------


def _import_module(field: str, spec: str, name: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:  # as `python -m` does: the current folder first
        sys.path.insert(0, cwd)
    try:
        module = sys.modules.get(name)
        if module is not None and _changed(module):
            module = importlib.reload(module)
        elif module is None:
            importlib.invalidate_caches()  # a module written since the path's folders were last listed
            module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise ConfigError(field, Message("{spec}: {problem}", spec=spec, problem=_no_module(exc.name))) from None
        raise ConfigError(field, _import_failed(spec, name, exc)) from None
    except (Exception, SystemExit) as exc:  # its top-level code raised (or called sys.exit)
        raise ConfigError(field, _import_failed(spec, name, exc)) from None
    _remember(module)
    return module


def _import_file(field: str, spec: str, path: Path) -> ModuleType:
    path = path.expanduser()
    if not path.is_file():
        raise ConfigError(field, Message("{spec}: {problem}", spec=spec, problem=_no_file(path)))
    path = path.resolve()
    name = f"_user_{path.stem}_{abs(hash(str(path))):x}"  # one module per file, apart from any importable name
    module = sys.modules.get(name)
    if module is not None and not _changed(module):
        return module
    folder = str(path.parent)
    if folder not in sys.path:  # as `python path/to/file.py` does: its neighbours import
        sys.path.insert(0, folder)
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ConfigError(
            field, Message("{spec}: {path} cannot be imported as a Python module", spec=spec, path=str(path))
        )
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module  # before it runs: dataclasses and pickling look their module up by name
    try:
        loader_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        raise ConfigError(field, _import_failed(spec, path.name, exc)) from None
    _remember(module)
    return module


def _source_mtime(module: ModuleType) -> int | None:
    file = getattr(module, "__file__", None)
    try:
        return os.stat(file).st_mtime_ns if file else None
    except OSError:
        return None


def _remember(module: ModuleType) -> None:
    mtime = _source_mtime(module)
    if mtime is not None:
        _mtimes[module.__name__] = mtime


def _changed(module: ModuleType) -> bool:
    """The module's source changed since this module imported it (one imported elsewhere counts as new)."""
    before = _mtimes.get(module.__name__)
    return before is not None and _source_mtime(module) not in (None, before)


def _import_failed(spec: str, name: str, exc: BaseException) -> Message:
    return Message("{spec}: importing {name} failed: {error}", spec=spec, name=name, error=one_line(exc))


def _no_module(name: str) -> Message:
    return Message(
        "no module named {name} in the current folder ({folder}) or on the Python path",
        name=repr(name),
        folder=os.getcwd(),
    )


def _no_file(path: Path) -> Message:
    if path.is_absolute():
        return Message("no file {path}", path=str(path))
    return Message("no file {path} (relative to the current folder, {folder})", path=str(path), folder=os.getcwd())


def _is_instance_of_module(value: Any) -> bool:
    """An nn.Module instance, recognised without importing torch (loaded already if one exists)."""
    nn = sys.modules.get("torch.nn")
    return nn is not None and isinstance(value, nn.Module)
