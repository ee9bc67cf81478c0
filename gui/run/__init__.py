"""Driving a run from the window: the controller that owns its thread or child process, the run buttons,
resume from a checkpoint, and the coordinator and feed of a data-parallel run the window launched.

May import: core, gpu_train_monitor.gui.compare, gpu_train_monitor.gui.launch and every gui package below them.
"""
