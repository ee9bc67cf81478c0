"""pyqtgraph building blocks and the plots made of them: ring buffers, decimation, the live plot base, the
loss, memory and rate plots, the per-rank lines and series, a memory snapshot's timeline, and saving plots to files.

May import: core, gpu_train_monitor.gui.qt, gpu_train_monitor.gui.i18n.
"""
