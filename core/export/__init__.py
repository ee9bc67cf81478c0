"""Exports of a recorded run: a JSON document, CSV files and TensorBoard event files, the per-step table
they share, and the EMA smoothing with its one default (the window's loss plot uses it too).

May import: core.base, core.config, core.run, core.store. Imports no torch at module level.
"""
