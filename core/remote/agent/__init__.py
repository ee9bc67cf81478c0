"""The agent: the process `gpu-train-monitor agent` runs on the GPU machine (started over SSH), its ops, the runs and
jobs it starts and the store rows it sends."""
