"""`python -m gpu_train_monitor.gui`: open the window (or run a subcommand, like the `gpu-train-monitor` command)."""

import sys

from gpu_train_monitor.gui.app import main

sys.exit(main())
