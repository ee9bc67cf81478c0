"""Synchronised BatchNorm for every device: torch's `SyncBatchNorm` on CUDA, and on the CPU (gloo) a
BatchNorm whose batch statistics are summed over the ranks with torch.distributed's differentiable
all_reduce (torch's `SyncBatchNorm` refuses CPU tensors: its kernels `batch_norm_stats` and
`batch_norm_gather_stats_with_counts` exist only for GPUs). Either way each step normalises over the whole
global batch, as a one-process run with that batch does, so their losses agree.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn
from torch import nn


class CpuSyncBatchNorm(nn.BatchNorm2d):
    """BatchNorm2d over the global batch: per-channel sums, squared sums and counts all-reduced once per
    forward (autograd carries the gradient back through the same reduction)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or not dist.is_initialized() or dist.get_world_size() == 1:
            return super().forward(x)
        channels = x.shape[1]
        xf = x.float()  # statistics in float32 whatever autocast gives (bf16 sums of squares lose the variance)
        local = torch.cat([xf.sum((0, 2, 3)), (xf * xf).sum((0, 2, 3)), xf.new_full((1,), x.numel() / channels)])
        total = dist_fn.all_reduce(local)
        count = total[-1]
        mean = total[:channels] / count
        var = (total[channels : 2 * channels] / count - mean * mean).clamp(min=0)  # biased, as normalisation uses
        if self.track_running_stats and self.running_mean is not None and self.running_var is not None:
            assert self.num_batches_tracked is not None
            self.num_batches_tracked.add_(1)
            momentum = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
            with torch.no_grad():
                unbiased = var * (count / (count - 1)).clamp(min=0)
                self.running_mean.lerp_(mean.detach(), momentum)
                self.running_var.lerp_(unbiased.detach(), momentum)
        shape = (1, channels, 1, 1)
        y = (xf - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


def synchronise_batchnorm(model: nn.Module, device: torch.device) -> nn.Module:
    """`model` with every BatchNorm synchronised across the ranks (parameters and buffers are the same
    objects: an optimizer built on the model before still updates them)."""
    if device.type == "cuda":
        return nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return _convert_cpu(model)


def _convert_cpu(module: nn.Module) -> nn.Module:
    if isinstance(module, nn.BatchNorm2d) and not isinstance(module, CpuSyncBatchNorm):
        synced = CpuSyncBatchNorm(
            module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats
        )
        if module.affine:
            synced.weight, synced.bias = module.weight, module.bias
        synced.running_mean, synced.running_var = module.running_mean, module.running_var
        synced.num_batches_tracked = module.num_batches_tracked
        synced.train(module.training)
        return synced
    for name, child in module.named_children():
        module.add_module(name, _convert_cpu(child))
    return module
