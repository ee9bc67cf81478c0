"""How the Runs tab words a run's device: its process count, and the machine when a run was mirrored from
another one (`--remote`): otherwise two runs on cuda:0 of different machines read the same."""

from __future__ import annotations

import socket

from gpu_train_monitor.gui.history.row_text import devices_text
from tests.support.run_rows import run_row


def test_a_run_of_this_machine_shows_its_device_and_process_count(qapp) -> None:
    assert devices_text(run_row(device="cuda:0", world_size=1, host=socket.gethostname())) == "cuda:0"
    assert devices_text(run_row(device="cpu", world_size=2, host=socket.gethostname())) == "cpu ×2"


def test_a_run_mirrored_from_another_machine_names_that_machine(qapp) -> None:
    assert devices_text(run_row(device="cuda:0", world_size=1, host="gpu-box")) == "cuda:0 on gpu-box"
    assert devices_text(run_row(device="cuda:0", world_size=4, host="gpu-box")) == "cuda:0 ×4 on gpu-box"
