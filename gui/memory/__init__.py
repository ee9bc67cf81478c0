"""Memory insight: the coordinator, the NVML panel, the out-of-memory banner, the batch-size finder panel,
the device watch while no run trains, and a memory snapshot's own window (File ▸ Open memory snapshot…).

May import: core, gpu_train_monitor.gui.run and every gui package below it.
"""
