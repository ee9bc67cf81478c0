"""The loss plot's smoothing, which lives in core.ema so that run exports smooth exactly as the plot does."""

from __future__ import annotations

from core.ema import EmaState, debiased_ema

__all__ = ["EmaState", "debiased_ema"]
