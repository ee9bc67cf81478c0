"""The two data placements: the same batches either way, but `resident` never copies a batch to the device."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import torch

from gpu_train_monitor.data.batches import StreamBatches
from gpu_train_monitor.data.datasets.synthetic import make_synthetic
from gpu_train_monitor.data.datasets.types import DatasetSplits
from gpu_train_monitor.data.preprocess import DevicePreprocess
from gpu_train_monitor.data.resident_batches import ResidentBatches

CPU = torch.device("cpu")
TRAIN = 512
BATCH = 64


@pytest.fixture(scope="module")
def splits() -> DatasetSplits:
    return make_synthetic(TRAIN, seed=0, device=CPU)


def preprocess(splits: DatasetSplits, channels_last: bool = False, input_size: int | None = None) -> DevicePreprocess:
    return DevicePreprocess(
        splits,
        CPU,
        in_channels=3,
        input_size=input_size,
        channels_last=channels_last,
        flip=True,
        generator=torch.Generator().manual_seed(1),
    )


def resident(splits: DatasetSplits, batch: int = BATCH, **kwargs: bool | int | None) -> ResidentBatches:
    return ResidentBatches(splits, CPU, batch, preprocess(splits, **kwargs), torch.Generator().manual_seed(2))


def stream(splits: DatasetSplits, batch: int = BATCH, **kwargs: bool | int | None) -> StreamBatches:
    return StreamBatches(
        splits, CPU, batch, preprocess(splits, **kwargs), workers=0, pin_memory=True, non_blocking=True, seed=3
    )


MakeSource = Callable[..., ResidentBatches | StreamBatches]
PLACEMENTS: list[MakeSource] = [resident, stream]


@pytest.mark.parametrize("make", PLACEMENTS, ids=["resident", "stream"])
def test_training_batches_have_the_model_input_shape_dtype_and_labels(make: MakeSource, splits: DatasetSplits) -> None:
    source = make(splits)
    batches = list(source.train_epoch())
    assert len(batches) == source.steps_per_epoch() == TRAIN // BATCH
    for images, labels in batches:
        assert images.shape == (BATCH, 3, 32, 32) and images.dtype == torch.float32
        assert labels.shape == (BATCH,) and labels.dtype == torch.int64
        assert int(labels.min()) >= 0 and int(labels.max()) < splits.num_classes
        assert images.device == labels.device == CPU
        # (x / 255 - 0.5) / 0.25: normalised pixels lie in [-2, 2]; crop padding is black (-2)
        assert float(images.min()) >= -2.0 - 1e-5 and float(images.max()) <= 2.0 + 1e-5
        assert abs(float(images.mean())) < 1.0


def test_both_placements_give_batches_of_the_same_kind(splits: DatasetSplits) -> None:
    r_images, r_labels = next(resident(splits).train_epoch())
    s_images, s_labels = next(stream(splits).train_epoch())
    assert (r_images.shape, r_images.dtype, r_labels.dtype) == (s_images.shape, s_images.dtype, s_labels.dtype)
    assert r_images.is_contiguous() == s_images.is_contiguous()


@pytest.mark.parametrize("make", PLACEMENTS, ids=["resident", "stream"])
def test_an_epoch_uses_every_training_image_once_in_a_new_order(make: MakeSource, splits: DatasetSplits) -> None:
    source = make(splits)
    first = torch.cat([labels for _, labels in source.train_epoch()])
    second = torch.cat([labels for _, labels in source.train_epoch()])
    assert Counter(first.tolist()) == Counter(splits.train.labels.tolist())  # 512 / 64: nothing dropped
    assert not torch.equal(first, splits.train.labels)  # shuffled
    assert not torch.equal(first, second)  # and shuffled again next epoch


@pytest.mark.parametrize("make", PLACEMENTS, ids=["resident", "stream"])
def test_validation_covers_the_split_in_order_without_augmentation(make: MakeSource, splits: DatasetSplits) -> None:
    source = make(splits)
    batches = list(source.val_batches())
    labels = torch.cat([batch_labels for _, batch_labels in batches])
    assert torch.equal(labels, splits.val.labels)  # every image, the last partial batch too
    images = torch.cat([batch_images for batch_images, _ in batches])
    expected = (splits.val.images.float() / 255.0 - 0.5) / 0.25
    assert torch.allclose(images, expected, atol=1e-5)
    again = torch.cat([batch_images for batch_images, _ in source.val_batches()])
    assert torch.equal(images, again)  # the same numbers every epoch


def test_both_placements_validate_on_identical_batches(splits: DatasetSplits) -> None:
    for (r_images, r_labels), (s_images, s_labels) in zip(resident(splits).val_batches(), stream(splits).val_batches()):
        assert torch.equal(r_images, s_images) and torch.equal(r_labels, s_labels)


def test_training_batches_are_augmented_and_validation_batches_are_not(splits: DatasetSplits) -> None:
    finish = preprocess(splits)
    raw = splits.train.images[:256]
    plain = finish(raw, augment=False)
    augmented = finish(raw, augment=True)
    unchanged = (augmented == plain).all(dim=(1, 2, 3))
    assert int(unchanged.sum()) < 256 // 8  # random crop offsets and flips: few images come through as they were
    assert bool((augmented == -2.0).any())  # the black padding of shifted crops
    assert torch.equal(finish(raw, augment=False), plain)


@pytest.mark.parametrize("make", PLACEMENTS, ids=["resident", "stream"])
def test_a_smaller_batch_size_applies_from_the_next_batch(make: MakeSource, splits: DatasetSplits) -> None:
    source = make(splits)
    batches = source.train_epoch()
    assert next(batches)[0].shape[0] == BATCH
    source.set_batch_size(BATCH // 2)  # what an out-of-memory shrink does mid-epoch
    sizes = [images.shape[0] for images, _ in batches]
    assert sizes and set(sizes) == {BATCH // 2}
    assert BATCH + sum(sizes) == TRAIN
    assert source.steps_per_epoch() == TRAIN // (BATCH // 2)


def test_channels_last_and_resizing_for_models_that_need_it(splits: DatasetSplits) -> None:
    images, _ = next(resident(splits, channels_last=True, input_size=64).train_epoch())
    assert images.shape == (BATCH, 3, 64, 64)
    assert images.is_contiguous(memory_format=torch.channels_last)


def test_one_channel_images_are_expanded_for_three_channel_models() -> None:
    gray = make_synthetic(256, seed=0, device=CPU)
    gray = DatasetSplits(
        "gray",
        type(gray.train)(gray.train.images[:, :1].contiguous(), gray.train.labels),
        type(gray.val)(gray.val.images[:, :1].contiguous(), gray.val.labels),
        10,
        (0.5,),
        (0.25,),
    )
    source = ResidentBatches(
        gray, CPU, 32, DevicePreprocess(gray, CPU, 3, None, False, False, torch.Generator()), torch.Generator()
    )
    images, _ = next(source.val_batches())
    assert images.shape == (32, 3, 32, 32)
    assert torch.equal(images[:, 0], images[:, 2])


# --- the point of `resident`: no host-to-device copy per step ------------------------------------------


@pytest.fixture
def copy_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the calls that move tensor data between memories: Tensor.to (to a device), copy_, pin_memory."""
    counts: Counter[str] = Counter()
    original_to, original_copy, original_pin = torch.Tensor.to, torch.Tensor.copy_, torch.Tensor.pin_memory

    def counting_to(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        if "device" in kwargs or any(isinstance(a, (torch.device, str)) for a in args):
            counts["to"] += 1
        return original_to(self, *args, **kwargs)  # type: ignore[arg-type]

    def counting_copy(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        counts["copy_"] += 1
        return original_copy(self, *args, **kwargs)  # type: ignore[arg-type]

    def counting_pin(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        counts["pin_memory"] += 1
        return original_pin(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(torch.Tensor, "to", counting_to)
    monkeypatch.setattr(torch.Tensor, "copy_", counting_copy)
    monkeypatch.setattr(torch.Tensor, "pin_memory", counting_pin)
    yield counts


def test_resident_batches_copy_nothing_per_step(splits: DatasetSplits, copy_calls: Counter[str]) -> None:
    source = resident(splits)
    copy_calls.clear()
    steps = sum(1 for _ in source.train_epoch())
    assert steps == TRAIN // BATCH
    assert sum(copy_calls.values()) == 0, copy_calls


def test_stream_batches_copy_each_batch_to_the_device(splits: DatasetSplits, copy_calls: Counter[str]) -> None:
    source = stream(splits)
    copy_calls.clear()
    steps = sum(1 for _ in source.train_epoch())
    assert steps == TRAIN // BATCH
    assert sum(copy_calls.values()) >= steps, copy_calls  # images (and labels) moved once per step


@pytest.mark.gpu
def test_resident_batches_live_on_the_gpu_and_are_not_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    device = torch.device("cuda:0")
    gpu_splits = make_synthetic(TRAIN, seed=0, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    source = ResidentBatches(
        gpu_splits, device, BATCH, DevicePreprocess(gpu_splits, device, 3, None, False, True, gen), gen
    )
    copies: list[str] = []
    original_to = torch.Tensor.to

    def counting_to(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        result = original_to(self, *args, **kwargs)  # type: ignore[arg-type]
        if result.device != self.device:
            copies.append(f"{self.device}->{result.device}")
        return result

    monkeypatch.setattr(torch.Tensor, "to", counting_to)
    for images, labels in source.train_epoch():
        assert images.device.type == "cuda" and labels.device.type == "cuda"
    assert copies == []


def _shifted(image: torch.Tensor, dy: int, dx: int) -> torch.Tensor:
    """image shifted so out[y, x] = image[y + dy, x + dx], zeros where that pixel does not exist."""
    c, h, w = image.shape
    padded = torch.nn.functional.pad(image, (abs(dx), abs(dx), abs(dy), abs(dy)))
    return padded[:, abs(dy) + dy : abs(dy) + dy + h, abs(dx) + dx : abs(dx) + dx + w]


def test_whole_set_augmentation_is_a_shift_or_flip_of_the_image_it_names() -> None:
    from gpu_train_monitor.data.preprocess import augment_shuffled

    images = torch.randint(1, 255, (300, 3, 8, 8), dtype=torch.uint8)  # no zeros: shifted-in strips show
    out, order = augment_shuffled(images, 1, True, torch.Generator().manual_seed(0), np.random.default_rng(1))
    assert sorted(order.tolist()) == list(range(300))  # every image exactly once
    seen = set()
    for i in range(300):
        source = images[order[i]]
        matches = [
            (dy, dx, f)
            for f in (False, True)
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if torch.equal(out[i], _shifted(source.flip(2) if f else source, dy, dx))
        ]
        assert matches, f"output {i} is not a shift or flip of image {int(order[i])}"
        seen.update(matches)
    assert len(seen) == 18  # every shift, flipped and not, occurs in 300 draws


def test_batch_augmentation_keeps_each_image_in_place_as_a_shift_or_flip(splits: DatasetSplits) -> None:
    images = torch.randint(1, 255, (200, 3, 32, 32), dtype=torch.uint8)
    out = preprocess(splits).augment(images)  # pad 4 (32 // 8)
    assert out.shape == images.shape and out.dtype == torch.uint8
    flipped = 0
    for i in range(200):
        found = [
            f
            for f in (False, True)
            for dy in range(-4, 5)
            for dx in range(-4, 5)
            if torch.equal(out[i], _shifted(images[i].flip(2) if f else images[i], dy, dx))
        ]
        assert found, f"batch image {i} is not a shift or flip of input {i}"
        flipped += found[0]
    assert 60 < flipped < 140  # about half are mirrored
