"""What the form knows about this machine's devices once torch has listed them: their specs, kinds and
names, what `auto` stands for, and which fast paths each one cannot run (asked of `gpu_train_monitor.device.fast_paths`
once per list, so a form change never asks torch again). No Qt: the form, the estimate and the compare
menu read the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.gui.form.checks import fast_path_problems, normalised_device
from gpu_train_monitor.gui.remote.devices import RemoteDevice


@dataclass
class DeviceTable:
    specs: list[str] | None = None  # "cpu", "cuda:0", "mps"; None until torch has listed the devices
    names: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=lambda: {"auto": "cpu", "cpu": "cpu"})
    best: str = "cpu"  # the spec auto stands for
    problems: dict[str, dict[str, str]] = field(default_factory=dict)  # spec -> fast path -> why not

    @classmethod
    def from_devices(cls, devices: Sequence[Any]) -> "DeviceTable":
        """From `gpu_train_monitor.device.devices.list_devices()`: auto is the first CUDA GPU, else MPS, else the
        CPU."""
        best = (
            next((d for d in devices if d.kind == "cuda"), None)
            or next((d for d in devices if d.kind == "mps"), None)
            or devices[0]
        )
        try:
            problems = fast_path_problems((d.spec, d.kind) for d in devices)
        except Exception:  # noqa: BLE001 - torch could not answer: the run's own check still refuses
            problems = {}
        return cls(
            [d.spec for d in devices],
            {d.spec: d.name for d in devices},
            {"auto": best.kind, **{d.spec: d.kind for d in devices}},
            best.spec,
            problems,
        )

    @property
    def known(self) -> bool:
        return self.specs is not None

    def resolved(self, spec: str) -> str:
        """The listed spec `spec` names: auto -> the best device, cuda -> cuda:0, mps:0 -> mps."""
        spec = normalised_device(spec)
        return self.best if spec == "auto" else spec

    def kind(self, spec: str) -> str:
        """'cpu', 'cuda' or 'mps' (a spec not listed is judged by its name)."""
        return self.kinds.get(
            spec,
            self.kinds.get(
                self.resolved(spec), "cuda" if spec.startswith("cuda") else "mps" if spec.startswith("mps") else "cpu"
            ),
        )

    def identity(self, spec: str) -> tuple[str, str] | None:
        """(identity, label) of a listed device: the identity is its kind and name ('cuda|NVIDIA H200': another
        GPU in the same slot is another device), the label how a sentence names it ('cuda:0 (NVIDIA H200)')."""
        spec = self.resolved(spec)
        if spec not in self.names:
            return None
        kind, name = self.kinds.get(spec, "cpu"), self.names[spec]
        return (kind, spec) if kind == "cpu" else (f"{kind}|{name}", f"{spec} ({name})")

    def gpu(self) -> str | None:
        """The first CUDA GPU, else the Apple GPU, else None: where the ready-made comparisons run."""
        for kind in ("cuda", "mps"):
            spec = next((s for s in self.specs or () if self.kinds.get(s) == kind), None)
            if spec is not None:
                return spec
        return None

    def problems_of(self, spec: str) -> dict[str, str]:
        return self.problems.get(self.resolved(spec), {})

    def problem(self, spec: str, fast_path: str) -> str | None:
        """Why device `spec` cannot run `fast_path` ('compile', 'cudnn_benchmark', 'amp=bf16', ...), or None."""
        return self.problems_of(spec).get(fast_path)


def remote_table(devices: Sequence[RemoteDevice]) -> DeviceTable:
    """A remote machine's devices as the form checks them (unknown until connected; auto is its best one). Its
    fast paths are not asked of torch here (this machine's cannot tell what that one has: a compiler, Triton, a
    fused optimizer); what a kind of device can never run is known all the same (`kind_problems`), and greyed out
    as for this machine's devices. The run there refuses the rest."""
    if not devices:
        return DeviceTable()
    best = next((d for d in devices if d.kind == "cuda"), None) or next((d for d in devices if d.kind == "mps"), None)
    best = best or devices[0]
    return DeviceTable(
        [d.spec for d in devices],
        {d.spec: d.name for d in devices},
        {"auto": best.kind, **{d.spec: d.kind for d in devices}},
        best.spec,
        {d.spec: kind_problems(d.kind) for d in devices},
    )


def kind_problems(kind: str) -> dict[str, str]:
    """The fast paths a device of `kind` cannot run whatever the machine, and why, in the words of the run's own
    check (gpu_train_monitor.device.fast_paths): cuDNN's autotuner off CUDA."""
    if kind == "cuda":
        return {}
    return {
        "cudnn_benchmark": Message(
            "cuDNN's autotuner runs on CUDA devices only, not on {device}; untick it (it would change nothing here)",
            device=kind,
        )
    }
