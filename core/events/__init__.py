"""A run's contract with whoever watches it: the events it emits, its summary, how it ended (status and
outcome), the controls a front end sends (stop, pause, clear cache) and the signals that carry them between
processes, and the sentences said about events.

May import: gpu_train_monitor.base, gpu_train_monitor.config. Imports no torch at module level.
"""
