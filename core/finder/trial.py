"""`python -m core.finder.trial`: one batch-size trial in a fresh process (the CPU path of the finder).

Reads {"config": {...}, "batch_size": n, "steps": k} on stdin, runs k real training steps on the CPU
and prints {"peak_bytes": ...}: this process's peak resident memory, which nothing else has touched.
Bad input it meets (your own model or dataset failing to import or to fit) is printed as
{"user_error": message, "field": field or null, "message": the message (without the field) as
core.base.text writes it}, for the finder to report as the run would.
"""

from __future__ import annotations

import json
import resource
import sys

from ..config.run_config import RunConfig


def main() -> int:
    request = json.loads(sys.stdin.read())
    config = RunConfig.from_dict(request["config"])
    from ..base.errors import ConfigError, UserError
    from ..base.text import message_of, message_to_json
    from ..device.devices import resolve_device
    from ..memory import oom
    from .search import trial_parts

    device = resolve_device(config.device)
    try:
        trainer, images, labels = trial_parts(config, int(request["batch_size"]), device)
        for _ in range(int(request["steps"])):
            trainer.step(images, labels)
    except UserError as exc:
        field = exc.field if isinstance(exc, ConfigError) else None
        said = exc.detail if isinstance(exc, ConfigError) else message_of(exc)
        print(json.dumps({"user_error": str(exc), "field": field, "message": message_to_json(said)}))
        return 0
    except (MemoryError, RuntimeError) as exc:
        if not oom.is_out_of_memory(exc):
            raise
        print("MemoryError: the trial ran out of memory", file=sys.stderr)  # the parent's "too big" marker
        return 3
    print(json.dumps({"peak_bytes": peak_rss_bytes()}))
    return 0


def peak_rss_bytes() -> int:
    """This process's own peak resident memory.

    On Linux, getrusage's ru_maxrss survives fork and exec: a trial started by a large parent (the
    window holds over 1 GB) reports at least the parent's size, whatever it trained. VmHWM in
    /proc/self/status belongs to the process's own address space, made new at exec. Elsewhere
    ru_maxrss is what there is (bytes on macOS, KiB on the others)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # "VmHWM:   123456 kB"
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


if __name__ == "__main__":
    sys.exit(main())
