"""The models: the built-in zoo, a user's own `module:factory` model, and the optimisation step (`Trainer`,
the optimizer and the AMP scaler).

May import: core.base, core.config, core.run, core.device, core.memory. May import torch.
"""
