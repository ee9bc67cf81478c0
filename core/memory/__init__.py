"""Device memory during training: the probe that samples the allocator's counters, the per-holder breakdown,
the step predicted on fake tensors, the step's memory by module (predicted and measured), CUDA memory snapshots
(recorded here; read from any machine without torch: the timeline, its peak and what was live there), and
out-of-memory errors recognised, described and released.

May import: gpu_train_monitor.base, gpu_train_monitor.config, gpu_train_monitor.events, gpu_train_monitor.device. May
import torch.
"""
