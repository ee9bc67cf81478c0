"""Smoke-test the app as a user installed it (`pip install .`, not editable), from a folder outside the repository.

Run by .ci/run with the virtual environment's Python, in an empty temporary folder: what it checks is what a user
on a fresh machine types first. Each step prints the command and what it printed; the first failure ends the
script with exit 1 and says why. Nothing here reads the repository: the package comes from site-packages.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

DIST = "gpu-train-monitor"
PACKAGE = "gpu_train_monitor"
TIMEOUT_S = 300
# A plain training loop as people write it: its own model, optimizer and data, three steps.
TRAIN_SCRIPT = textwrap.dedent(
    """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        images, labels = torch.randn(16, 3, 8, 8), torch.randint(0, 10, (16,))
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")
    """
)


class SmokeFailed(Exception):
    """A step did not do what a user would expect."""


def command(*args: str) -> list[str]:
    """The installed console script, as a user's shell finds it (the environment's bin/ first on PATH)."""
    script = shutil.which(DIST)
    if script is None:
        raise SmokeFailed(f"no `{DIST}` command on PATH: the wheel installed no console script")
    return [script, *args]


def step(title: str, args: list[str], env: dict[str, str], expect_code: int = 0, stdin: str = "") -> str:
    """Run `args`, show what it printed, and return its standard output; a wrong exit code fails the smoke test."""
    print(f"\n$ {' '.join([Path(args[0]).name, *args[1:]])}    # {title}", flush=True)
    result = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    shown = (result.stdout + result.stderr).strip().splitlines()
    for line in shown[:12] + (["..."] + shown[-4:] if len(shown) > 16 else shown[12:]):
        print(f"  {line[:200]}")
    if result.returncode != expect_code:
        raise SmokeFailed(f"{title}: exit {result.returncode}, expected {expect_code}")
    return result.stdout


def installed_modules() -> list[str]:
    """Every module the installed distribution carries, by import name."""
    files = metadata.files(DIST) or []
    modules = []
    for file in files:
        parts = file.parts
        if parts[0] != PACKAGE or not file.name.endswith(".py") or "site" in parts:  # site/: a start-up file
            continue
        name = ".".join(parts).removesuffix(".py").removesuffix(".__init__")
        if not name.endswith("__main__"):  # running it is the command itself
            modules.append(name)
    return sorted(modules)


def optional_packages() -> set[str]:
    """Import names of the extras' requirements (lightning, transformers, ...): modules that need them may fail to
    import in a plain install, but only for that reason."""
    names = set()
    for requirement in metadata.requires(DIST) or []:
        if "extra ==" in requirement:
            names.add(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("-", "_"))
    return names | {"pytorch_lightning"}  # the Lightning callback also accepts the older package name


def missing_optional(exc: BaseException, optional: set[str]) -> str | None:
    """The optional package whose absence `exc` reports (itself, or what it was raised from), else None."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ModuleNotFoundError) and (seen.name or "").split(".")[0].lower() in optional:
            return seen.name
        seen = seen.__cause__ or seen.__context__
    return None


def check_top_level_names() -> None:
    print("\n# the distribution's top-level import names", flush=True)
    top = {file.parts[0] for file in metadata.files(DIST) or [] if not file.parts[0].startswith("..")}
    names = {name for name in top if not name.endswith(".dist-info")}
    print(f"  {sorted(names)}")
    if names != {PACKAGE}:
        raise SmokeFailed(f"the wheel installs {sorted(names)}, expected only {PACKAGE}")
    for generic in ("core", "gui"):
        if importlib.util.find_spec(generic) is not None:
            raise SmokeFailed(f"a top-level `{generic}` is importable here: the install put one on the path")


def check_every_module_imports() -> None:
    modules = installed_modules()
    optional = optional_packages()
    print(f"\n# importing every module of the installed package ({len(modules)})", flush=True)
    skipped = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any failure to import is the finding, but a missing extra
            extra = missing_optional(exc, optional)
            if extra is None:
                raise SmokeFailed(f"{name} does not import: {type(exc).__name__}: {exc}") from exc
            skipped.append(f"{name} (needs {extra})")
    print(f"  {len(modules) - len(skipped)} imported; {len(skipped)} need an optional extra: {', '.join(skipped)}")
    if len(modules) < 250:
        raise SmokeFailed(f"only {len(modules)} modules installed: packages were left out of the wheel")


def main() -> int:
    here = Path(tempfile.mkdtemp(prefix="gtm-smoke-"))
    os.chdir(here)  # outside the repository: nothing can come from a checkout
    store = here / "runs.sqlite3"
    env = {
        **os.environ,
        "GPU_TRAIN_MONITOR_RUNS_DB": str(store),
        "GPU_TRAIN_MONITOR_CHECKPOINTS": str(here / "checkpoints"),
        "QT_QPA_PLATFORM": "offscreen",
        "OMP_NUM_THREADS": "1",
        "XDG_CACHE_HOME": str(here / "cache"),
        "XDG_CONFIG_HOME": str(here / "config"),
    }
    env.pop("PYTHONPATH", None)
    try:
        version = step("the app's version", command("--version"), env)
        if not version.startswith(f"{DIST} {metadata.version(DIST)} (torch "):
            raise SmokeFailed(f"--version printed {version!r}")
        step("two training steps on the CPU", command("run", "--device", "cpu", "--max-steps", "2"), env)
        hello = step("the agent says hello and ends at end of input", command("agent"), env)
        if "protocol" not in json.loads(hello.splitlines()[0]).get("hello", {}):
            raise SmokeFailed(f"the agent's first line is not its hello: {hello!r}")
        (here / "train.py").write_text(TRAIN_SCRIPT, encoding="utf-8")
        step("a plain training script, watched", command("watch", "--", sys.executable, "train.py"), env)
        runs = json.loads(step("the runs recorded", command("runs", "list", "--json"), env))
        watched = [run for run in runs if run.get("steps") == 3]
        if len(runs) != 2 or not watched:
            raise SmokeFailed(f"expected the 2-step run and the watched 3-step run recorded, got {runs}")
        shot = here / "window.png"
        step("the window, offscreen, saves a screenshot", command("--screenshot", str(shot), "--steps", "3"), env)
        if not shot.is_file() or shot.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            raise SmokeFailed(f"no PNG at {shot}")
        print(f"  {shot.name}: {shot.stat().st_size} bytes")
        os.environ.update(env)  # the imports below see what a user's process would (offscreen Qt)
        check_top_level_names()
        check_every_module_imports()
    except (SmokeFailed, subprocess.TimeoutExpired) as exc:
        print(f"\nsmoke test of the installed app FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(here, ignore_errors=True)
    print("\nsmoke test of the installed app passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
