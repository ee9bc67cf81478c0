"""`python -m gpu_train_monitor`: the headless command line."""

import signal
import sys

from .cli.main import main

code = main()
# A Ctrl+C that lands after the command has finished (a second press while the run was stopping) would
# otherwise interrupt the interpreter's exit handlers (tqdm's monitor thread) and print a traceback.
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.exit(code)
