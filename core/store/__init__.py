"""The SQLite run store: where it lives, its connection and schema migrations, the rows read back, the one
search rule, and the recorder that writes a run's events from its own thread.

May import: gpu_train_monitor.base, gpu_train_monitor.config, gpu_train_monitor.events. Imports no torch at module
level.
"""
