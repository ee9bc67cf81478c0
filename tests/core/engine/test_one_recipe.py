"""A prediction is only worth what it traces: the step `predict` traces (gpu_train_monitor.engine.prediction) is built
by the recipe a run trains with (gpu_train_monitor.engine.recipe), for every setting of the run configuration that
changes the step. Both are built here on real CPU tensors and compared by what they are and do: the optimizer and
its hyper-parameters, the parameters' memory format, which blocks are checkpointed, and the precision one real step
computes in. The only differences allowed are the ones a trace needs (no gradient scaler, nothing compiled)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import build_step, step_input
from gpu_train_monitor.engine.recipe import build_trainer
from gpu_train_monitor.model.models import build_model

CPU = torch.device("cpu")
BASE = RunConfig(device="cpu", model="tiny-cnn", batch_size=4)
CHANGES = [
    {},
    {"optimizer": "adamw"},
    {"lr": 0.123},
    {"momentum": 0.5},
    {"weight_decay": 0.01},
    {"fused_optimizer": False},
    {"amp": "bf16"},
    {"channels_last": True},
    {"activation_checkpointing": True},
    {"model": "resnet18", "activation_checkpointing": True, "channels_last": True, "optimizer": "adamw"},
    {"compile": True},
]


def what_it_is(model: nn.Module, optimizer: torch.optim.Optimizer, step: Any, shape: tuple[int, ...]) -> dict:
    """The step's settings as they can be seen on its parts, and the precision of one real step's forward (`step`
    None: not run, a compiled one's)."""
    dtypes: list[torch.dtype] = []
    if step is not None:
        handle = model.register_forward_hook(lambda _m, _i, out: dtypes.append(out.dtype))
        try:
            torch.manual_seed(0)
            step(torch.randn(shape), torch.randint(0, 10, (shape[0],)))
        finally:
            handle.remove()
    formats = [p.is_contiguous(memory_format=torch.channels_last) for p in model.parameters() if p.dim() == 4]
    return {
        "optimizer": type(optimizer).__name__,
        "groups": [{k: v for k, v in group.items() if k != "params"} for group in optimizer.param_groups],
        "channels_last": formats,  # of the 4-d weights
        "checkpointed": sorted(name for name, m in model.named_modules() if "forward" in vars(m)),
        "forward_dtype": dtypes,
    }


@pytest.mark.parametrize("changes", CHANGES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "defaults")
def test_a_prediction_traces_the_step_a_run_trains(changes: dict[str, Any]) -> None:
    config = BASE.replace(**changes)
    shape, classes = step_input(config, config.batch_size)

    torch.manual_seed(0)
    trainer = build_trainer(config, CPU, shape[1], classes, shape[2:])
    run = what_it_is(trainer.model, trainer.optimizer, None if config.compile else trainer.step, shape)

    torch.manual_seed(0)
    parts = build_step(config, build_model(config.model, classes, shape[1]), "cpu", shape, classes, CPU)
    traced = what_it_is(
        parts.model, parts.optimizer, None if config.compile else lambda x, y: parts.step(x, y, None), shape
    )

    assert traced == run
    assert run["forward_dtype"] == (
        [] if config.compile else [torch.bfloat16 if config.amp == "bf16" else torch.float32]
    )
    # the differences a trace needs, and no other: torch.compile (and fp16's gradient scaler, a GPU's) is a run's only
    assert (trainer.compiled is not None) == config.compile
