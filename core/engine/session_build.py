"""The build half of a training session: what `TrainingSession.run()` makes before the first step.

The device (made current in the worker thread), the memory probe and the allocator's history, the run's parts
(gpu_train_monitor.engine.recipe), a checkpoint to resume restored into them, the planned steps, and the `RunStarted`
event that describes it all. Everything a session holds is declared in `__init__` here. What a data-parallel rank
builds differently (its device, its share of the data, the model wrapped) is its strategy's
(gpu_train_monitor.engine.strategy).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable

import torch

from ..base.readonly import ReadOnlyDict
from ..config.run_config import RunConfig
from ..data.batches import BatchEpoch
from ..device.devices import device_name
from ..events.controls import RunControls
from ..events.events import LogMessage, Observer, RunStarted
from ..memory.breakdown import StepMemoryRecorder
from ..memory.probe import MemoryProbe
from ..memory.snapshot import MemoryHistory
from ..model.models import count_parameters
from . import checkpoint_files, checkpointing
from .checkpoint_files import ON_REQUEST, CheckpointPolicy
from .checkpointing import Checkpointer
from .loop_state import LoopState, config_as_run, planned_steps
from .recipe import RunParts, build_run, config_for_device, generator_for
from .step_phases import PhaseTimer
from .strategy import OneProcess, Strategy


class SessionBuild(RunControls):
    """Builds one run from a RunConfig (`_build`); `gpu_train_monitor.engine.session.TrainingSession` trains it.
    Thread-safe commands (`RunControls`) steer it from other threads."""

    def __init__(
        self,
        config: RunConfig,
        observers: Iterable[Observer] = (),
        record_memory_history: bool = False,
        snapshot_path: str | None = None,
        checkpoints: CheckpointPolicy = ON_REQUEST,
        resume: str | None = None,
        run_uid: str | None = None,
        strategy: Strategy | None = None,
    ) -> None:
        """`record_memory_history` (CUDA) records allocator events for snapshots; `snapshot_path`
        implies it and saves a snapshot there when the run ends, before its memory is released.
        `checkpoints` says when to save checkpoints unasked (by default never). `resume` is a checkpoint to
        continue: read here, so one that cannot be resumed with `config` raises UserError before any run.
        `run_uid`: the name a launcher handed the run (the remote agent's, to follow it); a resume keeps its own.
        `strategy`: what differs when this process is one of several (default: a run alone, `OneProcess`)."""
        super().__init__(observers)
        self.config = config
        self.strategy: Strategy = strategy if strategy is not None else OneProcess()
        self.record_memory_history = record_memory_history or snapshot_path is not None
        self.snapshot_path = snapshot_path
        # names this run in the run store; a resumed run keeps its original one
        self.run_uid = run_uid or uuid.uuid4().hex
        self.resume_path = resume
        self._resume: dict | None = None  # the checkpoint to continue, until _build has loaded it
        self.branch_of = ""  # a resume of a run that went on past its checkpoint: that run's uid (a branch)
        if resume is not None:
            self.config, self.run_uid, self._resume = checkpoint_files.prepare_resume(resume, config)
            self.run_uid, self.branch_of = checkpoint_files.branch_identity(
                checkpoints, self.run_uid, self._resume["step"]
            )
        self._checkpointer = Checkpointer(checkpoints, self.run_uid)
        self._resumed_epoch: BatchEpoch | None = None  # the epoch a mid-epoch checkpoint was saved in
        self.loss_fetches = 0  # device->host loss transfers; equals the number of reports
        # per run: made by _build(); the loop's state is the session's, its clock started by run()
        self.device: torch.device | None = None
        self.probe: MemoryProbe | None = None
        self._state = LoopState(t0=time.perf_counter())
        self._parts: RunParts | None = None
        self._recorder: StepMemoryRecorder | None = None
        self._history: MemoryHistory | None = None
        self._timer = PhaseTimer()  # where each step's time goes (gpu_train_monitor.engine.step_phases)

    def _build(self) -> None:
        cfg, run = self.config, self._state
        device = self.strategy.device(cfg)
        if device.type == "cuda":
            torch.cuda.set_device(device)  # the current device is per thread: set it in the worker
        self.device = device
        self._timer.on_device(device)  # a GPU's own clock too (CUDA events)
        self.config = cfg = config_for_device(cfg, device)  # the model `auto` stands for on this device
        if self.record_memory_history:  # before any allocation, so the snapshot shows them all
            self._history = MemoryHistory(device)
            self._history.start()
        run.device_name = device_name(device)
        self.probe = MemoryProbe(device)
        torch.manual_seed(cfg.seed)
        generator = generator_for(device).manual_seed(cfg.seed)
        parts = build_run(cfg, device, self.probe.free_bytes(), generator, self.strategy.shard)
        self.strategy.prepare(parts, cfg, device, generator)
        self._parts = parts
        # a compiled model is not split by module: global module hooks would make torch.compile recompile it
        self._recorder = StepMemoryRecorder(self.probe, by_module=not parts.trainer.compiles)
        run.val_batch_size = parts.source.batch_size  # a data-parallel rank's share, like its training batch
        notes = list(parts.notes)
        if self._resume is not None and self.resume_path is not None:
            self._resumed_epoch, resume_notes = self._checkpointer.restore(
                self._resume, self.resume_path, parts, run, device
            )
            notes += resume_notes
            self._resume = None  # its tensors are in the model now: let the file's memory go
        run.total_steps = planned_steps(self.config, run, parts.source, self._resumed_epoch)
        if self.resume_path is not None:
            checkpointing.check_steps_left(self.resume_path, run)
        self.probe.reset_peak()
        source = parts.source
        self.emit(
            RunStarted(
                config=self._config_as_run(),
                device=str(device),
                device_name=run.device_name,
                placement=source.placement,
                steps_per_epoch=source.steps_per_epoch(),
                total_steps=run.total_steps,
                train_samples=len(parts.splits.train),
                val_samples=len(parts.splits.val),
                parameters=count_parameters(parts.trainer.model),
                dataset_bytes=parts.splits.nbytes,
                memory=self.probe.sample(),
                epochs=cfg.epoch_limit,
                run_uid=self.run_uid,
                start_step=run.step,
                branch_of=self.branch_of,
                **self.strategy.started_extras(),
            )
        )
        for level, text in notes:
            self.emit(LogMessage(level, text))

    def _config_as_run(self) -> ReadOnlyDict:
        values = config_as_run(self.config, self.device, self._parts.source if self._parts is not None else None)
        return ReadOnlyDict(self.strategy.config_as_run(dict(values), self._parts is not None))
