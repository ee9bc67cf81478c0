"""Planning a comparison: --vs overrides parsed against the bounds table, runs labelled, the ready-made
comparisons offered only where they apply."""

from __future__ import annotations

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.compare.plan import DEFAULT_STEPS, label, parse_overrides, plan, ready_comparisons
from gpu_train_monitor.config.run_config import RunConfig


def test_overrides_are_typed_by_the_bounds_table() -> None:
    assert parse_overrides("device=cuda:0, amp=bf16") == {"device": "cuda:0", "amp": "bf16"}
    assert parse_overrides("batch-size=256,channels_last=true,lr=0.1") == {
        "batch_size": 256,
        "channels_last": True,
        "lr": 0.1,
    }
    assert parse_overrides("compile=off,workers=2") == {"compile": False, "workers": 2}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("devise=cpu", "unknown setting 'devise'"),
        ("batch_size=0", "batch_size"),
        ("batch_size=lots", "batch_size"),
        ("amp=fp8", "amp"),
        ("channels_last=maybe", "channels_last"),
        ("device", "is not setting=value"),
        ("max_steps=10", "shared by every run"),
        (" , ", "sets nothing"),
    ],
)
def test_an_override_that_does_not_parse_names_itself(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_overrides(text)
    assert info.value.field == "vs"
    assert fragment in str(info.value)


def test_every_run_trains_the_same_steps_with_its_own_overrides() -> None:
    base = RunConfig(device="cpu", model="tiny-cnn", epochs=3)
    runs = plan(base, [{"placement": "stream"}, {"placement": "resident"}])
    assert [r.config.placement for r in runs] == ["stream", "resident"]
    assert {r.config.max_steps for r in runs} == {DEFAULT_STEPS} and {r.config.epochs for r in runs} == {None}
    assert [r.label for r in runs] == ["stream", "resident"]
    assert plan(base.replace(max_steps=7), [{"amp": "off"}, {"amp": "bf16"}])[1].config.max_steps == 7


def test_a_comparison_needs_two_to_four_different_runs() -> None:
    base = RunConfig()
    for overrides in ([{"amp": "bf16"}], [{"workers": n} for n in range(5)]):
        with pytest.raises(ConfigError, match="2 to 4"):
            plan(base, overrides)
    with pytest.raises(ConfigError, match="same run"):
        plan(base, [{"amp": "off"}, {"amp": "off"}])


def test_labels_say_what_a_run_changes() -> None:
    assert label({"device": "cuda:0"}) == "cuda:0"
    assert label({"amp": "bf16", "channels_last": True}) == "amp bf16, channels_last"
    assert label({"compile": False}) == "no compile"
    assert label({"batch_size": 256}) == "batch_size=256"


def test_without_a_gpu_only_what_applies_is_offered() -> None:
    names = [c.name for c in ready_comparisons(RunConfig(), gpu=None, compile_available=False)]
    assert names == ["stream vs resident", "activation checkpointing off vs on"]
    names = [c.name for c in ready_comparisons(RunConfig(), gpu=None, compile_available=True)]
    assert names == ["stream vs resident", "activation checkpointing off vs on", "compiled vs eager"]
    for comparison in ready_comparisons(RunConfig(), gpu=None, compile_available=True):
        assert all(o["device"] == "cpu" for o in comparison.overrides)
        plan(RunConfig(), comparison.overrides)  # each one is a valid comparison


def test_with_a_gpu_the_cpu_side_drops_what_the_cpu_refuses() -> None:
    base = RunConfig(amp="fp16", cudnn_benchmark=True)
    offered = {c.name: c for c in ready_comparisons(base, gpu="cuda:0", compile_available=True)}
    assert list(offered) == [
        "CPU vs GPU",
        "stream vs resident",
        "AMP off vs bf16",
        "channels_last",
        "activation checkpointing off vs on",
        "expandable segments off vs on",
        "compiled vs eager",
    ]
    cpu, gpu = offered["CPU vs GPU"].overrides
    assert cpu == {"device": "cpu", "amp": "off", "cudnn_benchmark": False} and gpu == {"device": "cuda:0"}
    assert all(o["device"] == "cuda:0" for o in offered["stream vs resident"].overrides)


def test_a_label_leaves_out_what_every_run_sets_alike() -> None:
    runs = plan(RunConfig(), [{"device": "cpu", "placement": "stream"}, {"device": "cpu", "placement": "resident"}])
    assert [r.label for r in runs] == ["stream", "resident"]
    assert runs[0].overrides == {"device": "cpu", "placement": "stream"}  # the overrides stay whole
    runs = plan(RunConfig(), [{"amp": "bf16"}, {"channels_last": True}])
    assert [r.label for r in runs] == ["amp bf16", "channels_last"]


def test_a_machine_with_several_processors_offers_one_against_n() -> None:
    offered = {
        c.name: c for c in ready_comparisons(RunConfig(batch_size=96), gpu=None, compile_available=False, processes=8)
    }
    one, many = offered["1 vs 8 CPU processes"].overrides  # 96 splits over 8
    assert (one["nproc"], many["nproc"], many["device"]) == (1, 8, "cpu")
    offered = {
        c.name: c
        for c in ready_comparisons(RunConfig(batch_size=100), gpu="cuda:0", compile_available=False, processes=8)
    }
    assert "1 vs 5 GPUs" in offered  # the most GPUs whose share of the batch is whole
    runs = plan(RunConfig(batch_size=100), offered["1 vs 5 GPUs"].overrides)
    assert [r.label for r in runs] == ["nproc=1", "nproc=5"]
    assert not [
        c
        for c in ready_comparisons(RunConfig(), gpu=None, compile_available=False, processes=1)
        if "vs" in c.name and "process" in c.name
    ]
