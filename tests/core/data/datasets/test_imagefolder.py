"""Image folders as users really have them: links, loops, FIFOs, deep paths, one class, 16-bit and float images."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gpu_train_monitor.base.errors import DatasetError, UserError
from gpu_train_monitor.data.datasets.image_decode import read_image
from gpu_train_monitor.data.datasets.imagefolder import count_train_images, load_imagefolder

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symbolic links")
needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (FIFOs)")


def write_png(path: Path, color: tuple[int, int, int] = (10, 20, 30), size: int = 4) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), color).save(path)


def make_classes(root: Path, per_class: int, names: tuple[str, ...] = ("a", "b")) -> None:
    for name in names:
        for i in range(per_class):
            write_png(root / name / f"{i}.png")


def total(root: Path, **kwargs: float) -> tuple[int, int]:
    splits = load_imagefolder(root, image_size=4, **kwargs)
    return len(splits.train), len(splits.val)


# --- links and loops -------------------------------------------------------------------------------


@needs_symlinks
def test_symlink_loop_adds_no_images(tmp_path: Path) -> None:
    make_classes(tmp_path, 20)
    os.symlink("..", tmp_path / "a" / "loop")  # a/loop/a/loop/... and a/loop/b: every image again, many times
    with pytest.warns(UserWarning, match=r"a/loop \(a link back into the image folder\)"):
        train, val = total(tmp_path)
    assert (train, val) == (36, 4)
    assert count_train_images(tmp_path) == 36


@needs_symlinks
def test_link_from_train_into_val_does_not_leak_validation_images(tmp_path: Path) -> None:
    for split, count in (("train", 5), ("val", 3)):
        make_classes(tmp_path / split, count)
    os.symlink(tmp_path / "val" / "a", tmp_path / "train" / "a" / "more")
    os.symlink("../..", tmp_path / "train" / "b" / "up")  # the whole data folder, val included
    with pytest.warns(UserWarning, match="left out 2 entries"):
        assert total(tmp_path) == (10, 6)
    assert count_train_images(tmp_path) == 10


@needs_symlinks
def test_links_to_folders_outside_are_followed_once(tmp_path: Path) -> None:
    root, extra = tmp_path / "data", tmp_path / "extra"
    make_classes(root, 2)
    for i in range(3):
        write_png(extra / f"x{i}.png")
    os.symlink(extra, root / "a" / "more")
    os.symlink(extra, root / "a" / "again")  # the same real folder: its images count once
    os.symlink(".", extra / "self")  # a loop inside the linked folder
    with pytest.warns(UserWarning, match="a folder already scanned"):
        assert sum(total(root, val_fraction=0.25)) == 7
    os.symlink(extra, root / "c")  # a class folder that is a link to elsewhere is a class, as in torchvision
    with pytest.warns(UserWarning):
        splits = load_imagefolder(root, image_size=4, val_fraction=0.25)
    assert splits.num_classes == 3


@needs_symlinks
@pytest.mark.parametrize("where", ["class folder", "inside a class"])
def test_self_loop_link_is_a_dataset_error_naming_it(tmp_path: Path, where: str) -> None:
    make_classes(tmp_path, 2)
    link = tmp_path / "c" if where == "class folder" else tmp_path / "a" / "c.png"
    os.symlink(link.name, link)
    with pytest.raises(DatasetError, match=f"{link} is a symbolic link that loops") as caught:
        load_imagefolder(tmp_path)
    assert isinstance(caught.value, UserError)  # the CLI reports it in one line and exits 2
    with pytest.raises(DatasetError, match=f"{link} is a symbolic link that loops"):
        count_train_images(tmp_path)


@needs_symlinks
def test_broken_link_is_left_out_with_a_note(tmp_path: Path) -> None:
    make_classes(tmp_path, 2)
    os.symlink("gone.png", tmp_path / "b" / "old.png")
    with pytest.warns(UserWarning, match=r"b/old\.png \(a broken link\)"):
        assert sum(total(tmp_path)) == 4


@pytest.mark.skipif(not os.supports_dir_fd >= {os.mkdir, os.open}, reason="needs mkdir/open relative to a folder")
def test_too_long_path_is_a_dataset_error(tmp_path: Path) -> None:
    make_classes(tmp_path, 2)
    part = "d" * 200
    folder = os.open(tmp_path / "a", os.O_RDONLY)
    try:
        for _ in range(25):  # 5000+ characters: past PATH_MAX, built one folder at a time
            os.mkdir(part, dir_fd=folder)
            inner = os.open(part, os.O_RDONLY, dir_fd=folder)
            os.close(folder)
            folder = inner
    finally:
        os.close(folder)
    too_long = rf"path too long for the file system \(\d+ characters\): {re.escape(str(tmp_path))}/a/dd"
    with pytest.raises(DatasetError, match=too_long):
        load_imagefolder(tmp_path)
    deep_root = tmp_path.joinpath("a", *[part] * 25)
    with pytest.raises(DatasetError, match=r"path too long for the file system \(\d+ characters\)"):
        load_imagefolder(deep_root)


# --- only regular files are opened -------------------------------------------------------------------


@needs_fifos
@pytest.mark.timeout(60, method="thread")  # a thread blocked opening a FIFO ignores signals
def test_fifo_named_like_an_image_is_left_out_not_opened(tmp_path: Path) -> None:
    make_classes(tmp_path, 2)
    os.mkfifo(tmp_path / "a" / "x.png")  # opening it to read would wait for a writer forever
    with pytest.warns(UserWarning, match=r"a/x\.png \(not a regular file\)"):
        assert sum(total(tmp_path)) == 4
    assert count_train_images(tmp_path, val_fraction=0.25) == 3


@needs_fifos
@pytest.mark.timeout(60, method="thread")  # a thread blocked opening a FIFO ignores signals
def test_fifo_swapped_in_after_the_scan_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.png")
    with pytest.raises(DatasetError, match=r"x\.png: not a regular file"):
        read_image(tmp_path / "x.png", 4)


# --- classes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["flat", "train-val"])
def test_one_class_is_refused_with_the_reason(tmp_path: Path, layout: str) -> None:
    folder = tmp_path if layout == "flat" else tmp_path / "train"
    make_classes(folder, 3, names=("cats",))
    if layout == "train-val":
        make_classes(tmp_path / "val", 1, names=("cats",))
    message = f"only one class folder in {folder} \\(cats\\): classification needs at least two classes"
    with pytest.raises(DatasetError, match=message):
        load_imagefolder(tmp_path)
    with pytest.raises(DatasetError, match=message):
        count_train_images(tmp_path)


# --- count_train_images ------------------------------------------------------------------------------


@pytest.mark.parametrize("per_class, val_fraction", [(1, 0.1), (5, 0.1), (10, 0.3), (40, 0.5)])
def test_count_train_images_matches_the_loader(tmp_path: Path, per_class: int, val_fraction: float) -> None:
    make_classes(tmp_path, per_class, names=("a", "b", "c"))
    (tmp_path / "a" / "notes.txt").write_text("not an image")
    train, _ = total(tmp_path, val_fraction=val_fraction)
    assert count_train_images(tmp_path, val_fraction=val_fraction) == train


def test_count_train_images_with_train_and_val_folders(tmp_path: Path) -> None:
    make_classes(tmp_path / "train", 4)
    make_classes(tmp_path / "val", 1)
    assert count_train_images(tmp_path) == 8 == total(tmp_path)[0]


def test_count_train_images_refuses_an_unusable_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=f"{tmp_path / 'missing'} does not exist"):
        count_train_images(tmp_path / "missing")
    with pytest.raises(DatasetError, match="no class folders"):
        count_train_images(tmp_path)
    make_classes(tmp_path, 1)
    (tmp_path / "c").mkdir()
    with pytest.raises(DatasetError, match="no images in the class folders c"):
        count_train_images(tmp_path)
    with pytest.raises(ValueError, match="val_fraction"):
        count_train_images(tmp_path, val_fraction=1.0)


# --- bit depth ---------------------------------------------------------------------------------------


def load_one(tmp_path: Path, write: Callable[[Path], None]) -> np.ndarray:
    """The red channel of the image `write(path)` makes, as the loader reads it (class "a", train split)."""
    write(tmp_path / "train" / "a" / "img.tif")
    write_png(tmp_path / "train" / "b" / "0.png")
    (tmp_path / "val" / "a").mkdir(parents=True)
    (tmp_path / "val" / "b").mkdir()
    splits = load_imagefolder(tmp_path, image_size=4)
    return splits.train.images[0, 0].numpy()


@pytest.mark.parametrize("suffix", [".png", ".tif"])
def test_16_bit_images_keep_their_range(tmp_path: Path, suffix: str) -> None:
    values = np.array([[0, 255, 256, 1000], [12_800, 32_768, 65_280, 65_535]] * 2, dtype=np.uint16)

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(values).save(path.with_suffix(suffix))
        with Image.open(path.with_suffix(suffix)) as written:  # closed: an open file is a ResourceWarning
            assert written.mode == "I;16"

    red = load_one(tmp_path, write)
    assert red.tolist() == (values >> 8).tolist()  # top 8 bits: 65535 is white, 32768 mid grey; nothing saturates


def test_float_images_in_0_to_1_are_scaled_by_255(tmp_path: Path) -> None:
    values = np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4)

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(values).save(path)

    assert load_one(tmp_path, write).tolist() == np.rint(values * 255).astype(np.uint8).tolist()


def test_float_images_of_any_other_range_are_stretched(tmp_path: Path) -> None:
    values = np.linspace(-3.0, 5.0, 16, dtype=np.float32).reshape(4, 4)
    values[0, 1] = np.nan  # counts as the minimum

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(values).save(path)

    red = load_one(tmp_path, write)
    assert red[0, 0] == 0 and red[0, 1] == 0 and red[3, 3] == 255
    assert red[1, 3] == round((values[1, 3] + 3.0) / 8.0 * 255)


def test_32_bit_integer_images_beyond_16_bits_are_stretched(tmp_path: Path) -> None:
    values = np.arange(16, dtype=np.int32).reshape(4, 4) * 100_000

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(values).save(path)
        with Image.open(path) as written:  # closed: an open file is a ResourceWarning
            assert written.mode == "I"

    red = load_one(tmp_path, write)
    assert red[0, 0] == 0 and red[3, 3] == 255 and red[1, 2] == round(6 / 15 * 255)


def test_8_bit_images_are_read_exactly_as_before(tmp_path: Path) -> None:
    values = np.arange(0, 256, 16, dtype=np.uint8).reshape(4, 4)

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(values).save(path)  # mode "L"

    assert load_one(tmp_path, write).tolist() == values.tolist()
