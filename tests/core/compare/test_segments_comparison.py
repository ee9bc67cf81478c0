"""The ready-made "expandable segments off vs on": offered only with a CUDA GPU (elsewhere listed as absent, with
why), and its headline, from two runs' recorded allocator peaks, states each run's peak reserved and cache gap."""

from __future__ import annotations

from gpu_train_monitor.compare.plan import absent_comparisons, plan, ready_comparisons
from gpu_train_monitor.compare.result import ContenderResult, conclude
from gpu_train_monitor.compare.segments_headline import cache_gap
from gpu_train_monitor.config.run_config import RunConfig

NAME = "expandable segments off vs on"
BASE = RunConfig(model="tiny-cnn", batch_size=64, max_steps=12)
LOSSES = (2.3, 2.2, 2.1)


def offered(gpu: str | None) -> dict:
    return {c.name: c for c in ready_comparisons(BASE, gpu, compile_available=False)}


def recorded(
    index: int,
    rate: float,
    allocated: int | None,
    reserved: int | None,
    on: bool | None = None,
    seen: bool | None | str = "as asked",
) -> ContenderResult:
    """One run as a comparison records it (plain values, as a CUDA run's summary gives them); `on`: whether it ran
    with expandable segments (by default the second run does); `seen`: what its segments read back."""
    on = bool(index) if on is None else on
    label = "expandable_segments=on" if on else "expandable_segments=off"
    spread = (rate * 0.98, rate * 1.02)
    return ContenderResult(
        index,
        label,
        {},
        "completed",
        rate,
        spread,
        2.1,
        1,
        None,
        1.0,
        12,
        "",
        LOSSES,
        10,
        peak_allocated_bytes=allocated,
        peak_reserved_bytes=reserved,
        segments_expandable=on if seen == "as asked" else seen,  # type: ignore[arg-type]
    )


def test_it_is_offered_on_a_cuda_gpu_only_and_races_the_setting_there() -> None:
    comparison = offered("cuda:0")[NAME]
    assert comparison.overrides == (
        {"device": "cuda:0", "expandable_segments": "off"},
        {"device": "cuda:0", "expandable_segments": "on"},
    )
    runs = plan(BASE, comparison.overrides)
    assert [r.label for r in runs] == ["expandable_segments=off", "expandable_segments=on"]
    first, second = (r.config.to_dict() for r in runs)
    assert {f for f in first if first[f] != second[f]} == {"expandable_segments"}  # the only difference
    assert NAME not in offered(None) and NAME not in offered("mps")
    assert absent_comparisons("cuda:0") == []


def test_where_there_is_no_cuda_gpu_it_is_absent_and_says_why() -> None:
    (no_gpu,) = absent_comparisons(None)
    assert (no_gpu.name, no_gpu.needs) == (NAME, "needs a CUDA GPU")
    assert "this machine has no CUDA GPU" in no_gpu.reason
    (apple,) = absent_comparisons("mps")
    assert apple.name == NAME and "mps is not a CUDA GPU" in apple.reason


def test_the_headline_states_each_run_s_peak_reserved_and_cache_gap() -> None:
    runs = plan(BASE.replace(device="cuda:0"), offered("cuda:0")[NAME].overrides)
    off = recorded(0, 1000.0, 2_200_000_000, 3_100_000_000)
    on = recorded(1, 1010.0, 2_300_000_000, 2_400_000_000)
    outcome = conclude(runs, [off, on], 12, "tiny-cnn", False)
    assert outcome.headline.startswith(
        "expandable segments (read back from the allocator's segments of each run): peak reserved 3.10 GB off vs "
        "2.40 GB on, cache gap (peak reserved minus peak allocated) 900.00 MB vs 100.00 MB; "
    )
    assert "within the noise" in outcome.headline  # 1% apart with 2% spreads: the speed part says so
    assert outcome.losses_agree is True  # where tensors live is not what they compute: the losses are checked
    assert outcome.to_dict()["runs"][0]["peak_reserved_bytes"] == 3_100_000_000
    assert outcome.to_dict()["runs"][1]["peak_allocated_bytes"] == 2_300_000_000


def test_the_runs_order_does_not_matter_and_a_clear_speed_difference_is_kept() -> None:
    overrides = tuple(reversed(offered("cuda:0")[NAME].overrides))  # on first
    runs = plan(BASE.replace(device="cuda:0"), overrides)
    on = recorded(0, 2000.0, 1_000_000_000, 1_050_000_000, on=True)
    off = recorded(1, 1000.0, 1_000_000_000, 1_500_000_000, on=False)
    headline = conclude(runs, [on, off], 12, "tiny-cnn", False).headline
    assert ": peak reserved 1.50 GB off vs 1.05 GB on, cache gap" in headline
    assert "500.00 MB vs 50.00 MB" in headline
    assert headline.endswith(
        "expandable_segments=on trains tiny-cnn 2.00x faster than expandable_segments=off at batch 64; warm-up excluded"
    )


def test_without_allocator_peaks_or_for_another_comparison_the_speed_headline_stays() -> None:
    runs = plan(BASE.replace(device="cuda:0"), offered("cuda:0")[NAME].overrides)
    off, on = recorded(0, 1000.0, 10, 0), recorded(1, 2000.0, 10, 0)  # no caching allocator: reserved 0
    assert conclude(runs, [off, on], 12, "tiny-cnn", False).headline.startswith("expandable_segments=on trains")
    amp = plan(BASE, [{"amp": "off"}, {"amp": "bf16"}])
    off, on = recorded(0, 1000.0, 10, 30), recorded(1, 2000.0, 10, 30)
    assert "faster than" in conclude(amp, [off, on], 12, "tiny-cnn", False).headline
    assert cache_gap(recorded(0, 1.0, 50, 40)) == 0  # peaks at different moments: never below zero
    assert cache_gap(recorded(0, 1.0, None, 40)) is None


def test_a_setting_the_allocator_did_not_take_is_said_not_claimed() -> None:
    runs = plan(BASE.replace(device="cuda:0"), offered("cuda:0")[NAME].overrides)
    off = recorded(0, 1000.0, 2_000_000_000, 2_500_000_000)
    on = recorded(1, 1000.0, 2_000_000_000, 2_500_000_000, seen=False)  # a platform without CUDA's virtual memory
    headline = conclude(runs, [off, on], 12, "tiny-cnn", False).headline
    assert headline.startswith(
        "expandable segments did not take effect as asked: the allocator's segments of "
        "expandable_segments=on were fixed, so the runs do not differ in them: peak reserved 2.50 GB off vs 2.50 GB on"
    )
    unread = recorded(1, 1000.0, 2_000_000_000, 2_100_000_000, seen=None)  # a data-parallel run: not read back
    headline = conclude(runs, [off, unread], 12, "tiny-cnn", False).headline
    assert headline.startswith("expandable segments (not confirmed: the allocator's segments were not read back")


def test_comparisons_of_auto_against_a_setting_keep_the_speed_headline() -> None:
    runs = plan(BASE.replace(device="cuda:0"), [{"expandable_segments": "auto"}, {"expandable_segments": "on"}])
    auto, on = recorded(0, 1000.0, 10, 30, seen=None), recorded(1, 2000.0, 10, 20)
    assert "faster than" in conclude(runs, [auto, on], 12, "tiny-cnn", False).headline.split(";")[0]


def test_the_headline_keeps_each_part_as_a_template_for_the_window_to_translate() -> None:
    runs = plan(BASE.replace(device="cuda:0"), offered("cuda:0")[NAME].overrides)
    measured = [recorded(0, 1000.0, 10, 30), recorded(1, 2000.0, 10, 20)]
    headline = conclude(runs, measured, 12, "tiny-cnn", False).headline
    assert headline.template == "{how}: {figures}; {speed}"
    assert headline.params["how"].template.endswith("(read back from the allocator's segments of each run)")
    assert headline.params["figures"].template.startswith("peak reserved {off_reserved} off vs {on_reserved} on")
    assert headline.params["speed"].template.startswith("{fast} trains {model} {ratio} faster than {slow}")
