"""Which devices exist and what they can do: the device list, fast-path checks, device-wide NVML readings,
the host memory this process may use, and the system's description.

May import: gpu_train_monitor.base, gpu_train_monitor.config, gpu_train_monitor.events. May import torch.
"""
