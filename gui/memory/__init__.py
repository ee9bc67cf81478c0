"""Memory insight: the coordinator, the NVML panel, the out-of-memory banner, the batch-size finder panel and
the device watch while no run trains.

May import: core, gpu_train_monitor.gui.run and every gui package below it.
"""
