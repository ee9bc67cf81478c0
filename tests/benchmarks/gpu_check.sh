#!/usr/bin/env bash
# A GPU check that fits a 15-minute lease on a machine with an NVIDIA GPU.
#
#   tests/benchmarks/gpu_check.sh OUTDIR
#
# 1. Install with the README's command (python3 -m venv .venv && .venv/bin/pip install -e ".[test]"),
#    skipped when .venv already has the package (or GPU_CHECK_PYTHON names a Python that has it).
# 2. Print nvidia-smi and the torch / CUDA versions.
# 3. tests/benchmarks/run_all.py --gpu-check: `pytest -m gpu`, then the benchmarks at GPU sizes (data path
#    at CIFAR scale on cuda; TrainingSession vs bare loop, resnet18 at batch 256; resnet18 bf16 +
#    channels_last + resident at batch 512, target >= 50k images/s on an H200; the speed-run preset, target
#    >= 200k images/s; CPU vs GPU and stream vs resident with `compare`), each with its own time limit and
#    all within GPU_CHECK_BUDGET_S seconds (default 480: 8 minutes, counted after the install). A step
#    that fails or runs out of time is a "failed" row; the others still run.
# 4. The one table is printed last (run_all.py's, the same code as a plain benchmark run); every log and
#    JSON is under OUTDIR (benchmarks.json, benchmarks.md, NAME.log / NAME.err / NAME.json per step).
#
# Without an NVIDIA GPU it says "no NVIDIA GPU: GPU rows skipped" and runs the CPU rows at --quick sizes,
# so the script itself can be checked anywhere. Exit status: run_all.py's (0 when nothing failed).
#
# Environment: GPU_CHECK_BUDGET_S (default 480), GPU_CHECK_DEVICE (default auto), GPU_CHECK_PYTHON (a Python
# that already has the package: no install).
set -euo pipefail

if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    [[ $# -eq 1 ]] && exit 0 || exit 2
fi
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUDGET=${GPU_CHECK_BUDGET_S:-480}
DEVICE=${GPU_CHECK_DEVICE:-auto}
say() { printf '\n== %s\n' "$*"; }

# ---- 1. install (not counted in the budget) --------------------------------------------------------
PY=${GPU_CHECK_PYTHON:-$ROOT/.venv/bin/python}
has_package() {
    [[ -x $1 ]] && timeout 120 "$1" -c 'import importlib.metadata as m, torch, pytest; m.version("gpu-train-monitor")' \
        >/dev/null 2>&1
}
say "install"
if has_package "$PY"; then
    echo "skipped: $PY already has gpu-train-monitor, torch and pytest"
else
    echo 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"'
    if timeout 900 bash -c 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"' >"$OUT/install.log" 2>&1; then
        echo "installed (log: $OUT/install.log)"
    else
        echo "install FAILED (exit $?; log: $OUT/install.log): $(tail -n 3 "$OUT/install.log" | tr '\n' ' ')"
    fi
    PY=$ROOT/.venv/bin/python
    [[ -x $PY ]] || PY=python3
fi
START=$(date +%s)

# ---- 2. the GPU, torch and CUDA --------------------------------------------------------------------
say "nvidia-smi"
GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && timeout 30 nvidia-smi -L >/dev/null 2>&1; then
    GPU=1
    timeout 30 nvidia-smi 2>&1 | tee "$OUT/nvidia-smi.txt" || echo "nvidia-smi FAILED (exit $?)"
else
    echo "no NVIDIA GPU: GPU rows skipped (nvidia-smi is missing or sees no GPU)" | tee "$OUT/nvidia-smi.txt"
fi

say "torch and CUDA"
timeout 120 "$PY" - <<'EOF' 2>&1 | tee "$OUT/torch.txt" || echo "torch check FAILED (exit $?)"
import sys, torch
print(f"Python {sys.version.split()[0]}; torch {torch.__version__}; built for CUDA {torch.version.cuda}; "
      f"cuDNN {torch.backends.cudnn.version()}; CUDA available: {torch.cuda.is_available()}")
for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
    p = torch.cuda.get_device_properties(i)
    print(f"cuda:{i}: {p.name}, {p.total_memory / 2**30:.0f} GiB, compute capability {p.major}.{p.minor}")
EOF

# ---- 3 and 4. tests, benchmarks and the table (run_all.py) -----------------------------------------
LEFT=$((BUDGET - ($(date +%s) - START)))
if ((LEFT < 60)); then LEFT=60; fi
say "pytest -m gpu and the benchmarks (run_all.py --gpu-check, budget ${LEFT} s; progress on stderr, logs in $OUT)"
[[ $GPU == 1 ]] || echo "no NVIDIA GPU: GPU rows skipped; the CPU rows run at --quick sizes, to check this script"
rc=0
# run_all.py keeps itself within --budget; the outer limit only guards against a hang of run_all.py itself
# (its progress lines go to stderr, its table to stdout: one pipe keeps them in order, the table last)
timeout -k 20 $((LEFT + 90)) "$PY" tests/benchmarks/run_all.py --gpu-check --device "$DEVICE" --budget "$LEFT" \
    --out "$OUT" --markdown "$OUT/benchmarks.md" 2>&1 | tee "$OUT/run_all.log" || rc=$?
if ! grep -q '^numbers: ' "$OUT/run_all.log"; then
    echo "run_all.py printed no table (exit $rc); see $OUT/run_all.log"
fi
exit "$rc"
