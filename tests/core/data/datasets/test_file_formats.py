"""Readers for real on-disk datasets: small files written in the real formats, good and broken."""

from __future__ import annotations

import functools
import gzip
import pickle
import re
import shutil
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from gpu_train_monitor.base.errors import DatasetError
from gpu_train_monitor.data.datasets.cifar import load_cifar10
from gpu_train_monitor.data.datasets.download import download_dataset
from gpu_train_monitor.data.datasets.imagefolder import load_imagefolder
from gpu_train_monitor.data.datasets.mnist import load_mnist

# --- writers for the real formats -------------------------------------------------------------------


def write_idx(path: Path, array: np.ndarray, magic: int, compress: bool = False) -> Path:
    """An IDX file: big-endian magic, big-endian dimensions, raw uint8 data."""
    payload = struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape) + array.astype(np.uint8).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(payload))
    else:
        path.write_bytes(payload)
    return path


def make_mnist(
    root: Path, folder: str = "MNIST", n_train: int = 6, n_test: int = 4, compress: bool = False
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": np.arange(n_train, dtype=np.uint8) % 10,
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": (np.arange(n_test, dtype=np.uint8) * 3) % 10,
    }
    for name, array in arrays.items():
        write_idx(root / folder / "raw" / name, array, 0x803 if array.ndim == 3 else 0x801, compress)
    return arrays


def cifar_batch(n: int, seed: int) -> dict[bytes, object]:
    rng = np.random.default_rng(seed)
    return {
        b"batch_label": b"testing batch",
        b"labels": [int(v) for v in rng.integers(0, 10, n)],
        b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
        b"filenames": [f"img_{i}.png".encode() for i in range(n)],
    }


def make_cifar(root: Path, per_batch: int = 3, protocol: int = 2) -> dict[str, dict[bytes, object]]:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    batches = {f"data_batch_{i}": cifar_batch(per_batch, i) for i in range(1, 6)}
    batches["test_batch"] = cifar_batch(per_batch + 1, 99)
    for name, batch in batches.items():
        (folder / name).write_bytes(pickle.dumps(batch, protocol=protocol))
    meta = {
        b"label_names": [name.encode() for name in "plane car bird cat deer dog frog horse ship truck".split()],
        b"num_cases_per_batch": per_batch,
        b"num_vis": 3072,
    }
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=protocol))
    return batches


def write_png(path: Path, color: tuple[int, int, int], size: tuple[int, int] = (8, 8)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def make_imagefolder(root: Path, per_class: int = 2) -> None:
    for name, color in (("cat", (200, 10, 10)), ("dog", (10, 200, 10))):
        for i in range(per_class):
            write_png(root / name / f"{i}.png", color)


def _raw(root: Path, name: str, folder: str = "MNIST") -> Path:
    return root / folder / "raw" / name


def _cifar(root: Path, name: str) -> Path:
    return root / "cifar-10-batches-py" / name


def _cut(path: Path, keep: int) -> None:
    """Truncate `path` to its first `keep` bytes (negative: drop that many from the end)."""
    path.write_bytes(path.read_bytes()[:keep])


def _cifar_batch_with(key: bytes, value: object) -> bytes:
    batch = cifar_batch(3, 1)
    batch[key] = value
    return pickle.dumps(batch)


LOADERS = {
    "mnist": lambda root: load_mnist(root, fashion=False, download=False),
    "fashion-mnist": lambda root: load_mnist(root, fashion=True, download=False),
    "cifar10": lambda root: load_cifar10(root, download=False),
    "imagefolder": lambda root: load_imagefolder(root, image_size=8),
}
MAKERS = {  # a good dataset on disk, and the reader that reads it
    "mnist": ("mnist", make_mnist),
    "mnist-gz": ("mnist", functools.partial(make_mnist, compress=True)),
    "fashion-mnist": ("fashion-mnist", functools.partial(make_mnist, folder="FashionMNIST")),
    "cifar10": ("cifar10", make_cifar),
    "imagefolder": ("imagefolder", make_imagefolder),
}

# one file damaged in a good dataset: (which dataset, how it is damaged, what the user is told)
DAMAGED = {
    "mnist-truncated": (
        "mnist",
        lambda r: _cut(_raw(r, "train-images-idx3-ubyte"), -100),
        r"train-images-idx3-ubyte: truncated.*6x28x28",
    ),
    "mnist-bad-magic": (  # an image file where the labels belong
        "mnist",
        lambda r: _raw(r, "t10k-labels-idx1-ubyte").write_bytes(_raw(r, "t10k-images-idx3-ubyte").read_bytes()),
        r"t10k-labels-idx1-ubyte: bad magic number 0x00000803, expected 0x00000801",
    ),
    "mnist-corrupt-gzip": (
        "mnist-gz",
        lambda r: _raw(r, "train-labels-idx1-ubyte.gz").write_bytes(b"not gzip at all"),
        r"train-labels-idx1-ubyte\.gz: cannot be read",
    ),
    "mnist-count-mismatch": (
        "mnist",
        lambda r: write_idx(_raw(r, "train-labels-idx1-ubyte"), np.zeros(5, np.uint8), 0x801),
        r"6 images but .*5 labels",
    ),
    "mnist-label-range": (
        "mnist",
        lambda r: write_idx(_raw(r, "train-labels-idx1-ubyte"), np.array([0, 1, 2, 10, 0, 0], np.uint8), 0x801),
        r"label 10 is outside 0\.\.9",
    ),
    "mnist-wrong-size": (
        "mnist",
        lambda r: write_idx(_raw(r, "t10k-images-idx3-ubyte"), np.zeros((4, 32, 32), np.uint8), 0x803),
        r"32x32, expected 28x28",
    ),
    "mnist-missing-files": (
        "mnist",
        lambda r: shutil.rmtree(r / "MNIST"),
        r"missing .*/MNIST/raw/train-images-idx3-ubyte.*\.gz.*--download",
    ),
    "fashion-mnist-truncated": (
        "fashion-mnist",
        lambda r: _cut(_raw(r, "t10k-labels-idx1-ubyte", "FashionMNIST"), 10),
        r"FashionMNIST/raw/t10k-labels-idx1-ubyte: truncated",
    ),
    "cifar10-garbage-pickle": (
        "cifar10",
        lambda r: _cifar(r, "data_batch_4").write_bytes(b"\x80\x02garbage that is no pickle"),
        r"data_batch_4: not a CIFAR-10 python batch",
    ),
    "cifar10-truncated": (
        "cifar10",
        lambda r: _cut(_cifar(r, "test_batch"), 200),
        r"test_batch: not a CIFAR-10 python batch, or damaged",
    ),
    "cifar10-pickle-runs-code": (
        "cifar10",
        lambda r: _cifar(r, "data_batch_2").write_bytes(pickle.dumps({b"data": print})),
        r"data_batch_2: .*refusing to load builtins\.print",
    ),
    "cifar10-wrong-shape": (
        "cifar10",
        lambda r: _cifar(r, "data_batch_1").write_bytes(_cifar_batch_with(b"data", np.zeros((3, 3000), np.uint8))),
        r"data_batch_1: b'data' is uint8 \(3, 3000\)",
    ),
    "cifar10-label-range": (
        "cifar10",
        lambda r: _cifar(r, "data_batch_1").write_bytes(_cifar_batch_with(b"labels", [0, 11, 2])),
        r"data_batch_1: label 11 is outside 0\.\.9",
    ),
    "cifar10-damaged-meta": (
        "cifar10",
        lambda r: _cifar(r, "batches.meta").write_bytes(pickle.dumps({b"label_names": [b"a"]})),
        r"batches.meta: expected b'label_names' with 10",
    ),
    "cifar10-missing-batch": (
        "cifar10",
        lambda r: _cifar(r, "data_batch_5").unlink(),
        r"missing .*data_batch_5.*--download",
    ),
    "imagefolder-corrupt-image": (
        "imagefolder",
        lambda r: (r / "cat" / "bad.png").write_bytes(b"this is not a PNG"),
        r"bad\.png: not a readable image",
    ),
    "imagefolder-empty-class": (
        "imagefolder",
        lambda r: (r / "eel").mkdir(),
        r"no images in the class folders eel of ",
    ),
    "imagefolder-no-classes": (
        "imagefolder",
        lambda r: [shutil.rmtree(r / name) for name in ("cat", "dog")],
        r"no class folders in .*expected .*<class name>/<image>",
    ),
}


@pytest.mark.parametrize("case", DAMAGED)
def test_damaged_files_are_named_in_a_dataset_error(tmp_path: Path, case: str) -> None:
    maker, damage, message = DAMAGED[case]
    reader, make = MAKERS[maker]
    make(tmp_path)
    LOADERS[reader](tmp_path)  # good before the damage
    damage(tmp_path)
    with pytest.raises(DatasetError, match=message):
        LOADERS[reader](tmp_path)


@pytest.mark.parametrize("reader", LOADERS)
@pytest.mark.parametrize("root_kind", ["missing", "file"])
def test_missing_or_non_folder_root_names_the_folder(tmp_path: Path, reader: str, root_kind: str) -> None:
    root = tmp_path / "nowhere"
    if root_kind == "file":
        root.write_text("")
    expected = "does not exist" if root_kind == "missing" else "is not a folder"
    with pytest.raises(DatasetError, match=f"{re.escape(str(root))} {expected}"):
        LOADERS[reader](root)


def test_mnist_missing_root_suggests_where_and_how(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=f"{tmp_path / 'nowhere'} does not exist.*MNIST/raw.*--download"):
        load_mnist(tmp_path / "nowhere", fashion=False, download=False)


# --- reading exactly -------------------------------------------------------------------------------


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_reads_idx_files_exactly(tmp_path: Path, compress: bool) -> None:
    arrays = make_mnist(tmp_path, compress=compress)
    splits = load_mnist(tmp_path, fashion=False, download=False)
    assert splits.name == "mnist" and splits.num_classes == 10
    assert splits.train.images.shape == (6, 1, 28, 28) and splits.train.images.dtype == torch.uint8
    assert splits.train.images.is_contiguous() and splits.train.labels.dtype == torch.int64
    assert splits.val.images.shape == (4, 1, 28, 28)
    assert splits.train.images[2, 0, 5, 17].item() == arrays["train-images-idx3-ubyte"][2, 5, 17]
    assert torch.equal(splits.val.images[:, 0], torch.from_numpy(arrays["t10k-images-idx3-ubyte"]))
    assert splits.train.labels.tolist() == [0, 1, 2, 3, 4, 5]
    assert splits.val.labels.tolist() == [0, 3, 6, 9]
    assert splits.mean == (0.1307,) and splits.std == (0.3081,)
    assert splits.channels == 1 and splits.image_size == (28, 28)


def test_fashion_mnist_uses_its_own_folder_and_stats(tmp_path: Path) -> None:
    make_mnist(tmp_path, folder="FashionMNIST", n_train=3, n_test=2)
    splits = load_mnist(tmp_path, fashion=True, download=False)
    assert splits.name == "fashion-mnist" and len(splits.train) == 3 and len(splits.val) == 2
    assert splits.mean == (0.2860,) and splits.std == (0.3530,)
    with pytest.raises(DatasetError, match="MNIST/raw"):
        load_mnist(tmp_path, fashion=False, download=False)  # plain MNIST is not there


@pytest.mark.parametrize("protocol", [2, 5])
def test_cifar10_reads_pickle_batches_exactly(tmp_path: Path, protocol: int) -> None:
    batches = make_cifar(tmp_path, per_batch=3, protocol=protocol)
    splits = load_cifar10(tmp_path, download=False)
    assert splits.name == "cifar10" and splits.num_classes == 10
    assert splits.train.images.shape == (15, 3, 32, 32) and splits.train.images.dtype == torch.uint8
    assert splits.train.images.is_contiguous() and splits.train.labels.dtype == torch.int64
    assert splits.val.images.shape == (4, 3, 32, 32)
    first = batches["data_batch_1"][b"data"]
    # row layout: 1024 red values, then green, then blue, each 32x32 row-major
    assert splits.train.images[1, 1, 2, 3].item() == first[1, 1024 + 2 * 32 + 3]
    third = batches["data_batch_3"][b"data"]
    assert torch.equal(splits.train.images[6:9].reshape(3, -1), torch.from_numpy(third))
    expected_labels = sum((batches[f"data_batch_{i}"][b"labels"] for i in range(1, 6)), [])
    assert splits.train.labels.tolist() == expected_labels
    assert splits.val.labels.tolist() == batches["test_batch"][b"labels"]
    assert 0 <= splits.train.labels.min() and splits.train.labels.max() <= 9
    assert splits.mean == (0.4914, 0.4822, 0.4465) and splits.std == (0.2470, 0.2435, 0.2616)


def test_imagefolder_holds_out_a_seeded_split(tmp_path: Path) -> None:
    colors = {"cat": (255, 0, 0), "dog": (0, 255, 0), "eel": (0, 0, 255)}
    for name, color in colors.items():
        for i in range(4):
            write_png(tmp_path / name / f"{i}.png", color)
    (tmp_path / "cat" / "notes.txt").write_text("not an image, ignored by extension")
    splits = load_imagefolder(tmp_path, image_size=8, val_fraction=0.25, seed=3)
    assert splits.name == "imagefolder" and splits.num_classes == 3
    assert len(splits.train) == 9 and len(splits.val) == 3
    assert splits.train.images.shape == (9, 3, 8, 8) and splits.train.images.dtype == torch.uint8
    assert splits.train.labels.dtype == torch.int64
    for split in (splits.train, splits.val):  # each image kept its class's colour exactly
        for image, label in zip(split.images, split.labels):
            assert tuple(image[:, 4, 4].tolist()) == list(colors.values())[int(label)]
    again = load_imagefolder(tmp_path, image_size=8, val_fraction=0.25, seed=3)
    assert torch.equal(again.val.labels, splits.val.labels) and torch.equal(again.train.images, splits.train.images)
    # mean of the train split: each channel is 255 exactly for that channel's class images
    counts = torch.bincount(splits.train.labels, minlength=3).double() / len(splits.train)
    assert splits.mean == pytest.approx(tuple(counts.tolist()), abs=1e-6)


def test_imagefolder_resizes_and_converts_to_rgb(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    Image.new("L", (20, 10), 77).save(tmp_path / "a" / "gray.png")
    Image.new("RGBA", (5, 5), (10, 20, 30, 128)).save(tmp_path / "a" / "alpha.png")
    write_png(tmp_path / "b" / "rgb.jpg", (200, 100, 50), size=(64, 48))
    splits = load_imagefolder(tmp_path, image_size=16, val_fraction=0.5, seed=0)
    images = torch.cat([splits.train.images, splits.val.images])
    assert images.shape == (3, 3, 16, 16) and len(splits.val) >= 1
    centres = {tuple(image[:, 8, 8].tolist()) for image in images}
    assert (77, 77, 77) in centres and (10, 20, 30) in centres  # grey and RGBA become plain RGB
    jpeg = next(c for c in centres if c[0] > 150)
    assert jpeg == pytest.approx((200, 100, 50), abs=3)  # JPEG is lossy


def test_imagefolder_uses_train_and_val_folders(tmp_path: Path) -> None:
    for split, count in (("train", 3), ("val", 1)):
        for name, color in (("ant", (1, 2, 3)), ("bee", (4, 5, 6))):
            for i in range(count):
                write_png(tmp_path / split / name / f"{i}.png", color, size=(6, 6))
    splits = load_imagefolder(tmp_path, image_size=6)
    assert len(splits.train) == 6 and len(splits.val) == 2 and splits.num_classes == 2
    assert splits.val.labels.tolist() == [0, 1]
    assert splits.val.images[1, :, 0, 0].tolist() == [4, 5, 6]
    assert splits.mean == pytest.approx((2.5 / 255, 3.5 / 255, 4.5 / 255), abs=1e-6)


def test_imagefolder_train_and_val_must_agree_on_classes(tmp_path: Path) -> None:
    for split, names in (("train", ("ant", "bee")), ("val", ("ant", "cow"))):
        for name in names:
            write_png(tmp_path / split / name / "0.png", (0, 0, 0))
    with pytest.raises(DatasetError, match="only in train: bee; only in val: cow"):
        load_imagefolder(tmp_path)


def test_imagefolder_empty_val_class_folders_give_an_empty_val_split(tmp_path: Path) -> None:
    for name in ("ant", "bee"):
        write_png(tmp_path / "train" / name / "0.png", (9, 9, 9))
        (tmp_path / "val" / name).mkdir(parents=True)
    splits = load_imagefolder(tmp_path, image_size=4)
    assert len(splits.train) == 2 and splits.val.images.shape == (0, 3, 4, 4) and splits.val.labels.shape == (0,)


# --- downloading, offline ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mnist", "cifar10"])
def test_download_offline_fails_fast_with_a_clear_message(tmp_path: Path, name: str) -> None:
    previous = socket.getdefaulttimeout()
    started = time.monotonic()
    with pytest.raises(DatasetError) as caught:
        download_dataset(name, tmp_path / "data", timeout_s=0.5)
    assert time.monotonic() - started < 5.0
    message = str(caught.value)
    assert message.startswith(f"could not download {name} into {tmp_path / 'data'}: ")
    assert "Check the network" in message and "expected layout" in message
    assert socket.getdefaulttimeout() == previous
    assert list(tmp_path.iterdir()) == []  # the data folder it made for the download is gone again


def test_failed_download_removes_only_what_it_created(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "MNIST" / "raw").mkdir(parents=True)
    (tmp_path / "MNIST" / "raw" / "keep.txt").write_text("mine too")
    (tmp_path / "MNIST" / "processed").mkdir()  # an empty folder of the user's stays as well
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(DatasetError, match="could not download mnist"):
        download_dataset("mnist", tmp_path, timeout_s=0.5)
    assert sorted(tmp_path.rglob("*")) == before
    with pytest.raises(DatasetError, match="could not download mnist"):
        download_dataset("mnist", tmp_path / "a" / "b", timeout_s=0.5)
    assert sorted(tmp_path.rglob("*")) == before  # both new parent folders went too


def test_loader_downloads_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # keep the test fast where DNS hangs
    for module in ("gpu_train_monitor.data.datasets.mnist", "gpu_train_monitor.data.datasets.cifar"):
        monkeypatch.setattr(f"{module}.download_dataset", functools.partial(download_dataset, timeout_s=0.5))
    with pytest.raises(DatasetError, match="could not download fashion-mnist"):
        load_mnist(tmp_path / "new", fashion=True, download=True)
    with pytest.raises(DatasetError, match="could not download cifar10"):
        load_cifar10(tmp_path, download=True)
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left behind, not even the new folder


@pytest.fixture
def stalling_server() -> Iterator[str]:
    """A local HTTP server that starts every answer and then goes silent: a network that dies mid-download."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"\x1f\x8b" + b"x" * 100)
            held.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_download_that_stalls_times_out_and_leaves_nothing_half_written(
    tmp_path: Path, stalling_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchvision import datasets

    monkeypatch.setattr(
        datasets.MNIST, "mirrors", [stalling_server]
    )  # only where to fetch from; nothing is checked less
    started = time.monotonic()
    with pytest.raises(DatasetError, match=r"could not download mnist into .*timed out"):
        download_dataset("mnist", tmp_path, timeout_s=0.3)
    assert time.monotonic() - started < 5.0
    assert list(tmp_path.rglob("*")) == []  # no half-written file, and no empty MNIST/raw folder
