"""The ready-made "attention: fused (SDPA) vs plain (softmax of QK^T)": offered for a GPT, its headline states each
attention's peak and how it grows when the sequence length doubles, and on the CPU the plain attention's T x T
matrices grow 4x per doubling while the fused attention's activations grow 2x."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.compare.attention_headline import (
    SequenceGrowth,
    attention_headline,
    attention_pair,
    predict_growth,
    with_attention_headline,
)
from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.compare.plan import plan, ready_comparisons
from gpu_train_monitor.compare.result import ContenderResult, conclude
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.events.attention_bytes import attention_bytes

NAME = "attention: fused (SDPA) vs plain (softmax of QK^T)"
GPT = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", batch_size=2, seq_len=64, max_steps=8)


def offered(base: RunConfig):
    return next((c for c in ready_comparisons(base, None, False) if c.name == NAME), None)


def run(index: int, peak: int | None) -> ContenderResult:
    label = ("fused attention", "plain attention")[index]
    return ContenderResult(
        index, label, {}, "completed", 900.0 - index * 100, (880.0, 920.0 - index * 100), 5.4, 1, None, 1.0, 8, "",
        (5.5, 5.4), 6, peak, "saved-tensors", 64,
    )  # fmt: skip


def test_it_is_offered_for_a_gpt_only_and_races_the_two_attentions() -> None:
    assert offered(GPT.replace(model="tiny-cnn", dataset="synthetic")) is None
    ready = offered(GPT)
    assert ready is not None
    contenders = plan(GPT, ready.overrides)
    assert [c.label for c in contenders] == ["fused attention", "plain attention"]
    assert attention_pair(contenders) == contenders
    assert attention_pair(plan(GPT, [{"amp": "off"}, {"amp": "bf16"}])) is None


def test_the_headline_states_each_peak_measured_and_its_growth_predicted() -> None:
    contenders = plan(GPT, offered(GPT).overrides)
    growth = {
        0: SequenceGrowth(64, 2_400_000, 4_000_000, 300_000, 600_000),
        1: SequenceGrowth(64, 2_600_000, 4_600_000, 400_000, 1_000_000),
    }
    headline = attention_headline(contenders, [run(0, 2_500_000), run(1, 2_700_000)], growth)
    assert headline == (
        "fused attention: 2.50 MB at sequence length 64, 1.67x at 128 (attention's activations 2.00x); plain "
        "attention: 2.70 MB, 1.77x (attention's activations 2.50x; its T x T matrices, beyond the fused, 4.00x); "
        "peaks measured, growth predicted from a trace on fake tensors"
    )
    without = attention_headline(contenders, [run(0, None), run(1, None)], growth)
    assert without is not None and without.startswith("fused attention: 2.40 MB at sequence length 64, 1.67x")
    assert without.endswith("; peaks and growth predicted from a trace on fake tensors")
    assert attention_headline(contenders, [run(0, 1), run(1, 1)], {0: growth[0]}) is None  # one not predicted


def test_the_plain_attentions_matrices_grow_4x_per_doubling_and_the_fused_attentions_activations_2x() -> None:
    """gpt-tiny, batch 2, sequence 64 -> 128 -> 256 on the CPU: traced on fake tensors at each length."""
    torch.set_num_threads(1)
    held = {
        (attention, seq_len): attention_bytes(predict(GPT.replace(seq_len=seq_len, attention=attention)).modules)
        for attention in ("fused", "plain")
        for seq_len in (64, 128, 256)
    }
    activations = {key: found.activation_bytes for key, found in held.items() if found is not None}
    for seq_len in (64, 128):
        fused = activations["fused", 2 * seq_len] / activations["fused", seq_len]
        plain = activations["plain", 2 * seq_len] / activations["plain", seq_len]
        beyond = (activations["plain", 2 * seq_len] - activations["fused", 2 * seq_len]) / (
            activations["plain", seq_len] - activations["fused", seq_len]
        )
        assert 3.8 < beyond < 4.2, (seq_len, beyond)  # the T x T scores, probabilities and mask
        assert fused == pytest.approx(2.0, abs=0.05), seq_len  # the CPU's flash attention keeps no T x T
        assert plain > 2.5, seq_len  # the matrices with the query, key, value and output, which grow 2x


def test_the_prediction_is_what_a_real_step_counts_for_the_plain_attention() -> None:
    torch.set_num_threads(1)
    config = GPT.replace(seq_len=128, attention="plain")
    counted = attention_bytes(measure(config).modules)
    traced = predict_growth(GPT.replace(attention="plain"))
    assert counted is not None and traced is not None
    assert counted.activation_bytes == traced.doubled_attention_bytes


def test_other_comparisons_keep_their_headline() -> None:
    contenders = plan(GPT, [{"amp": "off"}, {"amp": "bf16"}])
    outcome = conclude(contenders, [run(0, 1), run(1, 1)], 8, "gpt-tiny", False)
    assert with_attention_headline(outcome, contenders) is outcome


@pytest.mark.slow  # two runs of 8 steps and four traces: about 15 s on a shared 2-core machine
def test_racing_it_on_the_cpu_states_both_peaks_in_the_headline() -> None:
    base = GPT.replace(report_interval=0.01)
    outcome = Comparison(base, offered(base).overrides).run()
    assert outcome.status == "completed", [r.message for r in outcome.runs]
    assert all(r.peak_bytes for r in outcome.runs)
    assert outcome.headline.startswith("fused attention: ") and " at sequence length 64, " in outcome.headline
    assert outcome.losses_agree is True, outcome.agreement  # the same function: the same losses
    assert "beyond the fused, 4.0" in outcome.headline or "beyond the fused, 3.9" in outcome.headline


def test_a_run_that_did_not_finish_keeps_its_reason_beside_the_attention_headline() -> None:
    contenders = plan(GPT, offered(GPT).overrides)
    failed = ContenderResult(1, "plain attention", {}, "failed", None, None, None, 0, None, 1.0, 0, "out of memory", ())
    outcome = conclude(contenders, [run(0, 2_500_000), failed], 8, "gpt-tiny", False)
    said = with_attention_headline(outcome, contenders).headline
    assert said.startswith("fused attention: 2.50 MB at sequence length 64, ")
    assert said.endswith("; " + outcome.headline) and "out of memory" in said
