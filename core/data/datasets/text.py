"""The text datasets: `synthetic-text`, generated from a seed, and a local text file (`text:PATH`), read as bytes.

Both are token ids of vocabulary 256 (a byte is a token: no tokenizer, nothing to download), whole splits in one
uint8 tensor each (`TokenSplit`).

`synthetic-text` is a seeded order-2 Markov source over 27 symbols (the letters and the space): the next symbol's
probabilities depend strongly on the previous one and less on the one before. Its loss falls in stages, from
ln 256 = 5.5 (uniform over bytes) to about 3.1 (the symbols' frequencies), about 1.5 (the previous symbol: well below
half of ln 256) and about 1.1 nats per token (both previous symbols: what attention has to find). It is generated
where it will live (on the device for the resident placement), as many chains of CHAIN symbols stepped together.

A text file is read whole; its last tenth (at least one sequence) validates, when the text has room for both. An
empty file, a file that is not text (NUL bytes, or mostly control bytes), or a sequence longer than the text is a
ConfigError in one line.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ...base.errors import ConfigError
from ...base.text import Message, format_bytes
from ...config.sequences import SYNTHETIC_TEXT
from .types import TextSplits, TokenSplit

SYMBOLS = b"abcdefghijklmnopqrstuvwxyz "
CHAIN = 256  # symbols per Markov chain; the chains are generated side by side and joined
MAX_TOKENS = 2**30  # a synthetic text of more tokens than this is refused (1 GB as uint8)
VAL_FRACTION = 0.1  # of a text file, held out at its end
CONTROL_LIMIT = (
    0.05  # a file with more control bytes than this share (tab, newlines, form feed, escape aside) is binary
)
_TEXT_CONTROLS = (8, 9, 10, 11, 12, 13, 27)


def val_samples(train_samples: int) -> int:
    """Validation sequences of a synthetic text of `train_samples` training sequences (as the synthetic images)."""
    return max(256, train_samples // 5)


def synthetic_text_bytes(train_samples: int, seq_len: int) -> int:
    """Bytes of the whole synthetic text (train + val tokens), known before generating it."""
    return (train_samples + val_samples(train_samples)) * seq_len + 2


def make_synthetic_text(train_samples: int, seq_len: int, seed: int, device: torch.device) -> TextSplits:
    """Train and validation texts of `train_samples` and `val_samples(...)` sequences as uint8 on `device`."""
    tokens = (train_samples + val_samples(train_samples)) * seq_len
    if tokens > MAX_TOKENS:
        raise ConfigError(
            "synthetic_samples",
            Message(
                "{samples:,} sequences of {seq_len} tokens make {tokens:,} tokens; a synthetic text may have at most "
                "{limit:,}: use fewer samples or shorter sequences",
                samples=train_samples,
                seq_len=seq_len,
                tokens=tokens,
                limit=MAX_TOKENS,
            ),
        )
    gen = torch.Generator(device=device).manual_seed(seed)
    n = len(SYMBOLS)
    by_previous = torch.randn(1, n, n, generator=gen, device=device) * 3.0  # [.., previous, next]
    by_both = torch.randn(n, n, n, generator=gen, device=device) * 2.0  # [before, previous, next]
    cumulative = (by_previous + by_both).softmax(dim=-1).view(n * n, n).cumsum(dim=-1)
    symbols = torch.tensor(list(SYMBOLS), dtype=torch.uint8, device=device)
    train = _markov(train_samples * seq_len + 1, cumulative, gen)
    val = _markov(val_samples(train_samples) * seq_len + 1, cumulative, gen)
    return TextSplits(SYNTHETIC_TEXT, TokenSplit(symbols[train], seq_len), TokenSplit(symbols[val], seq_len))


def _markov(count: int, cumulative: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """`count` symbol indices: chains of CHAIN symbols, each next one drawn from `cumulative[before * n + previous]`
    (the cumulative probabilities) by the inverse of that distribution."""
    n, device = cumulative.shape[1], cumulative.device
    chains = -(-count // CHAIN)
    out = torch.empty(chains, CHAIN, dtype=torch.int64, device=device)
    before = torch.randint(0, n, (chains,), generator=gen, device=device)
    previous = torch.randint(0, n, (chains,), generator=gen, device=device)
    for i in range(CHAIN):
        draw = torch.rand(chains, 1, generator=gen, device=device)
        following = (cumulative[before * n + previous] < draw).sum(dim=1).clamp_max(n - 1)
        out[:, i] = following
        before, previous = previous, following
    return out.flatten()[:count]


def load_text_file(path: Path, seq_len: int) -> TextSplits:
    """The file's bytes as a train and a validation text (its last tenth, at least one sequence, when the text has
    room for both; otherwise all of it trains and nothing validates)."""
    data = _read(path)
    size = len(data)
    check_seq_len(path, size, seq_len)
    tokens = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    train, val = tokens.split([train_bytes(size, seq_len), size - train_bytes(size, seq_len)])
    return TextSplits(f"text:{path.name}", TokenSplit(train.clone(), seq_len), TokenSplit(val.clone(), seq_len))


def check_seq_len(path: Path, size: int, seq_len: int) -> None:
    """ConfigError naming seq_len when a text of `size` bytes is shorter than one sequence and its targets (naming
    the dataset when it is empty)."""
    if not size:
        raise _empty(path)
    if size < seq_len + 1:
        raise ConfigError(
            "seq_len",
            Message(
                "{seq_len} tokens is longer than the text: {path} has {size:,} bytes and a sequence needs seq_len + 1 "
                "of them (its targets are the next tokens); use at most {limit}",
                seq_len=seq_len,
                path=str(path),
                size=size,
                limit=max(size - 1, 1),
            ),
        )


def train_bytes(size: int, seq_len: int) -> int:
    """Of a text of `size` bytes, those that train: all but the last tenth (at least one sequence: seq_len + 1
    bytes), or all of them when there is no room for a sequence in each part."""
    held = max(int(size * VAL_FRACTION), seq_len + 1)
    return size if size - held < seq_len + 1 else size - held


def _read(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("dataset", Message("no text file {path}", path=str(path))) from None
    except IsADirectoryError:
        raise ConfigError("dataset", Message("{path} is a folder, not a text file", path=str(path))) from None
    except OSError as exc:
        raise ConfigError(
            "dataset", Message("cannot read {path}: {error}", path=str(path), error=exc.strerror or str(exc))
        ) from None
    if not data:
        raise _empty(path)
    problem = binary_reason(data)
    if problem is not None:
        raise ConfigError(
            "dataset",
            Message(
                "{path} ({size}) is not a text file: {reason}; give a text file (it is read as bytes)",
                path=str(path),
                size=format_bytes(len(data)),
                reason=problem,
            ),
        )
    return data


def _empty(path: Path) -> ConfigError:
    return ConfigError("dataset", Message("{path} is empty: there is no text to train on", path=str(path)))


def binary_reason(data: bytes) -> Message | None:
    """Why `data` is not text (None when it is): a NUL byte, or more than CONTROL_LIMIT of control bytes other
    than tab, newlines, form feed, backspace and escape. UTF-8 and other 8-bit encodings are text."""
    nul = data.find(b"\x00")
    if nul >= 0:
        return Message("it holds NUL bytes (the first at byte {offset:,})", offset=nul)
    counts = torch.bincount(torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.int64), minlength=256)
    controls = int(counts[:32].sum()) - sum(int(counts[c]) for c in _TEXT_CONTROLS) + int(counts[127])
    if controls > CONTROL_LIMIT * len(data):
        return Message("{share:.0%} of its bytes are control characters", share=controls / len(data))
    return None
