"""RingBuffer: bounded plot history that keeps the newest rows, oldest first."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_train_monitor.gui.plots.ring_buffer import PeakRingBuffer, RingBuffer


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


def test_each_column_is_contiguous_and_several_can_be_read_at_once():
    buf = RingBuffer(5, 3)
    for i in range(12):  # wrapped and compacted a few times
        buf.append(i, i * 10, i * 100)
    assert buf.column(1).flags["C_CONTIGUOUS"]  # a redraw reduces it without striding over rows
    block = buf.columns(1, 3)
    assert block.shape == (2, 5)
    assert list(block[0]) == [70, 80, 90, 100, 110] and list(block[1]) == [700, 800, 900, 1000, 1100]
    with pytest.raises(ValueError):
        block[0, 0] = 1.0


def check_buckets(x: np.ndarray, ys: np.ndarray, out_x: np.ndarray, out_y: np.ndarray) -> None:
    """Every drawn pair is the min and max of the rows from its x up to the next pair's x."""
    assert np.array_equal(out_x[0::2], out_x[1::2]) and np.all(np.diff(out_x[0::2]) > 0)
    edges = list(np.searchsorted(x, out_x[0::2])) + [len(x)]
    assert edges[0] == 0
    for j in range(len(edges) - 1):
        rows = ys[:, edges[j] : edges[j + 1]]
        assert np.array_equal(out_y[:, 2 * j], rows.min(axis=1), equal_nan=True)
        assert np.array_equal(out_y[:, 2 * j + 1], rows.max(axis=1), equal_nan=True)


def test_peak_buffer_draws_each_buckets_min_and_max_from_its_block_summaries():
    rng = np.random.default_rng(0)
    buf = PeakRingBuffer(50_000, 3, block=16)
    appended = 0
    for size in [7, 3_000, 1, 20_000, 999, 40_000, 5] * 3:  # wraps, drops and compacts on the way
        rows = np.column_stack([np.arange(appended, appended + size), rng.random(size), rng.normal(size=size)])
        rows[rng.integers(0, size, max(1, size // 4000)), 1] = np.nan  # diverged steps: gaps
        buf.extend(rows)
        appended += size
        x, ys = buf.column(0), buf.columns(1, 3)
        zoomed = (x[1000] + 0.5, x[-3000] + 0.5) if len(x) > 10_000 else None
        for x_range in (None, zoomed):
            out_x, out_y = buf.decimate(1, 3, x_range, buckets=100)
            shown = slice(None) if x_range is None else slice(1000, len(x) - 2998)  # one more row each side
            if len(x[shown]) >= 100 * 4 * 16:  # buckets at least 4 blocks wide: the summaries are used
                assert len(out_x) <= 2 * (100 + 2)
                check_buckets(x[shown], ys[:, shown], out_x, out_y)
    assert buf.oldest == appended - 50_000


def test_peak_buffer_starts_afresh_after_clear():
    buf = PeakRingBuffer(10_000, 2, block=8)
    buf.extend(np.column_stack([np.arange(9_000.0), np.full(9_000, 5.0)]))
    buf.clear()
    buf.extend(np.column_stack([np.arange(9_000.0), np.full(9_000, 1.0)]))
    out_x, out_y = buf.decimate(1, 2, None, buckets=50)
    assert set(out_y[0]) == {1.0}  # nothing of the old run's summaries


def test_peak_buffer_decimates_against_any_sorted_column():
    buf = PeakRingBuffer(100_000, 3, first=2, stop=3, block=16)  # step, seconds, loss (a compare race)
    steps = np.arange(60_000, dtype=float)
    seconds = np.cumsum(np.random.default_rng(1).random(60_000))
    loss = np.sin(steps / 300)
    buf.extend(np.column_stack([steps, seconds, loss]))
    out_x, out_y = buf.decimate(2, 3, None, buckets=200, x_column=1)
    assert out_x[0] == seconds[0] and set(out_x) <= set(seconds)
    check_buckets(seconds, loss[np.newaxis], out_x, out_y)
