"""The main window's shell: the window, its layout, its plot tabs, its hold on a run (state, pause, stop), its saved
settings, the menu bar, the About box, the texts that follow a language switch, the exit signals and the
screenshot mode.

May import: core and every gui package; only gpu_train_monitor.gui.app imports it.
"""
