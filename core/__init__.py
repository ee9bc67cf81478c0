"""GPU Training Monitor, imported as `gpu_train_monitor`: the repository's core/ folder, PyTorch and no Qt.

The window is the sub-package `gpu_train_monitor.gui` (the gui/ folder); `python -m gpu_train_monitor` is the headless
command line. Importing this package loads neither torch nor Qt.
"""

__version__ = "0.2.0"  # the one place the version lives: pyproject.toml reads it, `--version` prints it
