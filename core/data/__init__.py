"""What the model is fed: the dataset readers (`datasets/`), where the data lives (resident on the device or
streamed from the CPU), the batch sources, preprocessing on the device, and sharding across ranks.

May import: core.base, core.config, core.run, core.device, core.memory. May import torch.
"""
