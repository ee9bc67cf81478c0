"""Compare mode: the plan (which contenders), the race that runs them, the result and its verdict, and the
events that only a comparison emits.

May import: gpu_train_monitor.distributed, gpu_train_monitor.finder, gpu_train_monitor.engine and everything below them.
"""
