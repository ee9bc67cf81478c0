"""The widgets that show one run, live or recorded: the run view, the event display both kinds share, the
stats panel, the log, the memory breakdown, the per-rank display and the window's state.

May import: core, gui.qt, gui.i18n, gui.plots, gui.form.
"""
