"""A folder of class sub-folders (torchvision's ImageFolder layout), decoded once into uint8 tensors.

Images are decoded and resized up front so that both placements see the same whole-split tensors as
the built-in datasets: `resident` can upload them in one copy, and no decoding runs per step.
Class names, class numbers, file extensions and file order are torchvision's, so a folder that works
with `ImageFolder` works here with the same class numbers. The walk itself is this module's own,
because real folders hold what torchvision's walk trips over: each real folder is visited once, links
back into the folder add nothing (a `loop -> ..` would otherwise repeat every image, the validation
ones included), and only regular files are opened (a FIFO named `x.png` would block the run forever).
"""

from __future__ import annotations

import errno
import os
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from torchvision.datasets.folder import IMG_EXTENSIONS

from ...base.errors import DatasetError
from ...base.text import Message, semicolon_list
from .image_decode import Sample, decode_samples
from .readers import channel_stats, held_out
from .types import DatasetSplits


def load_imagefolder(root: Path, image_size: int = 32, val_fraction: float = 0.1, seed: int = 0) -> DatasetSplits:
    """Splits from `root/<class>/<image>`, or from `root/train/<class>/...` and `root/val/<class>/...`.

    Without a train/val pair, a seeded random `val_fraction` of the images (at least one when there
    are two or more) is held out; with only `root/train`, that folder is split the same way.
    At least two classes are needed. Entries left out (FIFOs and other non-regular files, broken links,
    links back into the folder) are reported in one `UserWarning`. 16-bit images keep their top 8 bits,
    float images in 0..1 are scaled by 255 and others are stretched to 0..255 (details: `image_decode.to_rgb`).
    """
    if image_size < 1:
        raise ValueError(f"image_size must be at least 1, got {image_size}")
    layout = _read_layout(Path(root), val_fraction, seed)
    _warn_skipped(Path(root), layout.skipped)
    train = decode_samples(layout.train, image_size)
    mean, std = channel_stats(train.images)
    return DatasetSplits(
        name="imagefolder",
        train=train,
        val=decode_samples(layout.val, image_size),
        num_classes=len(layout.classes),
        mean=mean,
        std=std,
    )


def count_train_images(root: Path, val_fraction: float = 0.1) -> int:
    """How many training images `load_imagefolder(root, val_fraction=...)` would use, from a scan alone.

    Nothing is decoded, so this is cheap enough to check a batch size against before a run starts.
    Raises `DatasetError` for a folder the loader would refuse.
    """
    return len(_read_layout(Path(root), val_fraction, seed=0).train)  # the seed picks which images, not how many


# --- layout ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    classes: list[str]
    train: list[Sample]
    val: list[Sample]
    skipped: list[str]


def _read_layout(root: Path, val_fraction: float, seed: int) -> _Layout:
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be between 0 and 1, got {val_fraction}")
    info = _stat(root)
    if info is None:
        raise DatasetError(Message("image folder {root} does not exist", root=str(root)))
    if not stat.S_ISDIR(info.st_mode):
        raise DatasetError(Message("image folder {root} is not a folder", root=str(root)))
    train_dir, val_dir = root / "train", root / "val"
    if _is_dir(train_dir) and _is_dir(val_dir):
        sources, classes = [train_dir, val_dir], _classes(train_dir)
        val_classes = _classes(val_dir)
        if val_classes != classes:
            only_train, only_val = sorted(set(classes) - set(val_classes)), sorted(set(val_classes) - set(classes))
            raise DatasetError(
                Message(
                    "{train_dir} and {val_dir} must have the same class folders (only in train: "
                    "{only_train}; only in val: {only_val})",
                    train_dir=str(train_dir),
                    val_dir=str(val_dir),
                    only_train=", ".join(only_train) or Message("none"),
                    only_val=", ".join(only_val) or Message("none"),
                )
            )
    else:
        sources = [train_dir if _is_dir(train_dir) else root]
        classes = _classes(sources[0])
    class_dirs = [source / name for source in sources for name in classes]
    scan = _Scan([os.path.realpath(path) for path in (root, *class_dirs)])
    train = _samples(sources[0], classes, scan)
    if len(sources) == 2:
        val = _samples(val_dir, classes, scan, allow_empty=True)
    else:
        train, val = _hold_out(train, val_fraction, seed)
    return _Layout(classes, train, val, scan.skipped)


def _layout_hint(folder: Path) -> Message:
    return Message(
        "expected {folder}/<class name>/<image> (for example {example}), or {train_folder}/<class name>/... "
        "and {val_folder}/<class name>/...; image types: {types}",
        folder=str(folder),
        example=f"{folder}/cat/001.png",
        train_folder=f"{folder}/train",
        val_folder=f"{folder}/val",
        types=", ".join(IMG_EXTENSIONS),
    )


def _classes(folder: Path) -> list[str]:
    """Sorted names of the sub-folders (links to folders included), as torchvision's `find_classes`."""
    names = []
    for entry in _list(folder):
        try:
            if entry.is_dir():  # follows links; a broken link is no folder, a looping one raises
                names.append(entry.name)
        except OSError as error:
            raise _os_error(Path(entry.path), error) from error
    if not names:
        raise DatasetError(
            Message("no class folders in {folder}: {hint}", folder=str(folder), hint=_layout_hint(folder))
        )
    if len(names) < 2:  # one class trains to loss 0 and learns nothing
        raise DatasetError(
            Message(
                "only one class folder in {folder} ({name}): classification needs at least two "
                "classes, one folder each: {hint}",
                folder=str(folder),
                name=names[0],
                hint=_layout_hint(folder),
            )
        )
    return sorted(names)


def _samples(folder: Path, classes: list[str], scan: _Scan, allow_empty: bool = False) -> list[Sample]:
    samples: list[Sample] = []
    empty = []
    for index, name in enumerate(classes):
        class_dir = folder / name
        info = _stat(class_dir)
        files = _class_files(class_dir, scan) if info is not None and scan.first_visit(info) else []
        samples += [(path, index) for path in files]
        if not files:
            empty.append(name)
    if empty and not allow_empty:
        raise DatasetError(
            Message(
                "no images in the class folders {names} of {folder}: {hint}",
                names=", ".join(empty),
                folder=str(folder),
                hint=_layout_hint(folder),
            )
        )
    return samples


def _hold_out(samples: list[Sample], val_fraction: float, seed: int) -> tuple[list[Sample], list[Sample]]:
    """A seeded random split; both parts keep the folder order so that the result is reproducible."""
    val_indices = held_out(len(samples), seed, val_fraction)
    train = [sample for i, sample in enumerate(samples) if i not in val_indices]
    val = [sample for i, sample in enumerate(samples) if i in val_indices]
    return train, val


# --- the walk --------------------------------------------------------------------------------------


@dataclass
class _Scan:
    """One walk over an image folder: the real folders already visited, and what was left out and why."""

    tree: list[str]  # real paths of the folder and its class folders; links into them add nothing
    seen: set[tuple[int, int]] = field(default_factory=set)
    skipped: list[Message] = field(default_factory=list)

    def first_visit(self, info: os.stat_result) -> bool:
        key = (info.st_dev, info.st_ino)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def inside_tree(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(os.path.commonpath([real, top]) == top for top in self.tree)

    def skip(self, path: str, reason: Message) -> None:
        self.skipped.append(Message("{path} ({reason})", path=path, reason=reason))


def _class_files(class_dir: Path, scan: _Scan) -> list[str]:
    """Image files under one class folder, ordered as torchvision's `make_dataset` (folder path, then name)."""
    found: list[tuple[str, str]] = []
    pending = [str(class_dir)]
    while pending:
        directory = pending.pop()
        for entry in _list(Path(directory)):
            info = _entry_stat(entry, scan)
            if info is None:
                continue
            if stat.S_ISDIR(info.st_mode):
                if scan.first_visit(info):
                    pending.append(entry.path)
                else:
                    scan.skip(entry.path, Message("a folder already scanned"))
            elif entry.name.lower().endswith(IMG_EXTENSIONS):
                if stat.S_ISREG(info.st_mode):
                    found.append((directory, entry.name))
                else:
                    scan.skip(entry.path, Message("not a regular file"))
    return [os.path.join(directory, name) for directory, name in sorted(found)]


def _entry_stat(entry: os.DirEntry[str], scan: _Scan) -> os.stat_result | None:
    """The entry's own stat, or its target's for a link; None (noted) for links that add nothing."""
    try:
        if not entry.is_symlink():
            return entry.stat(follow_symlinks=False)
        info = os.stat(entry.path)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            scan.skip(entry.path, Message("a broken link"))
            return None
        raise _os_error(Path(entry.path), error) from error
    if scan.inside_tree(entry.path):
        scan.skip(entry.path, Message("a link back into the image folder"))
        return None
    return info


def _list(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError as error:
        raise _os_error(folder, error) from error


def _stat(path: Path) -> os.stat_result | None:
    """`os.stat(path)`, None when nothing is there; any other failure is the user's to fix."""
    try:
        return os.stat(path)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise _os_error(path, error) from error


def _is_dir(path: Path) -> bool:
    info = _stat(path)
    return info is not None and stat.S_ISDIR(info.st_mode)


def _os_error(path: Path, error: OSError) -> DatasetError:
    """A message that names the path and says what is wrong with it, for an error from the file system."""
    text = str(path) if len(str(path)) <= 300 else f"{str(path)[:150]}...{str(path)[-100:]}"
    if error.errno == errno.ELOOP:
        return DatasetError(
            Message(
                "{path} is a symbolic link that loops (it leads back to itself): remove it or "
                "point it at a real folder",
                path=text,
            )
        )
    if error.errno == errno.ENAMETOOLONG:
        return DatasetError(
            Message("path too long for the file system ({length} characters): {path}", length=len(str(path)), path=text)
        )
    if error.errno in (errno.EACCES, errno.EPERM):
        return DatasetError(Message("cannot read {path}: permission denied", path=text))
    return DatasetError(Message("cannot read {path}: {error}", path=text, error=str(error.strerror or error)))


def _warn_skipped(root: Path, skipped: list[Message]) -> None:
    """One warning (a `Message`: the run's log shows it) naming the first three entries left out."""
    if not skipped:
        return
    shown = semicolon_list(
        [*skipped[:3], *([Message("and {count} more", count=len(skipped) - 3)] if len(skipped) > 3 else [])]
    )
    if len(skipped) == 1:
        text = Message("image folder {root}: left out 1 entry: {shown}", root=str(root), shown=shown)
    else:
        text = Message(
            "image folder {root}: left out {count} entries: {shown}", root=str(root), count=len(skipped), shown=shown
        )
    warnings.warn(text, UserWarning, stacklevel=3)
