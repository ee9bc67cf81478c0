"""How the stream placement (`gpu_train_monitor.data.batches.StreamBatches`) moves batches from host memory to the
device: pinned memory and asynchronous copies only where they help and are safe, and a word when more loader workers
are asked for than the machine has cores. Plain policy: decided from the device kind and the settings, no
torch, each decision with the notes (level, text) the run's log says once at the start.
"""

from __future__ import annotations

import os

from ..base.text import Message

Notes = tuple[tuple[str, str], ...]  # (level: "info" or "warning", text), as gpu_train_monitor.data.batches.Note


def transfer_policy(device_type: str, pin_memory: bool, non_blocking: bool) -> tuple[bool, bool, Notes]:
    """(pin, non_blocking, notes) for copying batches to `device_type`.

    Pinned host memory only helps copies to a CUDA GPU. An asynchronous copy is safe only from pinned
    memory to CUDA: on MPS, `non_blocking=True` from ordinary (pageable) memory can read the buffer after
    it was freed and corrupt batches (pytorch#139550), so it is used nowhere else.
    """
    pin = pin_memory and device_type == "cuda"
    asynchronous = non_blocking and pin
    notes: list[tuple[str, str]] = []
    if pin_memory and device_type == "cpu":
        notes.append(("info", Message("pin_memory has no effect on the CPU; it is ignored")))
    if non_blocking and device_type == "mps":
        notes.append(
            (
                "info",
                Message(
                    "non_blocking is ignored on MPS: asynchronous copies from pageable memory can "
                    "corrupt batches there; batches are copied synchronously"
                ),
            )
        )
    elif non_blocking and device_type == "cuda" and not pin_memory:
        notes.append(
            (
                "info",
                Message(
                    "non_blocking needs pin_memory (an asynchronous copy is only safe from pinned "
                    "memory); batches are copied synchronously"
                ),
            )
        )
    return pin, asynchronous, tuple(notes)


def usable_workers(workers: int) -> tuple[int, Notes]:
    """Loader workers, and a note when there are more than the machine's cores (each is a process
    competing with the training for them; torch's own warning about it would repeat every epoch)."""
    cores = os.cpu_count() or 1
    if workers > cores:
        return workers, (
            (
                "warning",
                Message(
                    "{workers} loader workers on {cores} CPU cores: they compete with training "
                    "for the cores; {cores} or fewer is usually faster",
                    workers=workers,
                    cores=cores,
                ),
            ),
        )
    return workers, ()
