"""gpu_train_monitor.memory.oom on real allocator messages, and the policies that keep a GPU run honest without a GPU
here: free memory under a per-process memory fraction, asynchronous copies only from pinned memory to CUDA,
generators named like their tensors, the resident dataset's share of device memory."""

from __future__ import annotations

import pytest
import torch

import gpu_train_monitor.memory.probe
from gpu_train_monitor.base.errors import DatasetError
from gpu_train_monitor.data.datasets import resident_bytes
from gpu_train_monitor.data.placement import Placement, choose_placement
from gpu_train_monitor.data.transfer import transfer_policy, usable_workers
from gpu_train_monitor.engine.recipe import generator_for
from gpu_train_monitor.memory import oom

GiB, MiB = 2**30, 2**20

# Messages as torch 2.x's CUDA caching allocator writes them (the first two verbatim from user reports;
# the third with a memory fraction set, which adds "... allowed;" and must not disturb the reading).
CUDA_MESSAGES = [
    (
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which 3.69 MiB "
        "is free. Including non-PyTorch memory, this process has 79.18 GiB memory in use. Of the allocated memory "
        "78.12 GiB is allocated by PyTorch, and 512.00 MiB is reserved by PyTorch but unallocated. If reserved but "
        "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        20 * MiB,
        512 * MiB,
    ),
    (
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.23 GiB is "
        "free. Process 4011 has 22.41 GiB memory in use. Of the allocated memory 21.87 GiB is allocated by PyTorch, "
        "and 98.45 MiB is reserved by PyTorch but unallocated.",
        2 * GiB,
        int(98.45 * MiB),
    ),
    (
        "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 139.80 GiB of which 137.30 GiB "
        "is free. Including non-PyTorch memory, this process has 2.48 GiB memory in use. 2.00 GiB allowed; Of the "
        "allocated memory 1.75 GiB is allocated by PyTorch, and 4.00 KiB is reserved by PyTorch but unallocated.",
        int(1.5 * GiB),
        4096,
    ),
]


@pytest.mark.parametrize("message, requested, unallocated", CUDA_MESSAGES)
def test_the_allocators_figures_are_read_from_its_message(message: str, requested: int, unallocated: int) -> None:
    assert oom.requested_bytes(message) == requested
    assert oom.reserved_unallocated_bytes(message) == unallocated


def test_the_cpu_allocators_message_and_older_ones() -> None:
    cpu = (
        "DefaultCPUAllocator: can't allocate memory: you tried to allocate 2147483648 bytes. "
        "Error code 12 (Cannot allocate memory)"
    )
    assert oom.requested_bytes(cpu) == 2 * GiB and oom.reserved_unallocated_bytes(cpu) is None
    assert oom.is_out_of_memory(RuntimeError(cpu))
    old = (
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 12.56 GiB already "
        "allocated; 1.50 GiB free; 13.21 GiB reserved in total by PyTorch)"
    )
    assert oom.requested_bytes(old) == 2 * GiB and oom.reserved_unallocated_bytes(old) is None


def test_what_counts_as_out_of_memory() -> None:
    assert oom.is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory."))
    assert oom.is_out_of_memory(MemoryError())
    assert not oom.is_out_of_memory(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))
    assert not oom.is_out_of_memory(ValueError("out of memory"))  # only the allocators' own errors


def test_onednn_failing_to_make_its_workspace_is_out_of_memory_only_under_a_memory_limit(monkeypatch) -> None:
    """oneDNN's "could not create a primitive" is how a convolution's workspace allocation fails under `ulimit -v`;
    without a limit it means something else and stays an error."""
    from gpu_train_monitor.device import host_memory

    failure = RuntimeError("could not create a primitive")
    monkeypatch.setattr(host_memory, "process_limit", lambda: object())
    assert oom.is_out_of_memory(failure)
    monkeypatch.setattr(host_memory, "process_limit", lambda: None)
    assert not oom.is_out_of_memory(failure)


def test_resetting_the_scaler_forgets_a_half_done_step() -> None:
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", enabled=True)
    scaler.scale(model(torch.ones(1, 2)).sum()).backward()
    scaler.unscale_(optimizer)  # then optimizer.step() fails: the scaler still says UNSCALED
    assert scaler._per_optimizer_states[id(optimizer)]["stage"].name == "UNSCALED"
    oom.reset_scaler_step(scaler)
    assert scaler._per_optimizer_states[id(optimizer)]["stage"].name == "READY"


def test_free_memory_honours_a_per_process_memory_fraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU has 70 GiB free of 80, but this process may use 25% (20 GiB) and holds 12 GiB: 8 GiB."""
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (70 * GiB, 80 * GiB))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: 12 * GiB)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 13 * GiB)
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda device=None: 0.25)
    assert gpu_train_monitor.memory.probe.cuda_free_bytes(torch.device("cuda", 0)) == 8 * GiB
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda device=None: 1.0)
    # free + unused cache
    assert gpu_train_monitor.memory.probe.cuda_free_bytes(torch.device("cuda", 0)) == 70 * GiB + 1 * GiB


def test_a_resident_fit_check_uses_the_free_memory_it_is_given() -> None:
    with pytest.raises(DatasetError, match="8.59 GB is free for this process"):
        choose_placement("resident", 10 * GiB, 8 * GiB, "cifar10", torch.device("cuda", 0))
    assert choose_placement("auto", 10 * GiB, 8 * GiB, "cifar10", torch.device("cuda", 0)).name == "stream"


def test_the_resident_dataset_is_its_own_share_of_device_memory() -> None:
    needed = resident_bytes(60_000, 50_000, 3 * 32 * 32)  # CIFAR-10
    # images + labels, and per epoch the augmented copy, its order and its labels: the ~155 MB that the
    # breakdown used to count as activations
    assert needed == 60_000 * (3072 + 8) + 50_000 * (3072 + 16)
    resident = Placement("resident", needed, 10 * GiB)
    assert resident.device_bytes(torch.device("cuda", 0)) == needed
    assert resident.device_bytes(torch.device("cpu")) == 0  # process memory, not a device-side holder
    assert Placement("stream", needed, 10 * GiB).device_bytes(torch.device("cuda", 0)) == 0


@pytest.mark.parametrize(
    "device, pin, non_blocking, expected_pin, expected_async, note",
    [
        ("cuda", True, True, True, True, None),
        ("cuda", False, True, False, False, "non_blocking needs pin_memory"),
        ("mps", True, True, False, False, "non_blocking is ignored on MPS"),
        ("mps", False, False, False, False, None),
        ("cpu", True, True, False, False, "pin_memory has no effect on the CPU"),
    ],
)
def test_asynchronous_copies_only_from_pinned_memory_to_cuda(
    device: str, pin: bool, non_blocking: bool, expected_pin: bool, expected_async: bool, note: str | None
) -> None:
    got_pin, got_async, notes = transfer_policy(device, pin, non_blocking)
    assert (got_pin, got_async) == (expected_pin, expected_async)
    if note is None:
        assert notes == ()
    else:
        assert len(notes) == 1 and note in notes[0][1] and notes[0][0] == "info"


def test_more_workers_than_cores_is_said_once_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    workers, notes = usable_workers(64)
    assert workers == 64 and len(notes) == 1 and "64 loader workers on 2 CPU cores" in notes[0][1]
    assert usable_workers(2) == (2, ())


def test_generators_are_named_with_their_devices_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Some ops refuse a generator made for "mps" when their tensors are on "mps:0"."""
    assert generator_for(torch.device("cpu")).device == torch.device("cpu")
    created: list[torch.device] = []

    class Recording:
        def __init__(self, device: torch.device) -> None:
            created.append(torch.device(device))

    monkeypatch.setattr(torch, "Generator", Recording)  # no MPS or second GPU here: record the request
    generator_for(torch.device("mps"))
    generator_for(torch.device("cuda", 1))
    assert created == [torch.device("mps", 0), torch.device("cuda", 1)]


def test_adamw_state_left_half_made_by_a_failed_first_step_is_dropped() -> None:
    """AdamW makes step, exp_avg and exp_avg_sq one after another; an allocation failure between them
    used to leave an entry that every later step failed on with KeyError."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    first, second = list(model.parameters())[:2]
    optimizer.state[first].update(
        step=torch.tensor(0.0), exp_avg=torch.zeros_like(first), exp_avg_sq=torch.zeros_like(first)
    )
    optimizer.state[second].update(step=torch.tensor(0.0), exp_avg=torch.zeros_like(second))  # then it failed
    oom.release(torch.device("cpu"), optimizer)
    assert second not in optimizer.state and first in optimizer.state
    model(torch.ones(3, 4)).sum().backward()
    optimizer.step()  # KeyError: 'exp_avg_sq' before the fix
    assert set(optimizer.state[second]) == {"step", "exp_avg", "exp_avg_sq"}


def test_an_error_inside_the_stream_loader_counts_the_lost_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader has moved past a batch it failed to gather: the run still ends consistently, with
    those images counted as skipped rather than reported as a short `completed` run or a failure."""
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.data.batches import _IndexedImages
    from gpu_train_monitor.engine.session import TrainingSession

    original, calls = _IndexedImages.__getitem__, []

    def getitem(self: _IndexedImages, indices: list[int]):  # noqa: ANN202
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError()
        return original(self, indices)

    monkeypatch.setattr(_IndexedImages, "__getitem__", getitem)
    config = RunConfig(
        device="cpu",
        model="tiny-cnn",
        synthetic_samples=512,
        batch_size=64,
        placement="stream",
        on_oom="shrink",
        report_interval=0.01,
    )
    finished = TrainingSession(config).run()
    assert finished.status == "completed", finished.message
    assert finished.summary.samples + finished.summary.skipped_samples == 512
    assert finished.summary.skipped_samples == 64


def test_a_cpu_failure_under_a_process_limit_names_the_limit_not_an_allocators_cache() -> None:
    from gpu_train_monitor.device.host_memory import ProcessLimit
    from gpu_train_monitor.events.events import MemorySample

    GB, MB = 10**9, 10**6  # as the message writes them
    cpu = MemorySample(0.0, "cpu", 2 * GB, 0, 2 * GB, 0, 5 * GB, 9 * GB, 2 * GB, False, "RLIMIT_AS")
    message = (
        "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes. "
        "Error code 12 (Cannot allocate memory)"
    )
    limited = oom.event(
        message,
        oom.where_in_training(3),
        2,
        512,
        True,
        cpu,
        1430 * MB,
        "train",
        ProcessLimit("RLIMIT_AS", 5 * GB, 3570 * MB),
    )
    assert "reserved but unallocated" not in limited.message
    assert limited.message == (
        "out of memory at step 3 with batch size 512: asked for 1.07 GB, more than the "
        "process's limit had left at that moment; the process is "
        "limited to 5.00 GB of address space by ulimit -v (RLIMIT_AS), which counts mapped "
        "libraries too, not only resident memory, 1.43 GB of it left once the failed step's "
        "memory was given back; continuing with batch size 256"
    )
    plain = oom.event(message, oom.where_in_training(3), 2, 512, False, cpu, 1430 * MB, "train")
    assert plain.message == (
        "out of memory at step 3 with batch size 512: asked for 1.07 GB; 1.43 GB of system "
        "memory available once the failed step's memory was given back"
    )
    group = oom.limit_text(ProcessLimit("cgroup", 4 * GB, GB))
    assert group.startswith("the process's control group is limited to 4.00 GB")
