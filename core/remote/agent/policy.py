"""What the agent may run on its machine: decided there, by the folders it was started with (`agent --allow DIR`).

The agent is the one part of the app that a person reaches from elsewhere, sometimes through a key that may run
nothing else (`command="gpu-train-monitor agent --allow DIR"` in authorized_keys). So nothing the other side sends
picks code to run beyond what the machine's owner allowed:

- a watched script, or the module of `-m pkg.train`, must be a file under an allowed folder, and the run starts
  in an allowed folder; the path is resolved first (`..`, absolute paths and symbolic links cannot lead out);
- a run's or a job's own model or dataset (`package.module:factory`, `path/to/file.py:factory`) must be a file
  under an allowed folder, and that run starts there (so that is what it imports); the built-in models and
  datasets are always allowed;
- a dataset folder (`data_dir`) must be under an allowed folder.

Without `--allow` the agent runs the built-ins only. Every refusal is a UserError of one line that names the rule.
Torch-free: it reads paths, never imports what it checks.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...base.errors import ConfigError, UserError
from ...base.text import Message
from ...base.user_code import SPEC_FIELDS, is_spec
from ...config.run_config import RunConfig

ALLOW_OPTION = "--allow FOLDER"


@dataclass(frozen=True)
class AgentPolicy:
    """The folders the agent may run users' code from and read datasets in (real paths, resolved once)."""

    allowed: tuple[Path, ...] = ()
    host: str = ""

    @classmethod
    def of(cls, folders: Iterable[str | Path], host: str) -> AgentPolicy:
        """The policy for `folders` as given on the command line; UserError for one that is not a folder."""
        resolved = []
        for folder in folders:
            path = Path(folder).expanduser()
            if not path.is_dir():
                raise UserError(Message("--allow: {path} is not a folder", path=str(folder)))
            resolved.append(path.resolve())
        return cls(tuple(dict.fromkeys(resolved)), host)

    # ---- watched scripts ---------------------------------------------------------------------------
    def watch_folder(self, cwd_text: str, argv: list[str]) -> Path:
        """The folder a watched command starts in, once its script (or `-m` module) is known to be a file under an
        allowed folder; UserError naming the rule otherwise. Python's own options are refused: `-c` would run a
        command string from the other side."""
        module = _module_name(argv, self.host)
        self._require_some(Message("watch a script"))
        given = Path(cwd_text).expanduser() if cwd_text else self.allowed[0]
        if not given.is_dir():
            raise UserError(Message("cwd: no folder {path} on {host}", path=cwd_text, host=self.host))
        cwd = self._inside(given, Message("the folder to start in"))
        if module is not None:
            path = cwd.joinpath(*module.split("."))
            found = next((p for p in (path.with_suffix(".py"), path / "__main__.py") if p.is_file()), None)
            if found is None:
                raise UserError(
                    Message(
                        "no module {module} in {folder} on {host}: -m runs a module of your own there (a .py file or "
                        "a package with __main__.py)",
                        module=module,
                        folder=str(cwd),
                        host=self.host,
                    )
                )
            self._inside(found, Message("the module"))
            return cwd
        script = cwd / argv[0]
        if not script.is_file():
            raise UserError(
                Message("no script {path} in {folder} on {host}", path=argv[0], folder=str(cwd), host=self.host)
            )
        self._inside(script, Message("the script"))
        return cwd

    # ---- runs and jobs -------------------------------------------------------------------------------
    def run_folder(self, configs: Iterable[RunConfig]) -> Path | None:
        """Where a run (or a job over these configs) must start so that it imports the users' code the agent
        allowed: the allowed folder holding their model and dataset files; None when they use only built-ins.
        ConfigError (naming the field) for code or data outside the allowed folders."""
        roots: set[Path] = set()
        for config in configs:
            for field in SPEC_FIELDS:
                value = getattr(config, field)
                if is_spec(value):
                    roots.add(self._spec_root(field, value))
            if config.data_dir:
                self._inside(Path(config.data_dir).expanduser(), Message("the dataset folder"), field="data_dir")
        if len(roots) > 1:
            raise ConfigError(
                "model",
                Message(
                    "the model and the dataset come from two allowed folders on {host}: keep them in one",
                    host=self.host,
                ),
            )
        return roots.pop() if roots else None

    def _spec_root(self, field: str, spec: str) -> Path:
        """The allowed folder that holds `spec`'s file (`pkg.mod` as pkg/mod.py or pkg/mod/__init__.py, or a .py
        path under it); ConfigError for field `field` when no allowed folder does."""
        target = spec.rpartition(":")[0].strip()
        self._require_some(Message("run your own {field} ({spec})", field=field, spec=spec), field=field)
        if not target.endswith(".py") and target.split(".")[0] in sys.stdlib_module_names:
            # already imported in the run before its model is (tempfile, json...): a file of that name would not be
            raise ConfigError(
                field,
                Message(
                    "{spec}: {module} is a module of Python's standard library, not your own code: the agent on "
                    "{host} runs your own code only from files under the folders it allows",
                    spec=spec,
                    module=target.split(".")[0],
                    host=self.host,
                ),
            )
        for root in self.allowed:
            if target.endswith(".py"):
                path = Path(target).expanduser()
                candidates = [path if path.is_absolute() else root / path]
            else:
                base = root.joinpath(*target.split("."))
                candidates = [base.with_suffix(".py"), base / "__init__.py"]
            for candidate in candidates:
                if candidate.is_file() and _under(candidate.resolve(), root):
                    return root
        raise ConfigError(
            field,
            Message(
                "{spec}: the agent on {host} runs your own code only from a file under the folders it allows "
                "({folders}), and this is none",
                spec=spec,
                host=self.host,
                folders=self._folders(),
            ),
        )

    # ---- the rule ------------------------------------------------------------------------------------
    def _require_some(self, what: Message, field: str | None = None) -> None:
        if self.allowed:
            return
        message = Message(
            "the agent on {host} may not {what}: it runs only the built-in models and datasets unless it is started "
            "with {option} (e.g. gpu-train-monitor agent --allow ~/projects)",
            host=self.host,
            what=what,
            option=ALLOW_OPTION,
        )
        raise ConfigError(field, message) if field else UserError(message)

    def _inside(self, path: Path, what: Message, field: str | None = None) -> Path:
        """`path` resolved (links followed, `..` gone) when it lies under an allowed folder; UserError (or a
        ConfigError for `field`) naming the rule otherwise."""
        self._require_some(Message("use {path}", path=str(path)), field)
        real = path.resolve()
        if any(_under(real, root) for root in self.allowed):
            return real
        message = Message(
            "{what} {path} is outside the folders the agent on {host} allows ({folders}); links and '..' are "
            "followed before this check",
            what=what,
            path=str(path),
            host=self.host,
            folders=self._folders(),
        )
        raise ConfigError(field, message) if field else UserError(message)

    def _folders(self) -> str:
        return ", ".join(str(root) for root in self.allowed)


def _module_name(argv: list[str], host: str) -> str | None:
    """The module of `-m MODULE ARGS` (None for a script); UserError for a bad name or another Python option."""
    if argv[0] == "-m":
        module = argv[1] if len(argv) > 1 else ""
        if not module or not all(part.isidentifier() for part in module.split(".")):
            raise UserError(
                Message("-m needs a module name, e.g. -m mypackage.train; got {module}", module=repr(module))
            )
        return module
    if argv[0].startswith("-"):
        raise UserError(
            Message(
                "python {option} is not run on {host}: watch a script (train.py ARGS) or a module (-m pkg.train ARGS)",
                option=argv[0],
                host=host,
            )
        )
    return None


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
