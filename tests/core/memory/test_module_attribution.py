"""A step's memory by module, predicted on fake tensors and measured on real ones: the rows add up to the counted
peak, the parts by module add up to the prediction's parts, the prediction's rows equal those of the same step
run for real (resnet18, a small vision transformer, a small transformer), and a model small enough to count by
hand gets the bytes worked out here.
"""

from __future__ import annotations

import threading

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torchvision.models import resnet18
from torchvision.models.vision_transformer import VisionTransformer

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.events.events import MemoryBreakdown
from gpu_train_monitor.events.module_bytes import OUTSIDE, ModuleBytes, modules_from_json, modules_total
from gpu_train_monitor.memory.breakdown import StepMemoryRecorder
from gpu_train_monitor.memory.live_bytes import LiveBytes
from gpu_train_monitor.memory.measured_modules import AttributionSchedule
from gpu_train_monitor.memory.module_context import ModuleContext
from gpu_train_monitor.memory.module_rows import top_blocks
from gpu_train_monitor.memory.predict import Prediction, StepParts, measure_step, predict_step
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.models import build_model, model_options
from gpu_train_monitor.model.step import TrainingStep, build_optimizer

F32 = 4
BATCH, HIDDEN, CLASSES = 16, 32, 10


def small_vit() -> nn.Module:
    return VisionTransformer(
        image_size=32, patch_size=4, num_layers=4, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=CLASSES
    )


class SmallTransformer(nn.Module):
    """Rows of 32 pixels as tokens, three encoder layers, mean-pooled into a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(32, 64)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 3)
        self.head = nn.Linear(64, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(x.reshape(x.shape[0], -1, 32))).mean(1))


def adamw_step(model: nn.Module) -> StepParts:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(images: torch.Tensor, labels: torch.Tensor, marks: LiveBytes) -> object:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        marks.mark("forward")
        loss.backward()
        marks.mark("backward")
        optimizer.step()
        marks.mark("optimizer")
        return loss

    return StepParts(model, optimizer, step)


def check_rows(p: Prediction) -> None:
    """The rows add up to the peak, and each part by module to the prediction's part."""
    rows = p.modules
    assert rows[-1].name == OUTSIDE
    assert abs(modules_total(rows) - p.peak_bytes) <= 0.01 * p.peak_bytes
    assert sum(r.params_bytes for r in rows) == p.params_bytes
    assert sum(r.grads_bytes for r in rows) == p.grads_bytes
    assert sum(r.optimizer_bytes for r in rows) == p.optimizer_bytes
    assert sum(r.activations_bytes + r.temporaries_bytes for r in rows) == p.batch_bytes + p.activations_bytes
    # modules hold the step: outside is the batch and the loss (cross-entropy's few bytes per image)
    assert p.batch_bytes <= rows[-1].total_bytes <= p.batch_bytes + 0.01 * p.peak_bytes
    for row in rows:
        if row.layers:
            assert all(layer.name.startswith(row.name + ".") or layer.name == row.name for layer in row.layers)
            assert modules_total(row.layers) == row.total_bytes


def check_like_measured(predicted: Prediction, measured: Prediction) -> None:
    assert [r.name for r in predicted.modules] == [r.name for r in measured.modules]
    for a, b in zip(predicted.modules, measured.modules, strict=True):
        assert abs(a.total_bytes - b.total_bytes) <= 0.01 * max(b.total_bytes, 1), (a, b)


def test_resnet18_blocks_are_its_stages_and_a_transformers_are_its_layers() -> None:
    assert top_blocks(resnet18()) == ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4",
                                      "avgpool", "fc"]  # fmt: skip
    vit = top_blocks(small_vit())
    assert vit[0] == "conv_proj" and vit[-1] == "heads"
    assert [b for b in vit if b.startswith("encoder.layers.")] == [
        f"encoder.layers.encoder_layer_{i}" for i in range(4)
    ]
    assert top_blocks(SmallTransformer()) == ["embed", "encoder.layers.0", "encoder.layers.1", "encoder.layers.2",
                                              "head"]  # fmt: skip


def test_resnet18_predicted_by_module_adds_up_and_matches_its_real_step() -> None:
    config = RunConfig(device="cpu", dataset="synthetic", model="resnet18")
    predicted, measured = predict(config, 4), measure(config, 4)
    check_rows(predicted)
    check_rows(measured)
    check_like_measured(predicted, measured)
    names = [r.name for r in predicted.modules]
    assert names[:3] == ["conv1", "bn1", "relu"] and "layer4" in names
    layer4 = next(r for r in predicted.modules if r.name == "layer4")
    assert layer4.params_bytes == 4 * sum(p.numel() for p in build_model("resnet18", 10, 3).layer4.parameters()) + (
        4 * sum(b.numel() for b in build_model("resnet18", 10, 3).layer4.buffers() if b.is_floating_point())
        + 8 * sum(1 for b in build_model("resnet18", 10, 3).layer4.buffers() if not b.is_floating_point())
    )


@pytest.mark.parametrize("build", [small_vit, SmallTransformer], ids=["vit", "transformer"])
def test_transformers_predicted_by_module_add_up_and_match_their_real_steps(build: type[nn.Module]) -> None:
    shape = (8, 3, 32, 32)
    predicted = predict_step(build, adamw_step, shape, CLASSES)
    measured = measure_step(build, adamw_step, shape, CLASSES, device=torch.device("cpu"))
    check_rows(predicted)
    check_like_measured(predicted, measured)
    blocks = [r for r in predicted.modules if ".layers." in r.name]
    assert len(blocks) >= 3 and all(b.activations_bytes > 0 for b in blocks)


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(48, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def sgd_step(model: nn.Module) -> StepParts:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(images: torch.Tensor, labels: torch.Tensor, marks: LiveBytes) -> object:
        loss = F.cross_entropy(model(images), labels)
        marks.mark("forward")
        loss.backward()
        marks.mark("backward")
        optimizer.step()
        marks.mark("optimizer")
        return loss

    return StepParts(model, optimizer, step)


def test_a_small_network_by_module_matches_bytes_counted_by_hand() -> None:
    batch = 256  # the peak is in backward, while ReLU's saved output and the gradient at it are both live
    p = predict_step(mlp, sgd_step, (batch, 3, 4, 4), CLASSES)
    rows = {r.name: r for r in p.modules}
    first, second = (48 * HIDDEN + HIDDEN) * F32, (HIDDEN * CLASSES + CLASSES) * F32
    assert rows["1"].params_bytes == rows["1"].optimizer_bytes == first  # SGD's momentum: one buffer per weight
    assert rows["3"].params_bytes == rows["3"].optimizer_bytes == second
    assert rows["2"].activations_bytes == batch * HIDDEN * F32  # ReLU keeps its output (the second Linear's input)
    assert rows["2"].params_bytes == 0
    assert rows["3"].temporaries_bytes == batch * HIDDEN * F32  # its backward made the gradient at its input
    assert set(rows) == {"1", "2", "3", OUTSIDE}
    # the batch (the first Linear keeps a view of it) and the labels are outside every module
    assert rows[OUTSIDE].activations_bytes == batch * 48 * F32 + batch * 8
    check_rows(p)


def test_a_sampled_step_is_measured_by_module_and_adds_up_to_its_breakdown() -> None:
    torch.manual_seed(0)
    model = build_model("resnet18", CLASSES, 3)
    optimizer = build_optimizer(model, "sgd", lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, optimizer, torch.amp.GradScaler("cpu", enabled=False), "cpu", None)
    recorder = StepMemoryRecorder(MemoryProbe("cpu"))
    images, labels = torch.randn(4, 3, 32, 32), torch.randint(0, CLASSES, (4,))
    breakdowns = []
    for step in (1, 2, 3):  # the second sampled step is attributed; the third is due a period later
        with recorder.step():
            trainer.step(images, labels, recorder)
        breakdowns.append(recorder.breakdown(step, model, optimizer, images, labels))
    first, second, third = breakdowns
    assert first.modules == () and third.modules == ()
    rows = second.modules
    assert abs(modules_total(rows) - second.total_bytes) <= 0.01 * second.total_bytes
    assert sum(r.params_bytes for r in rows) == second.params_bytes
    assert sum(r.grads_bytes for r in rows) == second.grads_bytes
    assert sum(r.optimizer_bytes for r in rows) == second.optimizer_bytes
    assert sum(r.activations_bytes for r in rows) == second.activations_bytes + second.batch_bytes
    outside = rows[-1]
    assert outside.name == OUTSIDE and outside.activations_bytes >= second.batch_bytes
    assert outside.activations_bytes < second.batch_bytes + 4096  # the loss's few bytes besides the batch
    # what a module saves on a real step is what the prediction says it saves (its parameters the same too)
    predicted = {r.name: r for r in measure(RunConfig(device="cpu", model="resnet18"), 4).modules}
    for row in rows[:-1]:
        assert row.params_bytes == predicted[row.name].params_bytes
    assert all(row.activations_bytes > 0 for row in rows if row.name.startswith("layer"))


def test_attribution_is_due_on_the_second_sample_and_then_once_a_period() -> None:
    schedule = AttributionSchedule(period_s=3600)
    assert [schedule.due() for _ in range(4)] == [False, True, False, False]
    often = AttributionSchedule(period_s=0)
    assert [often.due() for _ in range(3)] == [False, True, True]


def test_the_module_context_leaves_no_hook_behind_and_ignores_other_threads() -> None:
    from torch.nn.modules import module as modules

    model = mlp()
    before = (dict(modules._global_forward_pre_hooks), dict(modules._global_forward_hooks))
    seen: list[nn.Module | None] = []
    other = mlp()
    with ModuleContext(model) as context:
        hook = model[2].register_forward_pre_hook(lambda *_: seen.append(context.current()))
        thread = threading.Thread(target=lambda: other(torch.randn(2, 48)))  # another model on another thread
        thread.start()
        thread.join()
        model(torch.randn(2, 48))
        hook.remove()
        assert context.current() is None
    assert seen == [model[2]]
    assert (dict(modules._global_forward_pre_hooks), dict(modules._global_forward_hooks)) == before


def test_rows_read_back_from_json_as_they_were() -> None:
    rows = (
        ModuleBytes("layer1", 10, 20, 30, 40, 50, (ModuleBytes("layer1.0", 10, 20, 30, 40, 50),)),
        ModuleBytes(OUTSIDE, activations_bytes=7),
    )
    assert modules_from_json([r.as_json() for r in rows]) == rows
    assert modules_from_json(None) == () and modules_from_json([{"nope": 1}]) == ()


def test_following_modules_through_backward_holds_no_memory_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backward hooks keep no gradient alive (a multi-grad hook in "all" mode held them until the step ended and
    moved an activation-checkpointed step's peak by 8 MB). Garbage is collected before, not during, each trace:
    cycles freed mid-step would make the two peaks differ by chance."""
    import gc

    import gpu_train_monitor.memory.traced_modules as traced

    config = RunConfig(device="cpu", model="tiny-cnn", batch_size=32, optimizer="adamw", activation_checkpointing=True)

    def peak() -> int:
        gc.collect()
        gc.disable()
        try:
            return predict(config).peak_bytes
        finally:
            gc.enable()

    followed = peak()
    monkeypatch.setattr(traced, "ModuleContext", lambda model, backward: ModuleContext(model, backward=False))
    assert followed == peak()


def test_a_run_splits_its_second_sampled_step_by_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import gpu_train_monitor.engine.report
    from gpu_train_monitor.engine.session import TrainingSession

    monkeypatch.setattr(gpu_train_monitor.engine.report, "BREAKDOWN_PERIOD_S", 0.0)  # a breakdown every report
    events: list[object] = []

    def observe(event: object) -> None:
        if isinstance(event, MemoryBreakdown):
            time.sleep(0.02)  # a report interval passes during the step: the next step is sampled too
        events.append(event)

    config = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=16, max_steps=6)
    finished = TrainingSession(config.replace(report_interval=0.01), [observe]).run()
    assert finished.status == "completed", finished.message
    breakdowns = [e for e in events if isinstance(e, MemoryBreakdown)]
    assert len(breakdowns) >= 3
    split = [b for b in breakdowns if b.modules]
    assert [b.step for b in split] == [breakdowns[1].step]  # the second sampled step, then one a minute
    (b,) = split
    assert modules_total(b.modules) == b.total_bytes
    assert [r.name for r in b.modules] == ["features.0", "features.1", "features.2", "head", OUTSIDE]


def test_a_gpts_rows_are_its_transformer_blocks_even_two_of_them() -> None:
    config = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=32)
    model = build_model("gpt-tiny", 256, 1, **model_options(config))
    assert top_blocks(model) == ["tokens", "positions", "blocks.0", "blocks.1", "norm", "head"]
    predicted = predict(config, 8)
    rows = {row.name: row for row in predicted.modules}
    assert modules_total(predicted.modules) == predicted.peak_bytes
    assert rows["blocks.0"].activations_bytes > 0 and rows["blocks.0"].total_bytes == rows["blocks.1"].total_bytes
    measured = {row.name: row.total_bytes for row in measure(config, 8).modules}
    assert measured == {name: row.total_bytes for name, row in rows.items()}  # per module as the real step
