"""What a run is asked to do: `RunConfig` and the one table of bounds that the CLI, the form and checks read,
the presets, and `module:factory` specs for a user's own model or dataset.

May import: gpu_train_monitor.base. Imports no torch at module level (the window reads it before torch loads).
"""
