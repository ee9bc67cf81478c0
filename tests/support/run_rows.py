"""A run's row as the store gives it back, made without a store: a finished two-process run on this host, with
any field changed, for tests of what the window does with a row (how a launch ended, where a control goes)."""

from __future__ import annotations

import dataclasses
import socket
import time

from gpu_train_monitor.store.run_store import RunRow


def run_row(**changes: object) -> RunRow:
    """Run 7, completed after 5 steps, recorded by pid 1 on this host; fields not named here are None."""
    now = time.time()
    fields: dict[str, object] = {f.name: None for f in dataclasses.fields(RunRow)}
    fields.update(
        id=7,
        uid="u",
        name="",
        note="",
        label="",
        status="completed",
        live=False,
        started_at=now,
        finished_at=now,
        heartbeat_at=now,
        message="",
        model="tiny-cnn",
        dataset="synthetic",
        device="cpu",
        device_name="cpu",
        placement="resident",
        batch_size=32,
        steps=5,
        total_steps=5,
        peak_allocated_bytes=0,
        peak_reserved_bytes=0,
        pid=1,
        host=socket.gethostname(),
        resumes=0,
        world_size=2,
        origin="",
    )
    unknown = set(changes) - set(fields)
    assert not unknown, f"RunRow has no field {unknown}"
    fields.update(changes)
    return RunRow(**fields)
