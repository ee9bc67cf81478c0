"""Real batch-size finder trials: each is a fresh process (gpu_train_monitor.finder.trial) that measures its own peak
memory, or one process kept warm for a search (gpu_train_monitor.finder.warm), so these tests start processes; the
search itself is tested with a memory model in tests/core/finder."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.finder.search import measure_trial
from tests.support.user_code import importable_folder

CONFIG = RunConfig(device="cpu", model="tiny-cnn")
OWN = dict(
    device="cpu", model="mymodels:small_net", dataset="mydata:blobs", batch_size=8, max_steps=4, report_interval=0.01
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    yield from importable_folder(tmp_path, monkeypatch)


@pytest.fixture
def one_thread_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial processes share two busy cores: one compute thread each is faster there."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


def test_a_real_trial_of_a_larger_batch_peaks_higher(one_thread_children: None) -> None:
    config = CONFIG.replace(synthetic_samples=512)
    with ThreadPoolExecutor(2) as pool:  # two fresh processes at once: each trial is mostly torch's import
        small, large = pool.map(lambda batch: measure_trial(config, batch), (8, 512))
    assert small is not None and large is not None
    assert small > 100 * 2**20  # a process with torch loaded
    # 504 more images each keep at least the first conv's output (32 x 32 x 32 floats) for backward
    assert large - small >= 504 * 32 * 32 * 32 * 4


def test_cli_find_batch_size_writes_the_result_and_every_trial(
    tmp_path: Path, one_thread_children: None, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "finder.json"
    code = main(
        [
            "find-batch-size",
            "--device",
            "cpu",
            "--model",
            "tiny-cnn",
            "--capacity",
            "100GB",
            "--start",
            "128",
            "--max-batch",
            "256",
            "--no-predict",  # the search before predictions: doubling from --start
            "--json",
            str(target),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(target.read_text(encoding="utf-8"))
    assert {"batch_size", "fixed_bytes", "bytes_per_sample", "trials"} <= set(result)
    trials = result["trials"]
    assert [t["batch_size"] for t in trials] == [128, 256]  # 512 is beyond --max-batch
    assert all(set(t) == {"batch_size", "peak_bytes", "fits", "predicted_bytes"} and t["fits"] for t in trials)
    assert all(t["predicted_bytes"] is None for t in trials) and result["predicted_batch"] is None
    assert trials[1]["peak_bytes"] > trials[0]["peak_bytes"] > 100 * 2**20
    assert result["batch_size"] == 256
    assert result["capacity_bytes"] == 100 * 10**9 and result["limit_bytes"] == 90 * 10**9
    # two points: the line goes through both (to rounding)
    for t in trials:
        assert abs(result["fixed_bytes"] + result["bytes_per_sample"] * t["batch_size"] - t["peak_bytes"]) <= 512
    assert "batch size      256" in out
    assert "batch    128" in err and "batch    256" in err and "fits" in err  # progress, one line per trial


def test_the_finder_starts_from_the_prediction_and_confirms_it_in_at_most_3_trials(
    tmp_path: Path, one_thread_children: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """tiny-cnn planned for 3 GB on the CPU: the search before predictions took 16 trials (3 min 49 s)."""
    target = tmp_path / "finder.json"
    code = main(
        ["find-batch-size", "--device", "cpu", "--model", "tiny-cnn", "--capacity", "3GB", "--json", str(target)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(target.read_text(encoding="utf-8"))
    trials = result["trials"]
    assert 1 <= len(trials) <= 3
    assert all(t["predicted_bytes"] is not None for t in trials)  # predicted vs measured, each trial
    answer = next(t for t in trials if t["batch_size"] == result["batch_size"])
    assert answer["fits"] and answer["peak_bytes"] <= result["limit_bytes"] == 27 * 10**8
    assert result["predicted_batch"] > 1000  # tiny-cnn takes ~0.7 MB an image: thousands fit
    # the prediction is within 10% of what the trial process measured
    assert abs(answer["peak_bytes"] - answer["predicted_bytes"]) <= 0.1 * answer["peak_bytes"]
    assert f"batch size      {result['batch_size']}" in out and "(predicted " in err


def test_a_warm_trial_process_measures_each_trial_s_own_peak(one_thread_children: None) -> None:
    """One process for every trial of a search: a large trial's peak must not reach the next, smaller one."""
    from gpu_train_monitor.finder.warm import WarmTrials

    config = CONFIG.replace(synthetic_samples=512)
    with WarmTrials() as warm:
        idle = warm.idle_bytes(config)
        small = warm.measure(config, 8, 2)
        large = warm.measure(config, 512, 2)
        small_again = warm.measure(config, 8, 2)
    assert idle > 100 * 2**20  # torch loaded
    assert small is not None and large is not None and small_again is not None
    assert large - small >= 504 * 32 * 32 * 32 * 4  # as a fresh process measures it (see above)
    assert abs(small_again - small) < 0.1 * (large - small)  # the large trial's peak is gone


def test_a_cpu_trial_measures_its_own_peak_not_its_parents(one_thread_children: None) -> None:
    """getrusage's ru_maxrss survives fork and exec on Linux: a trial started by a 3 GB parent (the window
    holds over 1 GB) used to report the parent's size for every batch, so all trials looked alike."""
    import numpy as np
    import psutil

    ballast = np.ones(3 * 2**30, dtype=np.uint8)  # touched: resident in this process
    assert psutil.Process().memory_info().rss > 3 * 2**30
    peak = measure_trial(CONFIG.replace(synthetic_samples=512), 8)
    del ballast
    assert peak is not None and 100 * 2**20 < peak < 2 * 2**30  # torch and a tiny model: well under 2 GB


def test_a_finder_trial_imports_your_own_code_in_its_own_process(folder, monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two trial processes on shared cores
    good, bad = RunConfig(**OWN), RunConfig(**{**OWN, "model": "mymodels:for_28px"})
    with ThreadPoolExecutor(2) as pool:  # two fresh processes at once: each is mostly torch's import
        peak = pool.submit(measure_trial, good, 8)
        failure = pool.submit(measure_trial, bad, 8)
        assert peak.result() > 100 * 2**20  # a process with torch loaded
        with pytest.raises(ConfigError) as raised:
            failure.result()
    assert raised.value.field == "model"
    assert str(raised.value).startswith("model: mymodels:for_28px fails on the run's input, a batch shaped 2x3x8x8")


def test_a_warm_trial_process_reads_past_what_your_own_model_prints(folder, one_thread_children: None) -> None:
    from gpu_train_monitor.finder.warm import WarmTrials

    (folder / "chatty.py").write_text(
        "from torch import nn\n"
        "def net(num_classes):\n"
        "    print('building the net', [1, 2])\n"
        "    print('{not json')\n"
        "    print('{\"peak_bytes\": 1}')\n"
        "    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),\n"
        "                         nn.Linear(4, num_classes))\n",
        encoding="utf-8",
    )
    config = RunConfig(**{**OWN, "model": "chatty:net"})
    with WarmTrials() as warm:
        assert warm.idle_bytes(config) > 100 * 2**20
        assert warm.measure(config, 8, 2) > 100 * 2**20


SLEEPY_MODEL = """
import os, signal, time
from pathlib import Path
from torch import nn

PARENT = {parent}  # the test's process, which predicts the step: only a trial process sleeps


class Sleepy(nn.Module):
    '''A trial above batch 1 that takes minutes and ignores SIGTERM, as a step deep in a C kernel does.'''

    def __init__(self, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(4, num_classes))

    def forward(self, x):
        if x.shape[0] > 1 and os.getpid() != PARENT:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            Path({pidfile!r}).write_text(str(os.getpid()))
            time.sleep(300)
        return self.net(x)


def net(num_classes):
    return Sleepy(num_classes)
"""


def test_stop_ends_a_real_trial_process_within_2_s(folder, one_thread_children: None) -> None:
    """The window's Stop was asked between trials only: a trial on the CPU ran on for over 40 s after it."""
    import os
    import threading
    import time

    import psutil

    from gpu_train_monitor.base.errors import UserError
    from gpu_train_monitor.finder.search import find_batch_size

    pidfile = folder / "trial.pid"
    (folder / "sleepy.py").write_text(SLEEPY_MODEL.format(parent=os.getpid(), pidfile=str(pidfile)), encoding="utf-8")
    config = RunConfig(**{**OWN, "model": "sleepy:net"})
    stop, raised, ended = threading.Event(), [], threading.Event()

    def search() -> None:
        try:
            find_batch_size(config, capacity=4 * 10**9, should_stop=stop.is_set)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            raised.append(exc)
        ended.set()

    threading.Thread(target=search, daemon=True).start()
    deadline = time.monotonic() + 240  # the warm trial process imports torch first
    while not (pidfile.exists() and pidfile.read_text()) and not ended.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ended.is_set(), raised
    pid = int(pidfile.read_text())
    stop.set()
    pressed = time.monotonic()
    assert ended.wait(30)
    took = time.monotonic() - pressed
    assert took < 2.0, f"the search returned {took:.1f} s after Stop"
    assert len(raised) == 1 and isinstance(raised[0], UserError) and "stopped" in str(raised[0])
    try:
        assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        pass  # gone, as it should be


LIMITED_SEARCH = r"""
import json
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.host_memory import process_limit
from gpu_train_monitor.finder.search import find_batch_size
import gpu_train_monitor.engine.prediction  # torch and the engine mapped first: what is left is read after them

limit = process_limit()
left = limit.left_bytes
result = find_batch_size(RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=2560))
print(json.dumps({"kind": limit.kind, "limit": limit.limit_bytes, "left": left, "result": result.to_dict()}))
"""


def test_under_a_memory_limit_the_cpu_finder_plans_within_the_training_set_and_what_is_left() -> None:
    """Under `ulimit -v 5000000` the finder planned for the limit's whole 5.12 GB (torch's libraries alone map
    3.3 GB of it), and a batch above the 2,560-image training set."""
    import os
    import resource
    import subprocess
    import sys

    limit = 5_000_000 * 1024
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_SEARCH],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    result, trials = said["result"], said["result"]["trials"]
    assert said["kind"] == "RLIMIT_AS" and said["limit"] == limit
    assert result["capacity_bytes"] <= said["left"] < limit  # what the limit left, not its whole size
    assert trials and all(t["batch_size"] <= 2560 for t in trials) and result["batch_size"] <= 2560
    # every trial was planned within that memory, and the answer was measured under the limit
    assert all(t["predicted_bytes"] is None or t["predicted_bytes"] <= result["capacity_bytes"] for t in trials)
    answer = next(t for t in trials if t["batch_size"] == result["batch_size"])
    assert answer["fits"] and answer["peak_bytes"] <= result["limit_bytes"]
