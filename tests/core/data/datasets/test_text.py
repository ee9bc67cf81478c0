"""The text datasets: synthetic-text from a seed (bytes of 27 symbols, the same for the same seed) and a text file read
as bytes; an empty file, a binary one and a sequence longer than the text are one ConfigError naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.datasets import dataset_shape, load_dataset, train_size_hint
from gpu_train_monitor.data.datasets.text import SYMBOLS, binary_reason, load_text_file, make_synthetic_text

CPU = torch.device("cpu")


def test_synthetic_text_is_seeded_bytes_of_its_symbols_with_structure_to_learn() -> None:
    splits = make_synthetic_text(256, 32, seed=3, device=CPU)
    again = make_synthetic_text(256, 32, seed=3, device=CPU)
    other = make_synthetic_text(256, 32, seed=4, device=CPU)
    assert torch.equal(splits.train.tokens, again.train.tokens)
    assert not torch.equal(splits.train.tokens, other.train.tokens)
    assert splits.train.tokens.dtype == torch.uint8 and len(splits.train) == 256 and len(splits.val) == 256
    assert set(splits.train.tokens.tolist()) <= set(SYMBOLS)
    # structure: the next symbol given the previous one is far less uncertain than the symbols alone
    tokens = splits.train.tokens.long()
    pairs = torch.zeros(256, 256).index_put_((tokens[:-1], tokens[1:]), torch.ones(len(tokens) - 1), accumulate=True)
    alone = pairs.sum(0) / pairs.sum()
    h_alone = -(alone[alone > 0] * alone[alone > 0].log()).sum()
    given = pairs / pairs.sum(1, keepdim=True).clamp_min(1)
    h_given = -(pairs / pairs.sum() * given.clamp_min(1e-12).log()).sum()
    assert h_given < 0.6 * h_alone < 0.6 * torch.log(torch.tensor(256.0))


def test_a_text_file_is_its_bytes_with_the_last_tenth_held_out(tmp_path: Path) -> None:
    path = tmp_path / "story.txt"
    text = ("Once upon a time, a GPU ran out of memory. Ça arrive.\n" * 40).encode()
    path.write_bytes(text)
    splits = load_text_file(path, 16)
    joined = torch.cat([splits.train.tokens, splits.val.tokens])
    assert bytes(joined.tolist()) == text and splits.num_classes == 256
    assert len(splits.val.tokens) == int(len(text) * 0.1) and len(splits.train) == (len(splits.train.tokens) - 1) // 16
    config = RunConfig(model="gpt-tiny", dataset=f"text:{path}", seq_len=16)
    assert train_size_hint(config) == len(splits.train)
    assert dataset_shape(config)[3] == 256
    assert isinstance(load_dataset(config, CPU), type(splits))


@pytest.mark.parametrize(
    ("content", "field", "fragments"),
    [
        (b"", "dataset", ["is empty"]),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "dataset", ["is not a text file", "NUL bytes"]),
        (bytes([1, 2, 3, 4, 5, 6, 7, 14, 15, 16]) * 50 + b"text", "dataset", ["not a text file", "control characters"]),
        (b"a short text", "seq_len", ["longer than the text", "12 bytes", "use at most 11"]),
    ],
)
def test_bad_text_files_are_one_line_naming_the_option(
    tmp_path: Path, content: bytes, field: str, fragments: list[str]
) -> None:
    path = tmp_path / "data.txt"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_text_file(path, 64)
    assert caught.value.field == field and "\n" not in str(caught.value)
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_a_missing_file_or_a_folder_is_named(tmp_path: Path) -> None:
    for path, fragment in ((tmp_path / "none.txt", "no text file"), (tmp_path, "is a folder")):
        with pytest.raises(ConfigError, match=fragment):
            load_text_file(path, 8)


def test_utf8_and_tabs_are_text_but_mostly_control_bytes_are_not() -> None:
    assert binary_reason("naïve café\ttab\r\nnewline 中文\x1b[0m".encode()) is None
    assert binary_reason(b"\x01\x02\x03 hello") is not None
