"""Compare mode in the window: the Compare menu, the mode that holds a comparison, the race's texts and the
race view.

May import: core, gpu_train_monitor.gui.history and every gui package below it.
"""
