"""`python -m gui`: open the window (or run a subcommand, like the `gpu-train-monitor` command)."""

import sys

from gui.app import main

sys.exit(main())
