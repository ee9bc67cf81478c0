"""Start-up code of `gpu-train-monitor watch -- python train.py`, the way `opentelemetry-instrument` and `ddtrace-run`
install themselves: the command puts this file's folder first on PYTHONPATH, so Python's `site` runs it in the
script's process (and in every Python process the script starts) before the script's first line.

It installs nothing yet: when the script imports torch, our watch (gpu_train_monitor.watch.script) is loaded under our
own name, `gpu_train_monitor` (the installed alias of our `core`; else our `core` folder loaded by path under that
name). It never imports `core`: a research folder's own `core` (and `gui`) must be what the script's `import core`
gets, and Python puts the script's folder first on sys.path only after this file ran. A process that never
imports torch pays for this file alone. The script ends its run: an uncaught exception through `sys.excepthook`
(the hook found here still prints it), a normal exit through `atexit`.

This file hides any other `sitecustomize` (Debian's, a virtual environment's): the next one on sys.path runs
first. Nothing here may break the script: a failure of ours is one line on stderr and the script goes on.
"""

import atexit
import importlib
import importlib.util
import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType, TracebackType
from typing import Any

_PACKAGE = "gpu_train_monitor"
_HERE = os.path.dirname(os.path.abspath(__file__))
_CORE = os.path.dirname(os.path.dirname(_HERE))  # core/watch/site -> core
_state: dict[str, Any] = {"watch": None, "interrupted": False}


def _say(text: str) -> None:
    try:
        print(f"gpu-train-monitor: {text}", file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001 - a closed stderr: nothing to tell it with
        pass


def _failed(what: str, exc: BaseException) -> None:
    _say(f"{what}: {type(exc).__name__}: {exc}")


def _chain() -> None:
    """Run the sitecustomize this one hides, as Python would have (under the name `sitecustomize`)."""
    later = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
    spec = PathFinder.find_spec("sitecustomize", later)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _our_package() -> ModuleType:
    """`gpu_train_monitor`: installed, or our `core` folder loaded by path under that name."""
    try:
        return importlib.import_module(_PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name != _PACKAGE:
            raise
    spec = importlib.util.spec_from_file_location(
        _PACKAGE, os.path.join(_CORE, "__init__.py"), submodule_search_locations=[_CORE]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules[_PACKAGE]
        raise
    return package


def _start_watching() -> None:
    """torch has loaded: install the capture of optimizer steps (the run opens at the first one). Once only: a loader
    that two finds of torch both wrapped calls this twice."""
    _forget_finder()
    if _state["watch"] is not None:
        return
    try:
        _our_package()
        script = importlib.import_module(f"{_PACKAGE}.watch.script")
        _state["watch"] = script.ScriptWatch.from_environment().install()
    except Exception as exc:  # noqa: BLE001
        _failed("not watching this script", exc)


class _WhenTorchLoads:
    """A finder that only wraps torch's loader, so our watch installs once torch has finished loading.

    It stays first on sys.meta_path until torch has really loaded: transformers, datasets and many scripts ask
    `importlib.util.find_spec("torch")` whether torch is there long before they import it, and such a question
    must leave the hook in place (the spec it returns wraps a loader nobody runs)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name != "torch":
            return None
        spec = _spec_from_the_others(self, name, path, target)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        load = loader.exec_module
        if getattr(load, "_gpu_train_monitor", False):  # a loader object found twice: wrapped once
            return spec

        def load_then_watch(module: ModuleType) -> None:
            load(module)
            try:
                del loader.exec_module
            except AttributeError:
                pass
            _start_watching()

        load_then_watch._gpu_train_monitor = True  # type: ignore[attr-defined]
        try:
            loader.exec_module = load_then_watch
        except AttributeError:  # a loader that takes no attribute: torch loads unwatched
            _forget_finder()
            _say("not watching this script: torch's loader cannot be followed")
        return spec


def _spec_from_the_others(ours: Any, name: str, path: Any, target: Any) -> ModuleSpec | None:
    """torch's spec as the finders after ours find it, asked as the import system asks them (never through
    importlib.util.find_spec, which would ask us again). A finder that fails: None, and the import system then
    asks it itself and reports its error as if we were not here."""
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        if finder is ours or find is None:
            continue
        try:
            spec = find(name, path, target)
        except Exception:  # noqa: BLE001 - theirs to report
            return None
        if spec is not None:
            return spec
    return None


_finder = _WhenTorchLoads()


def _forget_finder() -> None:
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


def _end(error: BaseException | None) -> None:
    watch = _state["watch"]
    if watch is None:
        return
    try:
        watch.finish(error)
    except BaseException as exc:  # noqa: BLE001 - even a KeyboardInterrupt while recording the end
        _failed("could not record the end of the run", exc)
    if error is None and _state["interrupted"]:  # the exit handler, the last to run: the process dies of SIGINT
        _still_dying_of_sigint()


def _still_dying_of_sigint() -> None:
    """A script ended by an uncaught KeyboardInterrupt exits as if killed by SIGINT (a shell's 130), but CPython
    forgets that when any thread evaluates a string afterwards (each `eval(str)` resets the flag it exits by), and
    the watch's prediction thread may (torch.fx reads operator schemas with eval). Evaluating one string that raises
    KeyboardInterrupt sets the flag again, as the script's own ending did; the thread has ended by now (Python
    waits for it before the exit handlers)."""
    try:
        eval("(_ for _ in ()).throw(KeyboardInterrupt)")  # noqa: S307 - a constant: sets CPython's exit flag
    except KeyboardInterrupt:
        pass


def _note_error(error: BaseException, traceback: TracebackType | None) -> None:
    """The exception that ends this process, in one line, where `watch` reads it once the script has exited
    (ENV_SCRIPT_ERROR of gpu_train_monitor.watch.startup): a script that fails before its first step (a syntax
    error, a missing file) then says why in the terminal's last line and the window's, not only "nothing recorded".
    The first process to write it wins (a torchrun rank's error, not its launcher's)."""
    path = os.environ.get("GPU_TRAIN_MONITOR_SCRIPT_ERROR")
    if not path:
        return
    try:
        text = (str(error).strip().splitlines() or [""])[0][:500]
        line = f"{type(error).__name__}: {text}" if text else type(error).__name__
        if not isinstance(error, SyntaxError) and traceback is not None:  # a SyntaxError says where itself
            while traceback.tb_next is not None:
                traceback = traceback.tb_next
            where = os.path.basename(traceback.tb_frame.f_code.co_filename)
            line += f" ({where}, line {traceback.tb_lineno})"
        with open(path, "x", encoding="utf-8") as file:
            file.write(line)
    except Exception:  # noqa: BLE001 - already written by another process, or a folder gone: nothing to add
        pass


def _install() -> None:
    # found now, before Python puts the script's folder first on sys.path (a folder of that name there would
    # shadow ours); its submodules come from its own folder later. Torch-free: one small file.
    _our_package()
    previous_hook = sys.excepthook

    def excepthook(kind: type[BaseException], error: BaseException, traceback: TracebackType | None) -> None:
        _state["interrupted"] = issubclass(kind, KeyboardInterrupt)
        try:
            previous_hook(kind, error, traceback)
        finally:
            _note_error(error, traceback)
            _end(error)

    sys.excepthook = excepthook
    atexit.register(_end, None)  # registered first, so it runs last: after the script's own exit handlers
    if "torch" in sys.modules:  # the hidden sitecustomize imported it
        _start_watching()
    else:
        sys.meta_path.insert(0, _finder)


sys.modules["_gpu_train_monitor_sitecustomize"] = sys.modules.get(__name__)
try:
    _chain()
except Exception as exc:  # noqa: BLE001 - theirs failed: ours still installs
    _failed("the sitecustomize after ours failed", exc)
try:
    _install()
except Exception as exc:  # noqa: BLE001
    _failed("not watching this script", exc)
