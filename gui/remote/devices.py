"""The devices of a remote machine as the window lists them: from the agent's `devices` reply (a list of dicts:
spec, kind, name, capacity_bytes...), each named with the host ("NVIDIA H200 on gpu-box"), and the key a device
combo keeps for one ("cuda:0@gpu-box": the spec never holds an @, the host may: user@host). No widgets here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpu_train_monitor.base.text import Message

KINDS = ("cpu", "cuda", "mps")
# the agent sends a device's name as text: its CPU's as core words it (gpu_train_monitor.device.devices: "{cpu}
# ({threads} threads)"), read back into that Message so the window says it in the user's language
CPU_NAME = re.compile(r"(?P<cpu>.*) \((?P<threads>\d+) threads\)")


@dataclass(frozen=True)
class RemoteDevice:
    """One device of the machine `host` (as the user typed it; `host_name` is what that machine calls itself)."""

    host: str
    host_name: str
    spec: str
    kind: str
    name: str  # a Message where the agent's text is one of core's (a CPU's "(N threads)"): core_text says it
    capacity_bytes: int | None

    @property
    def key(self) -> str:
        """What the device combo keeps for it: 'cuda:0@gpu-box'."""
        return remote_key(self.spec, self.host)


def remote_key(spec: str, host: str) -> str:
    return f"{spec}@{host}"


def split_key(data: object) -> tuple[str, str | None]:
    """(spec, host) of a device combo's data: the host is None for a device of this machine."""
    text = "" if data is None else str(data)
    spec, at, host = text.partition("@")
    return (spec, host) if at and host else (text, None)


def remote_devices(host: str, host_name: str, listed: Iterable[Mapping[str, Any]]) -> tuple[RemoteDevice, ...]:
    """The agent's device dicts as `RemoteDevice`s; an entry without a usable spec or kind is left out (an agent
    of another version may add fields, never drop these)."""
    found = []
    for entry in listed:
        if not isinstance(entry, Mapping):
            continue
        spec, kind = entry.get("spec"), entry.get("kind")
        if not isinstance(spec, str) or not spec or "@" in spec or kind not in KINDS:
            continue
        capacity = entry.get("capacity_bytes")
        found.append(
            RemoteDevice(
                host,
                host_name,
                spec,
                str(kind),
                device_name(str(kind), str(entry.get("name") or spec)),
                int(capacity) if isinstance(capacity, (int, float)) and not isinstance(capacity, bool) else None,
            )
        )
    return tuple(found)


def device_name(kind: str, name: str) -> str:
    """A listed device's name, a CPU's "AMD EPYC (16 threads)" as the Message core made it ("{cpu} ({threads}
    threads)"), so that the window translates its words; any other name as it is."""
    found = CPU_NAME.fullmatch(name) if kind == "cpu" else None
    if found is None:
        return name
    return Message("{cpu} ({threads} threads)", cpu=found["cpu"], threads=int(found["threads"]))
