"""What `watch` and `watch --remote` both know of the script they run: how a Python interpreter is named (only
Python scripts run on another machine) and the words a script's non-zero exit is recorded in, which `watch --remote`
exits by. Kept apart from both commands so that neither imports the other.
"""

from __future__ import annotations

import re

PYTHON = re.compile(r"python[0-9.]*(\.exe)?$")
# the template of the failure `watch` records when the script exits non-zero (gpu_train_monitor.cli.watch_command
# .settle_run); `watch --remote` exits with that code (gpu_train_monitor.cli.remote_follow)
SCRIPT_EXITED = "the script exited with code {code}"
