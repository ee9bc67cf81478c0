"""Human-readable byte counts, shared by the CLI, the log and the GUI's axes."""

from __future__ import annotations


def format_bytes(n: int | float | None) -> str:
    """1234567 -> '1.23 MB' (decimal units, as nvidia-smi's MiB are not what most people read)."""
    if n is None:
        return "?"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"
