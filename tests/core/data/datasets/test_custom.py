"""Your own dataset (`module:factory`, a module the test writes): every form the factory may return becomes
uint8 splits like a built-in dataset's, and each mistake is named with the spec, the split and the index."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.datasets import dataset_shape, load_dataset, train_size_hint
from gpu_train_monitor.data.datasets.custom import load_custom
from gpu_train_monitor.data.datasets.readers import held_out
from tests.support.user_code import importable_folder


@pytest.fixture
def folder(tmp_path, monkeypatch):
    yield from importable_folder(tmp_path, monkeypatch)


def test_one_dataset_is_read_whole_and_a_seeded_tenth_held_out(folder) -> None:
    splits = load_dataset(RunConfig(dataset="mydata:blobs", seed=4), torch.device("cpu"))
    assert splits.name == "mydata:blobs"
    assert (len(splits.train), len(splits.val)) == (86, 10)
    assert splits.train.images.dtype == torch.uint8 and splits.train.images.shape[1:] == (3, 8, 8)
    assert splits.train.labels.dtype == torch.int64
    assert splits.num_classes == 3 and splits.channels == 3 and splits.image_size == (8, 8)
    assert len(splits.mean) == len(splits.std) == 3 and all(0 < s < 1 for s in splits.std)
    # the held-out items are the seeded ones, in the dataset's order, labels with their images
    import mydata

    original = mydata.Blobs()
    val = sorted(held_out(96, seed=4))
    assert torch.equal(splits.val.labels, original.labels[val])
    assert torch.equal(splits.val.images, (original.images[val] * 255).round().to(torch.uint8))
    assert train_size_hint(RunConfig(dataset="mydata:blobs")) is None  # known only by loading it


def test_uint8_images_are_taken_as_they_are(folder) -> None:
    splits = load_custom("mydata:blobs_uint8", seed=0)
    import mydata  # importable now: the load put the current folder on the path, as `python -m` does

    everything = torch.cat([splits.train.images, splits.val.images])
    assert everything.sum() == mydata.Blobs(kind="uint8").images.sum()


@pytest.mark.parametrize(
    "spec, sizes",
    [("mydata:blobs_splits", (90, 30)), ("mydata:blobs_dict", (90, 30)), ("mydata:blobs_train_only", (45, 5))],
)
def test_splits_come_as_a_tuple_or_a_dict(folder, spec: str, sizes: tuple[int, int]) -> None:
    splits = load_custom(spec, seed=0)
    assert (len(splits.train), len(splits.val)) == sizes and splits.num_classes == 3


def test_a_tensor_dataset_without_classes_counts_them_from_its_labels(folder) -> None:
    splits = load_custom("mydata:tensors", seed=0)
    assert splits.num_classes == 4 and splits.channels == 1 and splits.image_size == (12, 12)
    assert len(splits.train) + len(splits.val) == 64
    assert dataset_shape(RunConfig(dataset="mydata:tensors")) == (1, 12, 12, 4, 64)


def test_grey_numpy_images_in_a_plain_list_work(folder) -> None:
    splits = load_custom("mydata:grey_numpy", seed=0)
    assert splits.channels == 1 and splits.image_size == (6, 6) and splits.num_classes == 2
    assert sorted(int(image.max()) for image in torch.cat([splits.train.images, splits.val.images])) == list(
        range(0, 200, 10)
    )


def test_pil_images_and_numpy_labels_as_torchvision_gives_them_work(folder) -> None:
    splits = load_custom("mydata:pil_images", seed=0)
    assert splits.channels == 3 and splits.image_size == (4, 5) and splits.num_classes == 2  # height x width
    images = torch.cat([splits.train.images, splits.val.images])
    assert images[:, 2].eq(255).all() and sorted(images[:, 0, 0, 0].tolist()) == list(range(0, 200, 20))


def test_floats_outside_0_to_1_are_mapped_to_bytes_and_the_log_says_so(folder) -> None:
    with pytest.warns(
        UserWarning,
        match=r"dataset mydata:normalised: its float images run from -[\d.]+ to "
        r"[\d.]+, not 0..1: they are mapped linearly to 0..255",
    ):
        splits = load_custom("mydata:normalised", seed=0)
    everything = torch.cat([splits.train.images, splits.val.images])
    assert int(everything.min()) == 0 and int(everything.max()) == 255


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mydata:ragged", "item 5 has an image of 3x6x6 but item 0's is 3x8x8: every image must have the same size"),
        ("mydata:triples", "item 0 is a tuple of 3; expected a pair (image tensor, int label)"),
        ("mydata:float_labels", "item 3 has the label 0.0 (float); expected an int class index"),
        ("mydata:bad_index", "reading item 7 raised KeyError: 'no such row'"),
        (
            "mydata:channels_last",
            "item 0 has an image of 16x16x3, which looks channels-last; give channels x height x "
            "width (e.g. image.permute(2, 0, 1))",
        ),
        (
            "mydata:beyond_classes",
            "item 9 has the label 7, but the dataset's `classes` attribute lists 3 classes (labels 0..2)",
        ),
        ("mydata:one_class", "every label is 0; a classifier needs at least two classes"),
        (
            "mydata:stream",
            "returned an IterableDataset, which has no length: give a map-style Dataset (with __len__ and __getitem__)",
        ),
        (
            "mydata:a_string",
            "returned a str; expected a map-style Dataset (with __len__ and __getitem__), a (train, "
            "val) tuple of them or a dict with 'train' and 'val'",
        ),
        ("mydata:empty", "the dataset is empty"),
        ("mydata:no_train", "returned a dict without a 'train' entry (its keys: 'training'); give 'train' and 'val'"),
    ],
)
def test_each_mistake_names_the_factory_and_the_item(folder, spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_custom(spec, seed=0)
    assert raised.value.field == "dataset" and str(raised.value) == f"dataset: {spec}: {message}"


def test_a_mistake_in_the_val_split_names_that_split(folder) -> None:
    (folder / "splitdata.py").write_text(
        "from mydata import Blobs, Ragged\n\n"
        "def make():\n    return {'train': Blobs(count=20), 'val': Ragged(count=8)}\n\n"
        "def other_size():\n    return Blobs(count=20), Blobs(count=8, side=10)\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError,
        match=r"^dataset: splitdata:make: item 5 of the val split has an image of "
        r"3x6x6 but item 0's is 3x8x8",
    ):
        load_custom("splitdata:make", seed=0)
    with pytest.raises(
        ConfigError,
        match=r"^dataset: splitdata:other_size: the val split's images are 3x10x10 but "
        r"the train split's are 3x8x8: both splits need one image size$",
    ):
        load_custom("splitdata:other_size", seed=0)


def test_a_huge_label_is_named_before_a_layer_that_wide_is_allocated(folder) -> None:
    """A label of 10**9 used to become 10**9 + 1 classes: "can't allocate 512000000512 bytes", exit 1."""
    (folder / "hugelabels.py").write_text(
        "import torch\nfrom torch.utils.data import TensorDataset\nfrom mydata import Blobs\n\n"
        "def tensors():\n    labels = torch.arange(40) % 2\n    labels[5] = 10**9\n"
        "    return TensorDataset(torch.rand(40, 3, 8, 8), labels)\n\n"
        "class Items(Blobs):\n    def __getitem__(self, index):\n"
        "        image, label = super().__getitem__(index)\n        return image, 10**9 if index == 3 else label\n\n"
        "def items():\n    return Items(count=10, classes=False)\n\n"
        "def declared():\n    data = Blobs(count=10)\n    data.classes = 10**9\n    return data\n",
        encoding="utf-8",
    )
    for spec, message in [
        (
            "hugelabels:tensors",
            "item 5 has the label 1000000000; labels are class indices 0..99999 (at most 100000 classes)",
        ),
        (
            "hugelabels:items",
            "item 3 has the label 1000000000; labels are class indices 0..99999 (at most 100000 classes)",
        ),
        ("hugelabels:declared", "its `classes` attribute lists 1000000000 classes; at most 100000 are supported"),
    ]:
        with pytest.raises(ConfigError) as raised:
            load_custom(spec, seed=0)
        assert raised.value.field == "dataset" and str(raised.value) == f"dataset: {spec}: {message}"
