"""The breakdown tab's memory by module: the largest blocks as bars with their share of the step, each opening to its
layers, the batch and loss as one row; a prediction's rows until a measured step by module comes, then that one;
and a recorded breakdown read back from the store with its rows."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gpu_train_monitor.events.events import MemoryBreakdown
from gpu_train_monitor.events.module_bytes import OUTSIDE, ModuleBytes, modules_total
from gpu_train_monitor.gui.history.feed import rebuild_event
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.module_chart import SHARE_ROLE, TOP, ModuleChart
from gpu_train_monitor.store.run_writes import event_data

MB = 1_000_000


def rows(blocks: int) -> tuple[ModuleBytes, ...]:
    """`blocks` blocks of 1..blocks MB of activations, the largest with two layers, and the batch outside."""
    made = [ModuleBytes(f"block{i}", activations_bytes=i * MB, params_bytes=MB // 10) for i in range(1, blocks + 1)]
    largest = made[-1]
    layers = (
        ModuleBytes(f"{largest.name}.conv", activations_bytes=largest.activations_bytes - MB // 2),
        ModuleBytes(f"{largest.name}.norm", activations_bytes=MB // 2, params_bytes=MB // 10),
    )
    made[-1] = dataclasses.replace(largest, layers=layers)
    return (*made, ModuleBytes(OUTSIDE, activations_bytes=3 * MB))


def test_the_largest_blocks_are_bars_by_share_with_their_layers_inside(qtbot) -> None:
    chart = ModuleChart()
    qtbot.addWidget(chart)
    shown = rows(TOP + 3)
    chart.show_measured(shown, step=12)
    tree = chart.tree
    names = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert names[:TOP] == [f"block{i}" for i in range(TOP + 3, 3, -1)]  # largest first
    assert names[TOP] == "3 other modules" and names[-1] == "(batch, loss, outside modules)"
    shares = [tree.topLevelItem(i).data(2, SHARE_ROLE) for i in range(tree.topLevelItemCount())]
    assert sum(shares) == pytest.approx(1.0)  # the rows add up to the step
    first = tree.topLevelItem(0)
    layers = [first.child(i).text(0) for i in range(first.childCount())]
    assert layers == [f"block{TOP + 3}.conv", f"block{TOP + 3}.norm"]  # named by their whole path
    total = modules_total(shown)
    assert first.text(2) == f"{round(100 * shown[-2].total_bytes / total)}%"
    assert "step 12" in chart.caption.text() and not chart.isHidden()


def test_a_prediction_is_shown_until_a_step_is_measured_by_module(qtbot) -> None:
    chart = ModuleChart()
    qtbot.addWidget(chart)
    assert chart.isHidden()
    chart.offer_predicted(rows(2))
    assert "predicted" in chart.caption.text() and chart.tree.topLevelItemCount() == 3
    chart.show_measured(rows(4), step=3)
    chart.offer_predicted(rows(2))  # a later prediction does not replace the measured step
    assert "step 3" in chart.caption.text() and chart.tree.topLevelItemCount() == 5
    chart.clear()
    assert chart.isHidden() and chart.tree.topLevelItemCount() == 0


def test_a_breakdown_by_module_is_shown_live_and_read_back_from_the_store(qtbot) -> None:
    view = BreakdownView()
    qtbot.addWidget(view)
    plain = MemoryBreakdown(2, 10, 10, 10, 10, 10, 0, (("forward", 1),), "saved-tensors")
    view.show_breakdown(plain)
    assert view.modules.isHidden()  # most sampled steps are not split by module
    measured = dataclasses.replace(plain, step=3, modules=rows(3))
    stored = rebuild_event("MemoryBreakdown", json.loads(json.dumps(event_data(measured))))  # as the store keeps it
    assert stored == measured
    view.show_breakdown(stored)
    assert view.modules.step == 3 and view.modules.tree.topLevelItemCount() == 4
    view.show_breakdown(dataclasses.replace(plain, step=4))
    assert view.modules.step == 3  # kept until the next step split by module


def test_a_transformers_attention_share_is_said_under_its_rows(qtbot) -> None:
    chart = ModuleChart()
    qtbot.addWidget(chart)
    chart.show_measured(rows(3), step=2)
    assert chart.attention.isHidden()  # no attention module: nothing said
    layers = (
        ModuleBytes("blocks.0.attn", activations_bytes=2 * MB),
        ModuleBytes("blocks.0.attn.qkv", params_bytes=MB),
        ModuleBytes("blocks.0.mlp.0", activations_bytes=MB),
    )
    gpt = (ModuleBytes("blocks", activations_bytes=3 * MB, params_bytes=MB, layers=layers), ModuleBytes(OUTSIDE, MB))
    chart.show_measured(gpt, step=2)
    assert not chart.attention.isHidden()
    assert chart.attention.text() == "Attention: 3.00 MB (60% of the step's peak), 2.00 MB of it activations"
