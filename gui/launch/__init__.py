"""A data-parallel run, or a watched script (File ▸ Watch a script…: its dialog and command line), started as a
child process: the launcher, its command line, the process family, the signals sent to it and the texts that
say how it ended.

May import: core, gpu_train_monitor.gui.history and every gui package below it.
"""
