"""The language feature: which language the window speaks, Settings ▸ Language, the translation files, the
words for a run's status, and the texts already shown said again after a switch.

May import: core, gpu_train_monitor.gui.qt.
"""
