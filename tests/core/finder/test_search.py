"""The batch-size finder: `gpu-train-monitor find-batch-size` and the window's finder tab.

The search is tested against a memory model with a known answer (peak = fixed + per_sample * batch, an
out-of-memory error above the capacity), injected as `measure`; real trials are fresh processes (on the CPU
mostly torch's import): tests/e2e/test_finder_trials.py runs them.
"""

from __future__ import annotations

import io
import json
import math

import pytest

import gpu_train_monitor.finder.parts
import gpu_train_monitor.finder.trial
from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.finder.search import BatchSizeResult, Trial, find_batch_size, trial_error
from tests.support.predictions import ModelPredictions

CONFIG = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=2_000_000)  # no answer here is above it


class LinearMemory:
    """A device where a step at batch b peaks at fixed + per_sample * b and runs out of memory above
    `capacity`. Records the batch sizes it was asked to try, in order."""

    def __init__(self, fixed: int, per_sample: int, capacity: int) -> None:
        self.fixed, self.per_sample, self.capacity = fixed, per_sample, capacity
        self.tried: list[int] = []

    def __call__(self, config: RunConfig, batch: int, steps: int) -> int | None:
        assert config is CONFIG and steps >= 1
        self.tried.append(batch)
        peak = self.fixed + self.per_sample * batch
        return None if peak > self.capacity else peak

    def largest_under(self, limit: float) -> int:
        return math.floor((limit - self.fixed) / self.per_sample)


def search(memory: LinearMemory, **options: object) -> BatchSizeResult:
    return find_batch_size(CONFIG, capacity=memory.capacity, measure=memory, **options)  # type: ignore[arg-type]


def assert_monotone(trials: tuple[Trial, ...]) -> None:
    """Sorted by batch size; peaks grow with the batch; every fitting trial comes before every other."""
    sizes = [t.batch_size for t in trials]
    assert sizes == sorted(set(sizes))
    peaks = [t.peak_bytes for t in trials if t.peak_bytes is not None]
    assert peaks == sorted(peaks)
    fits = [t.fits for t in trials]
    assert fits == sorted(fits, reverse=True)


def test_doubling_then_binary_search_finds_the_largest_batch_under_the_limit() -> None:
    memory = LinearMemory(fixed=1000, per_sample=10, capacity=10_000)
    seen: list[Trial] = []
    result = search(memory, margin=0.1, on_trial=seen.append)

    # limit 9000: 1000 + 10 * 800 is the last that fits; 1024 runs out of memory (peak above 10000)
    assert result.batch_size == 800 == memory.largest_under(9000)
    assert memory.tried == [
        1,
        2,
        4,
        8,
        16,
        32,
        64,
        128,
        256,
        512,
        1024,  # doubling until one fails
        768,
        896,
        832,
    ]  # binary search to within an eighth; the fit does the rest
    assert [t.batch_size for t in seen] == memory.tried  # each trial is reported as it ends
    assert (result.fixed_bytes, result.bytes_per_sample) == (1000, 10)
    assert (result.capacity_bytes, result.limit_bytes, result.margin) == (10_000, 9000, 0.1)
    assert result.predicted_peak(result.batch_size) <= result.limit_bytes < result.predicted_peak(801)
    assert result.device == "cpu"

    assert_monotone(result.trials)
    by_size = {t.batch_size: t for t in result.trials}
    assert by_size[1024] == Trial(1024, None, False)  # out of memory: no peak
    assert by_size[896] == Trial(896, 9960, False)  # measured, but above the limit
    assert by_size[768] == Trial(768, 8680, True)


@pytest.mark.parametrize(
    ("fixed", "per_sample", "capacity", "margin"),
    [
        (2_000_000_000, 3_000_000, 80_000_000_000, 0.1),  # an 80 GB GPU: the answer is beyond 16384
        (500_000_000, 40_000_000, 24_000_000_000, 0.25),
        (300_000_000, 150_000_000, 8_000_000_000, 0.0),
    ],
)
def test_the_answer_is_the_largest_batch_under_capacity_less_the_margin(
    fixed: int, per_sample: int, capacity: int, margin: float
) -> None:
    memory = LinearMemory(fixed, per_sample, capacity)
    result = search(memory, margin=margin)
    limit = int(capacity * (1 - margin))
    assert result.batch_size == memory.largest_under(limit)
    assert result.limit_bytes == limit
    assert (
        memory.fixed + memory.per_sample * result.batch_size
        <= limit
        < (memory.fixed + memory.per_sample * (result.batch_size + 1))
    )
    assert_monotone(result.trials)


def test_the_search_stays_within_its_bounds() -> None:
    memory = LinearMemory(fixed=1000, per_sample=10, capacity=10**12)  # everything fits
    result = search(memory, start=3, max_batch=100)
    assert memory.tried == [3, 6, 12, 24, 48, 96]  # 192 would pass the largest batch allowed
    assert result.batch_size == 100  # the fit allows far more: the bound wins


def test_the_fit_cannot_overrule_a_measured_failure() -> None:
    """An out-of-memory error the line does not predict (fragmentation, a kernel that needs more above
    some batch): the answer stays below the smallest batch that failed, and at or above one that fit."""

    def fails_from_300(config: RunConfig, batch: int, steps: int) -> int | None:
        return None if batch >= 300 else 1000 + 10 * batch  # the line alone would allow ~10**11

    result = find_batch_size(CONFIG, capacity=10**12, margin=0.1, measure=fails_from_300)
    failed = min(t.batch_size for t in result.trials if not t.fits)
    fitted = max(t.batch_size for t in result.trials if t.fits)
    assert 256 <= fitted <= result.batch_size < failed <= 512
    assert_monotone(result.trials)


@pytest.mark.parametrize("margin", [-0.1, 1.0, 2.0, float("nan")])
def test_a_margin_outside_0_to_1_is_a_config_error(margin: float) -> None:
    memory = LinearMemory(1000, 10, 10_000)
    with pytest.raises(ConfigError, match="margin") as raised:
        search(memory, margin=margin)
    assert raised.value.field == "margin"
    assert memory.tried == []  # refused before any trial runs


@pytest.mark.parametrize(("start", "max_batch"), [(0, 100), (200, 100)])
def test_bad_bounds_are_config_errors(start: int, max_batch: int) -> None:
    with pytest.raises(ConfigError) as raised:
        search(LinearMemory(1000, 10, 10_000), start=start, max_batch=max_batch)
    assert raised.value.field == "start"


def test_when_even_the_first_batch_does_not_fit_the_error_says_so() -> None:
    memory = LinearMemory(fixed=9500, per_sample=10, capacity=10_000)  # limit 9000 < the model alone
    with pytest.raises(UserError, match="even batch size 1 needs more than") as raised:
        search(memory, margin=0.1)
    assert not isinstance(raised.value, ConfigError)
    assert memory.tried == [1]


@pytest.mark.parametrize("predict", [None, ModelPredictions(params=1000, per_sample=10)], ids=["doubling", "predicted"])
def test_no_trial_and_no_answer_is_above_the_training_set(predict: ModelPredictions | None) -> None:
    """A 2,560-image training set on a machine where 8,000 images fit: the window planned a trial at 24,151, and an
    answer of 2,817 then failed the form."""
    config = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=2560)
    tried: list[int] = []

    def measure(run_config: RunConfig, batch: int, steps: int) -> int | None:
        tried.append(batch)
        peak = 1000 + 10 * batch
        return None if peak > 100_000 else peak

    result = find_batch_size(config, capacity=100_000, margin=0.1, measure=measure, predict=predict)
    assert tried and max(tried) <= 2560
    assert result.batch_size == 2560  # the whole training set fits
    assert result.predicted_batch in (None, 2560)


def test_a_start_above_the_training_set_starts_at_it() -> None:
    tried: list[int] = []

    def measure(run_config: RunConfig, batch: int, steps: int) -> int | None:
        tried.append(batch)
        return 1000 + batch

    config = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=300)
    result = find_batch_size(config, capacity=10**9, start=4096, measure=measure, predict=None)
    assert tried == [300] and result.batch_size == 300


def test_stopping_the_search_ends_it_between_trials() -> None:
    memory = LinearMemory(1000, 10, 10_000)
    with pytest.raises(UserError, match="stopped"):
        search(memory, should_stop=lambda: len(memory.tried) >= 3)
    assert memory.tried == [1, 2, 4]


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the CLI in this process; it must exit 2 with exactly one line on stderr, which is returned."""
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert "Traceback" not in err and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gpu-train-monitor") and "error" in lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--capacity", "abc"], ["--capacity", "'abc' is not a size", "80GB"]),
        (["--capacity", "0"], ["--capacity", "is not a size"]),
        (["--margin", "2"], ["--margin", "from 0 to 0.99", "got 2.0"]),
        (["--start", "0"], ["--start", "got 0"]),
    ],
)
def test_cli_find_batch_size_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: list[str]
) -> None:
    line = cli_error(capsys, "find-batch-size", "--device", "cpu", "--model", "tiny-cnn", *args)
    for fragment in expected:
        assert fragment in line, line


# --- bad input a trial process met ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "raised",
    [
        ConfigError("model", Message("{spec} returned {what}, not a torch.nn.Module", spec="nets:make", what="None")),
        UserError(Message("cannot read {path}", path="/data/x")),
    ],
)
def test_a_trial_s_bad_input_reaches_the_finder_with_its_field_and_template(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raised: UserError
) -> None:
    """The trial process prints it as JSON (gpu_train_monitor.finder.trial); the finder raises it again as the run
    would, the message still a Message (the window translates it)."""

    def refuse(config: RunConfig, batch_size: int, device: object) -> None:
        raise raised

    monkeypatch.setattr(gpu_train_monitor.finder.parts, "trial_parts", refuse)
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"config": CONFIG.to_dict(), "batch_size": 4, "steps": 1})))
    assert gpu_train_monitor.finder.trial.main() == 0
    again = trial_error(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    assert type(again) is type(raised) and str(again) == str(raised)
    said = again.detail if isinstance(again, ConfigError) else again.args[0]
    expected = raised.detail if isinstance(raised, ConfigError) else raised.args[0]
    assert isinstance(said, Message) and said.template == expected.template and said.params == expected.params


def test_an_answer_without_the_structure_keeps_its_english() -> None:
    error = trial_error({"user_error": "model: nets:make returned None", "field": "model"})
    assert isinstance(error, ConfigError) and error.field == "model" and error.detail == "nets:make returned None"
    assert str(trial_error({"user_error": "no such file", "field": None})) == "no such file"
