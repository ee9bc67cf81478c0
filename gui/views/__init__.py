"""The widgets that show one run, live or recorded: the run view, the event display both kinds share, the
stats panel, the log, the memory breakdown, the per-rank display, the allocator's retries marked on the memory plot
and the window's state.

May import: core, gpu_train_monitor.gui.qt, gpu_train_monitor.gui.i18n, gpu_train_monitor.gui.plots,
gpu_train_monitor.gui.form.
"""
