"""Loading a memory snapshot: plain data only; a pickle that names any Python object is refused before it runs."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from gpu_train_monitor.memory.snapshot_file import SnapshotError, load_plain_pickle, read_snapshot_file
from tests.support import snapshots


class _CreatesFile:
    """Unpickled by a plain `pickle.load`, this would create `path` (os.system runs the shell command)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (os.system, (f"touch {self.path}",))


def test_a_malicious_pickle_is_refused_without_running_anything(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = {"segments": [], "device_traces": [[_CreatesFile(marker)]]}
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(SnapshotError) as caught:
        read_snapshot_file(path)
    assert not marker.exists()
    text = str(caught.value)
    assert "\n" not in text and "refused" in text and "nothing was run" in text
    assert "system" in text  # names what it asked for (posix.system)
    pickle.loads(path.read_bytes())  # the same file under a plain unpickler does run the payload
    assert marker.exists()


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_every_protocol_is_refused_a_global(tmp_path: Path, protocol: int) -> None:
    marker = tmp_path / f"pwned-{protocol}"
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps(_CreatesFile(marker), protocol=protocol))
    with pytest.raises(SnapshotError, match="refused"):
        load_plain_pickle(path)
    assert not marker.exists()


def test_plain_data_loads_tuples_included(tmp_path: Path) -> None:
    data = snapshots.training_like(20)
    path = snapshots.write(tmp_path / "ok.pickle", data)
    assert read_snapshot_file(path) == data
    assert read_snapshot_file(path)["segments"][0]["segment_pool_id"] == (0, 0)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "not a pickle"),
        (b"hello, not a pickle", "not a pickle"),
        (pickle.dumps({"segments": []})[:-5], "truncated"),
        (pickle.dumps([1, 2, 3]), "not a PyTorch memory snapshot"),
        (pickle.dumps({"segments": [], "device_traces": "x"}), "device_traces"),
    ],
)
def test_a_file_that_is_not_a_snapshot_is_one_line(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "bad.pickle"
    path.write_bytes(content)
    with pytest.raises(SnapshotError, match=why) as caught:
        read_snapshot_file(path)
    assert "\n" not in str(caught.value)


def test_missing_file_and_folder_and_fifo(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="No such file"):
        read_snapshot_file(tmp_path / "missing.pickle")
    with pytest.raises(SnapshotError, match="not a regular file"):
        read_snapshot_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SnapshotError, match="not a regular file"):  # never blocks in open()
        read_snapshot_file(fifo)
