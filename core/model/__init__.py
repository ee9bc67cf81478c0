"""The models: the built-in zoo, a user's own `module:factory` model, and the optimisation step (`TrainingStep`,
the optimizer and the AMP scaler).

May import: gpu_train_monitor.base, gpu_train_monitor.config, gpu_train_monitor.events, gpu_train_monitor.device,
gpu_train_monitor.memory. May import torch.
"""
