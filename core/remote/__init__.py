"""Watch and drive a GPU on another machine over the user's own SSH, with nothing listening.

The remote machine runs `gpu-train-monitor agent` (gpu_train_monitor.remote.agent.server), which speaks line-delimited
JSON on stdin/stdout (gpu_train_monitor.remote.wire.protocol: the one definition both sides read) and serves the remote
run store: devices and their readings, the runs, following a run row by row, starting runs and watched scripts
detached from the SSH session, and the run controls. The laptop's side (link, mirror, follow) talks to it
through `ssh -T HOST gpu-train-monitor agent` and mirrors followed runs into the local store.

Three sub-packages, one per role: `wire` (what both ends read: the protocol's lines, compact rows, core values
as JSON), `agent` (the process on the GPU machine: its loop, its ops, the runs and jobs it starts) and `client`
(this machine's side: the ssh transport, the link, following runs and jobs). `agent` and `client` each import
`wire` and never each other: they are two programs that meet only on the wire.

May import every core package below cli. Imports no torch at module level (the agent loads it only for
devices and readings) and never Qt.
"""
