"""The batch-size finder: the search over batch sizes and the one trial it runs in a fresh process.

May import: gpu_train_monitor.engine and everything below it.
"""
