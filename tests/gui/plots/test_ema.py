"""The loss plot's smoothing: the vectorized EMA gives what the step-by-step definition gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_train_monitor.export.smoothing import EmaState, debiased_ema
from tests.support.ema_reference import reference


def noisy_losses(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    losses = 2.3 * np.exp(-np.arange(n) / 3000) + 0.2 * rng.random(n)
    losses[rng.integers(0, n, n // 100)] = math.nan  # diverged steps
    losses[rng.integers(0, n, n // 300)] = math.inf
    return losses


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.3, 0.9, 0.999])
def test_matches_the_step_by_step_definition_across_reports_of_any_size(alpha):
    losses = noisy_losses(6_000)
    state = EmaState()
    parts, start = [], 0
    for size in [1, 7, 300, 2, 1500, 13] * 10:  # reports of different lengths continue one EMA
        parts.append(debiased_ema(losses[start : start + size], alpha, state))
        start += size
        if start >= len(losses):
            break
    got = np.concatenate(parts)
    want = np.array(reference(list(losses[: len(got)]), alpha))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert got[~np.isnan(got)] == pytest.approx(want[~np.isnan(want)], rel=1e-9)


def test_no_smoothing_is_the_loss_itself_exactly():
    losses = np.array([2.0, 1.0, 0.1, 3.0])
    assert list(debiased_ema(losses, 0.0, EmaState())) == [2.0, 1.0, 0.1, 3.0]


def test_before_any_finite_loss_the_ema_is_nan_then_holds_through_gaps():
    state = EmaState()
    out = debiased_ema(np.array([math.nan, math.inf, 2.0, math.nan]), 0.5, state)
    assert math.isnan(out[0]) and math.isnan(out[1])
    assert out[2] == 2.0 and out[3] == 2.0  # bias-corrected: the first value, not half of it
    assert list(debiased_ema(np.array([math.nan]), 0.5, state)) == [2.0]  # a later all-NaN report holds too


def test_huge_losses_do_not_overflow_the_blocked_form():
    losses = np.array([1e250, 1e250, 1.0] * 50)
    got = debiased_ema(losses, 0.99, EmaState())
    assert np.isfinite(got).all()
    assert got == pytest.approx(reference(list(losses), 0.99), rel=1e-9)


def test_a_two_million_step_history_is_recomputed_at_once():
    losses = noisy_losses(2_000_000)
    got = debiased_ema(losses, 0.9, EmaState())  # one call, no per-step Python loop
    tail = reference(list(losses[:5000]), 0.9)
    assert got[:5000] == pytest.approx(tail, rel=1e-9, nan_ok=True)
    assert np.isfinite(got[-1])
