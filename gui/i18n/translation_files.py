"""The translation sources (`.ts`) and their compiled form (`.qm`), made with PySide6's own Qt tools.

`pyside6-lupdate` reads every Python source of `gui/` and `core/` and keeps the `.ts` in step with the
code; translators fill it in (by hand or in Qt Linguist); `pyside6-lrelease` compiles it. Both tools ship
with PySide6-Essentials. `core` marks its texts for people with `gpu_train_monitor.base.text.Message("...")`, which
lupdate reads as `QT_TR_NOOP` (an alias given on its command line); they land in the context "".

Regenerate the sources after changing texts in the code (this is what the README documents):

    python -m gpu_train_monitor.gui.i18n.translation_files            # update assets/translations/*.ts from the code
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

APP_NAME = "gpu_train_monitor"
LANGUAGES = ("zh_CN",)  # the languages with a translation; English is the source language
TOOL_TIMEOUT_S = 120
LUPDATE_ALIASES = "QT_TR_NOOP+=Message"  # gpu_train_monitor.base.text.Message("template") is a translatable text


def ts_name(language: str) -> str:
    return f"{APP_NAME}_{language}.ts"


def source_root() -> Path:
    """The source checkout holding `gui/` and `core/` (translations are updated there, not in an install)."""
    return Path(__file__).resolve().parents[2]  # gui/i18n/translation_files.py -> the checkout


def source_files(root: Path | None = None) -> list[Path]:
    """Every Python file whose texts can reach the window, in a stable order."""
    root = root or source_root()
    return sorted(
        p for package in ("gui", "core") for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts
    )


def qt_tool(name: str) -> Path:
    """The path of PySide6's `lupdate` or `lrelease` (inside the installed PySide6 package)."""
    import PySide6

    folder = Path(PySide6.__file__).resolve().parent
    for candidate in (folder / name, folder / f"{name}.exe", folder / "Qt" / "libexec" / name):
        if candidate.is_file():
            return candidate
    found = shutil.which(f"pyside6-{name}")
    if found:
        return Path(found)
    raise FileNotFoundError(f"PySide6's {name} is not installed (it ships with PySide6-Essentials)")


def lupdate(ts_path: Path, root: Path | None = None, keep_obsolete: bool = False) -> str:
    """Bring `ts_path` in step with the code: new texts added (unfinished), removed ones dropped."""
    root = root or source_root()
    files = [str(p.relative_to(root)) for p in source_files(root)]
    with tempfile.NamedTemporaryFile("w", suffix=".lst", delete=False, encoding="utf-8") as listing:
        listing.write("\n".join(files))  # a list file: the command line stays short on every OS
    try:
        args = [
            str(qt_tool("lupdate")),
            "-tr-function-alias",
            LUPDATE_ALIASES,
            "-locations",
            "none",
            f"@{listing.name}",
            "-ts",
            str(ts_path),
        ]
        if not keep_obsolete:
            args.insert(1, "-no-obsolete")
        return _run(args, root).stdout
    finally:
        os.unlink(listing.name)


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False, cwd=cwd)
    if result.returncode != 0:
        raise RuntimeError(f"{Path(args[0]).name} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def lrelease(ts_path: Path, qm_path: Path) -> None:
    """Compile `ts_path` into `qm_path` (written whole or not at all)."""
    qm_path.parent.mkdir(parents=True, exist_ok=True)
    partial = qm_path.with_name(f".{qm_path.name}.{os.getpid()}")
    try:
        _run([str(qt_tool("lrelease")), "-silent", str(ts_path), "-qm", str(partial)])
        os.replace(partial, qm_path)
    finally:
        partial.unlink(missing_ok=True)


def compiled(ts_path: Path, cache_dir: Path) -> Path:
    """The `.qm` for `ts_path`, compiled once per version of its text and kept in `cache_dir`.

    Compiling at first use (about 0.1 s) keeps generated files out of the repository and the wheel; the
    name carries the source's hash, so an upgraded translation is compiled again, never read stale.
    """
    digest = hashlib.sha256(ts_path.read_bytes()).hexdigest()[:16]
    qm_path = cache_dir / f"{ts_path.stem}-{digest}.qm"
    if not qm_path.is_file():
        lrelease(ts_path, qm_path)
    return qm_path


def main() -> int:
    from gpu_train_monitor.gui.qt.resources import asset

    for language in LANGUAGES:
        ts_path = asset("translations") / ts_name(language)
        print(lupdate(ts_path).strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
