"""Synthetic CUDA memory snapshots in the format `torch.cuda.memory._dump_snapshot` writes (a pickle of plain data:
`segments` with their `blocks`, `device_traces` of allocator events), for tests and benchmarks without a GPU.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np

SEGMENT_BASE = 0x7F00_0000_0000


def frame(filename: str, line: int, name: str) -> dict[str, Any]:
    return {"filename": filename, "line": line, "name": name}


# A stack as torch records it, innermost first: the allocator's C++ frames, PyTorch's Python, then the user's code.
USER_STACK = [
    frame("/pytorch/c10/cuda/CUDACachingAllocator.cpp", 1234, "c10::cuda::CUDACachingAllocator::malloc"),
    frame("/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", 125, "forward"),
    frame("/home/me/project/model.py", 42, "forward"),
    frame("/home/me/project/train.py", 7, "train_step"),
    frame("Python/ceval.c", 100, "_PyEval_EvalFrameDefault"),
]


def event(action: str, addr: int, size: int, time_us: int = 0, frames: list[Any] | None = None) -> dict[str, Any]:
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": time_us, "frames": frames or []}


def segment(address: int, total_size: int, blocks: list[dict[str, Any]], device: int = 0) -> dict[str, Any]:
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {
        "device": device,
        "address": address,
        "total_size": total_size,
        "allocated_size": allocated,
        "active_size": allocated,
        "requested_size": allocated,
        "stream": 0,
        "segment_type": "large",
        "segment_pool_id": (0, 0),
        "is_expandable": False,
        "frames": [],
        "blocks": blocks,
    }


def block(address: int, size: int, state: str = "active_allocated", frames: list[Any] | None = None) -> dict[str, Any]:
    return {"address": address, "size": size, "requested_size": size, "state": state, "frames": frames or []}


def snapshot(segments: list[dict[str, Any]], traces: list[list[dict[str, Any]]]) -> dict[str, Any]:
    return {"segments": segments, "device_traces": traces, "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return path


def training_like(events: int, seed: int = 0, frames_every: int = 0, slots: int = 64) -> dict[str, Any]:
    """A trace of `events` alloc / free_requested / free_completed events over `slots` addresses in one reserved
    segment, rising and falling like training steps (addresses reused); every `frames_every`-th allocation
    carries `USER_STACK` (0: none). The segment at the dump holds the blocks still live at the end."""
    rng = np.random.default_rng(seed)
    slot_size = 1 << 20
    sizes = (rng.integers(1, 16, size=events) * 4096).tolist()
    trace: list[dict[str, Any]] = []
    live: dict[int, int] = {}
    i = 0
    while len(trace) < events:
        slot = int(rng.integers(0, slots))
        addr = SEGMENT_BASE + slot * slot_size
        if addr in live and len(trace) + 2 <= events:
            size = live.pop(addr)
            trace.append(event("free_requested", addr, size, len(trace)))
            trace.append(event("free_completed", addr, size, len(trace)))
        elif addr not in live:
            stack = USER_STACK if frames_every and i % frames_every == 0 else None
            live[addr] = sizes[i % events]
            trace.append(event("alloc", addr, live[addr], len(trace), stack))
            i += 1
        else:
            trace.append({"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": len(trace), "frames": []})
    blocks = [block(addr, size) for addr, size in sorted(live.items())]
    return snapshot([segment(SEGMENT_BASE, slots * slot_size, blocks)], [trace])
