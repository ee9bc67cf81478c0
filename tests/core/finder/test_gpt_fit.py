"""Will a GPT fit: the what-if table of a text run (its rows predicted for real: checkpointing names the transformer
blocks it saves in, no channels_last for token ids) and a finder trial's parts (the run's own trainer and a batch of
token ids x seq_len)."""

from __future__ import annotations

import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.finder.parts import trial_parts
from gpu_train_monitor.finder.what_if import FITS, what_if

GB = 1024**3
CONFIG = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=64, batch_size=16)


def test_the_what_if_of_a_gpt_checkpoints_its_blocks_and_has_no_layout_row() -> None:
    table = what_if(CONFIG, 10 * GB, search=False, predict=predict)
    rows = {row.change: row for row in table.rows}
    assert "channels_last" not in rows and {"bf16", "optimizer", "activation_checkpointing", "half_batch"} <= set(rows)
    checkpointed = rows["activation_checkpointing"]
    assert checkpointed.saved_bytes > 0.3 * table.current.activations_bytes
    assert checkpointed.blocks and checkpointed.blocks[0][0].startswith("blocks.")
    assert rows["half_batch"].prediction.activations_bytes < 0.6 * table.current.activations_bytes
    assert table.verdict == FITS


def test_a_finder_trial_steps_the_run_s_model_on_token_ids() -> None:
    trainer, ids, targets = trial_parts(CONFIG, 8, torch.device("cpu"))
    assert ids.shape == targets.shape == (8, 64) and ids.dtype == torch.int64 and int(ids.max()) < 256
    assert trainer.model.shape.layers == 2 and trainer.model.positions.num_embeddings == 64
    loss = trainer.step(ids, targets)
    assert 4.5 < float(loss.detach()) < 6.5  # about ln 256: the untrained model's next-byte loss
    assert measure(CONFIG, 8).peak_bytes == predict(CONFIG, 8).peak_bytes  # what the finder's predictions start from
