"""Data-parallel training with torch.distributed: the rank environment, the process group, the per-rank
session, SyncBatchNorm, the one launcher, the launcher's watch over its ranks and the in-process relay the
window uses.

May import: gpu_train_monitor.engine and everything below it; never gpu_train_monitor.cli.main (the launcher takes its
entry point).
"""
