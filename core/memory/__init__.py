"""Device memory during training: the probe that samples the allocator's counters, the per-holder breakdown,
CUDA memory snapshots, and out-of-memory errors recognised, described and released.

May import: core.base, core.config, core.run, core.device. May import torch.
"""
