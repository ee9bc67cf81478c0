"""The background jobs behind the window's what-if advice: `gpu_train_monitor.finder.what_if`'s table, a text model's
grid over batch x sequence length (`gpu_train_monitor.finder.fit_grid`) and the advice after an out-of-memory
error, each many predictions long, so each checks before every prediction whether its answer is still wanted
(settings changed, a run started, the window closing) and stops there.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from gpu_train_monitor.config.run_config import RunConfig


class Superseded(Exception):
    """The settings changed while the table was worked out: stop, what was found answers nothing."""


class RecentPredictions:
    """The last predictions made by any job, shared between the jobs' threads: the what-if table and a text model's
    grid ask for the same steps (the settings at half the batch, at half the sequence length, ...), and a prediction
    of a large model costs seconds. Predictions are frozen values; the dict is guarded by a lock. Keyed by the
    predicting function too, so a stand-in for `predict` never answers for another."""

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._made: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> Any:
        with self._lock:
            return self._made.get(key)

    def put(self, key: tuple[Any, ...], prediction: Any) -> None:
        with self._lock:
            self._made[key] = prediction
            while len(self._made) > self.limit:
                self._made.popitem(last=False)


RECENT = RecentPredictions()


def stoppable_predict(cancelled: Callable[[], bool]) -> Callable[..., Any]:
    """`gpu_train_monitor.engine.prediction.predict` that makes each prediction once (across jobs: RECENT) and raises
    Superseded before a prediction once `cancelled()` (a job of many predictions stops within one)."""
    from gpu_train_monitor.engine.prediction import predict

    def predicted(config: RunConfig, batch_size: int | None = None, *, device: str | None = None) -> Any:
        if cancelled():
            raise Superseded
        key = (predict, config, batch_size or config.batch_size, device)
        made = RECENT.get(key)
        if made is None:
            made = predict(config, batch_size, device=device)
            RECENT.put(key, made)
        return made

    return predicted


def what_if_job(config: RunConfig, kind: str, capacity: int, max_batch: int) -> Callable[..., Any]:
    """The background job: `what_if` without the batch search (reported as soon as it is known), then with it.
    Every prediction is made once (the second pass reuses the first's) and checks first whether to stop."""

    def job(report: Callable[[Any], None], cancelled: Callable[[], bool]) -> Any:
        from gpu_train_monitor.finder.what_if import what_if

        predicted = stoppable_predict(cancelled)

        def rows() -> Any:
            report(what_if(config, capacity, device=kind, search=False, predict=predicted))
            return what_if(config, capacity, device=kind, max_batch=max_batch, predict=predicted)

        return answered(rows)

    return job


def fit_grid_job(config: RunConfig, kind: str, capacity: int) -> Callable[..., Any]:
    """The background job for a text model: `gpu_train_monitor.finder.fit_grid` at half, the same and double the
    batch and the sequence length (nine predictions, each checking first whether to stop; the grid so far reported
    after each), or why not."""

    def job(report: Callable[[Any], None], cancelled: Callable[[], bool]) -> Any:
        from gpu_train_monitor.finder.fit_grid import around, fit_grid

        predicted = stoppable_predict(cancelled)
        batches, seq_lens = around(config.batch_size, "batch_size"), around(config.seq_len, "seq_len")
        return answered(
            lambda: fit_grid(config, batches, seq_lens, capacity, device=kind, predict=predicted, on_cell=report)
        )

    return job


def oom_advice_job(config: RunConfig, kind: str, capacity: int) -> Callable[..., Any]:
    """The background job after `config` ran out of memory at its batch size:
    `gpu_train_monitor.finder.what_if.oom_advice` (the batch that fits, searched no higher than the one that ran out,
    and the cheapest change), or why not."""

    def job(_report: Callable[[Any], None], cancelled: Callable[[], bool]) -> Any:
        from gpu_train_monitor.finder.what_if import oom_advice

        predicted = stoppable_predict(cancelled)
        return answered(
            lambda: oom_advice(config, capacity, device=kind, max_batch=config.batch_size, predict=predicted)
        )

    return job


def answered(work: Callable[[], Any]) -> Any:
    """What a prediction job hands back: `work()`'s result, None when a newer request superseded it, the reason
    a step cannot be predicted, or the error a setting raised (one the run itself would refuse, and the like)."""
    from gpu_train_monitor.memory.predict import PredictionUnavailable

    try:
        return work()
    except Superseded:
        return None
    except PredictionUnavailable as exc:
        return exc.reason
    except Exception as exc:  # noqa: BLE001 - a setting the run itself would refuse (UserError) and the like
        return exc
