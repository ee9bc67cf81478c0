"""Which settings apply, decided from the values alone: no form, no widgets."""

from __future__ import annotations

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.applicability import (
    applicability,
    auto_model_text,
    is_auto_model,
    shown_enabled,
    shown_tooltip,
)
from gpu_train_monitor.gui.form.text import field_tooltip

DEFAULTS = RunConfig().to_dict()


def values(**changes: object) -> dict[str, object]:
    return {**DEFAULTS, **changes}


def test_on_a_gpu_streaming_a_downloadable_dataset_every_setting_but_the_synthetic_size_applies() -> None:
    reasons = applicability(values(placement="stream", dataset="cifar10", optimizer="sgd", nproc=2), "cuda", {})
    assert reasons.pop("synthetic_samples") == "Not used: only the synthetic datasets are generated"
    assert reasons.pop("seq_len") == "Not used: only a text dataset (synthetic-text, text:PATH) is cut into sequences"
    for field in ("layers", "width", "heads", "attention"):  # an image model's
        assert reasons.pop(field) == "Not used: only the GPT models (gpt-tiny, gpt-small) take these"
    assert reasons == dict.fromkeys(reasons)  # all None
    assert {"pin_memory", "workers", "data_dir", "sync_bn", "amp=fp16", "amp=bf16", "compile"} <= set(reasons)


def test_copies_and_fp16_do_not_apply_on_the_cpu_and_say_why() -> None:
    reasons = applicability(values(placement="stream"), "cpu", {})
    assert reasons["pin_memory"] == "Not used: pin_memory only speeds up copies to a GPU"
    assert reasons["non_blocking"] == "Not used: the CPU needs no copy to a device"
    assert reasons["amp=fp16"] == "fp16 autocast needs a CUDA or MPS device"
    assert reasons["workers"] is None and reasons["amp=bf16"] is None


def test_each_setting_follows_the_value_it_depends_on() -> None:
    resident = applicability(values(placement="resident"), "cuda", {})
    assert resident["workers"].startswith("Not used: the resident placement")
    assert resident["pin_memory"] == "Not used: only the stream placement copies batches"
    synthetic = applicability(values(dataset="synthetic"), "cuda", {})
    assert synthetic["synthetic_samples"] is None
    assert synthetic["data_dir"] == "Not used: the synthetic dataset needs no files"
    own = applicability(values(dataset="mydata:blobs"), "cuda", {})
    assert own["data_dir"] == "Not used: your own dataset's factory finds its own files"
    assert own["synthetic_samples"] is not None and own["download"] is not None
    assert applicability(values(optimizer="adamw"), "cuda", {})["momentum"] == "Not used: AdamW has no momentum setting"
    assert applicability(values(nproc=1), "cuda", {})["sync_bn"].startswith("Not used: one process")


def test_a_text_run_uses_the_sequence_length_and_a_gpt_its_size_but_no_data_folder() -> None:
    text = applicability(values(dataset="synthetic-text", model="auto"), "cpu", {})  # auto: a GPT for text
    assert text["seq_len"] is None and text["synthetic_samples"] is None
    assert all(text[field] is None for field in ("layers", "width", "heads", "attention"))
    assert text["data_dir"] == "Not used: the synthetic dataset needs no files"
    own_file = applicability(values(dataset="text:/tmp/book.txt", model="gpt-small"), "cuda", {})
    assert own_file["data_dir"] == "Not used: a text dataset needs no data folder: a text file is named as text:PATH"
    assert own_file["synthetic_samples"] is not None and own_file["seq_len"] is None
    assert auto_model_text("cpu", dataset="synthetic-text") == "auto (gpt-tiny on this CPU)"
    assert auto_model_text("cuda", dataset="text:/tmp/book.txt") == "auto (gpt-small on this GPU)"


def test_a_fast_path_the_device_cannot_run_stays_enabled_only_while_chosen() -> None:
    problems = {"cudnn_benchmark": "CUDA devices only", "amp=bf16": "this CPU has no bfloat16"}
    reasons = applicability(values(), "cpu", problems)
    assert reasons["cudnn_benchmark"] == "Cannot run on this device: CUDA devices only"
    assert reasons["amp=bf16"] == "this CPU has no bfloat16"
    assert not shown_enabled("cudnn_benchmark", reasons["cudnn_benchmark"], values(cudnn_benchmark=False))
    assert shown_enabled("cudnn_benchmark", reasons["cudnn_benchmark"], values(cudnn_benchmark=True))  # undo it
    assert shown_enabled("amp=bf16", reasons["amp=bf16"], values(amp="bf16"))
    assert not shown_enabled("amp=bf16", reasons["amp=bf16"], values(amp="off"))
    assert not shown_enabled("amp=fp16", reasons["amp=fp16"], values(amp="fp16"))  # switched off instead
    assert not shown_enabled("pin_memory", reasons["pin_memory"], values(pin_memory=True))  # not used: greyed


def test_the_tooltip_is_the_reason_or_what_the_setting_is() -> None:
    assert shown_tooltip("workers", "Not used: x") == "Not used: x"
    assert shown_tooltip("workers", None) == field_tooltip("workers")
    assert shown_tooltip("amp=fp16", None) == "float16 autocast + GradScaler"


def test_auto_says_the_model_it_stands_for_once_the_device_kind_is_known() -> None:
    assert auto_model_text(None) == "auto"
    assert auto_model_text("cpu") == "auto (tiny-cnn on this CPU)"
    assert auto_model_text("cuda") == "auto (resnet18 on this GPU)"
    assert auto_model_text("cuda", "gpu-box") == "auto (resnet18 on the GPU of gpu-box)"  # another machine's device
    assert auto_model_text("cpu", "gpu-box") == "auto (tiny-cnn on the CPU of gpu-box)"
    assert all(is_auto_model(text) for text in ("auto", " Auto ", auto_model_text("mps")))
    assert not is_auto_model("resnet18")
