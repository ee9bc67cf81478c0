"""The smoothing default lives with the EMA: readable without numpy, and the step table needs no export module."""

from __future__ import annotations

import json
import subprocess
import sys

LOADED = """
import json, sys
from gpu_train_monitor.export.smoothing import DEFAULT_SMOOTHING
without_numpy = "numpy" not in sys.modules
import gpu_train_monitor.export.step_table
print(json.dumps({"default": DEFAULT_SMOOTHING, "without_numpy": without_numpy,
                  "run_export": "gpu_train_monitor.export.run_export" in sys.modules}))
"""


def test_the_default_is_read_without_numpy_and_the_step_table_does_not_load_the_exports() -> None:
    # a fresh interpreter: this process has loaded numpy and the exports already
    result = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"default": 0.9, "without_numpy": True, "run_export": False}
