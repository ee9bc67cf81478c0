"""A transformers training that raises: the Trainer never tells its callbacks, so the run is finished as the
process ends, with the exception that ended it (a process of its own: the ending is the interpreter's)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from gpu_train_monitor.store.run_store import RunStore
from tests.support.processes import ENV, WAIT_S

SCRIPT = """
import sys, torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments
from gpu_train_monitor.watch.transformers_callback import GpuTrainMonitorCallback

class Boom(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 3:
            raise ValueError("boom at step 3")

torch.manual_seed(0)
config = GPT2Config(vocab_size=100, n_positions=16, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0)
ids = torch.randint(0, 100, (64, 16))
data = [{"input_ids": row, "labels": row} for row in ids]
args = TrainingArguments(output_dir=sys.argv[2], max_steps=20, per_device_train_batch_size=4, report_to="none",
                         save_strategy="no", use_cpu=True, disable_tqdm=True)
monitor = GpuTrainMonitorCallback(name="raises", runs_db=sys.argv[1])
Trainer(model=GPT2LMHeadModel(config), args=args, train_dataset=data, callbacks=[monitor, Boom()]).train()
"""


def test_a_training_that_raises_is_recorded_failed_with_its_message_when_the_process_ends(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    db = tmp_path / "runs.db"
    env = {**ENV, "HF_HUB_OFFLINE": "1"}  # a tiny model from a config: nothing may be downloaded
    result = subprocess.run(
        [sys.executable, str(script), str(db), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        cwd=os.fspath(tmp_path),
    )
    assert result.returncode == 1 and "ValueError: boom at step 3" in result.stderr
    with RunStore(db) as store:
        (run,) = store.list_runs()
        assert (run.name, run.status, run.message) == ("raises", "failed", "ValueError: boom at step 3")
        assert store.steps(run.id).steps == (1, 2, 3)
