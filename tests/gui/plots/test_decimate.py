"""Peak decimation of long plot series: bounded output, every bucket's extremes kept, NaN shown as a gap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_train_monitor.gui.plots.decimate import decimate_visible, peak_decimate, peak_decimate_many, visible_slice


def series(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(1, n + 1, dtype=float)
    return x, np.sin(x / 50.0) + 2.0


def test_short_series_are_returned_untouched():
    x, y = series(100)
    out_x, out_y = peak_decimate(x, y, buckets=50)  # 100 <= 2 * 50
    assert out_x is x and out_y is y


@pytest.mark.parametrize(("n", "buckets"), [(1_000_001, 1000), (10_000, 7), (2 * 400 + 1, 400), (5_003, 64)])
def test_output_is_bounded_by_two_points_per_bucket_plus_a_short_tail(n, buckets):
    x, y = series(n)
    out_x, out_y = peak_decimate(x, y, buckets)
    size = -(-n // buckets)
    assert len(out_x) == len(out_y) <= 2 * buckets + size  # whole buckets, then a tail shorter than one
    assert len(out_x) < n
    assert np.all(np.diff(out_x) >= 0)  # still sorted: the plot's line is drawn left to right
    assert out_x[0] == x[0]


def test_a_single_spike_survives_at_its_bucket():
    x, y = series(1_000_000)
    y[123_456] = 50.0  # one diverging step among a million
    y[654_321] = -50.0
    out_x, out_y = peak_decimate(x, y, buckets=1000)
    assert out_y.max() == 50.0 and out_y.min() == -50.0
    size = -(-len(x) // 1000)
    spike_bucket_start = x[(123_456 // size) * size]
    assert 50.0 in out_y[out_x == spike_bucket_start]


def test_every_bucket_keeps_its_min_and_max():
    rng = np.random.default_rng(0)
    x = np.arange(10_000, dtype=float)
    y = rng.normal(size=10_000)
    out_x, out_y = peak_decimate(x, y, buckets=100)
    lows, highs = out_y[0::2], out_y[1::2]
    buckets = y.reshape(100, 100)
    assert np.array_equal(lows, buckets.min(axis=1)) and np.array_equal(highs, buckets.max(axis=1))
    assert np.array_equal(out_x[0::2], x[::100]) and np.array_equal(out_x[1::2], x[::100])


def test_nan_in_a_bucket_shows_as_a_gap_there_and_nowhere_else():
    x, y = series(10_000)
    y[5_050] = math.nan  # a diverged step
    out_x, out_y = peak_decimate(x, y, buckets=100)
    gap = np.isnan(out_y)
    assert gap.sum() == 2  # that bucket's min and max: the line breaks there
    assert set(out_x[gap]) == {x[5_000]}
    assert np.isfinite(out_y[~gap]).all()


def test_the_tail_that_does_not_fill_a_bucket_is_kept_point_for_point():
    x, y = series(1_050)
    out_x, out_y = peak_decimate(x, y, buckets=10)  # buckets of 105: exactly 10 whole ones, no tail
    assert len(out_x) == 20
    x, y = series(1_003)
    out_x, out_y = peak_decimate(x, y, buckets=10)  # buckets of 101: 9 whole ones, then 94 points as they are
    assert np.array_equal(out_x[18:], x[909:]) and np.array_equal(out_y[18:], y[909:])


def test_visible_slice_widens_by_one_point_each_side():
    x = np.arange(0.0, 100.0)
    assert visible_slice(x, None) == slice(0, 100)
    assert visible_slice(x, (10.5, 20.5)) == slice(10, 22)  # 11..20 inside, plus 10 and 21
    assert visible_slice(x, (-5.0, 500.0)) == slice(0, 100)
    assert visible_slice(np.array([]), (0.0, 1.0)) == slice(0, 0)


def test_several_series_on_one_x_decimate_as_each_would_alone():
    x, y = series(100_003)
    ys = np.vstack([y, -y, np.cos(x)])
    out_x, out_ys = peak_decimate_many(x, ys, buckets=300)
    for row, alone in zip(out_ys, ys):
        ax, ay = peak_decimate(x, alone, buckets=300)
        assert np.array_equal(out_x, ax) and np.array_equal(row, ay)


def test_decimate_visible_cuts_to_the_range_before_decimating():
    x, y = series(100_000)
    out_x, out_ys = decimate_visible(x, y[np.newaxis], (1_000.0, 1_100.0), buckets=300)
    assert list(out_x) == list(range(999, 1102))  # 101 inside, one more each side, no decimation needed
    out_x, out_ys = decimate_visible(x, y[np.newaxis], None, buckets=300)
    assert len(out_x) <= 2 * 300 + 100_000 // 300 + 1 and out_ys.max() == y.max()
