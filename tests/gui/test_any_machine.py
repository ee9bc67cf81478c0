"""The suite gives the same result on any machine: what a test reads of the machine it runs on (its locale,
its CPU's name) is pinned or pretended, so a German or Chinese system, or another CPU, fails nothing.

The device names a window shows are checked on a pretend machine in `test_window_in_chinese`."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QLocale


def test_numbers_are_written_the_same_whatever_the_machines_locale():
    """On a machine set to German the Runs tab wrote a loss of 1.376 as '1,376' and tests comparing with
    Python's '1.376' failed; every test now starts in Qt's C locale (tests/gui/conftest.py)."""
    assert QLocale().toString(1234.5, "f", 1) == "1234.5"
    assert QLocale().toString(1.376, "g", 4) == "1.376"


@pytest.fixture(scope="module")
def german_left_by_an_earlier_test():
    """What a test before this one leaves on a German machine: it set a locale and restored the system's, which is
    German there. Module-scoped, so it runs before the test's own set-up, where tests/gui/conftest.py pins the C
    locale: the check below does not depend on which test ran before."""
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    yield
    QLocale.setDefault(before)  # the tests of other folders have no such set-up


def test_a_locale_an_earlier_test_left_behind_is_reset_before_the_next_test(german_left_by_an_earlier_test):
    assert QLocale().name() == QLocale.c().name()
    assert QLocale().toString(1.376, "g", 4) == "1.376"  # not "1,376"
