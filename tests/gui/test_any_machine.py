"""The suite gives the same result on any machine: what a test reads of the machine it runs on (its locale,
its CPU's name) is pinned or pretended, so a German or Chinese system, or another CPU, fails nothing.

The device names a window shows are checked on a pretend machine in `test_window_in_chinese`."""

from __future__ import annotations

from PySide6.QtCore import QLocale


def test_numbers_are_written_the_same_whatever_the_machines_locale():
    """On a machine set to German the Runs tab wrote a loss of 1.376 as '1,376' and tests comparing with
    Python's '1.376' failed; every test now starts in Qt's C locale (tests/gui/conftest.py)."""
    assert QLocale().toString(1234.5, "f", 1) == "1234.5"
    assert QLocale().toString(1.376, "g", 4) == "1.376"


def test_a_test_that_sets_a_locale_and_restores_the_systems_leaves_the_next_one_unaffected():
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    QLocale.setDefault(QLocale.system())  # as several tests restore it: the machine's, German on a German one


def test_the_next_test_starts_in_the_c_locale_again():
    assert QLocale().name() == QLocale.c().name()
