"""`python -m core.batch_trial`: one batch-size trial in a fresh process (the CPU path of the finder).

Reads {"config": {...}, "batch_size": n, "steps": k} on stdin, runs k real training steps on the CPU
and prints {"peak_bytes": ...}: this process's peak resident memory, which nothing else has touched.
"""

from __future__ import annotations

import json
import resource
import sys

from core.config import RunConfig


def main() -> int:
    request = json.loads(sys.stdin.read())
    config = RunConfig.from_dict(request["config"])
    from core import oom
    from core.batch_finder import trial_parts
    from core.devices import resolve_device

    device = resolve_device(config.device)
    try:
        trainer, images, labels = trial_parts(config, int(request["batch_size"]), device)
        for _ in range(int(request["steps"])):
            trainer.step(images, labels)
    except (MemoryError, RuntimeError) as exc:
        if not oom.is_out_of_memory(exc):
            raise
        print("MemoryError: the trial ran out of memory", file=sys.stderr)  # the parent's "too big" marker
        return 3
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    peak = peak_kib if sys.platform == "darwin" else peak_kib * 1024  # bytes on macOS
    print(json.dumps({"peak_bytes": int(peak)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
