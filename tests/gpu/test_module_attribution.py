"""Memory by module on CUDA: a sampled step split by module adds up to its allocator breakdown, each module's
parameters as the objects hold them, and the prediction on fake CUDA tensors by module beside the same step run
for real and counted the same way. Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.events.module_bytes import OUTSIDE, modules_total
from gpu_train_monitor.memory.breakdown import StepMemoryRecorder
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.models import build_model
from gpu_train_monitor.model.step import TrainingStep, build_optimizer

pytestmark = pytest.mark.gpu


def test_a_sampled_cuda_step_split_by_module_adds_up_to_the_allocators_breakdown() -> None:
    device = torch.device("cuda", torch.cuda.current_device())
    torch.manual_seed(0)
    model = build_model("resnet18", 10, 3).to(device)
    optimizer = build_optimizer(model, "sgd", lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, optimizer, torch.amp.GradScaler("cuda", enabled=False), "cuda", None)
    recorder = StepMemoryRecorder(MemoryProbe(str(device)))
    images = torch.randn(128, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (128,), device=device)
    for step in (1, 2):  # the second sampled step is split by module
        with recorder.step():
            trainer.step(images, labels, recorder)
        breakdown = recorder.breakdown(step, model, optimizer, images, labels)
    torch.cuda.synchronize()
    rows = {row.name: row for row in breakdown.modules}
    assert breakdown.method == "allocator" and OUTSIDE in rows
    assert abs(modules_total(breakdown.modules) - breakdown.total_bytes) <= 0.01 * breakdown.total_bytes
    layer4 = sum(t.nbytes for t in [*model.layer4.parameters(), *model.layer4.buffers()])
    assert rows["layer4"].params_bytes == layer4
    assert all(rows[name].activations_bytes > 0 for name in ("layer1", "layer2", "layer3"))


def test_a_cuda_prediction_by_module_matches_the_same_step_run_for_real() -> None:
    torch.cuda.init()  # fake CUDA tensors (see tests/gpu/test_predicted_memory.py)
    config = RunConfig(device="cuda", model="resnet18", batch_size=128)
    predicted, measured = predict(config), measure(config, device=torch.device("cuda"))
    assert predicted.traced_on == "cuda"
    real = {row.name: row.total_bytes for row in measured.modules}
    for row in predicted.modules:
        assert abs(row.total_bytes - real[row.name]) <= 0.05 * measured.peak_bytes, (row, real[row.name])
    assert modules_total(predicted.modules) == predicted.peak_bytes
