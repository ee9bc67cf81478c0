"""The Runs tab: the table model and its columns, the store feeds and the background loader, edits and
exports, resuming a recorded run's checkpoint, a recorded run's own window and the overlays of past runs.

May import: core, gpu_train_monitor.gui.qt, gpu_train_monitor.gui.i18n, gpu_train_monitor.gui.plots,
gpu_train_monitor.gui.form, gpu_train_monitor.gui.views.
"""
