"""The settings form built from core's bounds table: the field widgets and their texts, checks, which fields
apply, the preset row, the device table and the next run's time estimate.

May import: core, gpu_train_monitor.gui.qt, gpu_train_monitor.gui.i18n.
"""
