"""Language-model runs: the built-in GPT models, the text datasets, and tokens as a text run's unit of throughput.

A text run's sample is one sequence of `seq_len` tokens (bytes: the vocabulary is 256, no tokenizer), so events and
the run store keep samples and samples/s as for images; tokens/s is samples/s x seq_len, worked out from the run's
config wherever a throughput is shown (`throughput`). A watched language model counts tokens itself (its config says
`counted: tokens`): its samples/s is tokens/s already. This module imports no torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.errors import ConfigError
from ..base.text import Message
from ..base.user_code import TEXT_PREFIX

SYNTHETIC_TEXT = "synthetic-text"
VOCAB = 256  # a text is read as bytes: one token per byte
# the built-in GPT models: (layers, width, heads) unless --layers/--width/--heads say otherwise
GPT_SIZES: dict[str, tuple[int, int, int]] = {"gpt-tiny": (2, 64, 2), "gpt-small": (12, 768, 12)}
GPT_MODELS = tuple(GPT_SIZES)
SIZE_FIELDS = ("layers", "width", "heads")  # RunConfig fields that size a GPT (None: its preset's)
ATTENTIONS = ("fused", "plain")
TEXT_FIELDS = ("seq_len", *SIZE_FIELDS, "attention")  # RunConfig fields that only a text run uses


def is_gpt(model: str) -> bool:
    return model in GPT_SIZES


def is_text_dataset(dataset: str) -> bool:
    """synthetic-text or a text file (`text:PATH`)."""
    return dataset == SYNTHETIC_TEXT or dataset.startswith(TEXT_PREFIX)


def text_file(dataset: str) -> Path | None:
    """The file `text:PATH` names (None for any other dataset)."""
    return Path(dataset[len(TEXT_PREFIX) :]) if dataset.startswith(TEXT_PREFIX) else None


def check_text_file_name(value: str) -> str:
    """`text:PATH` with the path's `~` expanded; a ConfigError when there is no path after the colon. Whether the
    file exists and is text is the run's to find out (a config is built on every keystroke in the window)."""
    path = value[len(TEXT_PREFIX) :].strip()
    if not path:
        raise ConfigError(
            "dataset", Message("{value} names no file: give the path of a text file after the colon", value=value)
        )
    return TEXT_PREFIX + str(Path(path).expanduser())


def gpt_size(config: Any) -> tuple[int, int, int]:
    """(layers, width, heads) of the GPT `config` trains: its --layers/--width/--heads, else its preset's (gpt-tiny's
    when the model is not one yet: auto)."""
    preset = GPT_SIZES.get(config.model, GPT_SIZES["gpt-tiny"])
    given = (config.layers, config.width, config.heads)
    layers, width, heads = (value if value is not None else default for value, default in zip(given, preset))
    return layers, width, heads


def check_model_data(config: Any) -> None:
    """A language model needs text and an image model images: a ConfigError naming both otherwise. The GPT's size
    fields apply to a GPT only, and its width must split evenly over its heads. Your own model may take either."""
    model, dataset = config.model, config.dataset
    text, own_model = is_text_dataset(dataset), ":" in model and not model.startswith(TEXT_PREFIX)
    gpt = is_gpt(model) or (model == "auto" and text)
    if is_gpt(model) and not text:
        raise ConfigError(
            "dataset",
            Message(
                "{model} is a language model but {dataset} is an image dataset; use synthetic-text or text:PATH "
                "(a text file)",
                model=model,
                dataset=dataset,
            ),
        )
    if text and not gpt and not own_model:
        raise ConfigError(
            "model",
            Message(
                "{model} is an image model but {dataset} is text; use gpt-tiny or gpt-small (or your own model "
                "taking token ids)",
                model=model,
                dataset=dataset,
            ),
        )
    for field in SIZE_FIELDS:
        if getattr(config, field) is not None and not gpt:
            raise ConfigError(
                field, Message("sizes the GPT models only (gpt-tiny, gpt-small), not {model}", model=model)
            )
    if gpt:
        _, width, heads = gpt_size(config)
        if width % heads:
            raise ConfigError(
                "width",
                Message(
                    "{width} does not split evenly over {heads} attention heads; use a multiple of {heads}",
                    width=width,
                    heads=heads,
                ),
            )


@dataclass(frozen=True)
class Throughput:
    """How a run's throughput reads: its unit ("images/s", "tokens/s", "samples/s"), the short one a progress line
    uses, and the tokens in one sample (a text run's seq_len; 1 elsewhere)."""

    unit: str
    short: str
    per_sample: int = 1

    @property
    def tokens(self) -> bool:
        return self.unit == "tokens/s"

    def of(self, samples_per_s: float | None) -> float | None:
        """The figure in this unit from samples/s (None stays None)."""
        return None if samples_per_s is None else samples_per_s * self.per_sample


IMAGES = Throughput("images/s", "img/s")


def throughput(config: Mapping[str, Any]) -> Throughput:
    """The throughput unit of a run from its config as recorded (a `RunConfig.to_dict()`, a watched run's facts):
    tokens/s for a text dataset (samples/s x seq_len) and for a watched language model (it counts tokens), samples/s
    for another watched loop, images/s otherwise."""
    if config.get("counted") == "tokens":
        return Throughput("tokens/s", "tok/s")
    if "source" in config:  # a watched loop's samples are whatever its batches hold
        return Throughput("samples/s", "samples/s")
    if is_text_dataset(str(config.get("dataset") or "")):
        return Throughput("tokens/s", "tok/s", int(config.get("seq_len") or 1))
    return IMAGES
