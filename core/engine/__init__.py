"""One training run from start to end: `TrainingSession`, the recipe that builds its parts, the loop's state,
the loss reports, validation, out-of-memory recovery and checkpoints.

May import: every core package below it (base, config, run, device, store, export, memory, data, model).
"""
