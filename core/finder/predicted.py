"""The largest batch whose predicted peak stays under a limit: a search over predictions, not real steps.

A prediction (gpu_train_monitor.engine.prediction.predict) costs a fraction of a second, so the search can afford a few,
but not dozens: it starts from the one prediction it is given, guesses the answer from that prediction's
breakdown (parameters, gradients and optimizer state stay; the batch and the activations grow with the batch),
then refines by the secant through the two predictions nearest the limit, falling back to doubling and
bisection where a guess is no help. A peak grows almost exactly linearly with the batch, so 2 to 4
predictions usually settle it to within 1/64 of the answer. Every prediction made is cached by batch size.
"""

from __future__ import annotations

from collections.abc import Callable

from ..config.run_config import RunConfig
from ..memory.oom_autopsy import fixed_bytes, proportional_batch
from ..memory.predict import Prediction

MAX_PREDICTIONS = 10  # per search: a prediction is ~0.1-1 s on a CPU


class PredictedPeaks:
    """Predictions of one config at any batch size, cached; `total(batch)` adds `overhead_bytes`, what the
    device holds outside the traced step (allocator, CUDA context, a CPU process's own memory)."""

    def __init__(
        self,
        config: RunConfig,
        *,
        device: str | None = None,
        overhead_bytes: int = 0,
        predict: Callable[..., Prediction] | None = None,
    ) -> None:
        if predict is None:
            from ..engine.prediction import predict
        self.config = config
        self.device = device
        self.overhead_bytes = int(overhead_bytes)
        self._predict = predict
        self._cache: dict[int, Prediction] = {}

    def at(self, batch_size: int) -> Prediction:
        """The prediction at `batch_size` (PredictionUnavailable, ConfigError as `predict` raises them)."""
        if batch_size not in self._cache:
            self._cache[batch_size] = self._predict(self.config, batch_size, device=self.device)
        return self._cache[batch_size]

    def total(self, batch_size: int) -> int:
        return self.at(batch_size).peak_bytes + self.overhead_bytes

    @property
    def predictions(self) -> dict[int, Prediction]:
        return dict(self._cache)


def largest_batch_under(
    peaks: PredictedPeaks, limit_bytes: int, start: int, max_batch: int, max_predictions: int = MAX_PREDICTIONS
) -> int:
    """The largest batch in [1, max_batch] whose predicted total stays at or under `limit_bytes`, to within
    1/64 of it (rounded down: the answer's own prediction fits); 0 when even batch 1 does not fit."""
    lo, hi = 0, max_batch + 1  # lo fits (0: none known), hi does not (max_batch + 1: none known)
    made = 0

    def probe(batch: int) -> None:
        nonlocal lo, hi, made
        made += batch not in peaks.predictions
        if peaks.total(batch) <= limit_bytes:
            lo = max(lo, batch)
        else:
            hi = min(hi, batch)

    probe(min(max(start, 1), max_batch))
    guess = proportional_batch(peaks.at(lo or hi), peaks.overhead_bytes, limit_bytes)  # from its breakdown
    while hi - lo > _tolerance(lo) and made < max_predictions and not _close_enough(peaks, lo, limit_bytes):
        if guess is None:  # no model of the peak to go by: double up, or bisect once bracketed
            guess = lo * 2 if hi > max_batch and lo else (lo + hi) // 2
        guess = min(max(guess, lo + 1), hi - 1)
        probe(guess)
        step = _tolerance(lo)
        after = _secant(peaks, limit_bytes)
        # the next prediction lands at least a tolerance beside this one: it closes the bracket
        if lo == guess:
            guess = max(after if after is not None else 0, guess + step)
        else:
            guess = min(after, guess - step) if after is not None and lo else after
    return lo


def _tolerance(lo: int) -> int:
    return max(1, lo // 64)


def _close_enough(peaks: PredictedPeaks, lo: int, limit: int) -> bool:
    """`lo` fills 63/64 of what the limit leaves beside the fixed part: a larger batch gains under 1/64."""
    if not lo:
        return False
    fixed = fixed_bytes(peaks.at(lo)) + peaks.overhead_bytes
    return peaks.total(lo) - fixed >= (limit - fixed) * 63 / 64


def _secant(peaks: PredictedPeaks, limit: int) -> int | None:
    """Where the line through the last two predictions made reaches the limit (a true secant: no end of the
    bracket stays in it for good, as it would in regula falsi over a curved peak)."""
    known = list(peaks.predictions)[-2:]
    if len(known) < 2:
        return None
    (a, b), (ya, yb) = known, (peaks.total(known[0]), peaks.total(known[1]))
    if a == b or (yb - ya) * (b - a) <= 0:
        return None
    return int(a + (limit - ya) * (b - a) / (yb - ya))
