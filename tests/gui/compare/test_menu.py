"""The custom comparison's lines and why a comparison could not start, in the user's language: the menu's own
words through Qt's translator, core's reason from its structure (`exc.detail`), never cut out of its English.
(The menu and the dialog in a window: tests/gui/compare/test_compare_in_the_window.py.)"""

from __future__ import annotations

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.gui.compare.menu import parse_lines, start_error
from tests.support.context_marks import marking_translator


def test_lines_parse_into_one_override_set_each():
    assert parse_lines("placement=stream\n\namp=bf16,channels_last=true\n") == [
        {"placement": "stream"},
        {"amp": "bf16", "channels_last": True},
    ]


def test_a_line_that_does_not_parse_is_named_with_core_s_reason(qapp):
    with marking_translator(), pytest.raises(ConfigError) as caught:
        parse_lines("placement=stream\nbatch=64")
    assert caught.value.field == "vs"
    assert caught.value.detail.startswith("[compare_menu]line 2: ") and "unknown setting 'batch'" in caught.value.detail
    assert "vs: " not in caught.value.detail
    with marking_translator(), pytest.raises(ConfigError) as caught:
        parse_lines("placement=stream")
    assert caught.value.detail == "[compare_menu]write 2 to 4 lines, one run each (this has 1)"


def test_a_plan_s_error_is_core_s_detail_translated_without_its_field(qapp):
    error = ConfigError("vs", Message("configurations {first} and {second} are the same run", first=1, second=2))
    assert start_error(error) == "configurations 1 and 2 are the same run"
    with marking_translator():
        assert start_error(error) == "[]configurations 1 and 2 are the same run"  # core's template, translated


def test_a_shared_setting_is_set_once_in_the_form_not_as_a_cli_option(qapp):
    """The dialog said "give it once, as --max-steps": the window has no such option, it has a field."""
    with pytest.raises(ConfigError) as caught:
        parse_lines("placement=stream,max_steps=50\nplacement=resident")
    detail = str(caught.value.detail)
    assert "--max-steps" not in detail and "--" not in detail
    assert detail == (
        "line 1: 'max_steps=50': every run of a comparison has the same Max steps (they race over "
        "the same steps); set it once, in the form"
    )
