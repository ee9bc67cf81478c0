"""How the Runs tab words a run's device: its process count, and the machine when a run was mirrored from
another one (`--remote`): otherwise two runs on cuda:0 of different machines read the same; its last loss."""

from __future__ import annotations

import socket

from gpu_train_monitor.gui.history.row_text import devices_text, last_loss_text
from tests.support.run_rows import run_row


def test_a_run_of_this_machine_shows_its_device_and_process_count(qapp) -> None:
    assert devices_text(run_row(device="cuda:0", world_size=1, host=socket.gethostname())) == "cuda:0"
    assert devices_text(run_row(device="cpu", world_size=2, host=socket.gethostname())) == "cpu ×2"


def test_a_run_mirrored_from_another_machine_names_that_machine(qapp) -> None:
    assert devices_text(run_row(device="cuda:0", world_size=1, host="gpu-box")) == "cuda:0 on gpu-box"
    assert devices_text(run_row(device="cuda:0", world_size=4, host="gpu-box")) == "cuda:0 ×4 on gpu-box"


def test_a_run_that_ended_in_nan_shows_nan_as_its_last_loss_not_a_finite_one_from_before(qapp) -> None:
    assert last_loss_text(run_row(status="diverged", loss_last=None)) == "nan"
    assert last_loss_text(run_row(status="completed", loss_last=None)) == "–"  # no loss was given
    assert last_loss_text(run_row(status="completed", loss_last=0.25)) == "0.25"
