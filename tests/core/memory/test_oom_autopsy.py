"""An out of memory's autopsy: the five largest modules (measured when a split exists, else predicted), their share,
and the batch the prediction says fits below the one that failed."""

from __future__ import annotations

from dataclasses import dataclass

from gpu_train_monitor.events.module_bytes import OUTSIDE, ModuleBytes
from gpu_train_monitor.memory.oom_autopsy import HOLDERS, autopsy, batch_that_fits, holders_of

MB = 10**6


@dataclass(frozen=True)
class Predicted:
    """A prediction's fields the autopsy reads: 40 MB fixed (weights, gradients, moments), 1 MB per sample."""

    batch_size: int = 64
    params_bytes: int = 20 * MB
    grads_bytes: int = 10 * MB
    optimizer_bytes: int = 10 * MB
    modules: tuple[ModuleBytes, ...] = ()

    @property
    def peak_bytes(self) -> int:
        return 40 * MB + self.batch_size * MB


def rows(*sizes: int) -> tuple[ModuleBytes, ...]:
    inner = (ModuleBytes("layer", activations_bytes=1),)
    return (
        ModuleBytes(OUTSIDE, activations_bytes=10**12),
        *(ModuleBytes(f"block{i}", activations_bytes=s, params_bytes=1, layers=inner) for i, s in enumerate(sizes)),
    )


def test_the_holders_are_the_five_largest_modules_outside_aside_without_their_layers():
    held = holders_of(rows(5, 70, 1, 30, 9, 50, 2))
    assert len(held) == HOLDERS
    assert [row.name for row in held] == ["block1", "block5", "block3", "block4", "block0"]
    assert [row.total_bytes for row in held] == [71, 51, 31, 10, 6]
    assert all(row.layers == () for row in held)


def test_the_batch_that_fits_leaves_the_margin_once_the_failure_has_raised_the_overhead():
    # the step at 64 is predicted at 104 MB; it failed on a 100 MB device, so at least 0 MB lie outside the trace
    # (none raised: the prediction alone is over); 90 MB (a 10% margin) less 40 MB fixed leaves 50 samples
    assert batch_that_fits(Predicted(), 64, 100 * MB) == 50
    # the prediction says 104 MB but the step failed on a 200 MB device: 96 MB + 1 byte lie outside it, so
    # 180 MB - 96 MB - 40 MB leaves 43 samples (rounded down), below the batch that failed
    assert batch_that_fits(Predicted(), 64, 200 * MB) == 43
    # a prediction made at another batch extrapolates the same way
    assert batch_that_fits(Predicted(batch_size=16), 64, 200 * MB) == 43


def test_no_batch_fits_when_the_fixed_part_alone_fills_the_limit_and_never_more_than_the_failed_one():
    assert batch_that_fits(Predicted(), 64, 44 * MB) == 0  # 39.6 MB under the margin < 40 MB fixed
    # without a margin the failure itself is all there is to go by: just under the batch that failed
    assert batch_that_fits(Predicted(), 8, 10**12, margin=0.0) == 7


def test_a_measured_split_is_named_before_the_prediction_and_the_fit_comes_from_the_prediction():
    predicted = Predicted(modules=rows(1, 2))
    measured = rows(3, 4, 5)
    found = autopsy(measured, 12, predicted, 64, 200 * MB)
    assert (found.holders_source, found.holders_step, found.fits_batch) == ("measured", 12, 43)
    assert [row.name for row in found.holders] == ["block2", "block1", "block0"]
    assert found.holders_total_bytes == sum(row.total_bytes for row in measured)


def test_without_a_measured_split_the_prediction_names_the_holders_and_without_either_nothing_is_named():
    found = autopsy((), 0, Predicted(modules=rows(1, 2)), 64, 200 * MB)
    assert (found.holders_source, found.holders_step, [r.name for r in found.holders]) == (
        "predicted",
        64,
        ["block1", "block0"],
    )
    assert autopsy((), 0, Predicted(), 64, 200 * MB).holders == ()  # a prediction without a split
    empty = autopsy((), 0, None, 64, 200 * MB)
    assert (empty.holders, empty.holders_source, empty.fits_batch) == ((), "", None)
