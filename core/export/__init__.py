"""Exports of a recorded run: a JSON document, CSV files and TensorBoard event files, the per-step table
they share, and the EMA smoothing with its one default (the window's loss plot uses it too).

May import: gpu_train_monitor.base, gpu_train_monitor.config, gpu_train_monitor.events, gpu_train_monitor.store.
Imports no torch at module level.
"""
