"""What `gpu-train-monitor watch -- python train.py` hands the script's process: the start-up folder it puts first
on PYTHONPATH (its `sitecustomize.py` installs the watch when the script imports torch) and the environment that
start-up code reads. The run store comes as GPU_TRAIN_MONITOR_RUNS_DB (gpu_train_monitor.store.files) and the run's uid
as GPU_TRAIN_MONITOR_RUN_UID (gpu_train_monitor.distributed.env), which a window passes to find the run. Torch-free: the
CLI reads it before anything trains.
"""

from __future__ import annotations

from pathlib import Path

SITE_FOLDER = Path(__file__).resolve().parent / "site"  # holds sitecustomize.py and nothing else
ENV_WATCH_NAME = "GPU_TRAIN_MONITOR_WATCH_NAME"  # --name: the run's name
# a file (not there yet) where the first of the script's processes to die of an exception writes it in one line, so
# that a script that fails before its first step is told by its own error, not only by "nothing recorded"
ENV_SCRIPT_ERROR = "GPU_TRAIN_MONITOR_SCRIPT_ERROR"
