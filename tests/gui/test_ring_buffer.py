"""RingBuffer: bounded plot history that keeps the newest rows, oldest first."""

from __future__ import annotations

import numpy as np
import pytest

from gui.ring_buffer import RingBuffer


def rows(start: int, stop: int) -> np.ndarray:
    xs = np.arange(start, stop, dtype=float)
    return np.column_stack([xs, xs * 10])


def test_appends_until_full_then_keeps_the_newest_rows():
    buf = RingBuffer(5, 2)
    for i in range(3):
        buf.append(i, i * 10)
    assert len(buf) == 3
    assert list(buf.column(0)) == [0, 1, 2]
    for i in range(3, 12):
        buf.append(i, i * 10)
    assert len(buf) == 5
    assert list(buf.column(0)) == [7, 8, 9, 10, 11]
    assert list(buf.column(1)) == [70, 80, 90, 100, 110]
    assert buf.last(0) == 11 and buf.last(1) == 110


def test_wraps_many_times_with_batches_of_any_size():
    buf = RingBuffer(7, 2)
    expected: list[float] = []
    start = 0
    for size in [3, 1, 6, 2, 5, 7, 4, 1, 1, 6] * 5:
        buf.extend(rows(start, start + size))
        expected.extend(range(start, start + size))
        start += size
        assert list(buf.column(0)) == expected[-7:]
        assert list(buf.column(1)) == [10 * x for x in expected[-7:]]


def test_a_batch_larger_than_the_capacity_keeps_its_tail():
    buf = RingBuffer(4, 2)
    buf.extend(rows(0, 3))
    buf.extend(rows(3, 13))
    assert list(buf.column(0)) == [9, 10, 11, 12]


def test_columns_are_read_only_views():
    buf = RingBuffer(4, 2)
    buf.extend(rows(0, 3))
    column = buf.column(0)
    with pytest.raises(ValueError):
        column[0] = 99.0
    assert list(buf.column(0)) == [0, 1, 2]


def test_clear_and_empty():
    buf = RingBuffer(4, 3)
    assert len(buf) == 0 and buf.last(0) is None and len(buf.column(2)) == 0
    buf.extend(np.ones((3, 3)))
    buf.clear()
    assert len(buf) == 0 and buf.last(1) is None
    buf.append(5, 6, 7)
    assert list(buf.column(2)) == [7]


def test_nan_is_stored_as_it_is():
    buf = RingBuffer(3, 2)
    buf.append(1, float("nan"))
    assert np.isnan(buf.last(1))
