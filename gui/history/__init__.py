"""The Runs tab: the table model and its columns, the store feeds and the background loader, edits and
exports, resuming a recorded run's checkpoint, a recorded run's own window and the overlays of past runs.

May import: core, gui.qt, gui.i18n, gui.plots, gui.form, gui.views.
"""
