"""Whether two runs' images/s differ beyond the noise of their readings, and, when not, how many steps per run
would tell them apart. Pure Python (no torch), like the rest of a comparison's result."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import ContenderResult

# Each report gives one images/s reading; a run's figure is the median of its
# readings after the warm-up, its spread their 10th..90th percentiles.
SPREAD_SIGMAS = 2.563  # p10..p90 of a normal distribution spans 2 x 1.2816 standard deviations
MEDIAN_SE_FACTOR = 1.2533  # a median's standard error is sqrt(pi/2) times a mean's
DETECT_Z = 2.8  # 1.96 (95% two-sided) + 0.84 (80% power): the usual sample-size rule
MAX_STEPS_TO_TELL = 10_000_000  # beyond this, "too small to tell" says more than a number


def tell_apart(fast: ContenderResult, slow: ContenderResult) -> tuple[bool, int | None]:
    """(whether the difference is clear, steps per run that would tell it when it is not).

    Clear when the two spreads do not overlap, or when the runs already took as many readings as telling
    them apart needs. The readings needed per run: each run's per-reading standard deviation is estimated
    from its spread, sigma = (p90 - p10) / 2.563; the difference of two medians over n readings each has a
    standard error of 1.2533 x sqrt((sigma_fast^2 + sigma_slow^2) / n); it stands out (95% confidence, 80%
    power) when the medians' difference d is 2.8 of those, so n = (2.8 x 1.2533)^2 (sigma_fast^2 +
    sigma_slow^2) / d^2. Steps: n readings at each run's steps per reading, plus its warm-up; the larger of
    the two runs. None when unknown (no readings counted) or hopeless (equal medians, or beyond 10 million).
    """
    assert fast.samples_per_s is not None and slow.samples_per_s is not None
    fast_low, fast_high = fast.samples_per_s_spread or (fast.samples_per_s,) * 2
    slow_low, slow_high = slow.samples_per_s_spread or (slow.samples_per_s,) * 2
    if fast_low > slow_high:
        return True, None
    variance = ((fast_high - fast_low) / SPREAD_SIGMAS) ** 2 + ((slow_high - slow_low) / SPREAD_SIGMAS) ** 2
    difference = fast.samples_per_s - slow.samples_per_s
    if difference <= 0:
        return False, None
    needed = math.ceil((DETECT_Z * MEDIAN_SE_FACTOR) ** 2 * variance / difference**2)
    if fast.readings and slow.readings and min(fast.readings, slow.readings) >= needed:
        return True, None  # overlapping spreads, but enough readings to tell the medians apart
    steps = [
        run.warmup_steps + math.ceil(needed * (run.steps - run.warmup_steps) / run.readings)
        for run in (fast, slow)
        if run.readings
    ]
    if len(steps) < 2 or max(steps) > MAX_STEPS_TO_TELL:
        return False, None
    return False, max(steps)
