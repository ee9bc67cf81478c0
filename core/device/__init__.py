"""Which devices exist and what they can do: the device list, fast-path checks, device-wide NVML readings,
the host memory this process may use, and the system's description.

May import: core.base, core.config, core.run. May import torch.
"""
