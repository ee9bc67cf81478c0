"""What the model is fed: the dataset readers (`datasets/`), where the data lives (resident on the device or
streamed from the CPU), the batch sources, preprocessing on the device, and sharding across ranks.

May import: gpu_train_monitor.base, gpu_train_monitor.config, gpu_train_monitor.events, gpu_train_monitor.device,
gpu_train_monitor.memory. May import torch.
"""
