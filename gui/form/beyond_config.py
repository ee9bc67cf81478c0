"""What the form checks beyond the config's own bounds (`gpu_train_monitor.gui.form.checks` says each problem): your own
model or dataset whose module or file is not there, an unknown model, a device that is not on the machine (this one,
or the one connected to), more processes than it has, a fast path it cannot run, a missing data folder, a
batch larger than the training set. Files are checked only for a run on this machine: a remote machine's run
checks its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.base.user_code import SPEC_FORM, is_spec
from gpu_train_monitor.config.run_checks import check_batch_fits
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import is_text_dataset, text_file
from gpu_train_monitor.gui.form.checks import (
    check_data_folder,
    check_device,
    check_fast_paths_known,
    check_findable,
    check_nproc,
    checkpointing_problem,
)

if TYPE_CHECKING:  # the form imports this module
    from gpu_train_monitor.gui.form.settings_form import SettingsForm


def check_beyond_config(form: SettingsForm, config: RunConfig, scan: bool) -> None:
    """Raise UserError (a ConfigError naming the field) for what `form`'s machine cannot run; `scan`: count an
    image folder's images when that folder has not been counted yet."""
    remote = form.remote_host() is not None  # files are then the other machine's: its run checks them
    for field in ("model", "dataset"):  # your own: its module or file must be there (its code runs at Start)
        if is_spec(getattr(config, field)) and not remote:
            check_findable(field, getattr(config, field))
    if form._known_models is not None and not is_spec(config.model) and config.model not in form._known_models:
        raise ConfigError(
            "model",
            Message(
                "unknown model {model!r}; pick one from the list, or give your own as {spec_form}",
                model=config.model,
                spec_form=SPEC_FORM,
            ),
        )
    if form.devices.specs is not None:
        check_device(config.device, form.devices.specs)
        check_nproc(config.nproc, form.nproc_meaning())
        check_fast_paths_known(config.to_dict(), form.devices.problems_of(config.device))
        if config.activation_checkpointing and form.local_devices.known:  # gpu_train_monitor.model imports torch
            problem = checkpointing_problem(config.model, form.device_kind())
            if problem is not None:
                raise ConfigError("activation_checkpointing", problem)
    folder = None
    path = text_file(config.dataset)
    if path is not None and not remote and not path.is_file():
        raise ConfigError("dataset", Message("no text file {path}", path=str(path)))
    if (
        config.dataset != "synthetic"
        and not is_text_dataset(config.dataset)
        and not is_spec(config.dataset)
        and config.data_dir is not None
        and not config.download
        and not remote
    ):
        folder = check_data_folder(config.data_dir)  # None: the default folder; download creates it
    if not form.local_devices.known:
        return  # torch is still loading: gpu_train_monitor.data.datasets imports it
    from gpu_train_monitor.data.datasets import train_size_hint

    if path is not None and not remote:  # a text file: a sequence longer than the text is said as the run says it
        from gpu_train_monitor.data.datasets.text import check_seq_len

        check_seq_len(path, path.stat().st_size, config.seq_len)
    train = None if remote and path is not None else train_size_hint(config)
    if train is None and config.dataset == "imagefolder" and folder is not None:
        train = form._folder_counts.lookup(config.data_dir, folder, scan)
    check_batch_fits(config.batch_size, train, config.seq_len if is_text_dataset(config.dataset) else None)
