"""Fetching the torchvision datasets, only when the user asked for it, and never hanging.

Offline is a normal state for this app (lab machines, planes), so every failure here becomes a
`DatasetError` that says where the files should go, and every network wait is bounded: a DNS lookup
cannot be interrupted by a socket timeout, so reachability is checked first in a helper thread with a
deadline, and the download itself runs under a socket default timeout.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

from ...base.errors import DatasetError
from ...base.text import Message, semicolon_list

MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
CIFAR10_FOLDER = "cifar-10-batches-py"
CIFAR10_FILES = (
    "data_batch_1",
    "data_batch_2",
    "data_batch_3",
    "data_batch_4",
    "data_batch_5",
    "test_batch",
    "batches.meta",
)

_HOW_TO_GET_FILES = Message("Put the files there, or let the app download them (--download on the command line).")

# Where torchvision keeps each dataset under the data folder.
DATASET_FOLDERS = {"mnist": "MNIST/raw", "fashion-mnist": "FashionMNIST/raw", "cifar10": CIFAR10_FOLDER}


def expected_layout(name: str, root: Path) -> str:
    """The files a reader looks for, in words, for error messages."""
    folder = root / DATASET_FOLDERS[name]
    if name == "cifar10":
        return f"{folder}/{{{', '.join(CIFAR10_FILES)}}}"
    return Message("{files} (each may also end in .gz)", files=f"{folder}/{{{', '.join(MNIST_FILES)}}}")


def require_root(root: Path, name: str) -> None:
    """Fail with the folder's name when the data folder itself is missing or not a folder."""
    if not root.exists():
        raise DatasetError(
            Message(
                "data folder {root} does not exist. Expected layout for {name}: {layout}. {advice}",
                root=str(root),
                name=name,
                layout=expected_layout(name, root),
                advice=_HOW_TO_GET_FILES,
            )
        )
    if not root.is_dir():
        raise DatasetError(Message("data folder {root} is not a folder", root=str(root)))


def missing_files_error(name: str, root: Path, missing: list[Path]) -> DatasetError:
    """The error for files that are not there and were not to be downloaded."""
    listed = ", ".join(str(path) for path in missing)
    return DatasetError(
        Message(
            "{name} files not found: missing {missing}. Expected layout: {layout}. {advice}",
            name=name,
            missing=listed,
            layout=expected_layout(name, root),
            advice=_HOW_TO_GET_FILES,
        )
    )


def download_dataset(name: str, root: Path, timeout_s: float = 30.0) -> None:
    """Download `name` ("mnist", "fashion-mnist", "cifar10") into `root` with torchvision, bounded by `timeout_s`.

    `timeout_s` bounds the reachability check and each socket operation; a slow but live download of
    many chunks may take longer in total, a dead network never does.
    """
    from torchvision import datasets  # torchvision is slow to import; only a download needs this part

    classes = {"mnist": datasets.MNIST, "fashion-mnist": datasets.FashionMNIST, "cifar10": datasets.CIFAR10}
    if name not in classes:
        raise DatasetError(
            Message("cannot download {name}: only {names} can be downloaded", name=repr(name), names=", ".join(classes))
        )
    dataset_class = classes[name]
    urls = list(dataset_class.mirrors) if hasattr(dataset_class, "mirrors") else [dataset_class.url]

    def fail(reason: str) -> DatasetError:
        return DatasetError(
            Message(
                "could not download {name} into {root}: {reason}. Check the network, or put the "
                "files there yourself (expected layout: {layout})",
                name=name,
                root=str(root),
                reason=reason,
                layout=expected_layout(name, root),
            )
        )

    created = _missing_folders(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _remove_empty_folders(created)
        raise fail(Message("cannot create the folder ({error})", error=str(error.strerror or error))) from error
    before = _download_paths(name, root)
    previous = socket.getdefaulttimeout()
    try:
        reason = _first_reachable_failure(urls, timeout_s)
        if reason is not None:
            raise fail(reason)
        socket.setdefaulttimeout(timeout_s)
        try:
            dataset_class(str(root), train=True, download=True)
        except (OSError, RuntimeError, ValueError) as error:  # URLError and socket timeouts are OSErrors
            raise fail(_one_line(error)) from error
    except BaseException:  # Ctrl+C included: what this attempt made is not the user's
        _remove_new(_download_paths(name, root) - before, created)
        raise
    finally:
        socket.setdefaulttimeout(previous)


def _missing_folders(root: Path) -> list[Path]:
    """`root` and those of its parents that do not exist yet, deepest first: what `mkdir(parents=True)` makes."""
    missing = []
    for folder in (root, *root.parents):
        if os.path.lexists(folder):
            break
        missing.append(folder)
    return missing


def _download_paths(name: str, root: Path) -> set[Path]:
    """Files and folders a download can write: the dataset's folder and anything at the top of `root`."""
    top = root / DATASET_FOLDERS[name].split("/")[0]
    found = set(root.glob("*")) | set(top.rglob("*"))
    return found | {top} if os.path.lexists(top) else found


def _remove_new(paths: set[Path], created: list[Path]) -> None:
    """Undo a failed download: drop the files it left half-written, so the next read does not report them
    as corrupt, then the folders it made, so no empty dataset folder is left behind. Only what is in
    `paths` (found after the attempt, not before it) or `created` goes, and a folder only when empty."""
    for path in paths:
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
    folders = sorted((path for path in paths if path.is_dir() and not path.is_symlink()), key=lambda p: len(p.parts))
    _remove_empty_folders([*reversed(folders), *created])


def _remove_empty_folders(folders: list[Path]) -> None:
    """`rmdir` each folder in turn (deepest first); one that is not empty stays, with what is in it."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


def _first_reachable_failure(urls: list[str], timeout_s: float) -> str | None:
    """None when one of the hosts of `urls` accepts a TCP connection within `timeout_s`, else why not."""
    reasons: list[str] = []  # "host: why", one per mirror
    for url in urls:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        outcome: list[str | None] = []

        def probe(host: str = host, port: int = port, outcome: list[str | None] = outcome) -> None:
            try:
                socket.create_connection((host, port), timeout=timeout_s).close()
                outcome.append(None)
            except OSError as error:
                outcome.append(_one_line(error))

        worker = threading.Thread(target=probe, name=f"reach-{host}", daemon=True)  # getaddrinfo ignores timeouts
        worker.start()
        worker.join(timeout_s)
        if outcome and outcome[0] is None:
            return None
        why = outcome[0] if outcome else Message("no answer within {seconds:g} s", seconds=timeout_s)
        reasons.append(Message("{host}: {reason}", host=host, reason=why))
    return semicolon_list(reasons)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."
