"""The versions a bug report needs, as the About box, "Copy system info" and `gpu-train-monitor info` show them."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys

import pytest
import torch
import torchvision

from gpu_train_monitor.cli.main import main
from gpu_train_monitor.device import nvml
from gpu_train_monitor.device.system_info import (
    APP_NAME,
    NOT_LOADED,
    SystemInfo,
    collect,
    cudnn_version_text,
    driver_text,
)

NAMES = [
    APP_NAME,
    "Python",
    "OS",
    "torch",
    "torchvision",
    "CUDA",
    "GPUs",
    "cuDNN",
    "NVIDIA driver",
    "PySide6",
    "pyqtgraph",
]


def test_every_fact_is_named_in_order_with_the_versions_installed_here() -> None:
    info = collect()
    assert [name for name, _ in info.facts] == NAMES
    assert info.value(APP_NAME) == importlib.metadata.version("gpu-train-monitor")
    assert info.value("Python").startswith(platform.python_version())
    assert info.value("torch") == torch.__version__
    assert info.value("torchvision") == torchvision.__version__
    assert info.value("pyqtgraph") == importlib.metadata.version("pyqtgraph")
    assert info.value("PySide6")[:1].isdigit()  # from the Essentials distribution or the full one
    assert not any(value.startswith("unknown") for _, value in info.facts), info.text()


def test_cuda_says_what_torch_was_built_with_and_whether_a_gpu_can_be_used() -> None:
    cuda = collect().value("CUDA")
    if torch.version.cuda is None and not getattr(torch.version, "hip", None):
        assert cuda == "none (a CPU-only build of torch)"
    elif torch.cuda.is_available():
        assert cuda.endswith(
            f"(GPU available: {torch.cuda.device_count()} device{'s' if torch.cuda.device_count() != 1 else ''})"
        )
        assert torch.cuda.get_device_name(0) in collect().value("GPUs")
    else:
        assert cuda == f"{torch.version.cuda} (no GPU available)"
        assert collect().value("GPUs") == "none" or "mps" in collect().value("GPUs")


@pytest.mark.parametrize(("number", "text"), [(90100, "9.1.0"), (92400, "9.24.0"), (8902, "8.9.2"), (7605, "7.6.5")])
def test_cudnn_numbers_read_as_versions(number: int, text: str) -> None:
    assert cudnn_version_text(number) == text


def test_the_driver_is_read_through_nvml_or_said_to_be_absent() -> None:
    text = driver_text()
    if nvml.available():
        assert text[:1].isdigit() and "supports CUDA" in text, text
    else:
        assert text == "none (no NVIDIA driver found)"


def test_a_fact_that_cannot_be_read_says_why_and_the_others_still_show(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> str:
        raise OSError("uname failed")

    monkeypatch.setattr(platform, "platform", broken)
    info = collect()
    assert info.value("OS") == "unknown (OSError: uname failed)"
    assert info.value("torch") == torch.__version__


def test_text_aligns_one_fact_a_line_and_extra_facts_follow() -> None:
    info = SystemInfo((("torch", "2.5.1"), ("NVIDIA driver", "550.54"))).with_facts([("Qt", "6.8.0")])
    assert info.text() == "torch          2.5.1\nNVIDIA driver  550.54\nQt             6.8.0"
    assert info.value("Qt") == "6.8.0"
    with pytest.raises(KeyError):
        info.value("CUDA")


def test_without_torch_ready_nothing_imports_it() -> None:
    # the window asks before its background import of torch has finished: importing here would block it
    code = (
        "import sys\nfrom gpu_train_monitor.device.system_info import collect\ninfo = collect(torch_ready=False)\n"
        "print(info.value('torch'), '|', 'torch' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{NOT_LOADED} | False"


def test_the_info_command_prints_the_same_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert [line.split("  ")[0] for line in lines] == NAMES
    assert f"torch{' ' * (len(APP_NAME) - len('torch'))}  {torch.__version__}" in lines
